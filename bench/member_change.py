"""What the throwaway slapd's set-up for big groups buys one membership change.

``python -m bench.member_change [--users N] [--members M] [--changes K]`` loads a throwaway
slapd per variant with ``bench/data.py`` (N users, one group of M of them; 105,000 and 100,000
by default), then adds and removes K users that are not members (150 by default), one
single-value modify each, twice over, straight through ldap3 as the service account. Printed
per variant: the modify's p50, p90 and minimum, and slapd's CPU per modify.

The variants take one part of the set-up away at a time: as shipped; without tcmalloc; without
``envflags writemap``; without ``sortvals member``; without any of the three.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ldap3 import MODIFY_ADD, MODIFY_DELETE

from bench.data import GROUP_CN, connect, map_size, member_indexes, uid_of, write_ldif
from bench.servers import cpu_seconds
from scim_core.testing.slapd import ALLOCATOR, SlapdInstance, slapadd

_WRITEMAP = "envflags writemap"
_SORTVALS = "sortvals member"

#: name -> (allocator, configuration lines left out)
VARIANTS: dict[str, tuple[str | None, frozenset[str]]] = {
    "as shipped": (ALLOCATOR, frozenset()),
    "without tcmalloc": (None, frozenset()),
    "without writemap": (ALLOCATOR, frozenset({_WRITEMAP})),
    "without sortvals": (ALLOCATOR, frozenset({_SORTVALS})),
    "none of the three": (None, frozenset({_WRITEMAP, _SORTVALS})),
}


class _Variant(SlapdInstance):
    """The throwaway slapd with some configuration lines left out."""

    def __init__(self, left_out: frozenset[str], **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self._left_out = left_out

    def _render_config(self) -> str:
        lines = super()._render_config().splitlines()
        return "\n".join(line for line in lines if line.strip() not in self._left_out) + "\n"


def _measure(slapd: SlapdInstance, users: int, members: int, changes: int) -> str:
    """Add and remove ``changes`` non-members twice over; the figures as one line."""
    member_set = set(member_indexes(users, members))
    outsiders = [i for i in range(1, users + 1) if i not in member_set][:changes]
    connection = connect(slapd)
    group = f"cn={GROUP_CN},{slapd.groups_base}"
    seconds = []
    cpu_before = cpu_seconds(slapd.pid)
    try:
        for _ in range(2):
            for index in outsiders:
                dn = f"uid={uid_of(index)},{slapd.users_base}"
                for operation in (MODIFY_ADD, MODIFY_DELETE):
                    started = time.perf_counter()
                    connection.modify(group, {"member": [(operation, [dn])]})
                    seconds.append(time.perf_counter() - started)
    finally:
        connection.unbind()
    cpu = (cpu_seconds(slapd.pid) - cpu_before) / len(seconds) * 1000
    seconds.sort()
    p50, p90 = statistics.median(seconds) * 1000, seconds[int(len(seconds) * 0.9)] * 1000
    fastest = seconds[0] * 1000
    return f"p50 {p50:.2f} ms, p90 {p90:.2f} ms, min {fastest:.2f} ms, slapd CPU {cpu:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=105_000)
    parser.add_argument("--members", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=150)
    args = parser.parse_args()
    if args.members > args.users or args.changes > args.users - args.members:
        parser.error("the group and the changes need more users")
    for name, (allocator, left_out) in VARIANTS.items():
        with _Variant(left_out, allocator=allocator, maxsize=map_size(args.users)) as slapd:
            ldif = Path(tempfile.mkdtemp()) / "users.ldif"
            write_ldif(ldif, slapd, args.users, args.members, password_every=1000)
            slapadd(slapd, ldif)
            ldif.unlink()
            ldif.parent.rmdir()
            figures = _measure(slapd, args.users, args.members, args.changes)
            print(f"{name}: {args.changes * 4} modifies, {figures}", flush=True)


if __name__ == "__main__":
    main()
