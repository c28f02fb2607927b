"""Load generators: Debian's ``wrk`` driven by ``bench/load.lua``, or a small Python one.

Both replay a request file (one ``METHOD <tab> PATH <tab> BODY`` line per request) with a fixed
number of connections for a fixed time and report the same figures: completed requests, req/s,
latency percentiles and errors. ``@SEQ@`` in a line becomes a value unique to the request
(``TAG-worker-n``). The Python generator exists so the smoke run needs no ``wrk``; the real
benchmark uses ``wrk`` (its C event loop does not compete with the server for the GIL).
"""

from __future__ import annotations

import http.client
import json
import math
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "LUA_SCRIPT",
    "LoadResult",
    "Request",
    "body_size",
    "call",
    "run_python",
    "run_wrk",
    "write_requests",
]

LUA_SCRIPT = Path(__file__).resolve().parent / "load.lua"
SEQ = "@SEQ@"
_TIMEOUT_S = 10.0

Request = tuple[str, str, str | None]
"""(method, path with query, body text or None)."""


@dataclass
class LoadResult:
    """What one bounded load run measured."""

    requests: int
    duration_s: float
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    mean_ms: float
    max_ms: float
    errors: int
    status_errors: int
    generator: str
    app_cpu_ms: float | None = None  # server CPU (all workers) per completed request
    slapd_cpu_ms: float | None = None  # slapd CPU per completed request

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def write_requests(path: Path, requests: Sequence[Request]) -> Path:
    """Write the request file both generators read."""
    lines = []
    for method, target, body in requests:
        text = body or ""
        if "\t" in target or "\n" in target or "\t" in text or "\n" in text:
            raise ValueError(f"tab or newline in a request line: {target!r}")
        lines.append(f"{method}\t{target}\t{text}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def read_requests(path: Path) -> list[Request]:
    """Read a request file back."""
    requests: list[Request] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line:
            continue
        method, target, body = line.split("\t", 2)
        requests.append((method, target, body or None))
    return requests


def _headers(token: str, body: str | None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/scim+json"}
    if body is not None:
        headers["Content-Type"] = "application/scim+json"
    return headers


def call(
    base_url: str,
    method: str,
    target: str,
    body: Any = None,
    token: str = "",
    timeout: float = 60.0,
) -> tuple[int, Any, float]:
    """One request on a fresh connection: (status, decoded JSON body or None, seconds)."""
    parts = urlsplit(base_url)
    text = body if isinstance(body, str) or body is None else json.dumps(body)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        started = time.perf_counter()
        connection.request(method, target, body=text, headers=_headers(token, text))
        response = connection.getresponse()
        raw = response.read()
        elapsed = time.perf_counter() - started
    finally:
        connection.close()
    try:
        decoded = json.loads(raw) if raw else None
    except ValueError:
        decoded = None
    return response.status, decoded, elapsed


def body_size(base_url: str, method: str, target: str, body: Any = None, token: str = "") -> int:
    """The length in bytes of one answer's body, as sent (chunked or not)."""
    parts = urlsplit(base_url)
    text = body if isinstance(body, str) or body is None else json.dumps(body)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60.0)
    try:
        connection.request(method, target, body=text, headers=_headers(token, text))
        return len(connection.getresponse().read())
    finally:
        connection.close()


def run_wrk(
    base_url: str,
    request_file: Path,
    token: str,
    tag: str,
    connections: int,
    duration_s: float,
) -> LoadResult:
    """Run ``wrk`` with ``bench/load.lua`` (threads: 2, or 1 for a single connection)."""
    tool = shutil.which("wrk")
    if tool is None:
        raise RuntimeError("wrk is not installed: run `apt-get install wrk` (as root)")
    threads = min(2, connections)
    seconds = max(1, round(duration_s))
    command = [
        tool,
        "-t",
        str(threads),
        "-c",
        str(connections),
        "-d",
        f"{seconds}s",
        "--timeout",
        f"{int(_TIMEOUT_S)}s",
        "--latency",
        "-s",
        str(LUA_SCRIPT),
        base_url.rstrip("/") + "/",
        "--",
        str(request_file),
        token,
        tag,
        str(threads),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + 60, check=False
    )
    line = next(
        (x for x in done.stdout.splitlines() if x.startswith("BENCH_RESULT ")),
        None,
    )
    if done.returncode != 0 or line is None:
        raise RuntimeError(
            f"wrk failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    data = json.loads(line.removeprefix("BENCH_RESULT "))
    duration = data["duration_us"] / 1e6
    errors = sum(
        data[k]
        for k in ("connect_errors", "read_errors", "write_errors", "status_errors", "timeouts")
    )
    return LoadResult(
        requests=data["requests"],
        duration_s=duration,
        rps=data["requests"] / duration if duration else 0.0,
        p50_ms=data["p50_us"] / 1000,
        p90_ms=data["p90_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        mean_ms=data["mean_us"] / 1000,
        max_ms=data["max_us"] / 1000,
        errors=errors,
        status_errors=data["status_errors"],
        generator="wrk",
    )


def _percentile(ordered: Sequence[float], percent: float) -> float:
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1]


def run_python(
    base_url: str,
    request_file: Path,
    token: str,
    tag: str,
    connections: int,
    duration_s: float,
) -> LoadResult:
    """The same load with one Python thread per connection (for the smoke run).

    Connection k sends lines k, k+C, k+2C, ... of the file; ``@SEQ@`` becomes ``TAG-k-n``.
    """
    requests = read_requests(request_file)
    parts = urlsplit(base_url)
    latencies: list[list[float]] = [[] for _ in range(connections)]
    errors = [0] * connections
    status_errors = [0] * connections
    start_barrier = threading.Barrier(connections + 1)
    deadline = [0.0]

    def worker(k: int) -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=_TIMEOUT_S)
        position, sequence = k, 0
        start_barrier.wait()
        try:
            while time.perf_counter() < deadline[0]:
                method, target, body = requests[position % len(requests)]
                position += connections
                if SEQ in target or (body and SEQ in body):
                    sequence += 1
                    value = f"{tag}-{k}-{sequence}"
                    target = target.replace(SEQ, value)
                    body = body.replace(SEQ, value) if body else body
                started = time.perf_counter()
                try:
                    connection.request(method, target, body=body, headers=_headers(token, body))
                    response = connection.getresponse()
                    response.read()
                except (OSError, http.client.HTTPException):
                    errors[k] += 1
                    connection.close()
                    continue
                latencies[k].append(time.perf_counter() - started)
                if response.status >= 400:
                    status_errors[k] += 1
                    errors[k] += 1
                if response.will_close:
                    connection.close()
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(connections)]
    for thread in threads:
        thread.start()
    started = time.perf_counter()
    deadline[0] = started + duration_s
    start_barrier.wait()
    for thread in threads:
        thread.join(duration_s + _TIMEOUT_S + 5)
    elapsed = time.perf_counter() - started
    ordered = sorted(x for per in latencies for x in per)
    count = len(ordered)
    return LoadResult(
        requests=count,
        duration_s=elapsed,
        rps=count / elapsed if elapsed else 0.0,
        p50_ms=_percentile(ordered, 50) * 1000,
        p90_ms=_percentile(ordered, 90) * 1000,
        p99_ms=_percentile(ordered, 99) * 1000,
        mean_ms=(sum(ordered) / count * 1000) if count else 0.0,
        max_ms=(ordered[-1] * 1000) if count else 0.0,
        errors=sum(errors),
        status_errors=sum(status_errors),
        generator="python",
    )
