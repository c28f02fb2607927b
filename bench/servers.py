"""The servers under test: gunicorn with the production ``scim_flask.gunicorn_conf``.

Each server is one gunicorn master started by this process (its own session, so a terminal's
Ctrl-C reaches the benchmark, which then stops it by PID). Its standard error (gunicorn's error
log and the service's JSON request log at the default level INFO) goes to a file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from bench.load import call

__all__ = [
    "GUNICORN_CONFIG",
    "ROOT",
    "Gunicorn",
    "children",
    "cpu_seconds",
    "cpu_split",
    "reset_peak_rss",
    "start_time",
    "vm_kib",
]

ROOT = Path(__file__).resolve().parent.parent
GUNICORN_CONFIG = "python:scim_flask.gunicorn_conf"


def children(pid: int) -> list[int]:
    """The direct child processes of ``pid``."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        return [int(x) for x in text.split()]
    except OSError:
        pass
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def vm_kib(pid: int, field: str = "VmHWM") -> int | None:
    """A ``/proc/<pid>/status`` memory figure in KiB (VmHWM: peak RSS), None if gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int | None, with_children: bool = False) -> float:
    """User + system CPU seconds of ``pid`` (all threads), plus reaped children if asked."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # fields[11..14] are utime, stime, cutime, cstime (stat fields 14-17), in clock ticks.
    ticks = int(fields[11]) + int(fields[12])
    if with_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / _TICKS


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of ``pid``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    return int(fields[11]) / _TICKS, int(fields[12]) / _TICKS


def reset_peak_rss(pid: int) -> bool:
    """Reset VmHWM to the current RSS (``clear_refs`` value 5; needs the same user or root)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


class Gunicorn:
    """One gunicorn master serving ``app`` (the config's own ``wsgi_app`` when None)."""

    def __init__(
        self,
        name: str,
        port: int,
        env: Mapping[str, str],
        log_file: Path,
        app: str | None = None,
    ) -> None:
        self.name = name
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.log_file = log_file
        self._env = dict(env)
        self._env["SCIM_BIND"] = f"127.0.0.1:{port}"
        self._app = app
        self._proc: subprocess.Popen[bytes] | None = None
        self._seen_workers: dict[int, str] = {}  # pid -> start time (to recognise it later)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self, timeout: float = 60.0) -> None:
        """Start gunicorn and wait until ``/healthz`` answers 200 and every worker is up."""
        self.launch()
        self.wait_ready(timeout)

    def launch(self) -> None:
        """Start the gunicorn master (see :meth:`wait_ready`)."""
        command = [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONFIG)]
        if self._app:
            command.append(self._app)
        with self.log_file.open("ab") as log:
            self._proc = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until ``/healthz`` answers 200 and every worker has booted."""
        assert self._proc is not None, "launch() first"
        deadline = time.monotonic() + timeout
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name}: gunicorn exited with {self._proc.returncode}; "
                    f"log {self.log_file}:\n{self.tail()}"
                )
            try:
                status, _, _ = call(self.base_url, "GET", "/healthz", timeout=2)
            except OSError:
                status = 0
            if status == 200:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: no answer within {timeout:.0f} s:\n{self.tail()}")
            time.sleep(0.1)
        # Every worker imports the app before it accepts: wait until each one has booted, so the
        # first measurement does not pay for imports.
        wanted = int(self._env.get("SCIM_WORKERS") or (os.cpu_count() or 1) * 2)
        while len(self.workers()) < wanted and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)

    def workers(self) -> list[int]:
        """The worker PIDs right now (gunicorn replaces a worker after max_requests)."""
        if self._proc is None or self._proc.poll() is not None:
            return []
        pids = children(self._proc.pid)
        for pid in pids:
            started = start_time(pid)
            if started is not None:
                self._seen_workers.setdefault(pid, started)
        return pids

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the master and every worker, replaced ones included
        (the master's reaped-children times hold the workers that exited)."""
        if self._proc is None:
            return 0.0
        total = cpu_seconds(self._proc.pid, with_children=True)
        return total + sum(cpu_seconds(pid) for pid in self.workers())

    def tail(self, lines: int = 20) -> str:
        try:
            text = self.log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM the master (it stops its workers), SIGKILL after ``timeout``; by PID only."""
        proc = self._proc
        if proc is None:
            return
        self.workers()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        # Workers of ours that outlived a killed master: the same PID *and* start time.
        for pid, started in self._seen_workers.items():
            if start_time(pid) == started:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        self._proc = None


def start_time(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (field 22 of its stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]
