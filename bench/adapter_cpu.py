"""``python -m bench.adapter_cpu``: the Flask adapter's CPU per request, in one process.

One throwaway slapd on 127.0.0.1; in this process, for a user's PATCH, PUT, POST and GET by
id, this process's CPU time per request (``time.process_time``: slapd's work and the network
wait are left out) through three doors:

- ``core``: :meth:`ScimService.handle` and the body's encoding, nothing of HTTP;
- ``flask``: the service's Flask app (``create_app``, defaults as ``make bench`` runs it: no
  ``SCIM_PUBLIC_URL``, log level INFO, metrics in a multiprocess folder) via Flask's test client;
- ``floor``: ``bench/floor_app.py`` (bare Flask + ldap3, the same directory work) via its test
  client.

Rounds alternate the doors so machine noise hits all three; figures are medians over the
rounds. Log lines are written to a temporary file, as under ``make bench`` (the workers'
standard error goes to a file there), so their system calls are counted.
``--profile`` adds a cProfile of the ``flask`` door for one scenario (cumulative and self time).
Bounded: ``--rounds`` x ``--count`` requests per door and scenario (defaults: 5 x 300).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from itertools import count as counter
from typing import Any

from scim_core.testing.slapd import SlapdInstance

__all__ = ["main"]

TOKEN = "bench-adapter-token"
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
SCENARIOS = ("patch", "put", "post", "get")
DOORS = ("core", "flask", "floor")
#: Users made before the measurement, to PATCH, PUT and read.
POOL = 50


def _dumps(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


class _Setup:
    """The three doors over one slapd, with a pool of users for each to work on."""

    def __init__(self, slapd: SlapdInstance, log_file: str) -> None:
        env = {
            **slapd.service_settings(),
            "SCIM_TOKENS_SHA256": "bench=" + hashlib.sha256(TOKEN.encode()).hexdigest(),
        }
        for key in [k for k in os.environ if k.startswith("SCIM_")]:
            del os.environ[key]
        os.environ.update(env)
        from bench import floor_app  # reads SCIM_LDAP_* when imported
        from scim_core.messages import ScimRequest
        from scim_flask.app import create_app

        # The JSON log handler is made with the stream stderr is now: the log file.
        stderr, sys.stderr = sys.stderr, open(log_file, "w", encoding="utf-8")  # noqa: SIM115
        try:
            self.app = create_app()
        finally:
            sys.stderr = stderr
        self.service = self.app.extensions["scim"]["service"]
        self.request_type = ScimRequest
        self.client = self.app.test_client()
        self.floor = floor_app.app.test_client()
        self.headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/scim+json"}
        self.seq = counter()
        self.users: list[tuple[str, str]] = []  # (id, userName)
        for _ in range(POOL):
            name = f"pool{next(self.seq)}"
            got = self.client.post("/scim/v2/Users", data=self._user(name), headers=self.headers)
            assert got.status_code == 201, got.data
            self.users.append((got.json["id"], name))  # type: ignore[index]

    @staticmethod
    def _user(name: str, title: str | None = None) -> bytes:
        body: dict[str, Any] = {
            "schemas": [USER_URN],
            "userName": name,
            "name": {"givenName": "Bench", "familyName": f"User {name}"},
            "emails": [{"value": f"{name}@example.org", "type": "work", "primary": True}],
        }
        if title is not None:
            body["title"] = title
        return _dumps(body)

    def _cycle(self) -> Iterator[tuple[str, str]]:
        while True:
            yield from self.users

    def operation(self, door: str, scenario: str) -> Callable[[], None]:
        """One request of ``scenario`` through ``door``; each call changes something."""
        users = self._cycle()
        seq = self.seq
        base = "http://localhost/scim/v2"

        def core(method: str, path: str, body: bytes, status: int) -> None:
            request = self.request_type(
                method=method,
                path=path,
                body=body,
                content_type="application/scim+json",
                base_url=base,
                principal="bench",
            )
            response = self.service.handle(request)
            response.body_bytes()
            assert response.status == status, response.body

        def flask(method: str, path: str, body: bytes, status: int) -> None:
            got = self.client.open(
                "/scim/v2" + path, method=method, data=body, headers=self.headers
            )
            assert got.status_code == status, got.data

        def floor(method: str, path: str, body: bytes, status: int) -> None:
            got = self.floor.open(path, method=method, data=body)
            assert got.status_code == status, got.data

        def run() -> None:
            user_id, name = next(users)
            n = next(seq)
            if door == "floor":
                if scenario in ("patch", "put"):
                    floor("PATCH", f"/floor/users/{user_id}", _dumps({"title": f"T{n}"}), 200)
                elif scenario == "post":
                    new = {"uid": f"floor{n}", "givenName": "Bench", "sn": f"User {n}"}
                    floor("POST", "/floor/users", _dumps({**new, "mail": f"f{n}@x.org"}), 201)
                else:
                    floor("GET", f"/floor/users/{user_id}", b"", 200)
                return
            send = core if door == "core" else flask
            if scenario == "patch":
                op = {"op": "replace", "path": "title", "value": f"T{n}"}
                body = _dumps({"schemas": [PATCH_URN], "Operations": [op]})
                send("PATCH", f"/Users/{user_id}", body, 200)
            elif scenario == "put":
                send("PUT", f"/Users/{user_id}", self._user(name, f"P{n}"), 200)
            elif scenario == "post":
                send("POST", "/Users", self._user(f"{door}{n}"), 201)
            else:
                send("GET", f"/Users/{user_id}", b"", 200)

        return run


def _cpu_ms(operation: Callable[[], None], count: int) -> float:
    started = time.process_time()
    for _ in range(count):
        operation()
    return (time.process_time() - started) / count * 1e3


def _profile(setup: _Setup, scenario: str, count: int, top: int) -> str:
    operation = setup.operation("flask", scenario)
    for _ in range(20):
        operation()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(count):
        operation()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    """Measure, print a Markdown table (and a profile with ``--profile``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.adapter_cpu", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=300, help="requests per door and round")
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--profile", choices=SCENARIOS, help="cProfile the flask door for it")
    parser.add_argument("--top", type=int, default=35, help="rows of the profile")
    args = parser.parse_args(argv)
    scenarios = [s.strip() for s in args.only.split(",") if s.strip()]
    # As under the shipped gunicorn config: metrics in a multiprocess folder. Set before
    # prometheus_client is imported (scim_flask imports it), which decides then.
    metrics_dir = tempfile.mkdtemp(prefix="scim-adapter-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    slapd = SlapdInstance()
    slapd.start()
    try:
        setup = _Setup(slapd, str(slapd.directory / "service.log"))
        print(f"load average at start: {os.getloadavg()[0]:.2f}")
        print("| scenario | core ms | flask ms | floor ms | flask - core | flask / floor |")
        print("|---|---:|---:|---:|---:|---:|")
        for scenario in scenarios:
            operations = {door: setup.operation(door, scenario) for door in DOORS}
            for operation in operations.values():  # warm-up: caches, connections
                for _ in range(20):
                    operation()
            figures: dict[str, list[float]] = {door: [] for door in DOORS}
            for _ in range(args.rounds):
                for door in DOORS:
                    figures[door].append(_cpu_ms(operations[door], args.count))
            core, flask, floor = (statistics.median(figures[d]) for d in DOORS)
            print(
                f"| {scenario} | {core:.3f} | {flask:.3f} | {floor:.3f} | "
                f"{flask - core:.3f} | {flask / floor:.2f} |"
            )
        print(f"load average at end: {os.getloadavg()[0]:.2f}")
        if args.profile:
            print(_profile(setup, args.profile, args.count, args.top))
    finally:
        slapd.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
