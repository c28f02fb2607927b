"""How to page deep into 100,000 users: the three candidates, measured side by side.

Run: ``python -m bench.bench_paging [--users 100000] [--rounds 5]``. Prints the median time
of one page of 100 users at startIndex 1, 50,000 and 90,000 for:

- ``vlv-fresh``: server-side sort + VLV, the server sorting the whole set on every request;
- ``vlv-reuse``: the same, echoing the VLV context while contextCSN is unchanged (what the
  LDAP plugin does, :mod:`scim_core.backends.ldap.paging`);
- ``paged-skip``: RFC 2696 paged results, reading and discarding pages up to startIndex.

``--bases K`` measures instead what users under several bases cost: the same users dealt
round-robin into K sibling OUs, paged through the service configured with the K OUs as
``SCIM_LDAP_USERS_BASE`` (one sorted window per base, merged), against one base over all of
them (``SCIM_LDAP_USERS_SCOPE=sub``: one window), at startIndex 1, 1,000, half and 90%; every
page is checked to be the one-base page.

Everything runs on a throwaway slapd on 127.0.0.1, loaded offline with slapadd.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ldap3 import LEVEL, Connection, Server

from scim_core.backend import Query
from scim_core.backends.ldap import LdapBackend, LdapSettings
from scim_core.testing.slapd import SlapdInstance, slapadd

PAGE = 100


def load(instance: SlapdInstance, users: int, folder: Path, bases: int = 0) -> list[str]:
    """``users`` users under the users base, or dealt round-robin into ``bases`` OUs below
    :func:`container` (whose DNs are returned)."""
    names = [f"part{index}" for index in range(bases)]
    ous = [f"ou={name},{container(instance)}" for name in names]
    ldif = folder / "users.ldif"
    with ldif.open("w") as out:
        if ous:
            out.write(f"dn: {container(instance)}\nobjectClass: organizationalUnit\nou: bench\n\n")
        for name, ou in zip(names, ous, strict=True):
            out.write(f"dn: {ou}\nobjectClass: organizationalUnit\nou: {name}\n\n")
        for index in range(users):
            uid = f"user{index:06d}"
            parent = ous[index % bases] if ous else instance.users_base
            out.write(
                f"dn: uid={uid},{parent}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
                f"cn: User {index}\nsn: User\ngivenName: U\nmail: {uid}@example.com\n\n"
            )
    slapadd(instance, ldif)
    return ous


def container(instance: SlapdInstance) -> str:
    """The OU holding the several bases (and nothing else: the seeded users stay out)."""
    return f"ou=bench,{instance.users_base}"


def backend_for(instance: SlapdInstance, **changes: Any) -> LdapBackend:
    settings = {"users_base": instance.users_base, "groups_base": instance.groups_base}
    return LdapBackend(
        LdapSettings(
            urls=(instance.url,),
            bind_dn=instance.service_dn,
            bind_password=instance.service_password,
            **{**settings, **changes},
        )
    )


def paged_skip(instance: SlapdInstance) -> Callable[[int], int]:
    connection = Connection(
        Server(instance.url), instance.service_dn, instance.service_password, auto_bind=True
    )

    def page(start: int) -> int:
        seen = 0
        kept = 0
        cookie = None
        while True:
            connection.search(
                instance.users_base,
                "(objectClass=inetOrgPerson)",
                LEVEL,
                attributes=["uid"] if seen + 500 >= start else ["1.1"],
                paged_size=500,
                paged_cookie=cookie,
            )
            for _ in connection.response:
                seen += 1
                if start <= seen < start + PAGE:
                    kept += 1
            cookie = connection.result["controls"]["1.2.840.113556.1.4.319"]["value"]["cookie"]
            if not cookie or seen >= start + PAGE:
                if cookie:  # abandon the rest of the paged search (RFC 2696 §3, size 0)
                    connection.search(
                        instance.users_base,
                        "(objectClass=inetOrgPerson)",
                        LEVEL,
                        attributes=["1.1"],
                        paged_size=0,
                        paged_cookie=cookie,
                    )
                return kept

    return page


def measure(run: Callable[[int], object], start: int, rounds: int) -> float:
    run(start)  # warm-up (and, for vlv-reuse, the snapshot)
    samples = []
    for _ in range(rounds):
        began = time.perf_counter()
        run(start)
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def several_bases(users: int, bases: int, rounds: int) -> None:
    """One base (subtree) against ``bases`` bases over the same users, page by page."""
    starts = sorted({1, min(1000, users), users // 2, users * 9 // 10})
    with tempfile.TemporaryDirectory() as folder, SlapdInstance() as instance:
        ous = load(instance, users, Path(folder), bases)
        one = backend_for(instance, users_base=container(instance), users_scope="sub")
        several = backend_for(instance, users_base=ous[0], users_bases=tuple(ous))

        def page(backend: LdapBackend, start: int) -> list[str]:
            found = backend.find_users(Query(start_index=start, count=PAGE))
            assert found.total_results == users, found.total_results
            return [str(r["id"]) for r in found.resources]

        for start in starts:
            assert page(several, start) == page(one, start), f"pages differ at {start}"
        print(f"{users} users in {bases} OUs, page of {PAGE}, median of {rounds} (ms)")
        print("method          " + "".join(f"start={s:<10}" for s in starts) + "deep/first")
        for name, backend in (("one base (sub)", one), (f"{bases} bases", several)):
            figures = [measure(lambda s, b=backend: page(b, s), s, rounds) for s in starts]
            row = "".join(f"{f:<16.1f}" for f in figures)
            print(f"{name:<16}{row}{figures[-1] / figures[0]:.2f}x", flush=True)
        one.close()
        several.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bases", type=int, default=0, help="measure K bases instead")
    args = parser.parse_args(argv)
    if args.bases:
        several_bases(args.users, args.bases, args.rounds)
        return 0
    starts = [1, args.users // 2, args.users * 9 // 10]
    with tempfile.TemporaryDirectory() as folder, SlapdInstance() as instance:
        load(instance, args.users, Path(folder))
        reuse = backend_for(instance)
        fresh = backend_for(instance)
        fresh.pager._remember = lambda *a, **k: None  # type: ignore[method-assign]
        candidates: dict[str, Callable[[int], object]] = {
            "vlv-fresh": lambda s: fresh.find_users(Query(start_index=s, count=PAGE)),
            "vlv-reuse": lambda s: reuse.find_users(Query(start_index=s, count=PAGE)),
            "paged-skip": paged_skip(instance),
        }
        print(f"{args.users} users, page of {PAGE}, median of {args.rounds} (ms)")
        print("method       " + "".join(f"start={s:<10}" for s in starts) + "deep/first")
        for name, run in candidates.items():
            figures = [measure(run, s, args.rounds) for s in starts]
            row = "".join(f"{f:<16.1f}" for f in figures)
            print(f"{name:<13}{row}{figures[-1] / figures[0]:.2f}x", flush=True)
        reuse.close()
        fresh.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
