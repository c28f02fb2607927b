"""Helpers for the reliability tests: a real HTTP server, a plain HTTP client, bounded loads.

The tests start their own slapd processes and serve the Flask app over real sockets on
127.0.0.1, so that several threads with several directory connections are really in play.
Every load is bounded in count and in time and stops by itself. ``SCIM_SOAK=1`` makes the
loads larger and longer (``make soak``).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scim_http
from ldap3 import BASE, NONE, Connection, Server
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler

from scim_core.backends.ldap import LdapBackend
from scim_core.testing.slapd import SlapdInstance

TOKEN = "reliability-token"
SCIM = "/scim/v2"
SOAK = os.environ.get("SCIM_SOAK", "") == "1"
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"
#: Attributes every SCIM create writes into the user's entry.
CREATE_ATTRIBUTES = ("uid", "cn", "sn", "givenName", "mail")


REPO = Path(__file__).resolve().parents[2]


def serve_environment(directory: Any, port: int, **extra: str) -> dict[str, str]:
    """The environment of ``scim-ldap serve`` on ``directory``: one worker on 127.0.0.1:``port``
    accepting :data:`TOKEN`, and ``extra``."""
    return dict(
        os.environ,
        SCIM_TOKENS_SHA256="idp=" + hashlib.sha256(TOKEN.encode()).hexdigest(),
        SCIM_LOG_LEVEL="WARNING",
        SCIM_BIND=f"127.0.0.1:{port}",
        SCIM_WORKERS="1",
        **directory.service_settings(),
        **extra,
    )


@contextmanager
def shipped_gunicorn(
    environment: Mapping[str, str], log: Path, ready: Callable[[], bool]
) -> Iterator[subprocess.Popen[bytes]]:
    """``scim-ldap serve`` (gunicorn with the shipped ``scim_flask.gunicorn_conf``), started and
    stopped by PID.

    :param ready: true once the server answers; start-up fails after 30 s with the log's tail.
    """
    command = [sys.executable, "-m", "scim_flask.cli", "serve"]
    with served(command, environment, log, ready) as process:
        yield process


@contextmanager
def served(
    command: list[str], environment: Mapping[str, str], log: Path, ready: Callable[[], bool]
) -> Iterator[subprocess.Popen[bytes]]:
    """A server process started from the repository with ``command``, stopped by PID.

    :param ready: true once the server answers; start-up fails after 30 s with the log's tail.
    """
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=dict(environment),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
    try:
        up = wait_until(lambda: process.poll() is None and ready(), timeout=30, interval=0.1)
        assert up, f"{command[2]} did not start: {log.read_text(errors='replace')[-2000:]}"
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def scale(normal: int, soak: int) -> int:
    """The normal figure, or the soak figure under ``SCIM_SOAK=1``."""
    return soak if SOAK else normal


def make_app(backend: LdapBackend) -> Any:
    """The Flask app over ``backend``, accepting :data:`TOKEN`."""
    return scim_http.make_app(backend, TOKEN, log_level="WARNING", name="reliability")


class _QuietHandler(WSGIRequestHandler):
    """No access log line per request (the app logs its own)."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class _PooledServer(BaseWSGIServer):
    """werkzeug's server with a fixed pool of request threads, like gunicorn's gthread worker.

    Each pool thread keeps its own directory connection across requests (the service's
    per-thread connection), so a fault hits connections that are open and in use.
    """

    daemon_threads = True

    def __init__(self, app: Any, threads: int) -> None:
        super().__init__("127.0.0.1", 0, app, handler=_QuietHandler)
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="scim-http")

    def process_request(self, request: Any, client_address: Any) -> None:
        self.pool.submit(self._serve, request, client_address)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)


@dataclass
class Served:
    """The app served on 127.0.0.1: its base URL and a way to call it."""

    host: str
    port: int

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        token: str | None = TOKEN,
        timeout: float = 60,
    ) -> Result:
        """One request on a new connection (``path`` under /scim/v2 unless a health endpoint)."""
        if not path.startswith(("/readyz", "/healthz")):
            path = SCIM + path
        return request(self.host, self.port, method, path, body, headers, token, timeout)


@contextmanager
def serve(app: Any, backend: LdapBackend, threads: int = 8) -> Iterator[Served]:
    """Serve ``app`` on a free port of 127.0.0.1 with ``threads`` request threads.

    On the way out the server stops and every pool thread closes its directory connections.
    """
    server = _PooledServer(app, threads)
    loop = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    loop.start()
    try:
        yield Served("127.0.0.1", server.server_port)
    finally:
        server.shutdown()
        loop.join(timeout=10)
        # One close job per pool thread: the barrier keeps each thread on exactly one job.
        barrier = threading.Barrier(threads)

        def close() -> None:
            barrier.wait(timeout=10)
            backend.close()

        for future in [server.pool.submit(close) for _ in range(threads)]:
            future.result(timeout=15)
        server.pool.shutdown(wait=True)
        server.server_close()


@dataclass(frozen=True)
class Result:
    """What one HTTP request gave: status, headers, parsed body and how long it took."""

    method: str
    path: str
    status: int
    headers: Mapping[str, str]
    body: Any
    elapsed: float
    started: float = 0.0
    error: str | None = None

    def describe(self) -> str:
        detail = self.error or json.dumps(self.body)[:300]
        return f"{self.method} {self.path} -> {self.status} in {self.elapsed:.2f}s: {detail}"


def request(
    host: str,
    port: int,
    method: str,
    path: str,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    token: str | None = TOKEN,
    timeout: float = 60,
) -> Result:
    """Send one request with ``http.client``; a transport failure is status 0 with its text."""
    all_headers = {"Accept": "application/scim+json", **(headers or {})}
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        all_headers["Content-Type"] = "application/scim+json"
    started = time.monotonic()
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=data, headers=all_headers)
        response = connection.getresponse()
        raw = response.read()
        response_headers = {k.lower(): v for k, v in response.getheaders()}
        status = response.status
    except OSError as error:
        elapsed = time.monotonic() - started
        return Result(method, path, 0, {}, None, elapsed, started, repr(error))
    finally:
        connection.close()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode("utf-8", "replace")
    elapsed = time.monotonic() - started
    return Result(method, path, status, response_headers, parsed, elapsed, started)


def is_scim_503(result: Result) -> bool:
    """A proper "directory unavailable" answer: 503, a SCIM error body and Retry-After."""
    return (
        result.status == 503
        and isinstance(result.body, dict)
        and result.body.get("schemas") == [ERROR_URN]
        and result.body.get("status") == "503"
        and result.headers.get("retry-after", "").isdigit()
    )


def unique(prefix: str) -> str:
    """A userName nobody else uses on a shared directory."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def user_body(user_name: str, password: str | None = None, **extra: Any) -> dict[str, Any]:
    """A SCIM User create body."""
    body: dict[str, Any] = {
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": user_name,
        "name": {"givenName": "Load", "familyName": user_name},
        "emails": [{"value": f"{user_name}@example.org", "primary": True}],
        **extra,
    }
    if password is not None:
        body["password"] = password
    return body


def patch_body(*operations: Mapping[str, Any]) -> dict[str, Any]:
    """An RFC 7644 §3.5.2 PatchOp envelope."""
    return {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": list(operations),
    }


@dataclass
class Recorder:
    """Thread-safe list of results with the counts the reports quote."""

    results: list[Result] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, result: Result) -> Result:
        with self.lock:
            self.results.append(result)
        return result

    def statuses(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for result in self.results:
            counts[result.status] = counts.get(result.status, 0) + 1
        return dict(sorted(counts.items()))

    def failures(self, allowed: Callable[[Result], bool]) -> list[str]:
        return [r.describe() for r in self.results if not allowed(r)]


def run_threads(count: int, target: Callable[[int], None], *, timeout: float) -> None:
    """Run ``target(i)`` in ``count`` threads and wait for all (bounded); re-raise a failure."""
    errors: list[BaseException] = []

    def wrapped(index: int) -> None:
        try:
            target(index)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=wrapped, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(deadline - time.monotonic(), 0.1))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, f"load threads still running after {timeout}s: {alive}"
    if errors:
        raise errors[0]


@contextmanager
def admin_connection(instance: SlapdInstance) -> Iterator[Connection]:
    """A connection bound as the rootdn of ``instance`` (reads everything, ignores ACLs)."""
    server = Server(instance.url, get_info=NONE, connect_timeout=5)
    connection = Connection(
        server, instance.admin_dn, instance.admin_password, receive_timeout=10, auto_bind=True
    )
    try:
        yield connection
    finally:
        connection.unbind()


def read_users(instance: SlapdInstance, prefix: str) -> dict[str, dict[str, list[Any]]]:
    """uid -> attributes of every user entry whose uid starts with ``prefix``, as the admin."""
    with admin_connection(instance) as connection:
        connection.search(
            instance.users_base,
            f"(uid={prefix}*)",
            attributes=[*CREATE_ATTRIBUTES, "title", "entryUUID"],
        )
        return {
            str(entry["attributes"]["uid"][0]): dict(entry["attributes"])
            for entry in connection.response or ()
            if entry.get("type") == "searchResEntry"
        }


def group_members(instance: SlapdInstance, group_dn: str) -> set[str]:
    """The member DNs (lower case) of one group, read as the admin."""
    with admin_connection(instance) as connection:
        connection.search(group_dn, "(objectClass=*)", BASE, attributes=["member"])
        entries = [e for e in connection.response or () if e.get("type") == "searchResEntry"]
        return (
            {str(v).lower() for v in entries[0]["attributes"].get("member", [])}
            if entries
            else set()
        )


def can_bind(instance: SlapdInstance, dn: str, password: str) -> bool:
    """Whether a simple bind as ``dn`` with ``password`` succeeds."""
    connection = Connection(Server(instance.url, get_info=NONE, connect_timeout=5), dn, password)
    try:
        return bool(connection.bind())
    finally:
        connection.unbind()


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
