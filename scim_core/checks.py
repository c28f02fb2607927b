"""The steps of a preflight check (``scim-ldap check``), their table and the exit status.

A backend's preflight returns :class:`Step` records; this module turns them into what an
administrator reads, a plain-text table of step, result and detail, and into the command's
exit status. It does no I/O.

=============  ===============================================================  ==============
result         meaning                                                          exit status
=============  ===============================================================  ==============
``ok``         the step passed                                                  0
``fallback``   the directory lacks a feature; the service uses its documented   0
               fallback, with the weaker guarantee the detail names
``warning``    provisioning works, with a caveat the detail names               0
``skipped``    not run (an earlier step failed, or it needs ``--write-test``)   0
``FAILED``     provisioning would fail: the detail says why                     1
=============  ===============================================================  ==============
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "FAILED",
    "FALLBACK",
    "OK",
    "RESULTS",
    "SKIPPED",
    "WARNING",
    "Result",
    "Step",
    "exit_status",
    "render_table",
]

Result = Literal["ok", "fallback", "warning", "skipped", "FAILED"]

OK: Final[Result] = "ok"
FALLBACK: Final[Result] = "fallback"
WARNING: Final[Result] = "warning"
SKIPPED: Final[Result] = "skipped"
FAILED: Final[Result] = "FAILED"

#: Every result, with whether it fails the check.
RESULTS: Final[dict[Result, bool]] = {
    OK: False,
    FALLBACK: False,
    WARNING: False,
    SKIPPED: False,
    FAILED: True,
}

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1

_HEADER: Final = ("step", "result", "detail")
_DETAIL_WIDTH: Final = 72
_RESULT_WIDTH: Final = max(len(r) for r in (_HEADER[1], *RESULTS))
#: Wraps a detail at a width, never splitting a word (a DN or a URL stays whole).
_wrap: Final = functools.partial(textwrap.wrap, break_long_words=False)


@dataclass(frozen=True)
class Step:
    """One line of a preflight check.

    :param name: what was checked (``bind``, ``users base``, ``write: create user``).
    :param result: one of :data:`RESULTS`.
    :param detail: what was found, or why it failed; never a password.
    """

    name: str
    result: Result
    detail: str = ""

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise ValueError(f"unknown result {self.result!r}")

    @property
    def failed(self) -> bool:
        """Whether this step makes the check fail (provisioning would)."""
        return RESULTS[self.result]


def exit_status(steps: Iterable[Step]) -> int:
    """:data:`EXIT_FAILED` when any step failed, else :data:`EXIT_OK` (fallbacks and
    warnings name lost guarantees; they do not fail the check)."""
    return EXIT_FAILED if any(step.failed for step in steps) else EXIT_OK


def render_table(steps: Sequence[Step], detail_width: int = _DETAIL_WIDTH) -> str:
    """``steps`` as a plain-text table: a header, a rule, one row per step; a long detail
    wraps onto lines of its own below the row, indented to its column.

    :param detail_width: where details wrap (words are never split).
    """
    name_width = max(len(_HEADER[0]), *(len(s.name) for s in steps)) if steps else len(_HEADER[0])
    indent = " " * (name_width + _RESULT_WIDTH + 4)

    def row(name: str, result: str, detail: str) -> list[str]:
        lines = _wrap(detail, detail_width) or [""]
        first = f"{name:<{name_width}}  {result:<{_RESULT_WIDTH}}  {lines[0]}".rstrip()
        return [first, *(indent + line for line in lines[1:])]

    rule = f"{'-' * name_width}  {'-' * _RESULT_WIDTH}  {'-' * len(_HEADER[2])}"
    out = [*row(*_HEADER), rule]
    for step in steps:
        out += row(step.name, step.result, step.detail)
    return "\n".join(out) + "\n"
