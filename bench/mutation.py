"""Mutation score of the core and the LDAP plugin's pure modules: ``make mutation``.

mutmut 3 (configured in setup.cfg ``[mutmut]``) copies the tree to ``mutants/``, mutates the
listed modules and runs the fast tests (tests/unit and the memory contract: no directory
server) against each mutant, in forked workers. Those workers start from a process whose
caches are filled and whose module-level objects are built, so a mutant can pass there and
fail in a fresh interpreter. Every mutant that survives, or that no test reached, is therefore
run again in a fresh process: first the tests mutmut found for its function, then the whole
fast suite. Only what survives both counts.

A mutant that changes nothing but the text of a message (a string inside a ``raise``) is
counted apart: the score is over the mutants that can change behaviour. A mutant that cannot
change behaviour at all is marked in the code with ``# pragma: no mutate`` and a reason.

Usage::

    python -m bench.mutation                       # every module, one worker, the table
    python -m bench.mutation --jobs 2 scim_core/normalize.py
    python -m bench.mutation --rescore             # recount the last run (no mutmut run)
"""

from __future__ import annotations

import argparse
import ast
import configparser
import difflib
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
KILLED = {1, 3, 24, -24, 36, 152, 255, 37, 35, -11, -9}  # killed, timeout, type check, crash
SURVIVED, NO_TESTS = 0, {5, 33}


@dataclass
class Module:
    path: str
    total: int = 0
    message: int = 0
    killed: int = 0
    fresh_kills: int = 0
    survivors: list[str] = field(default_factory=list)

    @property
    def behavioural(self) -> int:
        return self.total - self.message

    @property
    def score(self) -> float:
        return 100.0 * self.killed / self.behavioural if self.behavioural else 100.0


def _config() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return parser


def _list(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _dotted(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def _pytest_args() -> list[str]:
    section = _config()["mutmut"]
    return _list(section["pytest_add_cli_args"]) + _list(
        section["pytest_add_cli_args_test_selection"]
    )


def _functions(source: str) -> dict[str, list[str]]:
    """Top-level function (and method) sources of a mutated file, by name."""
    lines = source.splitlines()
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = lines[node.lineno - 1 : node.end_lineno]
    return found


_STRING = re.compile(r"""(?:[rbfu]{0,2})("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""", re.IGNORECASE)


def _message_only(functions: dict[str, list[str]], mutant: str, orig: str) -> bool:
    """Whether the mutant differs from the original only inside a message's string literals."""
    body, original = functions.get(mutant), functions.get(orig)
    if body is None or original is None:
        return False
    old, new = original[1:], body[1:]
    changed = [
        (a, b)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new).get_opcodes()
        if tag != "equal"
        for a, b in zip(old[i1:i2], new[j1:j2], strict=False)
    ]
    if not changed or len(old) != len(new):
        return False
    for before, after in changed:
        if _STRING.sub('""', before) != _STRING.sub('""', after).replace("(None)", '("")'):
            return False
        # Inside a raise: the raise line itself, or a continuation line holding only strings.
        index = old.index(before)
        statement = next((line for line in reversed(old[: index + 1]) if "raise " in line), None)
        if statement is None or index - old.index(statement) > 3:
            return False
    return True


def _run_mutmut(modules: list[str], jobs: int, log: Path) -> None:
    names = [f"{_dotted(m)}.x*" for m in modules]
    mutmut = str(Path(sys.executable).parent / "mutmut")
    command = [mutmut, "run", "--max-children", str(jobs), *names]
    log.parent.mkdir(exist_ok=True)
    # Subprocesses some tests start must import the mutated tree too, not an installed one.
    env = {**os.environ, "PYTHONPATH": str(MUTANTS)}
    with log.open("w") as out:
        subprocess.run(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, check=False
        )


def _fresh(mutant: str, tests: list[str]) -> bool:
    """Whether the mutant fails ``tests`` in a fresh interpreter (killed)."""
    args = [a for a in _pytest_args() if not a.startswith("tests/")] + ["-x", "-q", *tests]
    env = {**os.environ, "MUTANT_UNDER_TEST": mutant, "PYTHONPATH": str(MUTANTS)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=MUTANTS,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=900,
        check=False,
    )
    return result.returncode != 0


def _recheck(mutant: str, stats: dict[str, list[str]]) -> bool:
    function = mutant.rsplit("__mutmut_", 1)[0]
    selected = sorted(stats.get(function, []))
    if selected and _fresh(mutant, selected):
        return True
    fast = [a for a in _pytest_args() if a.startswith("tests/")]
    return _fresh(mutant, fast)


def score(modules: list[str], jobs: int) -> list[Module]:
    stats_file = MUTANTS / "mutmut-stats.json"
    stats = json.loads(stats_file.read_text())["tests_by_mangled_function_name"]
    results = []
    to_recheck: list[tuple[Module, str]] = []
    for path in modules:
        module = Module(path)
        meta = json.loads((MUTANTS / f"{path}.meta").read_text())["exit_code_by_key"]
        functions = _functions((MUTANTS / path).read_text())
        for mutant, code in sorted(meta.items()):
            local = mutant.rsplit(".", 1)[1]
            orig = local.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"
            module.total += 1
            if _message_only(functions, local, orig):
                module.message += 1
            elif code in KILLED:
                module.killed += 1
            else:
                to_recheck.append((module, mutant))
        results.append(module)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        verdicts = pool.map(lambda item: _recheck(item[1], stats), to_recheck)
        for (module, mutant), killed in zip(to_recheck, verdicts, strict=True):
            if killed:
                module.killed += 1
                module.fresh_kills += 1
            else:
                module.survivors.append(mutant)
    return results


def table(results: list[Module]) -> str:
    rows = [
        "| module | mutants | message text | behavioural | killed | of which fresh | survived "
        "| score |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in results:
        rows.append(
            f"| {m.path} | {m.total} | {m.message} | {m.behavioural} | {m.killed} | "
            f"{m.fresh_kills} | {len(m.survivors)} | {m.score:.1f}% |"
        )
    total = sum(m.behavioural for m in results)
    killed = sum(m.killed for m in results)
    overall = 100.0 * killed / total if total else 100.0
    rows.append(
        f"| **all** | {sum(m.total for m in results)} | {sum(m.message for m in results)} | "
        f"{total} | {killed} | {sum(m.fresh_kills for m in results)} | "
        f"{sum(len(m.survivors) for m in results)} | **{overall:.1f}%** |"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("modules", nargs="*", help="paths as in setup.cfg (default: all)")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("MUTATION_JOBS", "1")))
    parser.add_argument("--rescore", action="store_true", help="count the last run again")
    parser.add_argument("--output", type=Path, help="write the table here (markdown)")
    args = parser.parse_args(argv)
    configured = _list(_config()["mutmut"]["only_mutate"])
    modules = args.modules or configured
    unknown = sorted(set(modules) - set(configured))
    if unknown:
        parser.error(f"not in setup.cfg [mutmut] only_mutate: {', '.join(unknown)}")
    started = time.monotonic()
    if not args.rescore:
        _run_mutmut(modules, args.jobs, MUTANTS / "run.log")
    results = score(modules, args.jobs)
    minutes = (time.monotonic() - started) / 60
    command = "python -m bench.mutation " + " ".join([f"--jobs {args.jobs}", *(args.modules or [])])
    report = [
        "# Mutation score",
        "",
        f"`{command.strip()}` (mutmut {version('mutmut')}, {args.jobs} worker(s), "
        f"{minutes:.0f} min, {time.strftime('%Y-%m-%d')}). Tests: "
        + ", ".join(f"`{a}`" for a in _pytest_args() if a.startswith("tests/"))
        + ". Score: killed / behavioural (mutants that change only a message's text aside); "
        "a mutant counts as survived only if it also survives a fresh interpreter.",
        "",
        table(results),
    ]
    survivors = [s for m in results for s in m.survivors]
    if survivors:
        report += ["", "Survivors (`mutmut show NAME`):", ""]
        report += [f"- `{s}`" for s in survivors]
    text = "\n".join(report) + "\n"
    print(text)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
