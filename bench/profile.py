"""Where a gunicorn worker's time goes under load: py-spy samples, summarised.

py-spy samples one worker for a few seconds with ``--gil --nonblocking`` (the worker is never
paused, so it serves its share of the load meanwhile): only samples where the worker holds
the GIL are kept, i.e. it runs Python code (or would, if the machine gave it a core). Samples in
socket I/O (the GIL released: waiting for slapd or the client, and the kernel's work of a send)
are left out, so on a busy machine the profile is not skewed toward the syscalls where a worker
happens to be descheduled. The worker's real user and system CPU time over the same window come
from /proc (system time is mostly loopback TCP: slapd and HTTP sockets). The summary gives the
samples by package (innermost frame), the top functions by self time and by inclusive time.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["py_spy", "record", "summarize"]

_FRAME = re.compile(r"^(?P<name>.*) \((?P<file>.*?)(?::\d+)?\)$")


def py_spy() -> str | None:
    """The py-spy binary of this interpreter's environment, or on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    if beside.is_file():
        return str(beside)
    return shutil.which("py-spy")


def record(pid: int, seconds: int, output: Path, rate: int = 200) -> tuple[bool, str]:
    """Sample ``pid`` for ``seconds`` into ``output`` (collapsed stacks); (ok, message)."""
    tool = py_spy()
    if tool is None:
        return False, "py-spy is not installed"
    command = [
        tool,
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(seconds),
        "--rate",
        str(rate),
        "--gil",
        "--nonblocking",
        "--format",
        "raw",
        "--output",
        str(output),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + 60, check=False
    )
    message = (done.stdout + done.stderr).strip().splitlines()
    return done.returncode == 0 and output.is_file(), message[-1] if message else ""


def _package(file: str) -> str:
    if file.startswith("<frozen"):
        return "importlib"
    parts = file.split("/")
    if parts[0] in ("scim_core", "scim_flask", "bench") and len(parts) > 1:
        return parts[0] + "." + parts[1].removesuffix(".py")
    return parts[0].removesuffix(".py")


def _key(frame: str) -> tuple[str, str]:
    match = _FRAME.match(frame)
    if not match:
        return frame, "?"
    return match["name"], match["file"]


def summarize(raw: Path, rate: int, seconds: float, top: int = 15) -> dict[str, Any]:
    """Summarise a py-spy raw file: GIL share, samples by package, top self and inclusive."""
    self_time: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_key(f) for f in stack.split(";")]
        total += count
        name, file = frames[-1]
        self_time[f"{name} ({file})"] += count
        packages[_package(file)] += count
        for seen in {f"{n} ({f})" for n, f in frames}:
            inclusive[seen] += count

    def share(counter: Counter[str], limit: int) -> list[dict[str, Any]]:
        return [
            {"function": k, "percent": round(100 * v / total, 1)}
            for k, v in counter.most_common(limit)
        ]

    expected = rate * seconds
    # Inclusive figures of the outermost frames (gunicorn's loop) are ~100 %: leave those out.
    inner = Counter({k: v for k, v in inclusive.items() if v < 0.97 * total})
    return {
        "samples": total,
        "gil_percent": round(min(100.0, 100 * total / expected), 1) if expected else None,
        "by_package": share(packages, top) if total else [],
        "top_self": share(self_time, top) if total else [],
        "top_inclusive": share(inner, top + 10) if total else [],
    }
