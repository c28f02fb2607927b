"""Settings: each one declared once, with its parser, default and documentation.

The same declarations validate the ``SCIM_*`` environment at start-up (one clear line for a bad
setting) and generate the configuration reference in the README and docs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from scim_core.cursor import MIN_SECRET_LENGTH
from scim_core.filter.policy import DEFAULT_POLICY, FilterPolicy
from scim_core.secret import Secret

__all__ = [
    "SERVICE_SETTINGS",
    "ConfigError",
    "ServiceConfig",
    "Setting",
    "parse_bool",
    "parse_int",
    "parse_list",
    "read_settings",
]

T = TypeVar("T")


class ConfigError(ValueError):
    """A setting is missing or malformed; the message is one line naming the variable."""


def parse_bool(text: str) -> bool:
    """``1/true/yes/on`` or ``0/false/no/off``, any case."""
    lowered = text.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError("expected true or false")


def parse_int(minimum: int = 0) -> Callable[[str], int]:
    """A parser for whole numbers not below ``minimum``."""

    def parse(text: str) -> int:
        value = int(text.strip())
        if value < minimum:
            raise ValueError(f"must be at least {minimum}")
        return value

    return parse


def parse_list(text: str) -> tuple[str, ...]:
    """A comma-separated list; blanks dropped."""
    return tuple(item.strip() for item in text.split(",") if item.strip())


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One ``SCIM_*`` environment variable.

    :param name: the variable name, e.g. ``SCIM_MAX_RESULTS``.
    :param parse: turns the text into a value; raises ``ValueError`` with a short reason.
    :param default: the value when unset; ``None`` with ``required`` means it must be set.
    :param doc: one sentence for the configuration reference.
    :param secret: the value is never printed; ``NAME_FILE`` may name a file holding it.
    """

    name: str
    parse: Callable[[str], T]
    default: T | None
    doc: str
    required: bool = False
    secret: bool = False

    def read(self, environ: Mapping[str, str]) -> T | None:
        """The parsed value from ``environ`` (or the file ``NAME_FILE`` names, for secrets).

        :raises ConfigError: naming the variable, never echoing a secret value.
        """
        raw = environ.get(self.name)
        if raw is None and self.secret and environ.get(self.name + "_FILE"):
            file_name = environ[self.name + "_FILE"]
            try:
                raw = Path(file_name).read_bytes().decode().strip()
            except OSError as exc:
                raise ConfigError(
                    f"{self.name}_FILE: cannot read {file_name}: {exc.strerror}"
                ) from None
            except UnicodeDecodeError:
                raise ConfigError(f"{self.name}_FILE: {file_name} is not UTF-8 text") from None
        if raw is None or raw == "":
            if self.required:
                raise ConfigError(f"{self.name} is required: {self.doc}")
            return self.default
        try:
            return self.parse(raw)
        except ValueError as exc:
            shown = "" if self.secret else f" {raw!r}"
            raise ConfigError(f"{self.name}:{shown} is not valid ({exc})") from None


def read_settings(settings: Iterable[Setting[Any]], environ: Mapping[str, str]) -> dict[str, Any]:
    """Read every setting, keyed by name; the first bad one raises :class:`ConfigError`."""
    return {setting.name: setting.read(environ) for setting in settings}


def _cursor_secret(text: str) -> Secret:
    if len(text.strip()) < MIN_SECRET_LENGTH:
        raise ValueError(f"must be at least {MIN_SECRET_LENGTH} characters")
    return Secret(text.strip())


SERVICE_SETTINGS: tuple[Setting[Any], ...] = (
    Setting("SCIM_MAX_RESULTS", parse_int(1), 200, "Largest page a list request returns."),
    Setting("SCIM_DEFAULT_COUNT", parse_int(0), 100, "Page size when a request names no count."),
    Setting("SCIM_MAX_BODY_BYTES", parse_int(1), 1024 * 1024, "Largest request body (else 413)."),
    Setting(
        "SCIM_MAX_FILTER_LENGTH", parse_int(1), 4096, "Longest filter text (else invalidFilter)."
    ),
    Setting(
        "SCIM_CURSOR_SECRET",
        _cursor_secret,
        None,
        "The key cursors (cursor-based list pages) are signed with: at least 32 random "
        "characters, the same on every worker and instance (e.g. `openssl rand -base64 48`). "
        "Unset, cursor-based paging is off (index paging works as ever).",
        secret=True,
    ),
    Setting(
        "SCIM_CURSOR_TIMEOUT",
        parse_int(1),
        3600,
        "Seconds a cursor stays valid after the page that returned it (else expiredCursor).",
    ),
)


@dataclass(frozen=True)
class ServiceConfig:
    """The service's behaviour knobs (not the backend's).

    :param max_results: the bound on ``count``; ``ServiceProviderConfig`` shows it.
    :param default_count: the page size when a request names none.
    :param max_body_bytes: requests with a larger body get 413.
    :param max_filter_length: longer filter text gets 400 ``invalidFilter``.
    :param filter_policy: which filter forms are allowed (the contract's by default).
    :param cursor_secret: the key cursors are signed with; ``None`` turns cursor-based
        paging off.
    :param cursor_timeout: seconds a cursor stays valid after its page.
    """

    max_results: int = 200
    default_count: int = 100
    max_body_bytes: int = 1024 * 1024
    max_filter_length: int = 4096
    filter_policy: FilterPolicy = field(default=DEFAULT_POLICY)
    cursor_secret: Secret | None = field(default=None, repr=False)
    cursor_timeout: int = 3600

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ServiceConfig:
        """Build from ``SCIM_*`` variables; :class:`ConfigError` names a bad one."""
        values = read_settings(SERVICE_SETTINGS, environ)
        # Each SCIM_X is the field x: the table above is the one list of them.
        return cls(**{name.removeprefix("SCIM_").lower(): value for name, value in values.items()})
