"""Failover across two replicating providers (``SCIM_LDAP_URL`` with two URLs).

Two slapd instances replicate each other (multi-provider syncrepl). Under a bounded load of
reads and writes the first one stops; the service goes on through the second, and once the
first is back every acknowledged write is on both.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from reliability import (
    SOAK,
    Recorder,
    Result,
    Served,
    is_scim_503,
    make_app,
    patch_body,
    read_users,
    run_threads,
    scale,
    serve,
    unique,
    user_body,
    wait_until,
)
from scim_http import settings_for

from scim_core.backends.ldap import LdapBackend
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.testing.slapd import SlapdInstance, find_free_port

pytestmark = pytest.mark.slapd

WORKERS = scale(4, 8)
ROUNDS_PER_WORKER = scale(40, 2500)
LOAD_SECONDS = scale(30, 600)
SWITCHES = scale(1, 20)
ROUNDS_BETWEEN_SWITCHES = scale(30, 300)
#: How long after a stop a read may miss a user created on the stopped provider before it.
REPLICATION_GRACE = 2.0
REPLICATION_WAIT = 30.0


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[SlapdInstance, SlapdInstance]]:
    """Two providers, each a syncrepl consumer of the other; the second starts empty."""
    port_a = find_free_port()
    port_b = find_free_port()
    while port_b == port_a:
        port_b = find_free_port()
    first = SlapdInstance(port=port_a, server_id=1, peers=[f"ldap://127.0.0.1:{port_b}"])
    second = SlapdInstance(
        port=port_b, server_id=2, peers=[f"ldap://127.0.0.1:{port_a}"], seed=False
    )
    try:
        first.start()
        second.start()
        # The second gets everything (the service account included) from the first.
        factory = ConnectionFactory(settings_for(second))
        assert wait_until(lambda: _binds(factory), REPLICATION_WAIT), "replication did not start"
        yield first, second
    finally:
        first.close()  # the first one first: stopping the second first takes 2.5 s
        second.close()


def _binds(factory: ConnectionFactory) -> bool:
    try:
        with factory.fresh():
            return True
    except Exception:
        return False


def _allowed(result: Result) -> bool:
    if result.status == 503:
        return is_scim_503(result)
    return result.status in (200, 201)


def test_reads_and_writes_go_on_through_the_second_provider(
    pair: tuple[SlapdInstance, SlapdInstance],
) -> None:
    first, second = pair
    backend = LdapBackend(settings_for(first, first.url, second.url))
    prefix = unique("failover")
    recorder = Recorder()
    created: dict[str, str] = {}  # userName -> id
    created_at: dict[str, float] = {}  # id -> when its create was answered
    titles: dict[str, str] = {}  # userName -> last title answered 200
    stale_lists: list[str] = []  # list queries that missed a user created just before
    lock = threading.Lock()
    progress = threading.Semaphore(0)
    deadline = time.monotonic() + LOAD_SECONDS
    switches: list[dict[str, float]] = []
    control_errors: list[BaseException] = []

    with serve(make_app(backend), backend, threads=WORKERS + 2) as served:

        def worker(number: int) -> None:
            for index in range(ROUNDS_PER_WORKER):
                if time.monotonic() > deadline:
                    return
                _round(served, f"{prefix}-{number}-{index}", index)
                progress.release()

        def _round(served: Served, name: str, index: int) -> None:
            result = recorder.add(served.call("POST", "/Users", user_body(name)))
            if result.status != 201:
                time.sleep(0.05)
                return
            user_id = result.body["id"]
            with lock:
                created[name] = user_id
                created_at[user_id] = result.started + result.elapsed
            recorder.add(served.call("GET", f"/Users/{user_id}"))
            query = quote(f'userName eq "{name}"')
            listed = recorder.add(served.call("GET", f"/Users?filter={query}"))
            if listed.status == 200 and listed.body["totalResults"] != 1:
                with lock:
                    stale_lists.append(name)
            title = f"title-{index}"
            patched = recorder.add(
                served.call(
                    "PATCH",
                    f"/Users/{user_id}",
                    patch_body({"op": "replace", "path": "title", "value": title}),
                )
            )
            if patched.status == 200:
                with lock:
                    titles[name] = title

        def controller() -> None:
            try:
                for _ in range(SWITCHES):
                    for _ in range(ROUNDS_BETWEEN_SWITCHES):
                        if not progress.acquire(timeout=15):
                            return
                    first.stop()
                    stopped = time.monotonic()
                    for _ in range(ROUNDS_BETWEEN_SWITCHES):
                        if not progress.acquire(timeout=15):
                            break
                    first.start()
                    switches.append({"stopped": stopped, "restarted": time.monotonic()})
            except BaseException as error:  # reported by the test's thread
                control_errors.append(error)

        control = threading.Thread(target=controller, daemon=True)
        control.start()
        try:
            run_threads(WORKERS, worker, timeout=LOAD_SECONDS + 60)
        finally:
            control.join(timeout=60)
            first.start()
    backend.close()

    assert not control_errors, control_errors
    assert switches, f"the first provider was never stopped: {recorder.statuses()}"

    def not_replicated_yet(result: Result) -> bool:
        # A read by id that reaches the second provider before the create made on the first
        # a moment earlier has replicated there finds no user (replication delay, documented
        # in docs/reliability.md): allowed only for a user created before a stop and asked
        # for within REPLICATION_GRACE seconds after it.
        user_id = result.path.rsplit("/", 1)[-1]
        done = created_at.get(user_id)
        return (
            result.status == 404
            and done is not None
            and any(
                done <= s["stopped"] <= result.started <= s["stopped"] + REPLICATION_GRACE
                for s in switches
            )
        )

    lagged = [r for r in recorder.results if not_replicated_yet(r)]
    failures = recorder.failures(lambda r: _allowed(r) or not_replicated_yet(r))
    # When: each switch, and each failing read's start against its user's create.
    timeline = [
        f"{r.path}: started {r.started:.3f}, its create answered at "
        f"{created_at.get(r.path.rsplit('/', 1)[-1], float('nan')):.3f}"
        for r in recorder.results
        if r.status == 404 and not not_replicated_yet(r)
    ]
    assert not failures, "\n".join([*failures[:20], f"switches: {switches}", *timeline[:20]])
    statuses = recorder.statuses()
    # Only requests caught in flight by the stop may fail: creates (never retried, they are
    # not idempotent) on a connection that dies. Reads and modifies are retried once.
    unavailable = [r for r in recorder.results if r.status == 503]
    assert len(unavailable) <= WORKERS * len(switches), statuses
    assert all(r.method == "POST" for r in unavailable), [r.describe() for r in unavailable]
    # Failover time: from the stop to the first request started after it that succeeded.
    failover = []
    for switch in switches:
        later = [
            r
            for r in recorder.results
            if switch["stopped"] < r.started < switch["restarted"] and r.status in (200, 201)
        ]
        assert later, "nothing succeeded while the first provider was down"
        failover.append(min(r.started + r.elapsed for r in later) - switch["stopped"])

    # Every acknowledged write reaches both providers.
    def replicated() -> bool:
        return all(
            set(created) <= set(entries)
            and all(entries[n].get("title") == [t] for n, t in titles.items())
            for entries in (read_users(first, prefix), read_users(second, prefix))
        )

    started = time.monotonic()
    assert wait_until(replicated, REPLICATION_WAIT, interval=0.2), "writes not on both providers"
    converged = time.monotonic() - started
    print(
        f"\n[failover] workers={WORKERS} requests={len(recorder.results)} statuses={statuses} "
        f"stops={len(switches)} creates={len(created)} patches={len(titles)} "
        f"failover={[round(f, 3) for f in failover]}s stale_list_reads={len(stale_lists)} "
        f"reads_before_replication={len(lagged)} "
        f"converged_after_restart={converged:.2f}s soak={SOAK}"
    )


def test_the_connection_stays_on_the_second_url_until_it_breaks(
    pair: tuple[SlapdInstance, SlapdInstance],
) -> None:
    """What happens to a thread's connection after a failover (documented, not a wish)."""
    first, second = pair
    factory = ConnectionFactory(settings_for(first, first.url, second.url))

    def port(connection: Any) -> int:
        return int(connection.server.port)

    try:
        assert factory.run(port) == first.port
        first.stop()
        # The dead connection fails, is replaced by one to the second URL, and the read is
        # retried there.
        assert factory.run(lambda c: (c.extend.standard.who_am_i(), port(c))[1]) == second.port
        first.start()
        # The first is back, but a working connection is kept: it stays on the second ...
        assert factory.run(port) == second.port
        # ... until it breaks or is renewed; a new connection tries the URLs in order again.
        factory.discard()
        assert factory.run(port) == first.port
    finally:
        factory.close()
        first.start()
