"""What slapd spends on finding one user, by the filter the search is written with.

``python -m bench.id_lookup [--users N] [--lookups K] [--rounds R]`` loads a throwaway slapd with
``bench/data.py`` (N users, 100,000 by default), picks K of them spread over the directory (3,000
by default), and reads each, straight through ldap3 as the service account, with the service's
attribute list:

- ``base read by DN``: the floor's read (no filter to index);
- ``(entryUUID=…)`` under the users base: the id alone, the service's lookup on OpenLDAP
  (an entry is a user when its objectClass values name the users' class);
- ``(&(entryUUID=…)(objectClass=inetOrgPerson))``: the id and the kind in one filter;
- ``(&(objectClass=inetOrgPerson)(entryUUID=…))``: the same with the kind first.

Rounds alternate the four so machine noise hits each; printed per filter: slapd's CPU per search
(microseconds, median over the rounds) and the rounds' figures. slapd's CPU comes from /proc, in
clock ticks: with K lookups per round a tick is 10,000 / K microseconds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from ldap3 import BASE, LEVEL, SUBTREE, Connection

from bench.data import connect, map_size, uid_of, write_ldif
from bench.servers import cpu_seconds
from scim_core.backends.ldap.directory import Directory
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.testing.slapd import SlapdInstance, slapadd


def _lookups(connection: Connection, service: Directory) -> dict[str, Callable[[str, str], None]]:
    """The four lookups, each reading what the service reads of a user in a full read."""
    users_base, kind = service.settings.users_base, service.profile.user_filter
    read = list(service.users.read_attributes)

    def search(base: str, ldap_filter: str, scope: str) -> None:
        connection.search(base, ldap_filter, scope, attributes=read)
        if len(connection.response or ()) != 1:
            raise RuntimeError(f"{ldap_filter} under {base} found no single user")

    return {
        "base read by DN": lambda uid, _: search(f"uid={uid},{users_base}", kind, BASE),
        "(entryUUID=…)": lambda _, ident: search(users_base, f"(entryUUID={ident})", SUBTREE),
        "(&(entryUUID=…)(objectClass=…))": lambda _, ident: search(
            users_base, f"(&(entryUUID={ident}){kind})", SUBTREE
        ),
        "(&(objectClass=…)(entryUUID=…))": lambda _, ident: search(
            users_base, f"(&{kind}(entryUUID={ident}))", SUBTREE
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--lookups", type=int, default=3_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not 0 < args.lookups <= args.users:
        parser.error("--lookups must be between 1 and --users")
    with SlapdInstance(maxsize=map_size(args.users)) as slapd:
        ldif = Path(tempfile.mkdtemp()) / "users.ldif"
        write_ldif(ldif, slapd, args.users, 1, password_every=1000)
        slapadd(slapd, ldif)
        ldif.unlink()
        ldif.parent.rmdir()
        connection = connect(slapd)
        try:
            picked = sorted(random.Random(7).sample(range(1, args.users + 1), args.lookups))
            users = []
            for index in picked:
                connection.search(
                    slapd.users_base, f"(uid={uid_of(index)})", LEVEL, attributes=["entryUUID"]
                )
                users.append((uid_of(index), str(connection.entries[0].entryUUID)))
            service = Directory(LdapSettings.from_environ(slapd.service_settings()))
            lookups = _lookups(connection, service)
            figures: dict[str, list[float]] = {name: [] for name in lookups}
            for _ in range(args.rounds):
                for name, lookup in lookups.items():
                    before = cpu_seconds(slapd.pid)
                    for uid, ident in users:
                        lookup(uid, ident)
                    figures[name].append((cpu_seconds(slapd.pid) - before) / len(users) * 1e6)
        finally:
            connection.unbind()
    print(f"{args.users:,} users, {args.lookups:,} lookups a round, {args.rounds} rounds")
    for name, rounds in figures.items():
        shown = " ".join(f"{r:.0f}" for r in rounds)
        print(f"{name:34} slapd {statistics.median(rounds):6.1f} us a search  ({shown})")


if __name__ == "__main__":
    main()
