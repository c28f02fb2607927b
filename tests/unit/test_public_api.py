"""The public API is deliberate: its signatures are a checked-in snapshot.

``tests/data/public_api.json`` records every public name of :data:`PUBLIC_MODULES` (their
``__all__``): each function's signature, each class's constructor, bases, public methods and
simple class attributes, each alias and constant. The test fails when the live API differs from
the snapshot; removing or changing a name also needs a line in CHANGELOG.md's ``[Unreleased]``
section naming it. After a deliberate change::

    python -m tests.unit.test_public_api            # show the differences
    python -m tests.unit.test_public_api --update   # rewrite the snapshot (checks CHANGELOG.md)
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "tests" / "data" / "public_api.json"
CHANGELOG = ROOT / "CHANGELOG.md"
PUBLIC_MODULES = (
    "scim_core",
    "scim_core.filter",
    "scim_core.testing.contract",
    "scim_core.testing.plugin",
    "scim_flask",
)
UPDATE_COMMAND = "python -m tests.unit.test_public_api --update"

_SIMPLE = (str, int, float, bool, bytes, type(None))
_MODULE_PREFIX = re.compile(r"\b(?:[a-z_][a-z0-9_]*\.)+(?=[A-Za-z_])")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


# ---------------------------------------------------------------------------- describing the API


class _Shown:
    """A value that prints as the given text inside an :class:`inspect.Signature`."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _annotation(annotation: Any) -> str:
    # Strings (postponed annotations) and objects render alike, without module paths, so that
    # moving a class between private modules is not an API change.
    text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
    return _MODULE_PREFIX.sub("", text)


def _value(value: Any) -> str:
    if isinstance(value, _SIMPLE):
        return repr(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, _SIMPLE) for v in value):
        return repr(value)
    if isinstance(value, frozenset) and all(isinstance(v, str) for v in value):
        return "frozenset(" + repr(sorted(value)) + ")"
    if inspect.isclass(value) or inspect.isroutine(value):
        return value.__qualname__
    if repr(value) == "<factory>":  # dataclasses.field(default_factory=...)
        return "<factory>"
    return f"<{type(value).__name__}>"


def _signature(obj: Callable[..., Any]) -> str:
    signature = inspect.signature(obj)
    parameters = [
        parameter.replace(
            annotation=(
                parameter.empty
                if parameter.annotation is parameter.empty
                else _Shown(_annotation(parameter.annotation))
            ),
            default=(
                parameter.empty
                if parameter.default is parameter.empty
                else _Shown(_value(parameter.default))
            ),
        )
        for parameter in signature.parameters.values()
    ]
    returns = signature.return_annotation
    shown = signature.replace(
        parameters=parameters,
        return_annotation=(
            signature.empty if returns is signature.empty else _Shown(_annotation(returns))
        ),
    )
    return _ADDRESS.sub("", str(shown))


def _is_alias(obj: Any) -> bool:
    return isinstance(obj, (types.GenericAlias, types.UnionType)) or (
        type(obj).__module__ in {"typing", "collections.abc"} and not inspect.isclass(obj)
    )


def _constructor(cls: type) -> str:
    if getattr(cls, "_is_protocol", False):
        return "protocol"
    if dataclasses.is_dataclass(cls) or "__init__" in vars(cls) or "__new__" in vars(cls):
        return _signature(cls)
    owner = next(c for c in cls.__mro__[1:] if "__init__" in vars(c) or "__new__" in vars(c))
    return f"inherited from {owner.__qualname__}"


def _describe_class(name: str, cls: type, out: dict[str, str]) -> None:
    bases = ", ".join(
        base.__qualname__ for base in cls.__bases__ if base not in (typing.Protocol, typing.Generic)
    )
    out[name] = f"class({bases}) {_constructor(cls)}"
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    for member, raw in sorted(vars(cls).items()):
        if (member.startswith("_") and member != "__call__") or member in fields:
            continue
        key = f"{name}.{member}"
        if type(raw).__name__ == "FixtureFunctionDefinition" or hasattr(
            raw, "_pytestfixturefunction"
        ):
            out[key] = "pytest fixture"
        elif isinstance(raw, classmethod):
            out[key] = "classmethod" + _signature(raw.__func__)
        elif isinstance(raw, staticmethod):
            out[key] = "staticmethod" + _signature(raw.__func__)
        elif isinstance(raw, property):
            out[key] = "property"
        elif inspect.isfunction(raw):
            out[key] = "method" + _signature(raw)
        elif isinstance(raw, _SIMPLE):
            out[key] = f"attribute = {raw!r}"
        else:
            out[key] = f"attribute <{type(raw).__name__}>"


def describe(module_names: tuple[str, ...] = PUBLIC_MODULES) -> dict[str, str]:
    """Every public name of ``module_names`` (their ``__all__``) -> a stable description."""
    out: dict[str, str] = {}
    for module_name in module_names:
        module = importlib.import_module(module_name)
        for attribute in module.__all__:
            obj = getattr(module, attribute)
            name = f"{module_name}.{attribute}"
            if attribute == "__version__":
                out[name] = "data str"
            elif _is_alias(obj):
                out[name] = "alias " + _annotation(repr(obj))
            elif inspect.isclass(obj):
                _describe_class(name, obj, out)
            elif inspect.isroutine(obj):
                out[name] = "function" + _signature(obj)
            elif isinstance(obj, _SIMPLE):
                out[name] = f"data {type(obj).__name__} = {obj!r}"
            else:
                out[name] = f"data {type(obj).__name__}"
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------- comparing


@dataclasses.dataclass(frozen=True)
class Difference:
    """How the live API differs from the snapshot."""

    removed: tuple[str, ...]
    changed: tuple[tuple[str, str, str], ...]
    added: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.removed or self.changed or self.added)

    def needs_changelog(self) -> list[str]:
        """Names whose removal or change must be described in the CHANGELOG."""
        return [*self.removed, *(name for name, _, _ in self.changed)]


def compare(saved: Mapping[str, str], live: Mapping[str, str]) -> Difference:
    """The names removed from, changed in and added to ``saved`` to give ``live``."""
    return Difference(
        removed=tuple(sorted(saved.keys() - live.keys())),
        changed=tuple(
            (name, saved[name], live[name])
            for name in sorted(saved.keys() & live.keys())
            if saved[name] != live[name]
        ),
        added=tuple(sorted(live.keys() - saved.keys())),
    )


def unreleased_section(changelog: str) -> str:
    """The text of the ``## [Unreleased]`` section of a Keep-a-Changelog file ('' if none)."""
    pattern = r"^##\s*\[?unreleased\]?[^\n]*\n(.*?)(?=^##\s|\Z)"
    match = re.search(pattern, changelog, re.I | re.M | re.S)
    return match.group(1) if match else ""


def short_name(name: str) -> str:
    """How a CHANGELOG writes a name: ``scim_core.ScimService.handle`` -> ``ScimService.handle``."""
    return name.split(".", 1)[1] if name.startswith(("scim_core.", "scim_flask.")) else name


def unmentioned(names: list[str], changelog: str) -> list[str]:
    """Those of ``names`` that the ``[Unreleased]`` section does not mention."""
    section = unreleased_section(changelog)
    return [
        name
        for name in names
        if not re.search(rf"(?<![\w]){re.escape(short_name(name))}(?![\w])", section)
    ]


def report(difference: Difference, changelog: str) -> str:
    """A failure message saying what changed and how to record it."""
    missing = set(unmentioned(difference.needs_changelog(), changelog))

    def note(name: str) -> str:
        return "   <- not in CHANGELOG [Unreleased]" if name in missing else ""

    lines = [f"The public API differs from {SNAPSHOT.relative_to(ROOT)}.", ""]
    if difference.removed:
        lines.append("Removed:")
        lines += [f"  - {name}{note(name)}" for name in difference.removed]
    if difference.changed:
        lines.append("Changed:")
        for name, was, now in difference.changed:
            lines += [f"  ~ {name}{note(name)}", f"      was: {was}", f"      now: {now}"]
    if difference.added:
        lines.append("Added:")
        lines += [f"  + {name}" for name in difference.added]
    lines += [
        "",
        "If this is deliberate:",
        "  1. name every removed or changed item in CHANGELOG.md under '## [Unreleased]'",
        "     (e.g. '### Changed' / '- `ScimService.handle` now ...'); once released, a removal",
        "     or an incompatible change needs a new major version (semantic versioning);",
        f"  2. regenerate the snapshot: {UPDATE_COMMAND}",
        "If it is not deliberate, restore the name or signature.",
    ]
    return "\n".join(lines)


def load_snapshot() -> dict[str, str]:
    """The checked-in snapshot."""
    data: dict[str, str] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return data


def write_snapshot(live: Mapping[str, str]) -> None:
    """Rewrite the snapshot file (sorted, one name per line)."""
    SNAPSHOT.write_text(json.dumps(live, indent=1, sort_keys=True) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- the tests


def test_public_api_matches_the_snapshot():
    difference = compare(load_snapshot(), describe())
    if difference:
        pytest.fail(report(difference, CHANGELOG.read_text(encoding="utf-8")), pytrace=False)


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_name_exists_and_is_documented(module_name):
    module = importlib.import_module(module_name)
    assert len(module.__all__) == len(set(module.__all__)), "duplicates in __all__"
    undocumented = []
    for attribute in module.__all__:
        obj = getattr(module, attribute)
        if inspect.isclass(obj) or inspect.isroutine(obj):
            if not (obj.__doc__ or "").strip() or obj.__doc__.startswith(f"{attribute}("):
                undocumented.append(attribute)
            if inspect.isclass(obj):
                undocumented += [
                    f"{attribute}.{member}"
                    for member, raw in vars(obj).items()
                    if not member.startswith("_")
                    and inspect.isfunction(raw)
                    and not (raw.__doc__ or "").strip()
                ]
    assert undocumented == [], f"public names without a docstring in {module_name}"


def test_the_package_is_typed():
    for package in ("scim_core", "scim_flask"):
        module = importlib.import_module(package)
        assert (Path(module.__file__).parent / "py.typed").is_file(), package


def test_a_change_is_reported_with_its_changelog_status():
    saved = {
        "scim_core.ScimService": "class(object) (backend: Backend) -> None",
        "scim_core.ScimService.handle": "method(self, request: ScimRequest) -> ScimResponse",
        "scim_core.parse_filter": "function(text: str) -> Filter",
    }
    live = {
        "scim_core.ScimService": saved["scim_core.ScimService"],
        "scim_core.ScimService.handle": "method(self, request: ScimRequest, *, dry: bool = False)",
        "scim_core.load_backend": "function(name: str) -> BackendFactory",
    }
    difference = compare(saved, live)
    assert difference.removed == ("scim_core.parse_filter",)
    assert [name for name, _, _ in difference.changed] == ["scim_core.ScimService.handle"]
    assert difference.added == ("scim_core.load_backend",)
    changelog = (
        "# Changelog\n\n## [Unreleased]\n\n### Changed\n- `ScimService.handle` takes `dry`.\n\n"
        "## [0.1.0] - 2026-01-01\n\n### Removed\n- `parse_filter` (an old, released note)\n"
    )
    assert unmentioned(difference.needs_changelog(), changelog) == ["scim_core.parse_filter"]
    message = report(difference, changelog)
    assert "- scim_core.parse_filter   <- not in CHANGELOG [Unreleased]" in message
    assert "~ scim_core.ScimService.handle\n" in message
    assert UPDATE_COMMAND in message and "CHANGELOG.md" in message
    assert not compare(saved, dict(saved))


def test_descriptions_are_stable_and_free_of_addresses():
    described = describe()
    assert described == describe()
    assert not [k for k, v in described.items() if _ADDRESS.search(v) or "0x" in v]
    service = described["scim_core.ScimService"]
    assert "config: ServiceConfig" in service
    assert described["scim_core.ScimError.status"] == "attribute = 400"
    assert described["scim_core.InvalidValue"].endswith("inherited from ScimError")


# ---------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """Show the differences, or with ``--update`` rewrite the snapshot."""
    parser = argparse.ArgumentParser(prog="python -m tests.unit.test_public_api")
    parser.add_argument("--update", action="store_true", help="rewrite the snapshot")
    options = parser.parse_args(argv)
    live = describe()
    saved = load_snapshot() if SNAPSHOT.exists() else {}
    difference = compare(saved, live)
    if not difference:
        print(f"{SNAPSHOT.relative_to(ROOT)} is up to date ({len(live)} names).")
        return 0
    changelog = CHANGELOG.read_text(encoding="utf-8")
    print(report(difference, changelog))
    if not options.update:
        return 1
    missing = unmentioned(difference.needs_changelog(), changelog) if saved else []
    if missing:
        print("\nNot updated: first mention these in CHANGELOG.md under [Unreleased]:")
        print("\n".join(f"  {short_name(name)}" for name in missing))
        return 1
    write_snapshot(live)
    print(f"\nWrote {SNAPSHOT.relative_to(ROOT)} ({len(live)} names).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
