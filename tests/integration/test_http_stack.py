"""The HTTP stack as shipped: gunicorn with scim_flask.gunicorn_conf, real sockets, real slapd.

What a client can do to the server itself rather than to the SCIM logic: hold connections open
and send nothing, send a request a byte at a time, announce a body and never send it, send a body
of a gigabyte, break the HTTP framing, forge the Host header, guess tokens. Every answer must be
an RFC 7644 error body, nobody else may have to wait, and no worker may grow with the attack.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from reliability import TOKEN, shipped_gunicorn, wait_until
from reliability import served as served_process

from scim_core.testing.slapd import SlapdInstance, find_free_port

pytestmark = pytest.mark.slapd

REPO = Path(__file__).resolve().parents[2]
SCIM_JSON = "application/scim+json"
WORKERS = 2
#: The shipped one thread (each request runs in the worker's event loop thread) and a pool.
THREAD_COUNTS = (1, 2)
READ_TIMEOUT = 2.0
LIMIT = 1024 * 1024


class Server:
    """One gunicorn master (the shipped config) and how to reach it."""

    def __init__(
        self, port: int, process: subprocess.Popen[bytes] | None, log: Path, threads: int = 1
    ) -> None:
        self.port = port
        self.threads = threads
        self.process = process
        self.log = log

    def workers(self) -> list[int]:
        assert self.process is not None
        text = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        return [int(pid) for pid in text.split()]

    def send(self, data: bytes, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
        """Send raw bytes on a new connection; (status, lower-cased headers, body)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            with contextlib.suppress(OSError):  # the server may answer before it all went out
                sock.sendall(data)
            response = http.client.HTTPResponse(sock)
            response.begin()
            body = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def request(
    method: str,
    path: str,
    *,
    token: str | None = TOKEN,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    host: str = "127.0.0.1",
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body is not None:
        lines += [f"Content-Length: {len(body)}", f"Content-Type: {SCIM_JSON}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def scim_error(answer: tuple[int, dict[str, str], bytes], status: int) -> dict[str, object]:
    """Assert an RFC 7644 error body with ``status`` and a Server header naming no software."""
    got, headers, body = answer
    assert got == status, (got, body[:300])
    assert headers["content-type"].startswith(SCIM_JSON), headers
    assert "gunicorn" not in headers.get("server", "").lower(), headers
    document = json.loads(body)
    assert document["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert document["status"] == str(status)
    return document


@contextlib.contextmanager
def gunicorn(
    directory: SlapdInstance, tmp: Path, threads: int = 1, **settings: str
) -> Iterator[Server]:
    port = find_free_port()
    environment = dict(
        os.environ,
        SCIM_PORT=str(port),
        SCIM_WORKERS=str(WORKERS),
        SCIM_THREADS=str(threads),
        SCIM_READ_TIMEOUT=str(READ_TIMEOUT),
        SCIM_TOKENS_SHA256="idp=" + hashlib.sha256(TOKEN.encode()).hexdigest(),
        SCIM_LOG_LEVEL="WARNING",
        **directory.service_settings(),
        **settings,
    )
    log = tmp / f"gunicorn-{port}.log"

    def ready() -> bool:
        with contextlib.suppress(OSError, http.client.HTTPException):
            return Server(port, None, log).send(request("GET", "/healthz"), timeout=1)[0] == 200
        return False

    with shipped_gunicorn(environment, log, ready) as process:
        server = Server(port, process, log, threads)
        wait_until(lambda: len(server.workers()) == WORKERS, timeout=30, interval=0.1)
        yield server


@pytest.fixture(scope="module")
def directory() -> Iterator[SlapdInstance]:
    with SlapdInstance() as instance:
        yield instance


@pytest.fixture(scope="module", params=THREAD_COUNTS, ids=lambda threads: f"threads={threads}")
def server(
    directory: SlapdInstance,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[Server]:
    threads: int = request.param
    with gunicorn(directory, tmp_path_factory.mktemp("http-stack"), threads) as served:
        yield served


def _alice(server: Server) -> str:
    answer = server.send(request("GET", "/scim/v2/Users?filter=userName%20eq%20%22alice%22"))
    ident: str = json.loads(answer[2])["Resources"][0]["id"]
    return ident


def test_idle_and_slow_clients_do_not_starve_the_others(server: Server) -> None:
    """Four times as many idle and byte-a-second connections as the server has threads."""
    held = 4 * WORKERS * server.threads
    alice = _alice(server)
    sockets = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2 * held)]
    stop = threading.Event()

    def dribble() -> None:
        for sock in sockets[held:]:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        while not stop.wait(0.5):
            for sock in sockets[held:]:
                with contextlib.suppress(OSError):
                    sock.sendall(b"X")

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    slowest = 0.0
    try:
        deadline = time.monotonic() + 2 * READ_TIMEOUT + 1
        while time.monotonic() < deadline:
            for path in ("/healthz", f"/scim/v2/Users/{alice}"):
                started = time.monotonic()
                assert server.send(request("GET", path), timeout=2)[0] == 200
                slowest = max(slowest, time.monotonic() - started)
    finally:
        stop.set()
        thread.join(timeout=5)
    # The slow ones ran out of time: a partial request is answered 408, an empty one closed.
    answers = []
    for sock in sockets[held:]:
        sock.settimeout(5)
        with contextlib.suppress(OSError):
            answers.append(sock.recv(65536))
        sock.close()
    for sock in sockets[:held]:
        sock.settimeout(5)
        assert sock.recv(1) == b""  # closed without an answer: it asked nothing
        sock.close()
    assert answers and all(b" 408 " in answer.split(b"\r\n")[0] for answer in answers), answers
    assert slowest < 1.0, slowest


def test_pipelined_requests_are_all_answered_in_order(server: Server) -> None:
    """Thousands of requests sent at once on one connection: each answered, none lost or nested."""
    count = 3000
    health = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    last = request("GET", "/scim/v2/ServiceProviderConfig")
    received = bytearray()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(health * count + last)
        while chunk := sock.recv(65536):
            received += chunk
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", received)
    assert statuses == [b"200"] * (count + 1)
    assert received.rstrip().endswith(b"}") and b"ServiceProviderConfig" in received[-2000:]
    assert server.send(request("GET", "/healthz"))[0] == 200  # the worker lived through it


def test_a_body_that_never_comes_is_408_within_the_read_timeout(server: Server) -> None:
    head = request("POST", "/scim/v2/Users", headers={"Content-Length": "100"})
    started = time.monotonic()
    answer = server.send(head, timeout=READ_TIMEOUT + 5)
    assert time.monotonic() - started < READ_TIMEOUT + 1.5
    scim_error(answer, 408)


def test_a_chunked_body_of_100_mb_is_413_and_no_worker_grows(server: Server) -> None:
    workers = server.workers()
    for pid in workers:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # reset the peak RSS
    rss_before = {pid: _kib(pid, "VmRSS") for pid in workers}
    head = request("POST", "/scim/v2/Users", headers={"Transfer-Encoding": "chunked"})
    chunk = b"100000\r\n" + b" " * 0x100000 + b"\r\n"
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(head)
            for _ in range(100):
                sock.sendall(chunk)
                sent += 1
        response = http.client.HTTPResponse(sock)
        response.begin()
        answer = (
            response.status,
            {k.lower(): v for k, v in response.getheaders()},
            response.read(),
        )
    scim_error(answer, 413)
    assert sent < 100, "the server read the whole body"
    for pid in workers:
        assert _kib(pid, "VmHWM") - rss_before[pid] < 16 * 1024, pid


def test_a_content_length_over_the_limit_is_413_before_the_body(server: Server) -> None:
    head = request("POST", "/scim/v2/Users", headers={"Content-Length": str(1000 * LIMIT)})
    scim_error(server.send(head, timeout=5), 413)


@pytest.mark.parametrize(
    ("name", "data", "status"),
    [
        ("malformed chunk", "chunked", 400),
        ("HTTP/0.9", b"GET /healthz\r\n", 400),
        ("garbage", b"\x16\x03\x01\x02\x00\x01\x00\r\n\r\n", 400),
        ("bad method", b"G@T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("request line over 1 MiB", "long-line", 414),
        ("header of 20 KB", "big-header", 431),
        ("200 headers", "many-headers", 431),
    ],
)
def test_answers_gunicorn_gives_itself_are_scim_bodies(
    server: Server, name: str, data: bytes | str, status: int
) -> None:
    if data == "chunked":
        data = request("POST", "/scim/v2/Users", headers={"Transfer-Encoding": "chunked"})
        data += b"zz\r\n{}\r\n0\r\n\r\n"
    elif data == "long-line":
        data = request("GET", "/scim/v2/Users?x=" + "a" * (LIMIT + 10))
    elif data == "big-header":
        data = request("GET", "/scim/v2/Users", headers={"X-Big": "a" * 20000})
    elif data == "many-headers":
        data = request("GET", "/scim/v2/Users", headers={f"X-H{i}": "v" for i in range(200)})
    assert isinstance(data, bytes)
    scim_error(server.send(data), status)


def test_a_filter_at_the_limit_reaches_the_service_however_it_is_encoded(server: Server) -> None:
    """Each character percent-encoded: three times gunicorn's default request line."""
    value = '"' * 4000
    query = "".join(f"%{byte:02X}" for byte in f"userName eq {value}".encode())
    document = scim_error(server.send(request("GET", "/scim/v2/Users?filter=" + query)), 400)
    assert document["scimType"] == "invalidFilter"


def test_urls_never_come_from_an_unchecked_host(server: Server) -> None:
    alice = _alice(server)
    document = scim_error(
        server.send(request("GET", f"/scim/v2/Users/{alice}", host="evil.example")), 400
    )
    assert "evil" not in json.dumps(document)
    status, headers, body = server.send(request("GET", f"/scim/v2/Users/{alice}", host="[::1]"))
    assert status == 200 and json.loads(body)["meta"]["location"].startswith("http://[::1]/")
    # No redirect built from Host for the prefix without its slash: the request is answered.
    for host in ("evil.example", "127.0.0.1"):
        status, headers, body = server.send(request("GET", "/scim/v2", token=None, host=host))
        assert status in (400, 401) and "location" not in headers, (host, status, headers)


def test_with_a_public_url_every_url_starts_with_it_whatever_the_host(
    directory: SlapdInstance, tmp_path: Path
) -> None:
    public = "https://scim.example.com/base"
    with gunicorn(directory, tmp_path, SCIM_PUBLIC_URL=public) as served:
        body = json.dumps(
            {
                "userName": f"public-url-{os.getpid()}",
                "name": {"givenName": "P", "familyName": "U"},
                "emails": [{"value": f"public-url-{os.getpid()}@example.org"}],
            }
        ).encode()
        status, headers, answer = served.send(
            request("POST", "/scim/v2/Users", body=body, host="evil.example")
        )
        assert status == 201, answer
        created = json.loads(answer)
        expected = f"{public}/scim/v2/Users/{created['id']}"
        assert headers["location"] == expected
        assert created["meta"]["location"] == expected
        served.send(request("DELETE", f"/scim/v2/Users/{created['id']}"))


def test_guessing_tokens_is_throttled_per_client_address(server: Server) -> None:
    statuses = []
    for number in range(400):
        answer = server.send(request("GET", "/scim/v2/Users", token=f"guess-{number}"))
        statuses.append(answer[0])
        if answer[0] == 429:
            assert int(answer[1]["retry-after"]) >= 1
            scim_error(answer, 429)
    assert set(statuses) == {401, 429}
    # Per worker, a burst of 20 seconds' worth at the default 5 per second, then the rate.
    assert statuses.count(401) < 2 * WORKERS * 100 + 50, statuses.count(401)
    assert statuses.count(429) > 100
    # The right token is not held up by the guesses from the same address.
    assert server.send(request("GET", "/healthz"))[0] == 200
    assert server.send(request("GET", "/scim/v2/ServiceProviderConfig"))[0] == 200


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def test_slow_chunked_bodies_hold_no_thread(server: Server) -> None:
    """Chunked bodies sent slowly wait in the event loop like any slow request."""
    head = request("POST", "/scim/v2/Users", headers={"Transfer-Encoding": "chunked"})
    sockets = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(8)]
    for sock in sockets:
        sock.sendall(head + b"1\r\n{\r\n")
    started = time.monotonic()
    assert server.send(request("GET", "/healthz"), timeout=2)[0] == 200
    assert time.monotonic() - started < 1.0
    for sock in sockets:
        sock.sendall(b"1\r\n}\r\n0\r\n\r\n")
    for sock in sockets:
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = json.loads(response.read())
        assert response.status == 400 and body["scimType"] == "invalidValue", body
        sock.close()


def test_guessing_tokens_at_metrics_is_throttled_too(server: Server) -> None:
    """/metrics takes the same tokens as /scim/v2: it must not be the unthrottled way to guess."""
    statuses = [
        server.send(request("GET", "/metrics", token=f"metrics-guess-{n}"))[0] for n in range(300)
    ]
    # The server is the module's: earlier tests' wrong tokens may have spent this address's
    # failure budget already, so every answer may be 429; a guess is never served.
    assert 429 in statuses and set(statuses) <= {401, 429}, set(statuses)


def test_scim_server_runs_the_service_worker(directory: SlapdInstance, tmp_path: Path) -> None:
    """``scim-ldap serve`` without a configuration file: not gunicorn's sync worker, which one idle
    connection holds, and which answers in HTML naming itself."""
    port = find_free_port()
    environment = dict(
        os.environ,
        SCIM_TOKENS_SHA256="idp=" + hashlib.sha256(TOKEN.encode()).hexdigest(),
        SCIM_LOG_LEVEL="WARNING",
        **directory.service_settings(),
    )
    command = [sys.executable, "-m", "scim_flask.cli", "serve", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", "1"]
    served = Server(port, None, tmp_path / "scim-server.log")

    def ready() -> bool:
        with contextlib.suppress(OSError, http.client.HTTPException):
            return served.send(request("GET", "/healthz"), timeout=1)[0] == 200
        return False

    idle: list[socket.socket] = []
    with served_process(command, environment, served.log, ready):
        try:
            # One worker with one thread: under a sync worker the first idle connection holds it.
            idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
            status, headers, _ = served.send(request("GET", "/healthz"), timeout=2)
            assert status == 200 and headers["server"] == "scim", headers
            scim_error(served.send(b"G@T / HTTP/1.1\r\nHost: x\r\n\r\n"), 400)
        finally:
            for sock in idle:
                sock.close()
