"""Every test checks something: no test passes merely by not raising.

A test asserts when its body holds an ``assert``, ``pytest.raises`` / ``warns`` / ``fail``, an
``assert_*`` or pytester matcher call, a
``raise AssertionError``, or calls a helper of the test tree (a function, or a class whose
methods do) that itself asserts, followed through helpers to any depth. Read from the sources:
a test that asserts nothing is listed with its file and line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "tests").rglob("*.py")) + sorted(
    (ROOT / "scim_core" / "testing").rglob("*.py")
)
CHECKS = {"raises", "warns", "fail", "deprecated_call"}
# Third-party checks (pytester's results, mocks): besides every ``assert_*`` method.
MATCHERS = {"fnmatch_lines", "re_match_lines", "no_fnmatch_line", "no_re_match_line"}
Function = ast.FunctionDef | ast.AsyncFunctionDef


def _called_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _checks_directly(body: ast.AST) -> bool:
    for node in ast.walk(body):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id == "AssertionError":
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr.startswith("assert_") or node.func.attr in MATCHERS:
                return True
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "pytest" and node.func.attr in CHECKS:
                return True
    return False


def _calls(body: ast.AST) -> set[str]:
    return {name for n in ast.walk(body) if isinstance(n, ast.Call) and (name := _called_name(n))}


def _definitions() -> dict[str, list[ast.AST]]:
    """Every function and class of the test tree, by name (methods by their own name)."""
    found: dict[str, list[ast.AST]] = {}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, Function | ast.ClassDef):
                found.setdefault(node.name, []).append(node)
    return found


def _asserting(definitions: dict[str, list[ast.AST]]) -> set[str]:
    """Names of the helpers that assert, directly or through other helpers (a fixpoint)."""
    names = {name for name, nodes in definitions.items() if any(map(_checks_directly, nodes))}
    while True:
        more = {
            name
            for name, nodes in definitions.items()
            if name not in names and any(_calls(node) & names for node in nodes)
        }
        if not more:
            return names
        names |= more


def _tests() -> Iterator[tuple[Path, Function]]:
    for path in SOURCES:
        if not (path.name.startswith("test_") or path.name == "contract.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, Function) and node.name.startswith("test"):
                yield path, node


def test_every_test_asserts_something() -> None:
    asserting = _asserting(_definitions())
    silent = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
        for path, node in _tests()
        if not _checks_directly(node) and not _calls(node) & asserting
    ]
    assert silent == []


def test_the_check_sees_a_silent_test() -> None:
    source = "def helper(x):\n    return x\n\ndef test_quiet():\n    helper(1)\n"
    tree = ast.parse(source)
    definitions: dict[str, list[ast.AST]] = {
        n.name: [n] for n in ast.walk(tree) if isinstance(n, Function)
    }
    quiet = definitions["test_quiet"][0]
    assert not _checks_directly(quiet)
    assert not _calls(quiet) & _asserting(definitions)
    loud = ast.parse("def test_loud():\n    assert helper(1) == 1\n").body[0]
    assert _checks_directly(loud)
