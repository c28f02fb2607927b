"""The production setup: gunicorn sync workers (scim_flask.gunicorn_conf) configured by SCIM_*.

Several worker processes, each with its own directory connection, race for the same user;
after a directory restart every worker's idle connection is stale, and the first write of
each worker must still succeed (a create is never retried, so it must not be sent on a
connection the server has closed).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from reliability import (
    TOKEN,
    Result,
    Served,
    read_users,
    run_threads,
    shipped_gunicorn,
    unique,
    user_body,
)

from scim_core.testing.slapd import SlapdInstance, find_free_port

pytestmark = pytest.mark.slapd

REPO = Path(__file__).resolve().parents[2]
WORKERS = 3
CLIENTS = 20


@pytest.fixture(scope="module")
def directory() -> Iterator[SlapdInstance]:
    with SlapdInstance() as instance:
        yield instance


@pytest.fixture(scope="module")
def gunicorn(
    directory: SlapdInstance, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    port = find_free_port()
    environment = dict(
        os.environ,
        SCIM_PORT=str(port),
        SCIM_WORKERS=str(WORKERS),
        SCIM_TOKENS_SHA256="gunicorn=" + hashlib.sha256(TOKEN.encode()).hexdigest(),
        SCIM_LOG_LEVEL="WARNING",
        **directory.service_settings(),
    )
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    served = Served("127.0.0.1", port)

    def ready() -> bool:
        return served.call("GET", "/healthz", timeout=1).status == 200

    with shipped_gunicorn(environment, log, ready):
        yield served


def together(count: int, send: Callable[[int], Result]) -> list[Result]:
    """Send ``send(i)`` from ``count`` threads released at once."""
    results: list[Result | None] = [None] * count
    barrier = threading.Barrier(count)

    def client(index: int) -> None:
        barrier.wait(timeout=30)
        results[index] = send(index)

    run_threads(count, client, timeout=60)
    return [r for r in results if r is not None]


def test_identical_creates_across_worker_processes(
    directory: SlapdInstance, gunicorn: Served
) -> None:
    name = unique("gtwin")
    results = together(CLIENTS, lambda _: gunicorn.call("POST", "/Users", user_body(name)))
    assert sorted(r.status for r in results) == [201] + [409] * (CLIENTS - 1), [
        r.describe() for r in results
    ]
    assert list(read_users(directory, name)) == [name]


def test_the_first_write_of_every_worker_after_a_directory_restart_succeeds(
    directory: SlapdInstance, gunicorn: Served
) -> None:
    # Every worker holds a connection (many concurrent creates reach all of them). Without
    # the check for connections the server closed, one create per worker answered 503 here.
    warm_prefix = unique("gwarm")
    warm = together(
        CLIENTS, lambda i: gunicorn.call("POST", "/Users", user_body(f"{warm_prefix}-{i}"))
    )
    assert {r.status for r in warm} == {201}
    directory.restart()
    started = time.monotonic()
    prefix = unique("grestart")
    results = together(
        CLIENTS,
        lambda i: gunicorn.call("POST", "/Users", user_body(f"{prefix}-{i}", "Pw-restart-123")),
    )
    assert sorted(r.status for r in results) == [201] * CLIENTS, [r.describe() for r in results]
    assert len(read_users(directory, prefix)) == CLIENTS
    print(
        f"\n[gunicorn] {CLIENTS} creates after a restart: all 201 "
        f"in {time.monotonic() - started:.2f}s"
    )
