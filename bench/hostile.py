"""``make hostile`` / ``python -m bench.hostile``: the service under attack, and what it cost.

The service runs as in production: gunicorn with ``scim_flask.gunicorn_conf`` (two workers) on a
throwaway seeded slapd, everything on 127.0.0.1. Then, one phase after the other:

1. **Attacks**: a corpus of hostile requests (filter and DN injection, broken JSON and
   encodings, hostile ids and group names, forged ``Host`` headers, oversized request lines and
   headers, malformed chunked bodies, wrong tokens, a canary password sent in every wrong place)
   over real sockets. Every answer must be an RFC 7644 error body or a success with
   ``application/scim+json``, never a 5xx other than the 501 group PUT/DELETE answer by design,
   never the canary.
2. **Memory**: each worker's peak RSS is reset, then the largest bodies are sent (a 1,000 MB
   chunked body, a ``Content-Length`` of 1,000 MB, a 1 MiB ``/.search`` listing as many
   ``attributes`` as fit, a 1 MiB user); the peak per worker is read back from ``/proc``.
3. **Stalled bodies**: a ``Content-Length`` whose body never comes; the time to an answer.
4. **Availability**: idle connections (no byte sent) and slowloris connections (one header
   byte a second) are held open while ``/healthz`` and a SCIM lookup are polled; the share of
   polls answered within 2 s.
5. **Outage**: slapd stopped, reads and writes must answer 503 with ``Retry-After``; slapd
   started again, the next requests succeed.

The figures are printed and written to ``bench/results/hostile.{json,md}`` (``--smoke``: a
temporary folder, short phases). The exit status is 1 when an answer broke the rules above or a
poll went unanswered, so ``make hostile`` fails on a regression.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import os
import secrets
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

if __package__ in (None, ""):  # run as a script: python bench/hostile.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import report
from bench.run import machine_info
from bench.servers import ROOT, Gunicorn, reset_peak_rss, vm_kib
from scim_core.testing.slapd import SlapdInstance, find_free_port

__all__ = ["main", "run"]

SCIM = "/scim/v2"
SCIM_JSON = "application/scim+json"
CANARY = "Hostile-Canary-Pass-7c1d"
WORKERS = 2
#: Statuses an attack may get. 501 is group PUT/DELETE by design; 503 only in the outage phase.
_ALLOWED_5XX = frozenset({501})
_LDAP_NAMES = ("invalidAttributeSyntax", "constraintViolation", "noSuchAttribute", "Traceback")


@dataclass
class Answer:
    """What one raw request got back."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def scim_json(self) -> bool:
        """An answer with no body, or a JSON body sent as ``application/scim+json``."""
        if not self.body:
            return True
        if not self.headers.get("content-type", "").startswith(SCIM_JSON):
            return False
        try:
            json.loads(self.body)
        except ValueError:
            return False
        return True


@dataclass
class Tally:
    """The attack phase's figures."""

    tried: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    not_scim: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    no_answer: list[str] = field(default_factory=list)

    def record(self, name: str, answer: Answer | None) -> None:
        self.tried += 1
        if answer is None:
            self.no_answer.append(name)
            return
        self.statuses[answer.status] += 1
        if answer.status >= 500 and answer.status not in _ALLOWED_5XX:
            self.server_errors.append(f"{name}: {answer.status}")
        if not answer.scim_json:
            self.not_scim.append(f"{name}: {answer.status} {answer.body[:60]!r}")
        text = answer.body.decode("utf-8", "replace")
        if answer.status >= 400 and (
            CANARY in text or any(internal in text for internal in _LDAP_NAMES)
        ):
            self.leaks.append(f"{name}: {text[:120]}")
        if answer.headers.get("server", "").lower().startswith("gunicorn"):
            self.not_scim.append(f"{name}: Server header names gunicorn")


def _read_answer(sock: socket.socket) -> Answer:
    response = http.client.HTTPResponse(sock)
    response.begin()
    body = response.read()
    headers = {name.lower(): value for name, value in response.getheaders()}
    return Answer(response.status, headers, body)


def send_raw(port: int, data: bytes, timeout: float = 10.0) -> Answer | None:
    """Send ``data`` as it is on a new connection; the answer, or None when none came."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
            return _read_answer(sock)
        except (OSError, http.client.HTTPException):
            return None


def request_bytes(
    method: str,
    path: str,
    *,
    token: str | None,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    host: str = "127.0.0.1",
) -> bytes:
    """An HTTP/1.1 request with ``Connection: close``, headers exactly as given."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
        lines.append(f"Content-Type: {SCIM_JSON}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + (body or b"")


def _user(user_name: str, **extra: Any) -> dict[str, Any]:
    return {
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": user_name,
        "name": {"givenName": "Hostile", "familyName": "Client"},
        "emails": [{"value": f"{secrets.token_hex(4)}@example.org", "primary": True}],
        **extra,
    }


def _patch(*operations: dict[str, Any]) -> dict[str, Any]:
    return {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": list(operations),
    }


def attacks(token: str, victim: str) -> Iterator[tuple[str, bytes]]:
    """The corpus: (name, request bytes). Built to break the service, never to load it."""

    def req(method: str, path: str, body: Any = None, **options: Any) -> bytes:
        if body is not None and not isinstance(body, bytes):
            body = json.dumps(body).encode()
        return request_bytes(method, path, token=options.pop("auth", token), body=body, **options)

    # Filter injection and oversized filters.
    for value in [
        "*",
        "a*)(uid=*",
        ")(|(uid=*",
        "\\2a",
        "alice\x00",
        "alice)(objectClass=*",
        CANARY,
        "x" * 5000,
    ]:
        for form in ['userName eq "{}"', "userName eq {}", 'emails.value eq "{}"', "{}"]:
            query = quote(form.format(value), safe="")
            yield f"filter {form!r}", req("GET", f"{SCIM}/Users?filter={query}")
            yield f"group filter {form!r}", req("GET", f"{SCIM}/Groups?filter={query}")
    yield (
        "filter past 4 KB",
        req("GET", f"{SCIM}/Users?filter=" + quote('userName eq "' + "a" * 4200 + '"')),
    )
    yield "filter 12 KB encoded", req("GET", f"{SCIM}/Users?filter=" + quote("(" * 4000))
    for parameter in ["count", "startIndex", "sortBy", "attributes", "excludedAttributes"]:
        for value in ["-1", "99999999999999999999", "NaN", CANARY, "a," * 2000]:
            yield (
                f"{parameter}={value[:12]}",
                req("GET", f"{SCIM}/Users?{parameter}={quote(value)}"),
            )
    # Hostile ids, in the path of every method.
    for ident in ["..", "%2e%2e", ".search", "%2F", "x%2F", "uid=alice,ou=people", "*", CANARY]:
        for method in ["GET", "PATCH", "PUT", "DELETE"]:
            body = (
                _patch({"op": "add", "path": "title", "value": "x"}) if method == "PATCH" else None
            )
            body = _user("x") if method == "PUT" else body
            yield f"{method} /Users/{ident}", req(method, f"{SCIM}/Users/{ident}", body)
            yield f"{method} /Groups/{ident}", req(method, f"{SCIM}/Groups/{ident}", body)
    # Broken bodies.
    broken: list[bytes] = [
        b"",
        b"{",
        b"[]",
        b"null",
        b'"x"',
        b"{" * 10000,
        b'{"userName": "\\ud800"}',
        b'{"userName": "a\\u0000b"}',
        b"\xff\xfe{}",
        b'{"schemas": 1}',
        json.dumps({"userName": CANARY * 10}).encode(),
    ]
    for number, body in enumerate(broken):
        yield f"broken body {number} POST", req("POST", f"{SCIM}/Users", body)
        yield f"broken body {number} PATCH", req("PATCH", f"{SCIM}/Users/{victim}", body)
        yield f"broken body {number} group", req("POST", f"{SCIM}/Groups", body)
    # The canary password in every wrong place.
    wrong_places: list[tuple[str, str, Any]] = [
        ("POST", "/Users", _user("canary1", password=[CANARY])),
        ("POST", "/Users", _user("canary2", password={"value": CANARY})),
        ("POST", "/Users", _user(CANARY + "!")),
        ("POST", "/Users", _user("canary3", emails=[{"value": CANARY}])),
        ("POST", "/Users", _user("canary4", active=CANARY)),
        ("PATCH", f"/Users/{victim}", _patch({"op": CANARY, "path": "title", "value": "x"})),
        ("PATCH", f"/Users/{victim}", _patch({"op": "replace", "path": CANARY, "value": "x"})),
        (
            "PATCH",
            f"/Users/{victim}",
            _patch({"op": "replace", "path": f"emails[{CANARY}]", "value": "x"}),
        ),
        (
            "PATCH",
            f"/Users/{victim}",
            _patch({"op": "replace", "path": "password", "value": [CANARY]}),
        ),
        ("PATCH", f"/Users/{victim}", _patch({"op": "replace", "path": "active", "value": CANARY})),
        ("PATCH", f"/Users/{victim}", _patch({"op": "replace", "value": {CANARY: "x"}})),
        ("PATCH", f"/Users/{victim}", _patch({"op": "add", "path": "emails", "value": CANARY})),
        ("POST", "/Groups", {"displayName": "g", "members": [{"value": CANARY}]}),
        ("POST", "/Users/.search", {"filter": f"userName eq {CANARY}"}),
        ("POST", "/Users/.search", {"attributes": [CANARY], "count": CANARY}),
    ]
    for number, (method, path, body) in enumerate(wrong_places):
        yield f"canary {number} {method} {path}", req(method, SCIM + path, body)
    yield (
        "canary in If-Match",
        req("PUT", f"{SCIM}/Users/{victim}", _user("alice"), headers={"If-Match": CANARY}),
    )
    # Hostile group names: each must be refused or reach exactly itself.
    for name in [
        "x/",
        "/x",
        "/",
        "//",
        ".search",
        "..",
        "a//b",
        "x?y",
        "x#y",
        "x%",
        "\u202egnp.exe",
        "alice\u200b",
    ]:
        yield f"group named {name!r}", req("POST", f"{SCIM}/Groups", {"displayName": name})
    # Headers: forged Host, oversized line and headers, odd authentication.
    yield "forged Host", req("GET", f"{SCIM}/Users/{victim}", host="evil.example")
    yield "forged Host redirect", req("GET", SCIM, host="evil.example", auth=None)
    yield "request line 20 KB", req("GET", f"{SCIM}/Users?x=" + "a" * 20000)
    yield "header 20 KB", req("GET", f"{SCIM}/Users", headers={"X-Big": "a" * 20000})
    yield "200 headers", req("GET", f"{SCIM}/Users", headers={f"X-H{i}": "v" for i in range(200)})
    for number, authorization in enumerate(["", "Bearer", "Basic YTpi", "Bearer " + "a" * 8000]):
        yield (
            f"odd authorization {number}",
            request_bytes(
                "GET", f"{SCIM}/Users", token=None, headers={"Authorization": authorization}
            ),
        )
    for number in range(50):
        yield (
            f"wrong token {number}",
            req("GET", f"{SCIM}/Users/{victim}", auth=secrets.token_hex(16)),
        )
    # Raw protocol abuse.
    yield (
        "malformed chunked",
        (
            f"POST {SCIM}/Users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: {SCIM_JSON}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            "zz\r\n{}\r\n0\r\n\r\n"
        ).encode(),
    )
    yield "garbage request line", b"\x16\x03\x01\x02\x00\x01\x00\r\n\r\n"
    yield "bad method", b"G@T / HTTP/1.1\r\nHost: x\r\n\r\n"
    yield "HTTP/0.9", b"GET /healthz\r\n"


def attack_phase(port: int, token: str, victim: str) -> Tally:
    """Send the corpus one request at a time and judge every answer."""
    tally = Tally()
    for name, data in attacks(token, victim):
        tally.record(name, send_raw(port, data))
    return tally


@contextlib.contextmanager
def held_connections(
    port: int, idle: int, slow: int, seconds: float
) -> Iterator[list[socket.socket]]:
    """``idle`` connections that send nothing and ``slow`` ones dribbling a header byte a second."""
    sockets: list[socket.socket] = []
    stop = threading.Event()
    try:
        for _ in range(idle + slow):
            sockets.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        slow_ones = sockets[idle:]
        for sock in slow_ones:
            with contextlib.suppress(OSError):
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")

        def dribble() -> None:
            deadline = time.monotonic() + seconds + 5
            while not stop.wait(1.0) and time.monotonic() < deadline:
                for sock in slow_ones:
                    with contextlib.suppress(OSError):
                        sock.sendall(b"X")

        thread = threading.Thread(target=dribble, daemon=True)
        thread.start()
        yield sockets
    finally:
        stop.set()
        for sock in sockets:
            sock.close()


def poll(port: int, token: str, victim: str, seconds: float) -> dict[str, Any]:
    """Poll ``/healthz`` and a SCIM lookup in turn for ``seconds``; share answered within 2 s."""
    latencies: list[float] = []
    failed = 0
    deadline = time.monotonic() + seconds
    paths = ["/healthz", f"{SCIM}/Users/{victim}"]
    turn = 0
    while time.monotonic() < deadline:
        path = paths[turn % 2]
        turn += 1
        started = time.monotonic()
        answer = None
        with contextlib.suppress(OSError):
            answer = send_raw(port, request_bytes("GET", path, token=token), timeout=2.0)
        elapsed = time.monotonic() - started
        if answer is None or answer.status != 200:
            failed += 1
        else:
            latencies.append(elapsed * 1000)
        time.sleep(max(0.0, 0.1 - elapsed))
    total = len(latencies) + failed
    return {
        "polls": total,
        "answered": len(latencies),
        "availability": round(len(latencies) / total, 4) if total else 0.0,
        "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "max_ms": round(max(latencies), 1) if latencies else None,
    }


def _stream_chunked(port: int, token: str, megabytes: int) -> dict[str, Any]:
    """Stream a chunked body of ``megabytes`` MB; how much went out before the answer."""
    head = (
        f"POST {SCIM}/Users HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: {SCIM_JSON}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()
    chunk = b"100000\r\n" + b" " * 0x100000 + b"\r\n"
    sent = 0
    status = None
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        try:
            sock.sendall(head)
            for _ in range(megabytes):
                sock.sendall(chunk)
                sent += 1
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass
        with contextlib.suppress(OSError, http.client.HTTPException):
            status = _read_answer(sock).status
    return {"sent_mb": sent, "status": status, "seconds": round(time.monotonic() - started, 2)}


def memory_phase(server: Gunicorn, port: int, token: str, megabytes: int) -> dict[str, Any]:
    """Reset each worker's peak RSS, send the largest bodies, read the peaks back."""
    workers = server.workers()
    baseline = {pid: vm_kib(pid, "VmRSS") for pid in workers}
    for pid in workers:
        reset_peak_rss(pid)
    results: dict[str, Any] = {"chunked": _stream_chunked(port, token, megabytes)}
    big_length = request_bytes(
        "POST", f"{SCIM}/Users", token=token, headers={"Content-Length": str(megabytes << 20)}
    )
    results["content_length"] = _status_of(send_raw(port, big_length, timeout=15))
    names = ",".join(f"a{i}" for i in range(150_000))[: (1 << 20) - 64]
    search = json.dumps({"attributes": names.split(",")}).encode()[: (1 << 20) - 1]
    results["search_attributes"] = _status_of(
        send_raw(port, request_bytes("POST", f"{SCIM}/Users/.search", token=token, body=search), 60)
    )
    user = json.dumps(_user("memory-probe", title="t" * ((1 << 20) - 400))).encode()
    results["big_user"] = _status_of(
        send_raw(port, request_bytes("POST", f"{SCIM}/Users", token=token, body=user), 60)
    )
    peaks = {pid: vm_kib(pid) for pid in workers}
    results["workers"] = [
        {"pid": pid, "rss_before_mb": _mb(baseline[pid]), "peak_mb": _mb(peaks[pid])}
        for pid in workers
    ]
    results["peak_mb"] = max((_mb(peak) or 0.0) for peak in peaks.values()) if peaks else None
    return results


def stalled_phase(port: int, token: str) -> dict[str, Any]:
    """A body announced and never sent: when (and what) the service answers."""
    head = request_bytes("POST", f"{SCIM}/Users", token=token, headers={"Content-Length": "1000"})
    started = time.monotonic()
    answer = send_raw(port, head, timeout=60)
    return {"status": _status_of(answer), "seconds": round(time.monotonic() - started, 2)}


def outage_phase(
    directory: SlapdInstance, port: int, token: str, victim: str, requests: int
) -> dict[str, Any]:
    """Stop slapd: reads and writes must answer 503 with Retry-After; start it: they succeed."""
    directory.stop()
    statuses: Counter[int] = Counter()
    retry_after = 0
    try:
        for number in range(requests):
            if number % 2:
                data = request_bytes("GET", f"{SCIM}/Users/{victim}", token=token)
            else:
                body = json.dumps(_user(f"outage-{number}-{secrets.token_hex(3)}")).encode()
                data = request_bytes("POST", f"{SCIM}/Users", token=token, body=body)
            answer = send_raw(port, data, timeout=30)
            statuses[_status_of(answer) or 0] += 1
            if answer is not None and "retry-after" in answer.headers:
                retry_after += 1
    finally:
        directory.start()
    recovered = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = send_raw(port, request_bytes("GET", f"{SCIM}/Users/{victim}", token=token))
        if answer is not None and answer.status == 200:
            recovered = True
            break
        time.sleep(0.2)
    return {
        "requests": requests,
        "statuses": dict(statuses),
        "with_retry_after": retry_after,
        "recovered": bool(recovered),
    }


def find_id(port: int, token: str, user_name: str) -> str:
    """The id of a seeded user, looked up by userName."""
    query = quote(f'userName eq "{user_name}"', safe="")
    answer = send_raw(port, request_bytes("GET", f"{SCIM}/Users?filter={query}", token=token))
    if answer is None or answer.status != 200:
        raise RuntimeError(f"cannot find the seeded user {user_name}: {answer}")
    ident: str = json.loads(answer.body)["Resources"][0]["id"]
    return ident


def _status_of(answer: Answer | None) -> int | None:
    return None if answer is None else answer.status


def _mb(kib: int | None) -> float | None:
    return None if kib is None else round(kib / 1024, 1)


@dataclass(frozen=True)
class Config:
    """Sizes and durations of one run."""

    chunked_mb: int = 1000
    held: int = 64
    poll_seconds: float = 30.0
    outage_requests: int = 20


SMOKE = Config(chunked_mb=20, held=8, poll_seconds=3.0, outage_requests=4)


def run(config: Config, output: Path) -> tuple[dict[str, Any], list[str]]:
    """Run every phase; the results and the rules broken (empty when the service held)."""
    token = secrets.token_urlsafe(24)
    started = time.monotonic()
    results: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info("python"),
        "config": config.__dict__
        | {"workers": WORKERS, "worker_class": os.environ.get("SCIM_WORKER_CLASS", "shipped")},
    }
    with (
        tempfile.TemporaryDirectory(prefix="scim-hostile-") as scratch,
        SlapdInstance() as directory,
    ):
        port = find_free_port()
        environment = {
            **directory.service_settings(),
            "SCIM_TOKENS_SHA256": "hostile=" + hashlib.sha256(token.encode()).hexdigest(),
            "SCIM_WORKERS": str(WORKERS),
            "SCIM_LOG_LEVEL": "WARNING",
            "SCIM_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "PATH": os.environ.get("PATH", ""),
        }
        # The worker model under test may be chosen (SCIM_WORKER_CLASS=sync to compare).
        for name in ("SCIM_WORKER_CLASS", "SCIM_THREADS"):
            if name in os.environ:
                environment[name] = os.environ[name]
        server = Gunicorn("hostile", port, environment, Path(scratch) / "gunicorn.log")
        server.start()
        try:
            victim = find_id(port, token, "alice")
            tally = attack_phase(port, token, victim)
            results["attacks"] = {
                "tried": tally.tried,
                "statuses": dict(sorted(tally.statuses.items())),
                "server_errors": tally.server_errors,
                "not_scim": tally.not_scim,
                "leaks": tally.leaks,
                "no_answer": tally.no_answer,
            }
            results["memory"] = memory_phase(server, port, token, config.chunked_mb)
            results["stalled_body"] = stalled_phase(port, token)
            results["quiet"] = poll(port, token, victim, min(config.poll_seconds, 5.0))
            with held_connections(port, config.held, config.held, config.poll_seconds):
                results["held"] = {"idle": config.held, "slow": config.held} | poll(
                    port, token, victim, config.poll_seconds
                )
            results["outage"] = outage_phase(directory, port, token, victim, config.outage_requests)
        finally:
            server.stop()
    results["seconds"] = round(time.monotonic() - started, 1)
    broken = verdict(results)
    results["broken"] = broken
    output.mkdir(parents=True, exist_ok=True)
    report.write_json(results, output / "hostile.json")
    (output / "hostile.md").write_text(markdown(results), encoding="utf-8")
    return results, broken


def verdict(results: dict[str, Any]) -> list[str]:
    """The rules the run saw broken."""
    attacks_seen = results["attacks"]
    broken = [f"5xx: {item}" for item in attacks_seen["server_errors"]]
    broken += [f"not a SCIM body: {item}" for item in attacks_seen["not_scim"]]
    broken += [f"leak: {item}" for item in attacks_seen["leaks"]]
    broken += [f"no answer: {item}" for item in attacks_seen["no_answer"]]
    memory = results["memory"]
    if memory["chunked"]["status"] != 413:
        broken.append(f"chunked body over the limit answered {memory['chunked']['status']}")
    if memory["content_length"] != 413:
        broken.append(f"Content-Length over the limit answered {memory['content_length']}")
    stalled = results["stalled_body"]
    if stalled["status"] is None or stalled["status"] >= 500 or stalled["seconds"] > 15:
        broken.append(f"stalled body: {stalled['status']} after {stalled['seconds']} s")
    if results["held"]["availability"] < 1.0:
        broken.append(f"availability with held connections {results['held']['availability']}")
    outage = results["outage"]
    if set(outage["statuses"]) != {503} or outage["with_retry_after"] != outage["requests"]:
        broken.append(f"outage answers {outage['statuses']}")
    if not outage["recovered"]:
        broken.append("no recovery after the outage")
    return broken


def markdown(results: dict[str, Any]) -> str:
    """The figures as a short markdown report."""
    attacks_seen, memory = results["attacks"], results["memory"]
    held, quiet, outage = results["held"], results["quiet"], results["outage"]
    statuses = ", ".join(f"{code}: {count}" for code, count in attacks_seen["statuses"].items())
    lines = [
        f"# scim-ldap under attack, {results['date']}",
        "",
        f"gunicorn with scim_flask.gunicorn_conf, {results['config']['workers']} workers, on a "
        f"throwaway slapd; {results['machine']['cores']} cores.",
        "",
        "| Figure | Value |",
        "|---|---|",
        f"| Attacks tried | {attacks_seen['tried']} ({statuses}) |",
        f"| 5xx other than 501 by design | {len(attacks_seen['server_errors'])} |",
        f"| Answers not a SCIM body | {len(attacks_seen['not_scim'])} |",
        f"| Canary or internals in a body | {len(attacks_seen['leaks'])} |",
        f"| Chunked body of {results['config']['chunked_mb']} MB | {memory['chunked']['status']} "
        f"after {memory['chunked']['sent_mb']} MB sent |",
        f"| Content-Length over the limit | {memory['content_length']} |",
        f"| 1 MiB `/.search` of attribute names | {memory['search_attributes']} |",
        f"| Peak RSS per worker under the largest bodies | {memory['peak_mb']} MB |",
        f"| Body announced, never sent | {results['stalled_body']['status']} after "
        f"{results['stalled_body']['seconds']} s |",
        f"| `/healthz` + lookup, quiet | {quiet['availability']:.1%}, p50 {quiet['p50_ms']} ms |",
        f"| Same with {held['idle']} idle + {held['slow']} slow connections | "
        f"{held['availability']:.1%} of {held['polls']} polls, p50 {held['p50_ms']} ms, "
        f"max {held['max_ms']} ms |",
        f"| Outage: {outage['requests']} requests | {outage['statuses']}, "
        f"{outage['with_retry_after']} with Retry-After, recovered: {outage['recovered']} |",
        "",
        "Rules broken: " + ("none" if not results["broken"] else ""),
    ]
    lines += [f"- {item}" for item in results["broken"]]
    lines += ["", f"{results['seconds']:.0f} s in all."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the hostile suite; exit status 1 when a rule was broken."""
    parser = argparse.ArgumentParser(prog="python -m bench.hostile", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="short phases, tiny sizes")
    parser.add_argument("--output", type=Path, default=None, help="folder for hostile.{json,md}")
    args = parser.parse_args(argv)
    if args.output is not None:
        output = args.output
    elif args.smoke:
        output = Path(tempfile.gettempdir()) / "scim-hostile-smoke"
    else:
        output = ROOT / "bench" / "results"
    _, broken = run(SMOKE if args.smoke else Config(), output)
    print((output / "hostile.md").read_text(encoding="utf-8"))
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
