"""What slapd spends on finding a user by id, and on each part of a user's PATCH.

``python -m bench.slapd_work [--users N] [--sample K] [--rounds R] [--only lookup,patch]``
loads a throwaway slapd with ``bench/data.py`` (N users, 100,000 by default), picks K of them
spread over the directory (2,000 by default) and works on each, straight through ldap3 as the
service account, with the attribute list and the controls the service itself uses.

``lookup``: one search per user, by the filters a lookup by id could be written with:

- ``base read by DN``: the floor's read after its write (no filter to index);
- ``(entryUUID=…)`` under the users base: the id alone, the service's lookup on OpenLDAP
  (an entry is a user when its objectClass values name the users' class);
- ``(&(entryUUID=…)(objectClass=…))``: the id and the kind in one filter;
- ``(&(objectClass=…)(entryUUID=…))``: the same with the kind first.

``patch``: what the floor's PATCH and the service's send for one change of ``title``, then
each part on its own:

- ``floor``: a search by id for the DN alone (a SCIM PATCH names its user by id), a modify by
  DN, then a base read with the floor's attributes; and the same with the DN known beforehand
  (no lookup at all: set against the service, what its two guarantees cost);
- ``service``: a search by id, then a modify under the version assertion (RFC 4528) with the
  entry read back (RFC 4527 post-read);
- the parts: the two reads, a bare modify, a modify with an assertion, a modify with the
  post-read of the service's attributes and of the version alone.

Rounds alternate the variants so machine noise hits each; printed per variant: slapd's CPU per
user (microseconds, median over the rounds) and the rounds' figures. slapd's CPU comes from
/proc, in clock ticks: with K users per round a tick is 10,000 / K microseconds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from collections.abc import Callable
from itertools import count
from pathlib import Path

from ldap3 import BASE, LEVEL, MODIFY_REPLACE, SUBTREE, Connection

from bench.data import connect, map_size, uid_of, write_ldif
from bench.floor_app import USER_ATTRIBUTES as FLOOR_ATTRIBUTES
from bench.servers import cpu_seconds
from scim_core.backends.ldap.controls import Control, assertion, post_read
from scim_core.backends.ldap.directory import Directory
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.testing.slapd import SlapdInstance, slapadd

#: One piece of work on the user named by (uid, entryUUID).
Work = Callable[[str, str], None]
GROUPS = ("lookup", "patch")


def _lookups(connection: Connection, service: Directory, users_base: str) -> dict[str, Work]:
    """The four lookups, each reading what the service reads of a user in a full read."""
    kind = service.profile.user_filter
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


def _patch_parts(connection: Connection, service: Directory, users_base: str) -> dict[str, Work]:
    """The floor's PATCH, the service's, and the service's parts one by one."""
    read = list(service.users.read_attributes)
    version = service.profile.version_attribute
    read_back = post_read(read)
    titles = count()

    def title() -> dict[str, list[tuple[str, list[str]]]]:
        return {"title": [(MODIFY_REPLACE, [f"Title {next(titles)}"])]}

    def modify(uid: str, controls: list[Control] | None = None) -> None:
        connection.modify(f"uid={uid},{users_base}", title(), controls=controls)

    def floor_read(uid: str) -> None:
        connection.search(
            f"uid={uid},{users_base}", "(objectClass=*)", BASE, attributes=list(FLOOR_ATTRIBUTES)
        )

    def read_by_id(ident: str) -> tuple[str, str]:
        """The service's read: the entry's DN and version."""
        connection.search(users_base, f"(entryUUID={ident})", SUBTREE, attributes=read)
        entry = (connection.response or [{}])[0]
        stamp = entry.get("attributes", {}).get(version)
        if not stamp:
            raise RuntimeError(f"no {version} read for {ident}")
        return entry["dn"], stamp[0] if isinstance(stamp, list) else stamp

    def patch_by_dn(uid: str, _: str) -> None:
        modify(uid)
        floor_read(uid)

    def floor_patch(uid: str, ident: str) -> None:
        connection.search(users_base, f"(entryUUID={ident})", LEVEL, attributes=["1.1"])
        patch_by_dn(uid, ident)

    def service_read(_: str, ident: str) -> None:
        read_by_id(ident)

    def service_patch(_: str, ident: str) -> None:
        dn, stamp = read_by_id(ident)
        guard = assertion(f"({version}={stamp})")
        connection.modify(dn, title(), controls=[guard, read_back])

    return {
        "floor: search by id for the DN, modify, base read": floor_patch,
        "the DN known beforehand: modify, base read": patch_by_dn,
        "service: search by id, guarded modify + post-read": service_patch,
        "search by id (service's attributes)": service_read,
        "base read by DN (floor's attributes)": lambda uid, _: floor_read(uid),
        "modify": lambda uid, _: modify(uid),
        # An assertion that always holds: what evaluating one costs a modify.
        "modify + assertion": lambda uid, _: modify(uid, [assertion(f"(uid={uid})")]),
        "modify + post-read (service's attributes)": lambda uid, _: modify(uid, [read_back]),
        "modify + post-read (version alone)": lambda uid, _: modify(uid, [post_read([version])]),
    }


def _measure(
    slapd: SlapdInstance, work: dict[str, Work], users: list[tuple[str, str]], rounds: int
) -> dict[str, list[float]]:
    """slapd's CPU per user for each piece of ``work``, in microseconds, one figure a round."""
    figures: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(rounds):
        for name, piece in work.items():
            before = cpu_seconds(slapd.pid)
            for uid, ident in users:
                piece(uid, ident)
            figures[name].append((cpu_seconds(slapd.pid) - before) / len(users) * 1e6)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.slapd_work", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default=",".join(GROUPS), help="lookup, patch or both")
    args = parser.parse_args()
    groups = [g.strip() for g in args.only.split(",") if g.strip()]
    if not 0 < args.sample <= args.users:
        parser.error("--sample must be between 1 and --users")
    if not groups or set(groups) - set(GROUPS):
        parser.error(f"--only takes {' and '.join(GROUPS)}")
    results: dict[str, dict[str, list[float]]] = {}
    with SlapdInstance(maxsize=map_size(args.users)) as slapd:
        ldif = Path(tempfile.mkdtemp()) / "users.ldif"
        write_ldif(ldif, slapd, args.users, 1, password_every=1000)
        slapadd(slapd, ldif)
        ldif.unlink()
        ldif.parent.rmdir()
        connection = connect(slapd)
        try:
            picked = sorted(random.Random(7).sample(range(1, args.users + 1), args.sample))
            users = []
            for index in picked:
                connection.search(
                    slapd.users_base, f"(uid={uid_of(index)})", LEVEL, attributes=["entryUUID"]
                )
                users.append((uid_of(index), str(connection.entries[0].entryUUID)))
            service = Directory(LdapSettings.from_environ(slapd.service_settings()))
            make = {"lookup": _lookups, "patch": _patch_parts}
            for group in groups:
                work = make[group](connection, service, slapd.users_base)
                results[group] = _measure(slapd, work, users, args.rounds)
        finally:
            connection.unbind()
    print(f"{args.users:,} users, {args.sample:,} of them a round, {args.rounds} rounds")
    for group, figures in results.items():
        print(f"\n{group}: slapd CPU per user, median (rounds)")
        for name, rounds in figures.items():
            shown = " ".join(f"{r:.0f}" for r in rounds)
            print(f"  {name:50} {statistics.median(rounds):6.1f} us  ({shown})")


if __name__ == "__main__":
    main()
