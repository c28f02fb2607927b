"""Release check: build the sdist and wheel, check them, and install the wheel in a clean venv.

Run by ``tox -e release`` (so by ``make test``)::

    python tests/release/check_dist.py [WORK_DIR]

1. ``python -m build`` makes the sdist, then the wheel from the unpacked sdist (so a file the
   sdist lacks is missing from the wheel too); ``twine check --strict`` checks their metadata;
2. the wheel holds the grammar, both ``py.typed`` markers, the LDAP schema of the test helpers
   and the entry points, and nothing else than the two packages; its metadata asks for lark and
   marshmallow only, the rest behind extras; the sdist holds what the tests, docs and launcher
   need;
3. a fresh ``python -m venv`` gets the bare wheel (its dependencies from the index or pip's
   cache) and the example SQLite plugin, and no Flask, ldap3, gunicorn, PyJWT, prometheus_client
   or apispec; outside the source tree, it imports ``scim_core`` (and its helpers) without them,
   parses a filter, serves create, get, filter and PATCH from the memory backend, checks a
   bearer token, finds the backends ``memory`` and ``sqlite`` by name, says which extra the
   ``ldap`` backend, JWTs and ``/openapi.json`` need, and starts the throwaway slapd from the
   installed helper, whose schema is the packaged ``scim.schema``;
4. ``pip install WHEEL[flask]`` brings the Flask adapter (it serves, and counts metrics) and
   still no ldap3, gunicorn, PyJWT or apispec; ``pip install WHEEL[server]`` brings the rest:
   the ``ldap`` backend and its profiles' mapping files, JWT issuers, ``/openapi.json`` and
   ``scim-server``.

Exit status 0 when every check passes; otherwise each failure is printed on its own line.
"""

from __future__ import annotations

import ast
import re
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
    "scim_core/testing/scim.schema",
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
    "examples/slapd/00-base.ldif",
    "examples/plain_wsgi.py",
    "examples/custom_backend/pyproject.toml",
    "tests/conftest.py",
    "tests/data/public_api.json",
)
ENTRY_POINTS = ("[scim_core.backends]", "memory = ", "ldap = ", "scim-ldap = ", "scim-server = ")
EXTRAS = ("ldap", "flask", "jwt", "openapi", "server", "test")

#: Distributions only an extra may bring (lower case, ``-`` for ``_``).
OPTIONAL = ("flask", "werkzeug", "ldap3", "pyasn1", "gunicorn", "pyjwt", "cryptography",
            "prometheus-client", "apispec")  # fmt: skip
#: What the wheel's metadata may require without an extra.
CORE_REQUIREMENTS = {"lark", "marshmallow"}

#: The bare wheel: argv = version, the repository's examples/slapd (seed files only).
CORE_SMOKE = """
import json
import sys
from importlib import metadata
from importlib.resources import files

OPTIONAL = set(sys.argv[3].split(","))
installed = {d.metadata["Name"].lower().replace("_", "-") for d in metadata.distributions()}
assert not installed & OPTIONAL, sorted(installed & OPTIONAL)

import scim_core
import scim_core.auth
import scim_core.backends.memory
import scim_core.oauth
import scim_core.testing.dirsrv
import scim_core.testing.samba
import scim_core.testing.slapd
from scim_core import (
    Backend, ScimRequest, ScimService, Unauthorized, load_backend, parse_filter, parse_tokens,
)
from scim_core.auth import digest

loaded = {name.split(".")[0] for name in sys.modules}
assert not loaded & {"flask", "werkzeug", "ldap3", "jwt", "gunicorn", "prometheus_client",
                     "apispec"}, sorted(loaded)
expected = sys.argv[1]
assert scim_core.__version__ == expected, (scim_core.__version__, expected)
assert "site-packages" in scim_core.__file__, scim_core.__file__
assert files("scim_core").joinpath("py.typed").is_file()
text = 'userName eq "bjensen" and not (emails[type eq "work" and value co "@example.org"])'
assert str(parse_filter(text)) == text, str(parse_filter(text))

service = ScimService(load_backend("memory")({}))
BASE = "https://scim.example.test/scim/v2"


def call(method, path, body=None, **query):
    request = ScimRequest(
        method, path, query=query, base_url=BASE, principal="release-check",
        body=b"" if body is None else json.dumps(body).encode(),
        content_type=None if body is None else "application/scim+json",
    )
    answer = service.handle(request)
    return answer.status, answer.body


user = {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "bjensen",
        "name": {"givenName": "Barbara", "familyName": "Jensen"},
        "emails": [{"value": "bjensen@example.org", "type": "work", "primary": True}]}
status, created = call("POST", "/Users", user)
assert status == 201 and created["meta"]["location"].startswith(BASE + "/Users/"), created
status, got = call("GET", "/Users/" + created["id"])
assert status == 200 and got["userName"] == "bjensen", got
status, found = call("GET", "/Users", filter='userName eq "BJensen"')
assert status == 200 and [r["id"] for r in found["Resources"]] == [created["id"]], found
patch = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
         "Operations": [{"op": "replace", "path": "active", "value": False}]}
status, patched = call("PATCH", "/Users/" + created["id"], patch)
assert status == 200 and patched["active"] is False, patched
status, _ = call("GET", "/ServiceProviderConfig")
assert status == 200
status, refused = call("GET", "/openapi.json")
assert status == 501 and "scim-ldap[openapi]" in refused["detail"], refused

tokens = parse_tokens("idp=" + digest("release-token"))
assert tokens.authenticate("Bearer release-token") == "idp"
try:
    tokens.authenticate("Bearer wrong")
except Unauthorized as error:
    assert error.headers["WWW-Authenticate"].startswith("Bearer")
else:
    raise AssertionError("a wrong token was accepted")

for name, extra in (("ldap", "ldap"),):
    try:
        load_backend(name)
    except ImportError as error:
        assert f"scim-ldap[{extra}]" in str(error), error
    else:
        raise AssertionError(f"the {name} backend loaded without its extra")
try:
    scim_core.oauth.JwtIssuer("https://idp.example", scim_core.oauth.JwksKeys("jwks.json"), ("a",))
except ImportError as error:
    assert "scim-ldap[jwt]" in str(error), error
else:
    raise AssertionError("a JWT issuer was made without PyJWT")
sqlite = load_backend("sqlite")({"SCIM_SQLITE_PATH": ":memory:"})
assert isinstance(sqlite, Backend)
sqlite.close()

# The throwaway slapd from the installed helper: its schema is the package's own copy (an
# entry of the seed is a scimPerson, so seeding fails without it); the seed LDIF files are
# the repository's, as they are for any caller outside it.
from scim_core.testing.slapd import SCIM_SCHEMA, SlapdInstance

assert SCIM_SCHEMA == files("scim_core.testing") / "scim.schema", SCIM_SCHEMA
assert "site-packages" in str(SCIM_SCHEMA) and SCIM_SCHEMA.is_file(), SCIM_SCHEMA
with SlapdInstance(examples_dir=sys.argv[2]) as slapd:
    assert slapd.running
    assert str(SCIM_SCHEMA) in slapd.config_file.read_text(encoding="utf-8")
print("installed bare wheel OK:", scim_core.__version__)
"""

#: After ``pip install WHEEL[flask]``: the adapter, and still no LDAP, gunicorn, JWT, OpenAPI.
FLASK_SMOKE = """
import hashlib
import sys
from importlib import metadata

installed = {d.metadata["Name"].lower().replace("_", "-") for d in metadata.distributions()}
assert {"flask", "prometheus-client"} <= installed, sorted(installed)
rest = {"ldap3", "gunicorn", "pyjwt", "apispec"} & installed
assert not rest, sorted(rest)

from scim_core import load_backend
from scim_flask import AppSettings, create_app

digest = hashlib.sha256(b"release-token").hexdigest()
settings = AppSettings.from_environ({"SCIM_TOKENS_SHA256": "idp=" + digest})
client = create_app(settings=settings, backend=load_backend("memory")({})).test_client()
answer = client.get("/scim/v2/ServiceProviderConfig",
                    headers={"Authorization": "Bearer release-token"})
assert answer.status_code == 200, answer.status_code
assert client.get("/scim/v2/Users").status_code == 401
assert b"scim_requests_total" in client.get("/metrics",
                                            headers={"Authorization": "Bearer release-token"}).data
print("installed wheel[flask] OK")
"""

#: After ``pip install WHEEL[server]``: everything ``scim-server`` runs.
SERVER_SMOKE = """
import scim_flask.cli
import scim_flask.worker  # gunicorn
from scim_core import ScimRequest, ScimService, load_backend
from scim_core.backends.ldap.sitemap import default_mapping  # the profiles' own mapping files
from scim_core.oauth import JwksKeys, JwtIssuer

assert load_backend("ldap").__module__ == "scim_core.backends.ldap"
for profile in ("openldap", "389ds", "ad"):
    assert default_mapping(profile).users, profile
JwtIssuer("https://idp.example", JwksKeys("jwks.json"), ("api://scim",))
service = ScimService(load_backend("memory")({}))
assert service.handle(ScimRequest("GET", "/openapi.json")).status == 200
print("installed wheel[server] OK")
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
    problems: list[str] = []
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), "")
        declared = archive.read(entry_points).decode() if entry_points else ""
        metadata_file = next((n for n in names if n.endswith(".dist-info/METADATA")), "")
        metadata = archive.read(metadata_file).decode() if metadata_file else ""
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:")]  # fmt: skip
    unconditional = {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0].lower() for r in requires
                     if ";" not in r}  # fmt: skip
    problems += [f"wheel requires {n} without an extra" for n in unconditional - CORE_REQUIREMENTS]
    extras = {line.split(":", 1)[1].strip() for line in metadata.splitlines()
              if line.startswith("Provides-Extra:")}  # fmt: skip
    problems += [f"wheel lacks the extra {e!r}" for e in EXTRAS if e not in extras]
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


def needs_server_extra(command: Path, cwd: Path) -> list[str]:
    """The bare wheel installs ``scim-ldap``: ``serve`` names the extra it needs, in one line."""
    finished = subprocess.run(
        [str(command), "serve"], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    lines = finished.stderr.strip().splitlines()
    if finished.returncode == 2 and len(lines) == 1 and "scim-ldap[server]" in lines[0]:
        return []
    return [f"bare `scim-ldap serve` did not name the [server] extra: {finished.stderr[-500:]}"]


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
    pip = (python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check")
    run(*pip, wheel, plugin)
    seeds = ROOT / "examples" / "slapd"
    run(python, "-c", CORE_SMOKE, expected, seeds, ",".join(OPTIONAL), cwd=work)
    problems += needs_server_extra(venv / "bin" / "scim-ldap", work)
    run(*pip, f"{wheel}[flask]")
    run(python, "-c", FLASK_SMOKE, cwd=work)
    run(*pip, f"{wheel}[server]")
    run(python, "-c", SERVER_SMOKE, cwd=work)
    run(venv / "bin" / "scim-server", "--help", cwd=work)
    run(venv / "bin" / "scim-ldap", "serve", "--help", cwd=work)

    for problem in problems:
        print("release check:", problem, file=sys.stderr)
    if problems:
        return 1
    print(f"release check: OK ({wheel.name}, {sdist.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
