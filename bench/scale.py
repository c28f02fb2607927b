"""The scale curve of the service on OpenLDAP: the same figures at 10,000 to 1,000,000 users.

Run: ``python -m bench.scale [--sizes 10000,100000,1000000] [--output FILE] [--smoke]``.
For each size a throwaway slapd on 127.0.0.1 (map sized with :func:`bench.data.map_size`) is
loaded offline with slapadd by :func:`bench.data.prepare` (the users and one group of a tenth
of them), then measured in this one process through :meth:`ScimService.handle` over the LDAP
plugin, with a cursor secret so cursor paging is on. There is no HTTP: no gunicorn, no
socket between client and service; only the plugin's LDAP connections to 127.0.0.1.

Per size:

1. lookups: p50 of ``GET /Users?filter=userName eq "<uid>"`` and of ``GET /Users/{id}``, each
   over distinct random users (not group members) after a short warm-up on others;
2. index pages (count=100): p50 at the start, middle and end with nothing written (the sorted
   snapshot of the first page serves the others), all of them together ("any page"), and the
   first page after a write (a user's description modified before each sample, each sample at
   another place), then (after the walks, 3) the first page after a user is deleted and after
   one is renamed, each checked for its totalResults;
3. cursor walk (count=200): one whole walk, checked to list every user exactly once, its time
   and the p50 of its pages at the start, middle and end and over all pages; then the first
   pages of a second walk while a thread modifies a user once a second;
4. slapd's peak RSS growth over the sorted pages of 2 and 3 (``VmHWM`` reset before, over
   ``VmRSS`` before), and its anonymous memory growth sampled meanwhile (the peak RSS also
   counts the LMDB file pages a whole walk maps in, which are not sort memory);
5. the group: ``GET /Groups/{id}`` with its members (the chunked answer iterated), p50 seconds
   and this process's peak memory growth (as ``bench/big_group.py`` measures it), and
   ``PATCH /Groups/{id}?excludedAttributes=members`` adding then removing one member.

Prints one Markdown table (a column per size, then the targets, judged at the size each one
names: "not measured" when the run did not include it), with the date, the machine, the load
average at the start and end of each size, the loading times and the run's total time.
``--output FILE`` writes it there too (``--output`` alone: ``bench/results/scale.md``).
``--smoke`` measures 300 and 1,000 users with a few samples each, in seconds. Every loop is
bounded in count and in time; a wrong answer (an error status, a user listed twice or missed
by the walk) stops the run with exit status 1.

Duration: the default run took 1.6 minutes on a quiet 2-core machine (bench/README.md), most
of it at 1,000,000 users in loading and the whole walk.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import hashlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ldap3 import MODIFY_REPLACE

from bench.data import Dataset, User, map_size, prepare
from bench.directories import admin_connection
from bench.run import machine_info
from bench.servers import reset_peak_rss, vm_kib
from scim_core import ScimRequest, ScimResponse, ScimService
from scim_core.backends.ldap import LdapBackend
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.config import ServiceConfig
from scim_core.secret import Secret
from scim_core.testing.slapd import SlapdInstance

__all__ = [
    "DEFAULT_SIZES",
    "ROWS",
    "SMOKE_SIZES",
    "Budget",
    "MeasurementError",
    "SizeResult",
    "main",
    "measure_size",
    "render",
]

DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
SMOKE_SIZES = (300, 1_000)
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "scale.md"
BASE_URL = "http://127.0.0.1/scim/v2"
PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
#: Index pages hold 100 users, cursor pages 200 (the service's default ``max_results``).
INDEX_COUNT = 100
CURSOR_COUNT = 200
#: The bound of any one size's measurement: past it the run stops with an error instead of
#: hanging (the default run's 1,000,000 users take a few minutes).
SIZE_DEADLINE_SECONDS = 3600.0
#: The writer of the second walk waits this long between its modifies.
WRITE_INTERVAL_SECONDS = 1.0
#: How often slapd's anonymous memory is sampled.
SAMPLE_INTERVAL_SECONDS = 0.05
#: A fixed key: the measurement needs cursor paging on, not a secret.
_DIGEST = 8  # bytes of an id's digest: a collision among a million ids, about 3e-8
_CURSOR_SECRET = Secret("bench-scale-cursor-secret-" + "s" * 32)


class MeasurementError(RuntimeError):
    """An answer was wrong (status, a walk's users) or a bound ran out."""


@dataclass(frozen=True)
class Budget:
    """How many samples each measurement takes (and the bound of the walks with writes)."""

    lookups: int = 200
    warmup: int = 20
    index_samples: int = 5  # per place: start, middle, end
    fresh_samples: int = 5
    edge_pages: int = 10  # the pages at the start, middle and end of a walk taken for p50
    writer_pages: int = 50
    writer_seconds: float = 300.0
    group_gets: int = 3
    group_patches: int = 20


SMOKE_BUDGET = Budget(
    lookups=20,
    warmup=5,
    index_samples=3,
    fresh_samples=3,
    edge_pages=3,
    writer_pages=5,
    writer_seconds=30.0,
    group_gets=3,
    group_patches=6,
)


@dataclass
class SizeResult:
    """The figures of one size, keyed as :data:`ROWS`."""

    users: int
    figures: dict[str, float] = field(default_factory=dict)


def _p50(samples: Iterable[float]) -> float:
    values = list(samples)
    if not values:
        raise MeasurementError("no sample taken")
    return statistics.median(values)


def _load_average() -> float:
    return os.getloadavg()[0]


class _Client:
    """Requests to the service in this process, each timed and checked."""

    def __init__(self, service: ScimService) -> None:
        self.service = service

    def call(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None = None,
        body: bytes = b"",
        expect: int = 200,
    ) -> tuple[ScimResponse, float]:
        """(the response, its seconds); the body of a chunked answer is iterated inside."""
        request = ScimRequest(
            method,
            path,
            query=dict(query or {}),
            body=body,
            content_type="application/scim+json" if body else None,
            base_url=BASE_URL,
        )
        began = time.perf_counter()
        response = self.service.handle(request)
        for _ in response.iter_bytes():
            pass
        seconds = time.perf_counter() - began
        if response.status != expect:
            raise MeasurementError(
                f"{method} {path} {dict(query or {})}: {response.status}, expected {expect}: "
                f"{response.body_bytes()[:300]!r}"
            )
        return response, seconds

    def body(self, response: ScimResponse) -> dict[str, Any]:
        data = response.json()
        if not isinstance(data, dict):
            raise MeasurementError(f"not a JSON object: {data!r:.200}")
        return data


class _Writer:
    """A thread modifying one user's description at once and then every ``interval`` seconds
    until stopped (or ``max_writes`` done): a directory that changes while a walk pages
    through it."""

    def __init__(self, slapd: SlapdInstance, dn: str, interval: float, max_writes: int) -> None:
        self._slapd = slapd
        self._dn = dn
        self._interval = interval
        self._max = max_writes
        self._stop = threading.Event()
        self._first = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scale-writer", daemon=True)
        self.writes = 0
        self.error: str | None = None

    def __enter__(self) -> _Writer:
        self._thread.start()
        # The walk starts after the first write: even a walk shorter than the interval pages
        # through a directory that just changed.
        self._first.wait(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        connection = admin_connection(self._slapd)  # its own: ldap3 connections are not shared
        try:
            while self.writes < self._max:
                description = f"writer {self.writes} {time.time():.3f}"
                connection.modify(self._dn, {"description": [(MODIFY_REPLACE, [description])]})
                if connection.result["result"] != 0:
                    self.error = str(connection.result)
                    return
                self.writes += 1
                self._first.set()
                if self._stop.wait(self._interval):
                    return
        finally:
            self._first.set()
            connection.unbind()


class _AnonSampler:
    """The peak of a process's ``RssAnon`` (its heap: sort sessions, not mapped files),
    sampled every ``interval`` seconds until stopped or ``max_seconds`` passed."""

    def __init__(self, pid: int, interval: float, max_seconds: float) -> None:
        self._pid = pid
        self._interval = interval
        self._deadline = time.monotonic() + max_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scale-sampler", daemon=True)
        self.before = vm_kib(pid, "RssAnon") or 0
        self.peak = self.before

    def __enter__(self) -> _AnonSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self._interval) and time.monotonic() < self._deadline:
            self.peak = max(self.peak, vm_kib(self._pid, "RssAnon") or 0)


def _lookups(client: _Client, pool: list[User], budget: Budget, result: SizeResult) -> None:
    """p50 of the filtered GET and of the GET by id, each over its own distinct users."""
    warm = pool[: budget.warmup]
    by_name = pool[budget.warmup : budget.warmup + budget.lookups]
    by_id = pool[budget.warmup + budget.lookups : budget.warmup + 2 * budget.lookups]
    if len(by_id) < budget.lookups:
        raise MeasurementError(f"the read pool holds {len(pool)} users, too few")

    def filtered(user: User) -> float:
        response, seconds = client.call("GET", "/Users", {"filter": f'userName eq "{user.uid}"'})
        found = client.body(response)
        if found.get("totalResults") != 1 or found["Resources"][0]["id"] != user.id:
            raise MeasurementError(f"userName eq {user.uid!r} did not find it: {found!r:.300}")
        return seconds * 1000

    def by_identifier(user: User) -> float:
        response, seconds = client.call("GET", f"/Users/{quote(user.id)}")
        if client.body(response).get("userName") != user.uid:
            raise MeasurementError(f"GET /Users/{user.id} is not {user.uid}")
        return seconds * 1000

    for user in warm:
        filtered(user)
        by_identifier(user)
    result.figures["lookup_filter"] = _p50(filtered(u) for u in by_name)
    result.figures["lookup_id"] = _p50(by_identifier(u) for u in by_id)


def _index_page(client: _Client, start: int) -> tuple[float, int]:
    """(ms, totalResults) of the index page at ``start``."""
    response, seconds = client.call(
        "GET", "/Users", {"startIndex": str(start), "count": str(INDEX_COUNT)}
    )
    body = client.body(response)
    if not body.get("Resources"):
        raise MeasurementError(f"the index page at {start} is empty: {body!r:.200}")
    return seconds * 1000, int(body["totalResults"])


def _index_pages(
    client: _Client, admin: Any, target_dn: str, total: int, budget: Budget, result: SizeResult
) -> None:
    places = {"start": 1, "middle": total // 2, "end": max(1, total - INDEX_COUNT + 1)}
    _index_page(client, 1)  # sorts and keeps the snapshot the next pages reuse
    every: list[float] = []
    for name, start in places.items():
        samples = [_index_page(client, start)[0] for _ in range(budget.index_samples)]
        result.figures[f"index_{name}"] = _p50(samples)
        every += samples
    result.figures["index_any"] = _p50(every)
    fresh = []
    last = max(1, total - INDEX_COUNT + 1)
    for sample in range(budget.fresh_samples):
        start = 1 + (last - 1) * sample // max(1, budget.fresh_samples - 1)
        admin.modify(target_dn, {"description": [(MODIFY_REPLACE, [f"fresh {sample}"])]})
        if admin.result["result"] != 0:
            raise MeasurementError(f"the write before a page failed: {admin.result}")
        fresh.append(_index_page(client, start)[0])
    result.figures["index_after_write"] = _p50(fresh)


def _index_after_leaving(
    client: _Client, admin: Any, users: list[User], total: int, budget: Budget, result: SizeResult
) -> None:
    """The first index page after a user is deleted, then after one is renamed (a new uid,
    next to the old one in the order), each sample at another place. The changes since the
    list's last sort add up: the n-th page after deletes has n users deleted since, each one
    placed in the snapshot again. Each page's totalResults is checked."""
    if len(users) < 2 * budget.fresh_samples:
        raise MeasurementError(f"{len(users)} users to delete and rename, too few")
    last = max(1, total - INDEX_COUNT)
    for kind, offset in (("delete", 0), ("rename", budget.fresh_samples)):
        samples = []
        for sample in range(budget.fresh_samples):
            user = users[offset + sample]
            if kind == "delete":
                admin.delete(user.dn)
                total -= 1
            else:
                admin.modify_dn(user.dn, f"uid={user.uid}r")
            if admin.result["result"] != 0:
                raise MeasurementError(f"the {kind} before a page failed: {admin.result}")
            start = 1 + (last - 1) * sample // max(1, budget.fresh_samples - 1)
            seconds, listed = _index_page(client, start)
            if listed != total:
                raise MeasurementError(f"after a {kind}: totalResults {listed}, expected {total}")
            samples.append(seconds)
        result.figures[f"index_after_{kind}"] = _p50(samples)


@dataclass
class _Walk:
    """What a cursor walk saw: each page's ms and the cursor it was asked with, a digest of
    each id listed, the last totalResults, and whether it reached the last page.

    The ids are kept as 8-byte digests in one bytearray, not as a list of strings: the
    service runs in this process, and a full garbage collection visits every item of a
    list (over a walk of 200,000 users each full collection went from 10 to 21 ms as the
    list grew), a cost no client in a process of its own would add to the service's."""

    timings: list[float] = field(default_factory=list)
    cursors: list[str] = field(default_factory=list)
    digests: bytearray = field(default_factory=bytearray)
    total: int = 0
    finished: bool = False

    def add_ids(self, ids: Iterable[object]) -> None:
        for ident in ids:
            self.digests += hashlib.blake2b(str(ident).encode(), digest_size=_DIGEST).digest()

    def listed(self) -> int:
        return len(self.digests) // _DIGEST

    def distinct(self) -> int:
        view = bytes(self.digests)
        return len({view[i : i + _DIGEST] for i in range(0, len(view), _DIGEST)})


def _cursor_page(client: _Client, cursor: str) -> tuple[dict[str, Any], float]:
    response, seconds = client.call("GET", "/Users", {"count": str(CURSOR_COUNT), "cursor": cursor})
    return client.body(response), seconds * 1000


def _walk(client: _Client, max_pages: int, deadline: float) -> _Walk:
    """Page with ``cursor`` from the start, at most ``max_pages`` pages and until ``deadline``
    (monotonic)."""
    walk = _Walk()
    cursor = ""
    while len(walk.timings) < max_pages and time.monotonic() < deadline:
        body, ms = _cursor_page(client, cursor)
        walk.timings.append(ms)
        walk.cursors.append(cursor)
        walk.add_ids(r["id"] for r in body.get("Resources", ()))
        walk.total = int(body.get("totalResults", 0))
        next_cursor = body.get("nextCursor")
        if next_cursor is None:
            walk.finished = True
            return walk
        cursor = str(next_cursor)
    return walk


def _cursor_walks(
    client: _Client,
    slapd: SlapdInstance,
    admin: Any,
    target_dn: str,
    total: int,
    budget: Budget,
    deadline: float,
    result: SizeResult,
) -> None:
    max_pages = total // CURSOR_COUNT + 10  # a walk that goes past this has gone wrong
    began = time.perf_counter()
    walk = _walk(client, max_pages, deadline)
    result.figures["walk_seconds"] = time.perf_counter() - began
    timings, listed = walk.timings, walk.listed()
    if not walk.finished:
        raise MeasurementError(
            f"the cursor walk did not end: {len(timings)} pages, {listed} users listed"
        )
    distinct = walk.distinct()
    if not (listed == distinct == walk.total == total):
        raise MeasurementError(
            f"the cursor walk listed {listed} users, {distinct} distinct "
            f"({listed - distinct} twice or more); totalResults {walk.total}, expected {total}"
        )
    walk.digests = bytearray()
    result.figures["walk_pages"] = len(timings)
    edge = budget.edge_pages
    # The last page is left out: it may hold a few users only.
    body = timings[:-1] or timings
    middle = len(body) // 2
    result.figures["walk_start"] = _p50(body[:edge])
    result.figures["walk_middle"] = _p50(
        body[max(0, middle - edge // 2) : middle + (edge + 1) // 2]
    )
    result.figures["walk_end"] = _p50(body[-edge:])
    result.figures["walk_any"] = _p50(timings)
    # A page right after a write, at places spread over the walk (the cursors it was asked
    # with are still valid): each one sorts every user anew.
    fresh = []
    last = max(0, len(walk.cursors) - 2)
    for sample in range(budget.fresh_samples):
        cursor = walk.cursors[last * sample // max(1, budget.fresh_samples - 1)]
        admin.modify(target_dn, {"description": [(MODIFY_REPLACE, [f"cursor {sample}"])]})
        if admin.result["result"] != 0:
            raise MeasurementError(f"the write before a page failed: {admin.result}")
        fresh.append(_cursor_page(client, cursor)[1])
    result.figures["walk_after_write"] = _p50(fresh)
    bound = min(deadline, time.monotonic() + budget.writer_seconds)
    with _Writer(slapd, target_dn, WRITE_INTERVAL_SECONDS, budget.writer_pages * 10) as writer:
        written = _walk(client, budget.writer_pages, bound).timings
    if writer.error:
        raise MeasurementError(f"the writer's modify failed: {writer.error}")
    result.figures["walk_writes_any"] = _p50(written)
    result.figures["walk_writes_pages"] = len(written)
    result.figures["walk_writes_made"] = writer.writes


def _group(
    client: _Client, data: Dataset, toggler: User, budget: Budget, result: SizeResult
) -> None:
    path = f"/Groups/{quote(data.group_cn)}"
    pid = os.getpid()
    seconds = []
    growth = []
    size = 0
    for _ in range(budget.group_gets):
        reset_peak_rss(pid)
        before = vm_kib(pid, "VmRSS") or 0
        response, took = client.call("GET", path)
        seconds.append(took)
        growth.append(((vm_kib(pid, "VmHWM") or 0) - before) / 1024)
        size = sum(len(chunk) for chunk in response.iter_bytes())
    members = client.body(client.call("GET", path)[0]).get("members") or []  # unmeasured
    if len(members) != data.members:
        raise MeasurementError(f"the group has {len(members)} members, expected {data.members}")
    result.figures["group_members"] = len(members)
    del members
    result.figures["group_get"] = _p50(seconds)
    result.figures["group_memory"] = max(growth)
    result.figures["group_body"] = size / 1e6
    patch_ms = []
    for index in range(budget.group_patches):
        if index % 2 == 0:
            operation: dict[str, Any] = {
                "op": "add",
                "path": "members",
                "value": [{"value": toggler.id}],
            }
        else:
            operation = {"op": "remove", "path": f'members[value eq "{toggler.id}"]'}
        body = f'{{"schemas":["{PATCH_URN}"],"Operations":[{_json(operation)}]}}'.encode()
        _, took = client.call("PATCH", path, {"excludedAttributes": "members"}, body)
        patch_ms.append(took * 1000)
    result.figures["group_patch"] = _p50(patch_ms)


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def measure_size(users: int, budget: Budget, log: Callable[[str], None]) -> SizeResult:
    """Load a throwaway slapd with ``users`` users and measure it (see the module's doc)."""
    result = SizeResult(users)
    result.figures["load_start"] = _load_average()
    size_began = time.monotonic()
    deadline = time.monotonic() + SIZE_DEADLINE_SECONDS
    members = max(1, users // 10)
    pools = {"read": budget.warmup + 2 * budget.lookups, "toggle": 1}
    with (
        tempfile.TemporaryDirectory(prefix="scim-scale-") as folder,
        SlapdInstance(maxsize=map_size(users)) as slapd,
    ):
        began = time.perf_counter()
        data = prepare(slapd, Path(folder), users, members, pools)
        result.figures["loading"] = time.perf_counter() - began
        log(f"{users:,} users: loaded in {result.figures['loading']:.1f} s")
        environ = {**os.environ, **slapd.service_settings()}
        backend = LdapBackend(LdapSettings.from_environ(environ))
        admin = admin_connection(slapd)
        try:
            client = _Client(ScimService(backend, ServiceConfig(cursor_secret=_CURSOR_SECRET)))
            # As a worker of the shipped gunicorn configuration does once the app is loaded
            # (scim_flask.gunicorn_conf.post_worker_init); undone when this size is done.
            gc.collect()
            gc.freeze()
            _lookups(client, data.pools.read, budget, result)
            log(f"{users:,} users: lookups done")
            # The user the writes modify: a warm-up one, looked up no more.
            target_dn = data.pools.read[0].dn
            slapd_pid = slapd.pid
            if slapd_pid is None or not reset_peak_rss(slapd_pid):
                raise MeasurementError("cannot reset slapd's peak RSS (VmHWM)")
            rss_before = vm_kib(slapd_pid, "VmRSS") or 0
            # From before the first sorted page on: its sort session stays in slapd's memory.
            with _AnonSampler(slapd_pid, SAMPLE_INTERVAL_SECONDS, SIZE_DEADLINE_SECONDS) as anon:
                total = _index_page(client, 1)[1]
                result.figures["total"] = total
                _index_pages(client, admin, target_dn, total, budget, result)
                log(f"{users:,} users: index pages done")
                _cursor_walks(client, slapd, admin, target_dn, total, budget, deadline, result)
                log(f"{users:,} users: cursor walks done")
                # Users looked up before (the first, the writes' target, left alone).
                leaving = data.pools.read[1 : 1 + 2 * budget.fresh_samples]
                _index_after_leaving(client, admin, leaving, total, budget, result)
                log(f"{users:,} users: index pages after deletes and renames done")
            peak = vm_kib(slapd_pid, "VmHWM") or 0
            result.figures["slapd_peak"] = (peak - rss_before) / 1024
            result.figures["slapd_anon"] = (anon.peak - anon.before) / 1024
            _group(client, data, data.pools.toggle[0], budget, result)
            log(f"{users:,} users: group done")
        finally:
            gc.unfreeze()
            admin.unbind()
            backend.close()
    result.figures["load_end"] = _load_average()
    result.figures["size_seconds"] = time.monotonic() - size_began
    return result


@dataclass(frozen=True)
class Row:
    """One row of the table: a figure per size, and its target if it has one."""

    key: str
    label: str
    digits: int = 1
    target: str = ""
    judge: Callable[[Mapping[int, SizeResult]], str] | None = None


TARGET_SIZE = 1_000_000


def _at(results: Mapping[int, SizeResult], size: int, key: str) -> float | None:
    found = results.get(size)
    return None if found is None else found.figures.get(key)


def _limit(key: str, limit: float, unit: str) -> Callable[[Mapping[int, SizeResult]], str]:
    def judge(results: Mapping[int, SizeResult]) -> str:
        value = _at(results, TARGET_SIZE, key)
        if value is None:
            return "not measured"
        figure = f"({value:,.1f} {unit})"
        return f"met {figure}" if value <= limit else f"**not met** {figure}"

    return judge


def _ratio(key: str, base: int, limit: float) -> Callable[[Mapping[int, SizeResult]], str]:
    def judge(results: Mapping[int, SizeResult]) -> str:
        top, bottom = _at(results, TARGET_SIZE, key), _at(results, base, key)
        if top is None or bottom is None or bottom <= 0:
            return "not measured"
        ratio = top / bottom
        return f"met ({ratio:.2f}x)" if ratio <= limit else f"**not met** ({ratio:.2f}x)"

    return judge


def _both(*judges: Callable[[Mapping[int, SizeResult]], str]) -> Callable[..., str]:
    def judge(results: Mapping[int, SizeResult]) -> str:
        return "; ".join(j(results) for j in judges)

    return judge


ROWS: tuple[Row, ...] = (
    Row("total", "users listed (totalResults)", 0),
    Row("loading", "loading (slapadd and checks), s", 1),
    Row("size_seconds", "time for this size (loading included), s", 0),
    Row("load_start", "load average (1 min) at start", 2),
    Row("load_end", "load average (1 min) at end", 2),
    Row(
        "lookup_filter",
        'GET /Users?filter=userName eq "…", p50 ms',
        2,
        "≤ 1.1x the 10,000 figure at 1,000,000",
        _ratio("lookup_filter", 10_000, 1.1),
    ),
    Row(
        "lookup_id",
        "GET /Users/{id}, p50 ms",
        2,
        "≤ 1.1x the 10,000 figure at 1,000,000",
        _ratio("lookup_id", 10_000, 1.1),
    ),
    Row("index_start", "index page (count=100) at the start, nothing written, p50 ms"),
    Row("index_middle", "index page in the middle, nothing written, p50 ms"),
    Row("index_end", "index page at the end, nothing written, p50 ms"),
    Row(
        "index_any",
        "any index page, nothing written (snapshot reused), p50 ms",
        1,
        "≤ 50 ms at 1,000,000",
        _limit("index_any", 50, "ms"),
    ),
    Row(
        "index_after_write",
        "first index page after a write, p50 ms",
        1,
        "≤ 150 ms at 1,000,000",
        _limit("index_after_write", 150, "ms"),
    ),
    Row(
        "index_after_delete",
        "first index page after a user is deleted (each sample one more since the sort), p50 ms",
        1,
        "≤ 150 ms at 1,000,000",
        _limit("index_after_delete", 150, "ms"),
    ),
    Row(
        "index_after_rename",
        "first index page after a user is renamed (each sample one more since), p50 ms",
        1,
        "≤ 150 ms at 1,000,000",
        _limit("index_after_rename", 150, "ms"),
    ),
    Row(
        "walk_seconds",
        "whole cursor walk (count=200), s",
        1,
        "≤ 60 s at 1,000,000; ≤ 11x the 100,000 walk",
        _both(_limit("walk_seconds", 60, "s"), _ratio("walk_seconds", 100_000, 11)),
    ),
    Row("walk_pages", "pages of that walk (every user once: checked)", 0),
    Row("walk_start", "cursor page at the start of the walk, p50 ms"),
    Row("walk_middle", "cursor page in the middle, p50 ms"),
    Row("walk_end", "cursor page at the end, p50 ms"),
    Row(
        "walk_any",
        "any cursor page of the walk, p50 ms",
        1,
        "≤ 1.5x the 10,000 figure at 1,000,000",
        _ratio("walk_any", 10_000, 1.5),
    ),
    Row("walk_after_write", "cursor page right after a write (spread over the walk), p50 ms"),
    Row(
        "walk_writes_any",
        "cursor page while a user is modified once a second, p50 ms",
        1,
        "≤ 1.5x the 10,000 figure at 1,000,000",
        _ratio("walk_writes_any", 10_000, 1.5),
    ),
    Row("walk_writes_pages", "pages of that walk (bounded)", 0),
    Row("walk_writes_made", "writes made during it", 0),
    Row(
        "slapd_peak",
        "slapd peak RSS growth over the sorted pages (VmHWM), MB",
        0,
        "≤ 1,024 MB at 1,000,000",
        _limit("slapd_peak", 1024, "MB"),
    ),
    Row("slapd_anon", "slapd anonymous memory growth, sampled peak, MB", 0),
    Row("group_members", "members of the group", 0),
    Row(
        "group_get",
        "GET /Groups/{id} with members, p50 s",
        2,
        "≤ 1 s with 100,000 members",
        _limit("group_get", 1.0, "s"),
    ),
    Row(
        "group_memory",
        "that GET: this process's peak memory growth (largest), MB",
        1,
        "≤ 50 MB with 100,000 members",
        _limit("group_memory", 50, "MB"),
    ),
    Row("group_body", "that GET: body size, MB", 2),
    Row(
        "group_patch",
        "PATCH /Groups/{id}?excludedAttributes=members (add or remove one), p50 ms",
        1,
        "≤ 10 ms with 100,000 members",
        _limit("group_patch", 10, "ms"),
    ),
)


def _cell(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _machine() -> str:
    info = machine_info("python")
    return (
        f"{info['cpu']}, {info['cores']} cores, {info['memory_gib']:.0f} GiB, "
        f"Python {info['python']}, {info['openldap']}, ldap3 {info['ldap3']}"
    )


def render(
    results: Mapping[int, SizeResult],
    sizes: Iterable[int],
    started: datetime.datetime,
    total_seconds: float,
    budget: Budget,
) -> str:
    """The Markdown: heading, how it was measured, the table, the run's time."""
    ordered = list(sizes)
    lines = [
        "# scim-ldap scale curve on OpenLDAP",
        "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC. Machine: {_machine()}.",
        "",
        "Measured in one process through `ScimService.handle` over the LDAP plugin: **no HTTP** "
        "(no gunicorn, no client socket; the plugin's LDAP connections to a throwaway slapd on "
        "127.0.0.1, loaded offline with slapadd). Cursor paging on. Each size has one group of a "
        f"tenth of its users. Samples: {budget.lookups} lookups of each kind after "
        f"{budget.warmup} warm-ups, {budget.index_samples} index pages per place, "
        f"{budget.fresh_samples} pages after a write, p50 of {budget.edge_pages} walk pages per "
        f"place, up to {budget.writer_pages} pages with writes, {budget.group_gets} group GETs, "
        f"{budget.group_patches} PATCHes. Targets are judged at the size they name.",
        "",
        "| figure | " + " | ".join(f"{s:,} users" for s in ordered) + " | target | met? |",
        "|---|" + "---:|" * len(ordered) + "---|---|",
    ]
    for row in ROWS:
        cells = [_cell(_at(results, s, row.key), row.digits) for s in ordered]
        verdict = row.judge(results) if row.judge else ""
        lines.append(f"| {row.label} | " + " | ".join(cells) + f" | {row.target} | {verdict} |")
    lines += ["", f"Total run time: {total_seconds:,.0f} s ({total_seconds / 60:.1f} min)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", help="comma-separated user counts (default 10000,100000,1000000)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        nargs="?",
        const=DEFAULT_OUTPUT,
        help=f"also write the Markdown to FILE ({DEFAULT_OUTPUT} when FILE is left out)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="300 and 1,000 users, a few samples each"
    )
    args = parser.parse_args(argv)
    budget = SMOKE_BUDGET if args.smoke else Budget()
    if args.sizes:
        sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    else:
        sizes = list(SMOKE_SIZES if args.smoke else DEFAULT_SIZES)
    if not sizes or min(sizes) < 100:
        parser.error("--sizes: at least 100 users each")
    started = datetime.datetime.now(datetime.UTC)
    began = time.monotonic()

    def log(text: str) -> None:
        print(f"[{time.monotonic() - began:7.1f} s] {text}", file=sys.stderr, flush=True)

    log(f"sizes {', '.join(f'{s:,}' for s in sizes)} on {os.cpu_count()} cores")
    results: dict[int, SizeResult] = {}
    for size in sizes:
        try:
            results[size] = measure_size(size, budget, log)
        except MeasurementError as error:
            print(f"{size:,} users: {error}", file=sys.stderr, flush=True)
            return 1
    text = render(results, sizes, started, time.monotonic() - began, budget)
    print(text, end="", flush=True)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
