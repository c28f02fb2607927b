"""Release check: build the sdist and wheel, check them, and install the wheel in a clean venv.

Run by ``tox -e release`` (so by ``make test``)::

    python tests/release/check_dist.py [WORK_DIR]

1. ``python -m build`` makes the sdist, then the wheel from the unpacked sdist (so a file the
   sdist lacks is missing from the wheel too); ``twine check --strict`` checks their metadata;
2. the wheel holds the grammar, both ``py.typed`` markers and the entry points, and nothing
   else than the two packages; the sdist holds what the tests, docs and launcher need;
3. a fresh ``python -m venv`` gets the wheel (its dependencies from the index or pip's cache)
   and the example SQLite plugin; outside the source tree, it imports ``scim_core``, parses a
   filter, serves a request, and finds the backends ``memory``, ``ldap`` and ``sqlite`` by name.

Exit status 0 when every check passes; otherwise each failure is printed on its own line.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WHEEL_FILES = (
    "scim_core/__init__.py",
    "scim_core/py.typed",
    "scim_core/filter/filter.lark",
    "scim_core/backends/ldap/mappings/openldap.toml",
    "scim_core/backends/ldap/mappings/389ds.toml",
    "scim_core/backends/ldap/mappings/ad.toml",
    "scim_core/testing/plugin.py",
    "scim_flask/py.typed",
)
SDIST_FILES = (
    *WHEEL_FILES,
    "setup.cfg",
    "pyproject.toml",
    "MANIFEST.in",
    "README.md",
    "CHANGELOG.md",
    "tox.ini",
    "docs/conf.py",
    "docs/index.rst",
    "examples/slapd/scim.schema",
    "examples/slapd/00-base.ldif",
    "examples/plain_wsgi.py",
    "examples/custom_backend/pyproject.toml",
    "tests/conftest.py",
    "tests/data/public_api.json",
)
ENTRY_POINTS = ("[scim_core.backends]", "memory = ", "ldap = ", "scim-server = ")

SMOKE = """
import sys
from importlib.resources import files

import scim_core
from scim_core import Backend, ScimRequest, ScimService, load_backend, parse_filter

expected = sys.argv[1]
assert scim_core.__version__ == expected, (scim_core.__version__, expected)
assert "site-packages" in scim_core.__file__, scim_core.__file__
for package in ("scim_core", "scim_flask"):
    assert files(package).joinpath("py.typed").is_file(), package
text = 'userName eq "bjensen" and not (emails[type eq "work" and value co "@example.org"])'
assert str(parse_filter(text)) == text, str(parse_filter(text))
service = ScimService(load_backend("memory")({}))
answer = service.handle(ScimRequest("GET", "/ServiceProviderConfig"))
assert answer.status == 200, answer
assert load_backend("ldap").__module__ == "scim_core.backends.ldap"
from scim_core.backends.ldap.sitemap import default_mapping  # the profiles' own mapping files

for profile in ("openldap", "389ds", "ad"):
    assert default_mapping(profile).users, profile
sqlite = load_backend("sqlite")({"SCIM_SQLITE_PATH": ":memory:"})
assert isinstance(sqlite, Backend)
sqlite.close()
import scim_flask  # the adapter's dependencies came with the wheel
print("installed wheel OK:", scim_core.__version__)
"""


def version() -> str:
    """``scim_core.__version__``, read without importing the package."""
    tree = ast.parse((ROOT / "scim_core" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            return str(ast.literal_eval(node.value))
    raise SystemExit("scim_core/__init__.py has no __version__")


def run(*command: str | Path, cwd: Path | None = None) -> None:
    shown = " ".join(str(c) if "\n" not in str(c) else "<script>" for c in command)
    print("+", shown, flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=cwd)


def one(paths: list[Path], what: str) -> Path:
    if len(paths) != 1:
        raise SystemExit(f"expected one {what}, found {[p.name for p in paths]}")
    return paths[0]


def check_wheel(wheel: Path, expected: str) -> list[str]:
    problems = []
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), "")
        declared = archive.read(entry_points).decode() if entry_points else ""
    problems += [f"wheel lacks {name}" for name in WHEEL_FILES if name not in names]
    problems += [f"wheel entry points lack {t!r}" for t in ENTRY_POINTS if t not in declared]
    allowed = {"scim_core", "scim_flask", f"scim_ldap-{expected}.dist-info"}
    stray = sorted({n.split("/")[0] for n in names} - allowed)
    problems += [f"wheel holds an unexpected top-level {name!r}" for name in stray]
    problems += [f"wheel holds {n}" for n in names if "__pycache__" in n or n.endswith(".pyc")]
    if f"-{expected}-" not in wheel.name:
        problems.append(f"wheel {wheel.name} is not version {expected}")
    return problems


def check_sdist(sdist: Path, expected: str) -> list[str]:
    prefix = f"scim_ldap-{expected}/"
    with tarfile.open(sdist) as archive:
        names = {name.removeprefix(prefix) for name in archive.getnames()}
    problems = [f"sdist lacks {name}" for name in SDIST_FILES if name not in names]
    unwanted = [
        name
        for name in sorted(names)
        if name.startswith(("docs/_build", "build/", "dist/"))
        or any(cache in name for cache in ("__pycache__", ".mypy_cache", ".ruff_cache"))
        or (".egg-info" in name and not name.startswith("scim_ldap.egg-info"))
    ]
    return problems + [f"sdist holds {name}" for name in unwanted]


def main(argv: list[str]) -> int:
    work = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp(prefix="scim-release-"))
    dist = work / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    expected = version()

    run(sys.executable, "-m", "build", "--outdir", dist, ROOT)
    wheel = one(sorted(dist.glob("*.whl")), "wheel")
    sdist = one(sorted(dist.glob("*.tar.gz")), "sdist")
    run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
    problems = check_wheel(wheel, expected) + check_sdist(sdist, expected)

    venv = work / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    plugin = work / "custom_backend"
    shutil.rmtree(plugin, ignore_errors=True)
    shutil.copytree(
        ROOT / "examples" / "custom_backend",
        plugin,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"),
    )
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, plugin)
    run(python, "-c", SMOKE, expected, cwd=work)
    run(venv / "bin" / "scim-server", "--help", cwd=work)

    for problem in problems:
        print("release check:", problem, file=sys.stderr)
    if problems:
        return 1
    print(f"release check: OK ({wheel.name}, {sdist.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
