"""Mutation score of the core and the LDAP plugin's pure modules: ``make mutation``.

mutmut 3 (configured in setup.cfg ``[mutmut]``) copies the tree to ``mutants/``, mutates the
listed modules and runs the fast tests (tests/unit and the memory contract: no directory
server) against each mutant, in forked workers. Those workers start from a process whose
caches are filled and whose module-level objects are built, so a mutant can pass there and
fail in a fresh interpreter. Every mutant that survives, or that no test reached, is therefore
run again with the project imported afresh (``bench/fresh.py``: a fork server that shares only
third-party modules), on the test files that reach its function: the files whose tests
reached it when each file ran alone in a fresh import of the project (import time counts, so
a function that fills a cache or builds a module-level object is reached by every file that
uses the result), together with those holding the tests mutmut associated with it. A mutant
no test file reaches cannot be killed by any and counts as survived without a run. Only what
survives the fresh run counts.

A mutant that changes nothing but the text of a message (a string inside a ``raise``) is
counted apart: the score is over the mutants that can change behaviour. A mutant that cannot
change behaviour at all is marked in the code with ``# pragma: no mutate`` and a reason.

Each module has a floor, recorded in the table: its target (100% for userName normalization,
filter evaluation and escaping, 97% for the others) or, while it is below its target, the
best score it has had. A run exits with status 1 when a module scores below its floor.

Usage::

    python -m bench.mutation                       # every module, one worker, the table
    python -m bench.mutation --jobs 2 scim_core/normalize.py
    python -m bench.mutation --rescore             # recount the last run (no mutmut run)
    python -m bench.mutation --changed             # only what changed since the table's commit
    python -m bench.mutation --changed HEAD^       # only what changed since HEAD^

The table records the commit it was measured on. ``--changed`` (``tox -e mutation``, in
``make test``) takes the configured modules that ``git diff REV`` names, REV being that commit
(or another one given; REV against the working tree: on a clean checkout exactly the commits
after REV), so every change since the table was last measured is checked, however many
commits it took; when the recorded commit is not in the history (a rewritten branch) or the
table records none, REV is ``HEAD^``. It mutates, in a scratch copy of the tree (``mutants/``
is left alone), the functions and methods the diff touches, or the whole module when it touches
module-level code; the module's other mutants keep the verdicts ``bench/results/mutation.md``
records (survived if listed there, else killed), and each module is held to the floor recorded
there. When no configured module changed it says so and exits 0.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import difflib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
KILLED = {1, 3, 24, -24, 36, 152, 255, 37, 35, -11, -9}  # killed, timeout, type check, crash
SURVIVED, NO_TESTS = 0, {5, 33}
TABLE = ROOT / "bench" / "results" / "mutation.md"
TARGET = 97.0
# Modules held to every behavioural mutant killed.
STRICT = {
    "scim_core/normalize.py": 100.0,
    "scim_core/filter/evaluate.py": 100.0,
    "scim_core/backends/ldap/escape.py": 100.0,
}
# A fresh run longer than this is a mutant that hangs (killed, as mutmut counts a timeout).
FRESH_TIMEOUT = 600


@dataclass
class Module:
    path: str
    total: int = 0
    message: int = 0
    killed: int = 0
    fresh_kills: int = 0
    survivors: list[str] = field(default_factory=list)
    unreached: list[str] = field(default_factory=list)
    floor: float = 0.0

    @property
    def behavioural(self) -> int:
        return self.total - self.message

    @property
    def score(self) -> float:
        """Killed / behavioural, in percent, rounded down to the tenth the table shows."""
        exact = 100.0 * self.killed / self.behavioural if self.behavioural else 100.0
        return math.floor(exact * 10 + 1e-9) / 10

    @property
    def target(self) -> float:
        return STRICT.get(self.path, TARGET)


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
    # Each changed line with its own position: a function may repeat a line (two raises of
    # one error class), and the nearest raise above the change is the one it belongs to.
    changed = [
        (i1 + offset, a, b)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new).get_opcodes()
        if tag != "equal"
        for offset, (a, b) in enumerate(zip(old[i1:i2], new[j1:j2], strict=False))
    ]
    if not changed or len(old) != len(new):
        return False
    for index, before, after in changed:
        if _STRING.sub('""', before) != _STRING.sub('""', after).replace("(None)", '("")'):
            return False
        # Inside a raise: the raise line itself, or a continuation line holding only strings.
        raised = next((i for i in range(index, -1, -1) if "raise " in old[i]), None)
        if raised is None or index - raised > 3:
            return False
    return True


def _run_mutmut(modules: list[str], jobs: int, log: Path, only: list[str] | None = None) -> None:
    names = (
        [f"{name}__mutmut_*" for name in only] if only else [f"{_dotted(m)}.x*" for m in modules]
    )
    mutmut = str(Path(sys.executable).parent / "mutmut")
    command = [mutmut, "run", "--max-children", str(jobs), *names]
    # mutmut keeps the verdicts of an earlier run for functions it finds unchanged, even when
    # the tests or the configured modules changed since (a module added later then has no
    # results at all): every run starts from a fresh tree.
    shutil.rmtree(MUTANTS, ignore_errors=True)
    log.parent.mkdir(exist_ok=True)
    # Subprocesses some tests start must import the mutated tree too, not an installed one.
    env = {**os.environ, "PYTHONPATH": str(MUTANTS)}
    with log.open("w") as out:
        subprocess.run(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, check=False
        )


def _test_files() -> list[str]:
    """The fast suite's test files, as pytest would collect them (``--ignore`` honoured)."""
    args = _pytest_args()
    ignored = {a.split("=", 1)[1] for a in args if a.startswith("--ignore=")}
    files: list[str] = []
    for arg in (a for a in args if a.startswith("tests/")):
        path = ROOT / arg
        found = sorted(path.rglob("test_*.py")) if path.is_dir() else [path]
        files += [str(f.relative_to(ROOT)) for f in found]
    return [f for f in files if f not in ignored]


def _fresh_runs(runs: list[dict[str, object]], jobs: int) -> list[dict[str, object]]:
    """Run pytest once per item of ``runs`` with the project imported afresh (bench/fresh.py)."""
    if not runs:
        return []
    options = [a for a in _pytest_args() if not a.startswith("tests/")]
    request = {
        "jobs": jobs,
        "timeout": FRESH_TIMEOUT,
        "preload": [*options, *_test_files()],
        "runs": [{**run, "args": [*options, "-q", *run["args"]]} for run in runs],  # type: ignore[list-item]
    }
    env = {**os.environ, "PYTHONPATH": str(MUTANTS)}
    env.pop("MUTANT_UNDER_TEST", None)
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "fresh.py")],
        cwd=MUTANTS,
        env=env,
        input=json.dumps(request),
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    answers: list[dict[str, object]] = json.loads(result.stdout)
    return answers


def _reach(jobs: int) -> dict[str, set[str]]:
    """Test files by the mutated functions they reach, each file run alone, freshly imported."""
    files = _test_files()
    answers = _fresh_runs([{"mutant": "stats", "args": [f], "hits": True} for f in files], jobs)
    reached: dict[str, set[str]] = {}
    for file, answer in zip(files, answers, strict=True):
        if answer["status"] != 0:
            raise SystemExit(f"{file} fails without a mutant (status {answer['status']})")
        for function in answer["hits"]:  # type: ignore[attr-defined]
            reached.setdefault(function, set()).add(file)
    return reached


def score(modules: list[str], jobs: int, recorded: set[str] | None = None) -> list[Module]:
    """Count the last run. With ``recorded`` (a change's run: only the touched functions were
    mutated), a mutant mutmut did not run keeps its verdict from the table: survived if
    ``recorded`` names it, else killed."""
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
            elif code is None and recorded is not None:
                if mutant in recorded:
                    module.survivors.append(mutant)
                else:
                    module.killed += 1
            else:
                to_recheck.append((module, mutant))
        results.append(module)
    reached = _reach(jobs) if to_recheck else {}
    runs: list[dict[str, object]] = []
    checked: list[tuple[Module, str]] = []
    for module, mutant in to_recheck:
        function = mutant.rsplit("__mutmut_", 1)[0]
        files = reached.get(function, set()) | {t.split("::")[0] for t in stats.get(function, [])}
        if not files:
            module.unreached.append(mutant)
            module.survivors.append(mutant)
            continue
        runs.append({"mutant": mutant, "args": ["-x", *sorted(files)]})
        checked.append((module, mutant))
    for (module, mutant), answer in zip(checked, _fresh_runs(runs, jobs), strict=True):
        if answer["status"] != 0:
            module.killed += 1
            module.fresh_kills += 1
        else:
            module.survivors.append(mutant)
    return results


def survivors(text: str) -> set[str]:
    """The survivors listed in a table written by :func:`main`."""
    return set(re.findall(r"^- `([^`]+)`", text, flags=re.MULTILINE))


def floors(text: str) -> dict[str, float]:
    """The floor of each module recorded in a table written by :func:`table`."""
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0].startswith("scim_core/"):
            found[cells[0]] = float(cells[8].rstrip("%"))
    return found


def set_floors(results: list[Module], previous: dict[str, float]) -> None:
    """Floor: the target, or while below it the best score recorded (never lowered)."""
    for m in results:
        m.floor = min(m.target, max(previous.get(m.path, 0.0), m.score))


def table(results: list[Module]) -> str:
    rows = [
        "| module | mutants | message text | behavioural | killed | of which fresh | survived "
        "| score | floor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in results:
        rows.append(
            f"| {m.path} | {m.total} | {m.message} | {m.behavioural} | {m.killed} | "
            f"{m.fresh_kills} | {len(m.survivors)} | {m.score:.1f}% | {m.floor:.1f}% |"
        )
    total = sum(m.behavioural for m in results)
    killed = sum(m.killed for m in results)
    overall = math.floor(1000.0 * killed / total) / 10 if total else 100.0
    rows.append(
        f"| **all** | {sum(m.total for m in results)} | {sum(m.message for m in results)} | "
        f"{total} | {killed} | {sum(m.fresh_kills for m in results)} | "
        f"{sum(len(m.survivors) for m in results)} | **{overall:.1f}%** | |"
    )
    return "\n".join(rows)


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


_MEASURED_ON = re.compile(r"measured on commit `([0-9a-f]{40})`")


def _commit_measured() -> str | None:
    """The commit HEAD is at, or None outside a git checkout (the scratch copy of a check)."""
    try:
        return _git("rev-parse", "--verify", "HEAD").strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def since(rev: str | None) -> str:
    """The base a check diffs against: ``rev`` if given, else the commit the table records
    when it is an ancestor of HEAD, else ``HEAD^``."""
    if rev:
        return rev
    text = TABLE.read_text(encoding="utf-8") if TABLE.exists() else ""
    recorded = _MEASURED_ON.search(text)
    if recorded is None:
        print(f"mutation: {TABLE.name} records no commit; checking what changed since HEAD^.")
        return "HEAD^"
    commit = recorded.group(1)
    ancestor = subprocess.run(
        ["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=ROOT, check=False
    )
    if ancestor.returncode != 0:
        print(f"mutation: the table's commit {commit[:12]} is not in this history; since HEAD^.")
        return "HEAD^"
    return commit


def changed(rev: str, configured: list[str]) -> list[str]:
    """The configured modules ``git diff REV`` names (REV against the working tree)."""
    names = set(_git("diff", "--name-only", "--no-renames", rev, "--").split())
    names |= set(_git("ls-files", "--others", "--exclude-standard").split())
    return [m for m in configured if m in names]


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def touched(rev: str, module: str) -> list[str] | None:
    """mutmut's names of the functions and methods of ``module`` that ``git diff REV`` touches,
    or None when it touches module-level code (or the module is new): then all of it."""
    if not _git("ls-tree", "--name-only", rev, "--", module).strip():
        return None
    lines: set[int] = set()
    for start, count in _HUNK.findall(_git("diff", "-U0", "--no-renames", rev, "--", module)):
        first = int(start)
        lines.update(range(first, first + max(int(count or "1"), 1)))
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    spans: list[tuple[int, int, str]] = []
    for node in tree.body:
        defs = [(node, None)] if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else []
        if isinstance(node, ast.ClassDef):
            defs = [
                (item, node.name)
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
        for item, owner in defs:
            first = min([item.lineno, *(d.lineno for d in item.decorator_list)])
            name = f"x\u01c1{owner}\u01c1{item.name}" if owner else f"x_{item.name}"
            spans.append((first, item.end_lineno or item.lineno, f"{_dotted(module)}.{name}"))
    names = set()
    for line in lines:
        inside = [name for first, last, name in spans if first <= line <= last]
        if not inside:
            return None
        names.update(inside)
    return sorted(names)


def check_changed(rev: str, jobs: int) -> int:
    """Mutate the configured modules changed since ``rev`` in a scratch copy of the tree."""
    started = time.monotonic()
    configured = _list(_config()["mutmut"]["only_mutate"])
    commit = _git("rev-parse", "--short", "--verify", f"{rev}^{{commit}}").strip()
    modules = changed(rev, configured)
    if not modules:
        print(f"mutation: no module configured for mutation changed since {rev} ({commit}).")
        return 0
    only: list[str] = []
    for module in modules:
        names = touched(rev, module)
        only += names if names is not None else [f"{_dotted(module)}.x*"]
        what = "module-level code" if names is None else f"{len(names)} function(s)"
        print(f"mutation: {module} changed since {rev} ({commit}): {what}", flush=True)
    files = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    with tempfile.TemporaryDirectory(prefix="mutation-") as scratch:
        for name in files:
            source = ROOT / name
            if name and source.is_file() and not name.startswith("mutants/"):
                target = Path(scratch) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        command = [sys.executable, "-m", "bench.mutation", "--jobs", str(jobs)]
        status = subprocess.run(
            [*command, "--floors", str(TABLE), "--only", *only, "--", *modules],
            cwd=scratch,
            check=False,
        ).returncode
    print(f"mutation: {len(modules)} module(s) in {time.monotonic() - started:.0f} s.")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("modules", nargs="*", help="paths as in setup.cfg (default: all)")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("MUTATION_JOBS", "1")))
    parser.add_argument("--rescore", action="store_true", help="count the last run again")
    parser.add_argument("--output", type=Path, help="write the table here (markdown)")
    parser.add_argument(
        "--floors",
        type=Path,
        default=TABLE,
        help="the table whose floors apply (default: %(default)s)",
    )
    parser.add_argument(
        "--changed",
        nargs="?",
        const="",
        metavar="REV",
        help="only the configured modules changed since REV (default: the table's commit)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="mutate only these functions (mutmut names); the rest keep the --floors verdicts",
    )
    args = parser.parse_args(argv)
    if args.changed is not None:
        return check_changed(since(args.changed), args.jobs)
    configured = _list(_config()["mutmut"]["only_mutate"])
    modules = args.modules or configured
    unknown = sorted(set(modules) - set(configured))
    if unknown:
        parser.error(f"not in setup.cfg [mutmut] only_mutate: {', '.join(unknown)}")
    started = time.monotonic()
    # Only a whole fresh run speaks for every module at one commit.
    whole = not (args.rescore or args.only or set(modules) != set(configured))
    measured_on = _commit_measured() if whole else None
    if not args.rescore:
        _run_mutmut(modules, args.jobs, MUTANTS / "run.log", args.only)
    recorded = args.floors.read_text(encoding="utf-8") if args.floors.exists() else ""
    results = score(modules, args.jobs, survivors(recorded) if args.only else None)
    previous = floors(recorded)
    set_floors(results, previous)
    minutes = (time.monotonic() - started) / 60
    command = "python -m bench.mutation " + " ".join([f"--jobs {args.jobs}", *(args.modules or [])])
    report = [
        "# Mutation score",
        "",
        f"`{command.strip()}` (mutmut {version('mutmut')}, {args.jobs} worker(s), "
        f"{minutes:.0f} min, {time.strftime('%Y-%m-%d')}"
        + (f", measured on commit `{measured_on}`" if measured_on else "")
        + "). Tests: "
        + ", ".join(f"`{a}`" for a in _pytest_args() if a.startswith("tests/"))
        + ". Score: killed / behavioural (mutants that change only a message's text aside), "
        "rounded down; a mutant counts as survived only if it also survives a fresh import of "
        "the project on the test files that reach it. Floor: the score a change may not go "
        f"below (the target, {TARGET:.0f}% or 100% for "
        + ", ".join(sorted(STRICT))
        + ", or while a module is below it the best score recorded).",
        "",
        table(results),
    ]
    listed = [(s, s in m.unreached) for m in results for s in m.survivors]
    if listed:
        report += ["", "Survivors (`mutmut show NAME`; *unreached*: no test file reaches it):", ""]
        report += [f"- `{s}`" + (" *unreached*" if far else "") for s, far in listed]
    text = "\n".join(report) + "\n"
    print(text)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    below = [m for m in results if m.score < m.floor]
    for m in below:
        print(f"mutation: {m.path} scores {m.score:.1f}%, below its floor {m.floor:.1f}%.")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
