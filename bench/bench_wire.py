"""The client's CPU per directory operation, fast path on and off, on one throwaway slapd.

Run: ``python -m bench.bench_wire``. One bound connection as the service opens them; the same
``wire.search`` / ``wire.modify`` calls with the connection marked as ``SCIM_LDAP_FAST_PATH``
on or off (off: ldap3's ``Connection.search`` / ``modify``). Rounds alternate between the two
so machine noise hits both; each figure is the median over the rounds of this process's CPU
time per operation (``time.process_time``: slapd's work and the network wait are left out).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ldap3 import LEVEL, MODIFY_REPLACE, NONE, Connection, Server

from scim_core.backends.ldap import wire
from scim_core.backends.ldap.controls import post_read
from scim_core.testing.slapd import SlapdInstance

__all__ = ["main"]

ATTRIBUTES = ["entryUUID", "uid", "cn", "sn", "givenName", "mail", "displayName", "title"]
ATTRIBUTES += ["objectClass", "entryCSN", "description", "telephoneNumber"]


def _cpu_us(operation: Callable[[], object], count: int) -> float:
    started = time.process_time()
    for _ in range(count):
        operation()
    return (time.process_time() - started) / count * 1e6


def main(rounds: int = 5, count: int = 1000) -> None:
    slapd = SlapdInstance()
    slapd.start()
    try:
        connection = Connection(
            Server(slapd.url, get_info=NONE),
            slapd.service_dn,
            slapd.service_password,
            auto_bind=True,
            raise_exceptions=True,
            check_names=False,
            return_empty_attributes=False,
            receive_timeout=10,
        )
        users = slapd.users_base
        dn = f"uid=alice,{users}"
        lookup = "(&(objectClass=inetOrgPerson)(uid=alice))"
        cases: dict[str, Callable[[], object]] = {
            "search by uid, 12 attributes": lambda: wire.search(
                connection, wire.Search(users, lookup, LEVEL, ATTRIBUTES)
            ),
            "modify (title) with post-read": lambda: wire.modify(
                connection, dn, {"title": [(MODIFY_REPLACE, ["T"])]}, [post_read(ATTRIBUTES)]
            ),
        }
        print("| Operation | fast path us CPU | plain ldap3 us CPU | plain / fast |")
        print("|---|---:|---:|---:|")
        for name, operation in cases.items():
            figures: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(rounds):
                for fast in (True, False):
                    connection.scim_fast_path = fast
                    figures[fast].append(_cpu_us(operation, count if fast else count // 4))
            on, off = statistics.median(figures[True]), statistics.median(figures[False])
            print(f"| {name} | {on:.0f} | {off:.0f} | {off / on:.1f}x |")
    finally:
        slapd.close()


if __name__ == "__main__":
    main()
