"""``make bench`` / ``python -m bench``: the SCIM service against its floor, scenario by scenario.

1. A throwaway slapd (scim_core.testing.slapd) with N users and a group of M members, loaded
   offline with slapadd (bench/data.py).
2. The service under gunicorn with the production ``scim_flask.gunicorn_conf`` (``SCIM_*``
   environment; the default log level INFO, standard error to a file), and the floor
   (bench/floor_app.py) under the same config, both on 127.0.0.1.
3. Each scenario (bench/scenarios.py): a check of one answer, a warm-up, then rounds alternating
   service and floor, each a bounded ``wrk`` run (bench/load.lua) from a second process;
   medians over the rounds. The full export pages through every user with one client.
4. A py-spy profile of one worker under the filtered-GET and the GET-by-id load.
5. ``latest.json``, ``latest.md`` and ``latest.png`` in bench/results/ (``--output``); the
   markdown table is printed, with PASS/FAIL for every target.

``--smoke`` runs the same code on a tiny directory with short rounds and the Python load
generator (no wrk needed), in seconds; tests/integration/test_bench_smoke.py runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import profile as profiler
from bench import report
from bench.data import Dataset, map_size, prepare
from bench.load import (
    SEQ,
    LoadResult,
    body_size,
    call,
    run_python,
    run_wrk,
    write_requests,
)
from bench.scenarios import ORDER, SCIM, Scenario, build
from bench.servers import (
    ROOT,
    Gunicorn,
    cpu_seconds,
    cpu_split,
    reset_peak_rss,
    start_time,
    vm_kib,
)
from scim_core.testing.slapd import SlapdInstance, find_free_port

__all__ = ["FULL", "SMOKE", "Config", "main"]


@dataclass(frozen=True)
class Config:
    """Sizes and timings of one run."""

    users: int = 100_000
    members: int = 10_000
    rounds: int = 3
    duration_s: float = 5.0
    warmup_s: float = 2.0
    connections: int = 16
    latency_connections: int = 1
    export_count: int = 200
    export_limit_s: float = 240.0  # the export stops there (keeps the run within 15 minutes)
    pools: dict[str, int] = field(
        default_factory=lambda: {"read": 1000, "noop": 64, "patch": 400, "put": 400, "toggle": 64}
    )
    password_every: int = 1000
    workers: int | None = None  # None: what scim_flask.gunicorn_conf decides (2 x cores)
    profile_seconds: int = 10
    profile_rate: int = 200
    generator: str = "wrk"
    smoke: bool = False
    only: tuple[str, ...] = ()  # scenario keys (and "export") to run; empty: all
    profile: tuple[str, ...] = ("filter_hit", "get_by_id")
    plain_ldap3: bool = False  # the service with SCIM_LDAP_FAST_PATH=off


FULL = Config()
SMOKE = Config(
    users=300,
    members=50,
    rounds=1,
    duration_s=0.4,
    warmup_s=0.2,
    connections=4,
    latency_connections=1,
    pools={"read": 40, "noop": 8, "patch": 40, "put": 40, "toggle": 8},
    password_every=100,
    workers=2,
    profile_seconds=0,
    generator="python",
    smoke=True,
)

_started = time.monotonic()


def say(message: str) -> None:
    """Progress on standard error, with the seconds since start."""
    print(f"[{time.monotonic() - _started:6.1f}s] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ tools


def ensure_wrk(install: bool) -> None:
    """wrk on PATH: install Debian's package when missing (as root), else say what to do."""
    if shutil.which("wrk"):
        return
    if install and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        say("wrk is missing: installing Debian's wrk package")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=False)
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], env=env, check=False)
    if not shutil.which("wrk"):
        raise SystemExit(
            "bench: wrk is not installed; run `sudo apt-get install wrk` "
            "(or pass --load python for the slower Python load generator)"
        )


def ensure_python_tools(install: bool) -> None:
    """matplotlib (the chart) and py-spy (the profile) in this interpreter's environment."""
    missing = []
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        missing.append("matplotlib")
    if profiler.py_spy() is None:
        missing.append("py-spy")
    if missing and install:
        say(f"installing {', '.join(missing)} into {sys.prefix}")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *missing], check=False)


def machine_info(generator: str) -> dict[str, Any]:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = 0.0
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) / 1024 / 1024
    openldap = "OpenLDAP"
    with contextlib.suppress(OSError):
        slapd = shutil.which("slapd") or "/usr/sbin/slapd"
        text = subprocess.run([slapd, "-VV"], capture_output=True, text=True, check=False).stderr
        for word in text.split():
            if word[:1].isdigit() and "." in word:
                openldap = f"OpenLDAP {word}"
                break
    wrk = None
    if generator == "wrk" and shutil.which("wrk"):
        text = subprocess.run(["wrk", "-v"], capture_output=True, text=True, check=False)
        wrk = (text.stdout + text.stderr).split("[")[0].strip()

    def version(name: str) -> str:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "?"

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "openldap": openldap,
        "ldap3": version("ldap3"),
        "flask": version("flask"),
        "gunicorn": version("gunicorn"),
        "wrk": wrk,
    }


# ------------------------------------------------------------------ measuring


class Runner:
    """Runs the scenarios against the two servers and keeps every figure."""

    def __init__(
        self,
        config: Config,
        workdir: Path,
        service: Gunicorn,
        floor: Gunicorn,
        token: str,
        slapd_pid: int | None,
    ) -> None:
        self.config = config
        self.slapd_pid = slapd_pid
        self.workdir = workdir
        self.service = service
        self.floor = floor
        self.token = token
        self._tags = 0

    def _tag(self) -> str:
        self._tags += 1
        return f"t{self._tags}"

    def load(self, server: Gunicorn, file: Path, connections: int, seconds: float) -> LoadResult:
        """One bounded load run on ``server``, with the CPU it and slapd spent per request."""
        generate = run_wrk if self.config.generator == "wrk" else run_python
        app_before, slapd_before = server.cpu_seconds(), cpu_seconds(self.slapd_pid)
        result = generate(server.base_url, file, self.token, self._tag(), connections, seconds)
        if result.requests:
            result.app_cpu_ms = (server.cpu_seconds() - app_before) * 1000 / result.requests
            slapd = cpu_seconds(self.slapd_pid) - slapd_before
            result.slapd_cpu_ms = slapd * 1000 / result.requests
        return result

    def check(self, base_url: str, scenario: Scenario, requests: Any, floor: bool) -> str | None:
        method, target, body = requests[0]
        value = f"probe-{scenario.key.replace('_', '-')}-{'f' if floor else 's'}"
        target = target.replace(SEQ, value)
        body = body.replace(SEQ, value) if body else body
        status, answer, _ = call(base_url, method, target, body, self.token)
        verdict = (scenario.floor_check if floor else scenario.check)(status, answer)
        return None if verdict is None else f"{method} {target}: {verdict}"

    def measure(self, scenario: Scenario) -> dict[str, Any]:
        config = self.config
        sides: list[tuple[str, Gunicorn, Any]] = [("service", self.service, scenario.requests)]
        if scenario.floor:
            sides.append(("floor", self.floor, scenario.floor))
        files: dict[str, Path] = {}
        problems: list[str] = []
        # A group's members are what a worker holds for the length of one answer: its peak
        # memory (VmHWM, reset first) over its resident memory before the scenario, largest
        # of the workers, and the size of the answer.
        memory = self._memory_start() if scenario.key.startswith("group_") else None
        for side, server, requests in sides:
            files[side] = write_requests(self.workdir / f"{scenario.key}.{side}.req", requests)
            problem = self.check(server.base_url, scenario, requests, side == "floor")
            if problem:
                problems.append(f"{side}: {problem}")
                say(f"{scenario.key}: CHECK FAILED ({side}): {problem}")
        if scenario.prime:
            for method, target, body in scenario.requests:
                status, _, _ = call(self.service.base_url, method, target, body, self.token)
                if status != 200:
                    problems.append(f"priming {method} {target}: status {status}")
        connections = scenario.connections
        for side, server, _ in sides:
            self.load(server, files[side], connections, config.warmup_s)
        rounds: dict[str, list[LoadResult]] = {side: [] for side, _, _ in sides}
        for _ in range(config.rounds):
            for side, server, _ in sides:
                rounds[side].append(self.load(server, files[side], connections, config.duration_s))
        summary = {side: _median(results) for side, results in rounds.items()}
        if memory is not None:
            summary["service"].update(self._memory_growth(memory))
            method, target, body = scenario.requests[0]
            summary["service"]["body_bytes"] = body_size(
                self.service.base_url, method, target, body, self.token
            )
        if problems:
            summary["service"]["errors"] += len(problems)
        floor = summary.get("floor")
        ratio = summary["service"]["rps"] / floor["rps"] if floor and floor["rps"] else None
        cpu_ratio = _cpu_ratio(summary["service"], floor)
        own = summary["service"]
        say(
            f"{scenario.key}: {own['rps']:,.1f} req/s, p50 {own['p50_ms']:.1f} ms, "
            f"p99 {own['p99_ms']:.1f} ms"
            + (
                f" | floor {floor['rps']:,.1f} req/s, p50 {floor['p50_ms']:.1f} ms -> {ratio:.2f}x"
                if floor and ratio is not None
                else ""
            )
            + (f" | {own['errors']} errors" if own["errors"] else "")
            + (
                f" | worker peak +{own['worker_growth_kib'] / 1024:.0f} MB"
                f" (peak {own['worker_peak_kib'] / 1024:.0f} MB), body {own['body_bytes']:,} B"
                if "worker_growth_kib" in own
                else ""
            )
        )
        return {
            "label": scenario.label,
            "load_average": _load_average(),
            "connections": connections,
            "start_index": scenario.start_index,
            "floor_label": scenario.floor_label,
            "service": summary["service"],
            "floor": floor,
            "ratio": ratio,
            "cpu_ratio": cpu_ratio,
            "problems": problems,
            "example": f"{scenario.requests[0][0]} {scenario.requests[0][1]}",
        }

    def _memory_start(self) -> dict[int, int]:
        """Each service worker's resident memory (KiB), its VmHWM reset to it."""
        start: dict[int, int] = {}
        for pid in self.service.workers():
            reset_peak_rss(pid)
            rss = vm_kib(pid, "VmRSS")
            if rss is not None:
                start[pid] = rss
        return start

    def _memory_growth(self, start: dict[int, int]) -> dict[str, int]:
        """The largest growth of a worker's peak memory over ``start`` (KiB), and that peak."""
        grown = [
            (high - rss, high)
            for pid, rss in start.items()
            if (high := vm_kib(pid, "VmHWM")) is not None
        ]
        growth, peak = max(grown, default=(0, 0))
        return {"worker_growth_kib": max(growth, 0), "worker_peak_kib": peak}

    def export(self, count: int) -> dict[str, Any]:
        """Page through every user with one client; peak RSS of the workers meanwhile."""
        base = self.service.base_url
        probe = {
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "userName": f"export-probe-{secrets.token_hex(4)}",
            "name": {"givenName": "Export", "familyName": "Probe"},
            "emails": [{"value": "export-probe@example.org", "primary": True}],
        }
        status, created, _ = call(base, "POST", f"{SCIM}/Users", probe, self.token)
        if status != 201:
            raise RuntimeError(f"export: creating the probe user answered {status}: {created}")
        probe_id = created["id"]
        workers = self.service.workers()
        reset = all(reset_peak_rss(pid) for pid in workers) and bool(workers)
        peaks: dict[int, int] = {}
        stop = threading.Event()

        def sample() -> None:
            while True:
                for pid in self.service.workers():
                    value = vm_kib(pid, "VmHWM")
                    if value is not None:
                        peaks[pid] = max(peaks.get(pid, 0), value)
                if stop.wait(0.05):
                    return

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        times: list[float] = []
        ids: set[str] = set()
        total = None
        index = 1
        error = None
        started = time.perf_counter()
        try:
            while True:
                status, page, elapsed = call(
                    base, "GET", f"{SCIM}/Users?startIndex={index}&count={count}", None, self.token
                )
                times.append(elapsed)
                if status != 200:
                    error = f"startIndex={index}: status {status}"
                    break
                total = page["totalResults"]
                resources = page.get("Resources") or []
                ids.update(r["id"] for r in resources)
                index += len(resources)
                if not resources or index > total or len(times) > total // count + 20:
                    break
                if time.perf_counter() - started > self.config.export_limit_s:
                    error = (
                        f"stopped after {self.config.export_limit_s:.0f} s at startIndex {index}"
                    )
                    break
        finally:
            seconds = time.perf_counter() - started
            stop.set()
            sampler.join()
        ordered = sorted(times)
        result = {
            "count": count,
            "requests": len(times),
            "seconds": seconds,
            "total_results": total or 0,
            "collected": len(ids),
            "complete": error is None and total is not None and len(ids) == total,
            "error": error,
            "max_request_ms": ordered[-1] * 1000 if ordered else 0.0,
            "p50_ms": statistics.median(ordered) * 1000 if ordered else 0.0,
            "requests_over_600ms": sum(1 for t in times if t > 0.6),
            "peak_rss_kib": max(peaks.values(), default=0),
            "peak_reset": reset,
            "probe_listed": probe_id in ids,
        }
        say(
            f"export: {result['requests']} requests, {seconds:.1f} s, {len(ids):,}/{total or 0:,} "
            f"users, slowest {result['max_request_ms']:.0f} ms, peak RSS "
            f"{result['peak_rss_kib'] / 1024:.0f} MB, probe "
            f"{'listed' if result['probe_listed'] else 'MISSING'}"
        )
        return result

    def profile(self, scenario: Scenario) -> dict[str, Any]:
        """py-spy on one service worker while the scenario's load runs."""
        config = self.config
        seconds = config.profile_seconds
        file = write_requests(self.workdir / f"{scenario.key}.profile.req", scenario.requests)
        outcome: dict[str, Any] = {
            "label": scenario.label,
            "connections": scenario.connections,
            "seconds": seconds,
            "rate": config.profile_rate,
        }
        loader = threading.Thread(
            target=lambda: self.load(self.service, file, scenario.connections, seconds + 4),
            daemon=True,
        )
        loader.start()
        time.sleep(1.5)
        raw = self.workdir / f"{scenario.key}.pyspy.txt"
        ok, message = False, "no worker"
        # The youngest worker first: the least likely to be replaced (max_requests) meanwhile.
        for pid in sorted(self.service.workers(), key=lambda w: -int(start_time(w) or 0)):
            (user, system), wall_before = cpu_split(pid), time.monotonic()
            ok, message = profiler.record(pid, seconds, raw, config.profile_rate)
            if ok:
                wall = time.monotonic() - wall_before
                if start_time(pid) is None:
                    outcome["note"] = "the worker was replaced (max_requests) during the profile"
                    break
                user_after, system_after = cpu_split(pid)
                outcome["worker_user_cpu_percent"] = round(100 * (user_after - user) / wall, 1)
                outcome["worker_system_cpu_percent"] = round(
                    100 * (system_after - system) / wall, 1
                )
                break
        loader.join(seconds + 90)
        if not ok:
            outcome["error"] = f"py-spy failed: {message}"
            say(f"profile {scenario.key}: {outcome['error']}")
            return outcome
        outcome.update(profiler.summarize(raw, config.profile_rate, seconds))
        top = ", ".join(f"{p['function']} {p['percent']}%" for p in outcome["by_package"][:6])
        say(
            f"profile {scenario.key}: worker CPU user {outcome.get('worker_user_cpu_percent')}% + "
            f"system {outcome.get('worker_system_cpu_percent')}%, holding the GIL "
            f"{outcome['gil_percent']}%; {top}"
        )
        return outcome


def _selected(config: Config, key: str) -> bool:
    return not config.only or key in config.only


def _cpu_ratio(service: dict[str, Any], floor: dict[str, Any] | None) -> float | None:
    """Floor CPU per request / service CPU per request (app + slapd): the throughput ratio a
    CPU-bound machine would show, and much less sensitive to other work on the machine."""
    if not floor or service.get("app_cpu_ms") is None or floor.get("app_cpu_ms") is None:
        return None
    own = service["app_cpu_ms"] + service["slapd_cpu_ms"]
    theirs = floor["app_cpu_ms"] + floor["slapd_cpu_ms"]
    return theirs / own if own else None


def _load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (other work on the machine skews the figures)."""
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return []


def _median(results: list[LoadResult]) -> dict[str, Any]:
    app = [r.app_cpu_ms for r in results if r.app_cpu_ms is not None]
    slapd = [r.slapd_cpu_ms for r in results if r.slapd_cpu_ms is not None]
    return {
        "rps": statistics.median(r.rps for r in results),
        "app_cpu_ms": statistics.median(app) if app else None,
        "slapd_cpu_ms": statistics.median(slapd) if slapd else None,
        "p50_ms": statistics.median(r.p50_ms for r in results),
        "p90_ms": statistics.median(r.p90_ms for r in results),
        "p99_ms": statistics.median(r.p99_ms for r in results),
        "max_ms": max(r.max_ms for r in results),
        "requests": sum(r.requests for r in results),
        "errors": sum(r.errors for r in results),
        "rounds": [r.as_dict() for r in results],
    }


def wrk_check(runner: Runner, scenarios: dict[str, Scenario]) -> dict[str, Any]:
    """The smoke run's check of the wrk path (bench/load.lua): two 1 s runs."""
    if not shutil.which("wrk"):
        return {"ran": False, "reason": "wrk not installed"}
    outcome: dict[str, Any] = {"ran": True, "runs": {}}
    for key in ("filter_hit", "post_user"):
        file = write_requests(runner.workdir / f"{key}.wrk.req", scenarios[key].requests)
        result = run_wrk(runner.service.base_url, file, runner.token, runner._tag(), 2, 1)
        outcome["runs"][key] = result.as_dict()
    outcome["ok"] = all(r["requests"] > 0 and r["errors"] == 0 for r in outcome["runs"].values())
    say(f"wrk check: {'ok' if outcome['ok'] else 'FAILED'}")
    return outcome


# ------------------------------------------------------------------ main


def _server_env(
    slapd: SlapdInstance, token: str, workers: int | None, plain_ldap3: bool = False
) -> dict[str, str]:
    # Nothing SCIM_* leaks in from the caller (SCIM_LOG_LEVEL=WARNING would hide the cost of
    # the per-request log line): the service runs with its defaults, INFO included.
    # The worker model under test is the one exception (SCIM_WORKER_CLASS=sync to compare).
    keep = {"SCIM_WORKER_CLASS", "SCIM_THREADS"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCIM_") or k in keep}
    env.update(
        {
            **slapd.service_settings(),
            "SCIM_TOKENS_SHA256": "bench=" + hashlib.sha256(token.encode()).hexdigest(),
        }
    )
    if workers:
        env["SCIM_WORKERS"] = str(workers)
    if plain_ldap3:
        env["SCIM_LDAP_FAST_PATH"] = "off"
    return env


def run(config: Config, output: Path, keep: bool = False) -> dict[str, Any]:
    """One complete run; returns the results (also written to ``output``)."""
    workdir = Path(tempfile.mkdtemp(prefix="scim-bench-"))
    slapd = SlapdInstance(sssvlv_max=64, sssvlv_maxperconn=8, maxsize=map_size(config.users))
    servers: list[Gunicorn] = []
    results: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "smoke": config.smoke,
        "machine": machine_info(config.generator),
        "load_average_start": _load_average(),
    }
    try:
        say(f"slapd on {slapd.url}; loading {config.users:,} users with slapadd")
        slapd.start()
        dataset: Dataset = prepare(
            slapd, workdir, config.users, config.members, config.pools, config.password_every
        )
        say(
            f"loaded in {dataset.load_seconds:.1f} s ({dataset.ldif_bytes / 1e6:.0f} MB LDIF); "
            + "; ".join(str(v) for v in dataset.checks.values())
        )
        token = secrets.token_urlsafe(24)
        env = _server_env(slapd, token, config.workers, config.plain_ldap3)
        service = Gunicorn("service", find_free_port(), env, workdir / "service.log")
        servers.append(service)
        floor = Gunicorn(
            "floor", find_free_port(), env, workdir / "floor.log", app="bench.floor_app:app"
        )
        servers.append(floor)
        for server in servers:
            server.launch()
        for server in servers:
            server.wait_ready()
        workers = len(service.workers())
        say(f"service on {service.base_url}, floor on {floor.base_url}, {workers} workers each")
        runner = Runner(config, workdir, service, floor, token, slapd.pid)
        scenarios = build(dataset, config.connections, config.latency_connections)
        measured: dict[str, Any] = {}
        export = None
        for key in ORDER:
            if key == "group_get" and _selected(config, "export"):
                export = runner.export(config.export_count)
            if _selected(config, key):
                measured[key] = runner.measure(scenarios[key])
        results["scenarios"] = measured
        results["export"] = export
        if config.smoke:
            results["wrk_check"] = wrk_check(runner, scenarios)
        profiles: dict[str, Any] = {}
        if config.profile_seconds:
            for key in config.profile:
                profiles[key] = runner.profile(scenarios[key])
        results["profile"] = profiles
        results["service_log_bytes"] = service.log_file.stat().st_size
        results["load_average_end"] = _load_average()
        results["config"] = {
            "users": config.users,
            "members": config.members,
            "rounds": config.rounds,
            "duration_s": config.duration_s,
            "warmup_s": config.warmup_s,
            "connections": config.connections,
            "fast_path": not config.plain_ldap3,
            "latency_connections": config.latency_connections,
            "workers": workers,
            "worker_class": os.environ.get("SCIM_WORKER_CLASS", "scim_flask.worker.ScimWorker"),
            "generator": config.generator
            + (f" ({results['machine']['wrk']})" if results["machine"].get("wrk") else ""),
            "log_level": "INFO (default), standard error to a file",
        }
        results["dataset"] = {
            "users": dataset.users,
            "members": dataset.members,
            "load_seconds": dataset.load_seconds,
            "checks": dataset.checks,
        }
    finally:
        for server in servers:
            server.stop()
        if keep:
            say(f"kept {workdir}; slapd folder {slapd.directory} removed")
        slapd.close()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    results["targets"] = report.evaluate(results)
    results["seconds"] = round(time.monotonic() - _started, 1)
    output.mkdir(parents=True, exist_ok=True)
    report.write_json(results, output / "latest.json")
    text = report.markdown(results)
    (output / "latest.md").write_text(text, encoding="utf-8")
    if report.write_chart(results, output / "latest.png"):
        results["chart"] = str(output / "latest.png")
    print(text, flush=True)
    say(f"done in {results['seconds']:.0f} s; wrote {output}/latest.json, latest.md, latest.png")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="SCIM service vs floor benchmark."
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds in total")
    parser.add_argument(
        "--output", type=Path, default=None, help="results folder (default bench/results)"
    )
    parser.add_argument(
        "--load",
        choices=("auto", "wrk", "python"),
        default="auto",
        help="load generator (auto: wrk for the full run, python for --smoke)",
    )
    parser.add_argument("--users", type=int, default=None)
    parser.add_argument("--members", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--duration", type=float, default=None, help="seconds per round")
    parser.add_argument("--warmup", type=float, default=None, help="warm-up seconds")
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated scenario keys to run (and/or 'export'); default: all of "
        + ", ".join((*ORDER, "export")),
    )
    parser.add_argument(
        "--profile",
        default=None,
        help="comma-separated scenario keys to profile (default: filter_hit,get_by_id)",
    )
    parser.add_argument("--no-profile", action="store_true", help="skip the py-spy profiles")
    parser.add_argument(
        "--plain-ldap3",
        action="store_true",
        help="the service with SCIM_LDAP_FAST_PATH=off (ldap3 for every directory operation)",
    )
    parser.add_argument(
        "--no-install", action="store_true", help="install nothing (wrk, matplotlib, py-spy)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs)")
    parser.add_argument(
        "--strict", action="store_true", help="exit with status 1 when a target fails"
    )
    args = parser.parse_args(argv)
    config = SMOKE if args.smoke else FULL
    overrides: dict[str, Any] = {
        "users": args.users,
        "members": args.members,
        "rounds": args.rounds,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
    }
    config = replace(config, **{k: v for k, v in overrides.items() if v is not None})
    if args.load != "auto":
        config = replace(config, generator=args.load)
    if args.only:
        only = tuple(k.strip() for k in args.only.split(",") if k.strip())
        unknown = sorted(set(only) - {*ORDER, "export"})
        if unknown:
            parser.error(f"unknown scenario(s): {', '.join(unknown)}")
        config = replace(config, only=only)
    if args.profile is not None:
        keys = tuple(k.strip() for k in args.profile.split(",") if k.strip())
        unknown = sorted(set(keys) - set(ORDER))
        if unknown:
            parser.error(f"unknown scenario(s) to profile: {', '.join(unknown)}")
        config = replace(config, profile=keys)
    if args.no_profile:
        config = replace(config, profile_seconds=0)
    if args.plain_ldap3:
        config = replace(config, plain_ldap3=True)
    if config.rounds < 1:
        parser.error("--rounds must be at least 1")
    if config.generator == "wrk":
        ensure_wrk(install=not args.no_install)
    if not config.smoke:
        ensure_python_tools(install=not args.no_install)
    output = args.output or ROOT / "bench" / "results"
    results = run(config, output, keep=args.keep)
    failed = [t for t in results["targets"] if not t["passed"]]
    if failed:
        say(f"{len(failed)} of {len(results['targets'])} targets FAIL")
    return 1 if (args.strict and failed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
