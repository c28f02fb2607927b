"""What a cursor walk costs on OpenLDAP: a page at the start, middle and end, and a whole walk.

Run: ``python -m bench.bench_cursors [--users 10000,100000] [--count 100] [--samples 5]``.
For each size, a throwaway slapd on 127.0.0.1 is loaded offline with slapadd, then through the
LDAP plugin (no HTTP: the directory's part and the plugin's own work):

- ``walk``: one whole cursor walk (``Query(keyset=True)``, pages of ``--count``), every page
  timed; the medians of the first, middle and last ``--samples`` pages, the whole walk's time,
  and a check that every user came exactly once. Nothing is written meanwhile, so the sorted
  snapshot of the first page serves the others (the plugin reuses it while ``contextCSN``
  stays the same);
- ``walk, writes``: a page at the start, middle and end when the directory changed since the
  page before (a user's description is modified before each sample): every page sorts anew;
- ``index``: for comparison, an index page (startIndex) at the same places, snapshot reused.

``--directory 389ds`` measures a throwaway 389 Directory Server instead, loaded over LDAPS as
its administrator (4 connections; about 300 users a second here, so keep ``--users`` small),
with the VLV indexes its launcher makes (pages are read from them; without them every page
sorts every match).

Prints a Markdown table; ``--output FILE`` also writes it there.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ldap3 import MODIFY_REPLACE

from bench.bench_paging import backend_for, load
from bench.data import map_size
from bench.directories import DIRECTORIES, add_entries, admin_connection, user_entry
from scim_core.backend import Query
from scim_core.backends.ldap import LdapBackend, create_backend
from scim_core.testing.slapd import SlapdInstance


@contextmanager
def _openldap(users: int) -> Iterator[tuple[Any, LdapBackend, float]]:
    with (
        tempfile.TemporaryDirectory() as folder,
        SlapdInstance(maxsize=map_size(users)) as instance,
    ):
        began = time.perf_counter()
        load(instance, users, Path(folder))
        loading = time.perf_counter() - began
        backend = backend_for(instance)
        try:
            yield instance, backend, loading
        finally:
            backend.close()


@contextmanager
def _dirsrv(users: int) -> Iterator[tuple[Any, LdapBackend, float]]:
    from scim_core.testing.dirsrv import DirsrvInstance

    directory = DIRECTORIES["389ds"]
    with DirsrvInstance() as instance:
        began = time.perf_counter()
        entries = [user_entry(directory, instance, i) for i in range(1, users + 1)]
        add_entries(instance, entries, 4, time.monotonic() + 3600, [])
        loading = time.perf_counter() - began
        backend = create_backend(instance.service_settings())
        try:
            yield instance, backend, loading
        finally:
            backend.close()


_DIRECTORIES: dict[str, Callable[[int], AbstractContextManager[tuple[Any, LdapBackend, float]]]]
_DIRECTORIES = {"openldap": _openldap, "389ds": _dirsrv}


def _ms(run: Callable[[], object]) -> float:
    began = time.perf_counter()
    run()
    return (time.perf_counter() - began) * 1000


def _walk(backend: LdapBackend, count: int) -> tuple[list[float], list[str], int]:
    """(each page's time in ms, the ids in walk order, the total the pages reported)."""
    timings: list[float] = []
    ids: list[str] = []
    after: str | None = None
    total = 0
    while True:
        began = time.perf_counter()
        page = backend.find_users(Query(count=count, keyset=True, after=after))
        timings.append((time.perf_counter() - began) * 1000)
        ids += [str(r["id"]) for r in page.resources]
        total = page.total_results
        if page.next_position is None:
            return timings, ids, total
        after = page.next_position


def _positions(ids: list[str], count: int, samples: int) -> dict[str, list[str | None]]:
    """The ``after`` of ``samples`` pages at the start, middle and end of the walk."""
    starts = {
        "start": 0,
        "middle": max(0, len(ids) // 2 - samples * count // 2),
        "end": max(0, len(ids) - samples * count),
    }
    return {
        where: [ids[at + i * count - 1] if at + i * count > 0 else None for i in range(samples)]
        for where, at in starts.items()
    }


def measure(directory: str, users: int, count: int, samples: int) -> list[str]:
    rows = []
    with _DIRECTORIES[directory](users) as (instance, backend, loading):
        walk_began = time.perf_counter()
        timings, ids, total = _walk(backend, count)
        walk_seconds = time.perf_counter() - walk_began
        assert len(ids) == len(set(ids)) == total, (len(ids), len(set(ids)), total)
        pages = len(timings)
        third = [
            statistics.median(timings[:samples]),
            statistics.median(timings[pages // 2 - samples // 2 : pages // 2 + samples // 2 + 1]),
            statistics.median(timings[-samples - 1 : -1] or timings[-1:]),
        ]
        rows.append(
            f"| {directory} | {total:,} | walk | {third[0]:.1f} | {third[1]:.1f} | {third[2]:.1f} "
            f"| {walk_seconds:.1f} s, {pages:,} pages |"
        )
        admin = admin_connection(instance)
        target = str(backend.find_users(Query(count=1)).resources[0]["userName"])
        target = f"uid={target},{instance.users_base}"
        fresh = []
        for where, afters in _positions(ids, count, samples).items():
            samples_ms = []
            for index, after in enumerate(afters):
                admin.modify(target, {"description": [(MODIFY_REPLACE, [f"{where}{index}"])]})
                samples_ms.append(
                    _ms(
                        lambda a=after: backend.find_users(Query(count=count, keyset=True, after=a))
                    )
                )
            fresh.append(statistics.median(samples_ms))
        admin.unbind()
        rows.append(
            f"| {directory} | {total:,} | walk, writes "
            f"| {fresh[0]:.1f} | {fresh[1]:.1f} | {fresh[2]:.1f} | |"
        )
        index_ms = []
        for start in (1, total // 2, max(1, total - count)):
            backend.find_users(Query(start_index=start, count=count))  # the snapshot
            index_ms.append(
                statistics.median(
                    _ms(lambda s=start: backend.find_users(Query(start_index=s, count=count)))
                    for _ in range(samples)
                )
            )
        rows.append(
            f"| {directory} | {total:,} | index "
            f"| {index_ms[0]:.1f} | {index_ms[1]:.1f} | {index_ms[2]:.1f} "
            f"| load {loading:.0f} s |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--directory", choices=sorted(_DIRECTORIES), default="openldap")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    lines = [
        f"Page of {args.count} users, ms (median of {args.samples} pages at each place); "
        "LDAP plugin without HTTP.",
        "",
        "| directory | users | paging | start | middle | end | whole walk |",
        "|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for size in (int(s) for s in args.users.split(",")):
        rows = measure(args.directory, size, args.count, args.samples)
        print("\n".join(rows), flush=True)
        lines += rows
    if args.output:
        args.output.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
