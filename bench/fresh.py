"""Run pytest for many mutants, each in a fresh copy of the project's code: bench/mutation.py.

A fresh interpreter per mutant costs about three seconds before the first test runs, most of it
importing pytest's plugins (hypothesis, schemathesis). This server pays that once: it imports
every third-party module a collection of the tests imports, and nothing of the project (no
module whose file is under the working directory, which is mutmut's ``mutants/``), then forks
one child per job. A child sets ``MUTANT_UNDER_TEST`` before pytest imports the project, so
the project's modules, their import-time objects and their caches are built anew with the
mutant active, exactly as in a new interpreter; only third-party modules are shared.

Run with the working directory ``mutants/`` (and ``PYTHONPATH`` pointing there); reads one JSON
object from stdin, ``{"jobs": N, "timeout": S, "preload": [pytest args], "runs": [{"mutant":
NAME, "args": [pytest args], "hits": true|false}]}``, and writes one JSON list to stdout, per
run ``{"status": exit code (or -9 on timeout), "hits": [functions]}``. With ``"hits"``, the
mutant should be ``"stats"``: the child records the mutated functions its tests reached
(mutmut's trampolines do when ``MUTANT_UNDER_TEST=stats``), import time included.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path.cwd().resolve()


def _ours(module: Any) -> bool:
    """Whether a module belongs to the tree under test (those must be imported afresh)."""
    files = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
    return any(f and Path(f).resolve().is_relative_to(HERE) for f in files)


def _quiet() -> None:
    if os.environ.get("FRESH_VERBOSE"):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def _child(mutant: str, args: list[str], hits_file: str | None) -> int:
    """In the forked child: run pytest with the mutant active; never returns."""
    _quiet()
    os.environ["MUTANT_UNDER_TEST"] = mutant
    status = 3
    try:
        import pytest

        # The server imported pytest's plugins before this session could mark them for
        # assertion rewriting; that warning says nothing about the code under test.
        status = int(pytest.main(["-W", "ignore::pytest.PytestAssertRewriteWarning", *args]))
        if hits_file:
            from mutmut.state import state

            Path(hits_file).write_text(json.dumps(sorted(state()._stats)))
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(status)


def _preload(args: list[str]) -> None:
    """Import what a collection of ``args`` imports, the project aside."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as names:
        pid = os.fork()
        if pid == 0:
            _quiet()
            try:
                import pytest

                pytest.main(["--collect-only", "-q", *args])
                found = [n for n, m in list(sys.modules.items()) if m is not None and not _ours(m)]
                Path(names.name).write_text(json.dumps(found))
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        text = names.read()
    for name in json.loads(text) if text else []:
        try:
            importlib.import_module(name)
        except Exception:
            continue
    leaked = sorted(n for n, m in sys.modules.items() if m is not None and _ours(m))
    if leaked:
        raise SystemExit(f"fresh: the server imported the tree under test: {leaked[:5]}")


def main() -> None:
    request = json.load(sys.stdin)
    jobs, timeout = int(request["jobs"]), float(request["timeout"])
    runs: list[dict[str, Any]] = request["runs"]
    _preload(request["preload"])
    results: list[dict[str, Any] | None] = [None] * len(runs)
    running: dict[int, tuple[int, float, str | None]] = {}
    pending = list(range(len(runs)))
    scratch = tempfile.mkdtemp(prefix="fresh-")
    while pending or running:
        while pending and len(running) < jobs:
            index = pending.pop(0)
            run = runs[index]
            hits_file = os.path.join(scratch, f"{index}.json") if run.get("hits") else None
            pid = os.fork()
            if pid == 0:
                _child(run["mutant"], run["args"], hits_file)
            running[pid] = (index, time.monotonic() + timeout, hits_file)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for child, (_, deadline, _) in list(running.items()):
                if now > deadline:
                    os.kill(child, 9)
            time.sleep(0.02)
            continue
        index, _, hits_file = running.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        hits: list[str] = []
        if hits_file and os.path.exists(hits_file):
            hits = json.loads(Path(hits_file).read_text())
            os.unlink(hits_file)
        results[index] = {"status": code, "hits": hits}
    os.rmdir(scratch)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
