"""The examples run, so they cannot rot: plain WSGI (memory and real slapd), Flask embedding,
and the SQLite backend plugin package (its entry point and its own plugin-driven test run)."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import logging
import os
import subprocess
import sys
import threading
import tomllib
import urllib.request
from pathlib import Path
from types import ModuleType
from wsgiref.simple_server import WSGIRequestHandler, make_server
from wsgiref.util import setup_testing_defaults
from wsgiref.validate import validator

import pytest
from flask import Flask

from scim_core import Backend, ConfigError, load_backend
from scim_core.auth import parse_tokens
from scim_core.backends.memory import MemoryBackend
from scim_core.config import ServiceConfig
from scim_flask import AppSettings, ScimExtension

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOKEN = "example-token"
DIGEST = hashlib.sha256(TOKEN.encode()).hexdigest()
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"


def load_example(relative: str) -> ModuleType:
    """Import an example file by path, as a reader would run it."""
    path = EXAMPLES / relative
    name = "example_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def user(name: str) -> dict[str, object]:
    return {
        "schemas": [USER_URN],
        "userName": name,
        "name": {"givenName": "Barbara", "familyName": "Jensen"},
        "emails": [{"value": f"{name}@example.com"}],
    }


# ---------------------------------------------------------------------------- plain WSGI

plain_wsgi = load_example("plain_wsgi.py")


class Wsgi:
    """Calls a WSGI app directly with a PEP 3333 environ, through wsgiref's validator."""

    def __init__(self, app):
        self.app = validator(app)

    def __call__(self, method, path, body=None, token=TOKEN, query="", headers=None):
        raw = b"" if body is None else json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "",
            # A WSGI server hands over the percent-decoded path as latin-1 text.
            "PATH_INFO": path.encode().decode("latin-1"),
            "QUERY_STRING": query,
            "HTTP_HOST": "scim.example.test:8443",
            "wsgi.url_scheme": "https",
            "wsgi.input": io.BytesIO(raw),
            "CONTENT_LENGTH": str(len(raw)),
        }
        if body is not None:
            environ["CONTENT_TYPE"] = "application/scim+json"
        if token:
            environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        environ.update(headers or {})
        setup_testing_defaults(environ)
        answer = {}

        def start_response(status, response_headers, exc_info=None):
            answer["status"] = int(status.split()[0])
            answer["headers"] = dict(response_headers)
            return lambda data: None

        result = self.app(environ, start_response)
        try:
            payload = b"".join(result)
        finally:
            result.close()
        answer["body"] = json.loads(payload) if payload else None
        return answer


def environment(slapd, backend_name):
    env = {"SCIM_BACKEND": backend_name, "SCIM_TOKENS_SHA256": f"idp={DIGEST}"}
    if backend_name == "ldap":
        env.update(slapd.service_settings())
    return env


@pytest.fixture(params=["memory", pytest.param("ldap", marks=pytest.mark.slapd)])
def wsgi_app(request):
    slapd = request.getfixturevalue("slapd") if request.param == "ldap" else None
    app = plain_wsgi.create_application(environment(slapd, request.param))
    yield app
    app.close()


def test_plain_wsgi_serves_the_users_lifecycle(wsgi_app):
    call = Wsgi(wsgi_app)
    name = "wsgi-" + os.urandom(4).hex()
    created = call("POST", "/scim/v2/Users", user(name))
    assert created["status"] == 201
    location = created["headers"]["Location"]
    assert location.startswith("https://scim.example.test:8443/scim/v2/Users/")
    assert created["headers"]["Content-Type"] == "application/scim+json"
    user_id = created["body"]["id"]

    found = call("GET", "/scim/v2/Users", query=f"filter=userName+eq+%22{name.upper()}%22")
    assert [r["id"] for r in found["body"]["Resources"]] == [user_id]

    patch = {"Operations": [{"op": "replace", "path": "active", "value": False}]}
    patched = call("PATCH", f"/scim/v2/Users/{user_id}", patch)
    assert patched["status"] == 200 and patched["body"]["active"] is False
    stale = call(
        "PATCH", f"/scim/v2/Users/{user_id}", patch, headers={"HTTP_IF_MATCH": 'W/"stale"'}
    )
    assert stale["status"] == 412

    assert call("DELETE", f"/scim/v2/Users/{user_id}")["status"] == 204
    gone = call("GET", f"/scim/v2/Users/{user_id}")
    assert gone["status"] == 404 and gone["body"]["status"] == "404"


def test_plain_wsgi_handles_utf8_group_ids(wsgi_app):
    call = Wsgi(wsgi_app)
    name = "Équipe Ω " + os.urandom(3).hex()
    assert call("POST", "/scim/v2/Groups", {"displayName": name})["status"] == 201
    fetched = call("GET", "/scim/v2/Groups/" + name)
    assert fetched["status"] == 200 and fetched["body"]["displayName"] == name


def test_plain_wsgi_refuses_before_reaching_the_service(wsgi_app):
    call = Wsgi(wsgi_app)
    anonymous = call("GET", "/scim/v2/Users", token=None)
    assert anonymous["status"] == 401
    assert anonymous["headers"]["WWW-Authenticate"].startswith("Bearer")
    assert call("GET", "/scim/v2/Users", token="wrong")["status"] == 401
    outside = call("GET", "/elsewhere")
    assert outside["status"] == 404 and outside["body"]["detail"] == "No endpoint at /elsewhere."
    too_big = call("POST", "/scim/v2/Users", headers={"CONTENT_LENGTH": str(10**9)})
    assert too_big["status"] == 413
    discovery = call("GET", "/scim/v2/ServiceProviderConfig")
    assert discovery["status"] == 200 and discovery["body"]["patch"]["supported"] is True


def test_plain_wsgi_over_real_http():
    app = plain_wsgi.create_application({"SCIM_TOKENS_SHA256": DIGEST})

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    with make_server("127.0.0.1", 0, app, handler_class=Quiet) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{server.server_port}/scim/v2/Users"
            request = urllib.request.Request(
                url,
                data=json.dumps(user("over-http")).encode(),
                headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 201
                assert response.headers["Location"].startswith(url + "/")
                assert json.load(response)["userName"] == "over-http"
        finally:
            server.shutdown()
            thread.join()
    app.close()


def test_plain_wsgi_configuration_errors_name_the_setting():
    with pytest.raises(ConfigError, match="SCIM_TOKENS_SHA256 is required"):
        plain_wsgi.create_application({})
    with pytest.raises(ConfigError, match="SCIM_TOKENS_SHA256: entry 1"):
        plain_wsgi.create_application({"SCIM_TOKENS_SHA256": "idp=nothex"})
    with pytest.raises(ConfigError, match="SCIM_LDAP_URL is required"):
        plain_wsgi.create_application({"SCIM_TOKENS_SHA256": DIGEST, "SCIM_BACKEND": "ldap"})


# ---------------------------------------------------------------------------- Flask embedding

flask_embed = load_example("flask_embed.py")


@pytest.fixture
def host():
    settings = AppSettings(
        service=ServiceConfig(),
        tokens=parse_tokens(f"idp={DIGEST}"),
        backend="memory",
        log_level="INFO",
    )
    app = flask_embed.create_host_app(settings, MemoryBackend(), api_key="host-key")
    return app.test_client()


def scim(client, method, path, remote="127.0.0.1", token=TOKEN, **kwargs):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.open(
        "/api/scim" + path,
        method=method,
        headers=headers,
        environ_base={"REMOTE_ADDR": remote},
        **kwargs,
    )


def test_flask_embed_serves_scim_under_the_host_prefix(host):
    created = scim(host, "POST", "/Users", json=user("embedded"))
    assert created.status_code == 201
    assert created.headers["Location"].startswith("http://localhost/api/scim/Users/")
    listed = scim(host, "GET", "/Users", query_string={"filter": 'userName eq "embedded"'})
    assert listed.get_json()["totalResults"] == 1
    assert host.get("/scim/v2/Users").status_code == 404  # not at the standalone prefix


def test_flask_embed_host_checks_run_first(host):
    outsider = scim(host, "GET", "/Users", remote="203.0.113.7")
    assert outsider.status_code == 403
    assert outsider.get_json() == {"error": "SCIM is open to the identity provider only"}
    no_token = scim(host, "GET", "/Users", token=None)
    assert no_token.status_code == 401 and "WWW-Authenticate" in no_token.headers
    assert no_token.get_json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]


def test_flask_embed_leaves_the_host_its_error_pages_and_log(host, caplog):
    """Outside the SCIM prefix the host's own 404 and failure pages answer, and the request
    log stays silent; inside it, SCIM error bodies."""
    caplog.set_level(logging.INFO, logger="scim.request")
    missing = host.get("/no-such-page")
    assert missing.status_code == 404 and missing.get_json() == {"error": "no such page here"}
    failed = host.get("/broken")
    assert failed.status_code == 500
    assert failed.get_json() == {"error": "the host application failed"}
    assert not [r for r in caplog.records if r.name == "scim.request"]
    scim_missing = scim(host, "GET", "/NoSuchResource")
    assert scim_missing.status_code == 404
    assert scim_missing.get_json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert [r.getMessage() for r in caplog.records if r.name == "scim.request"] == [
        "GET /api/scim/NoSuchResource 404"
    ]


def test_flask_embed_serves_health_and_metrics_under_its_prefix(host):
    assert scim(host, "GET", "/healthz", token=None).get_json() == {"status": "ok"}
    assert scim(host, "GET", "/readyz", token=None).get_json() == {"status": "ready"}
    assert scim(host, "GET", "/metrics", token=None).status_code == 401
    scraped = scim(host, "GET", "/metrics").get_data(as_text=True)
    assert 'route="/api/scim/readyz"' in scraped
    assert host.get("/readyz").get_json() == {"error": "no such page here"}  # not at the root


def test_flask_embed_reads_scim_settings_from_the_host_config(monkeypatch):
    for name in [n for n in os.environ if n.startswith("SCIM_")]:
        monkeypatch.delenv(name)
    app = Flask("host")
    app.config.update(SCIM_BACKEND="memory", SCIM_TOKENS_SHA256=f"idp={DIGEST}")
    ScimExtension(app, url_prefix="/api/scim")
    client = app.test_client()
    listed = scim(client, "GET", "/Users")
    assert listed.status_code == 200 and listed.get_json()["totalResults"] == 0
    assert scim(client, "GET", "/Users", token="wrong").status_code == 401


def test_flask_embed_keeps_the_host_app_working(host):
    assert host.get("/").status_code == 200
    assert host.get("/healthz").get_json() == {"host": "up"}  # the host's own, not SCIM's
    assert host.get("/api/projects").status_code == 401
    assert host.get("/api/projects", headers={"X-Api-Key": "clé"}).status_code == 401
    projects = host.get("/api/projects", headers={"X-Api-Key": "host-key"})
    assert projects.get_json() == {"projects": ["apollo", "gemini"]}


# ---------------------------------------------------------------------------- the SQLite plugin

CUSTOM_BACKEND = EXAMPLES / "custom_backend"


def test_custom_backend_declares_its_entry_point(tmp_path, monkeypatch):
    project = tomllib.loads((CUSTOM_BACKEND / "pyproject.toml").read_text(encoding="utf-8"))
    declared = project["project"]["entry-points"]["scim_core.backends"]
    assert declared == {"sqlite": "scim_sqlite:create_backend"}
    # What pip would install, minimally: load_backend() must then find the factory by name.
    dist_info = tmp_path / "scim_sqlite_backend-0.1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: scim-sqlite-backend\nVersion: 0.1.0\n", encoding="utf-8"
    )
    lines = [f"{name} = {target}" for name, target in declared.items()]
    (dist_info / "entry_points.txt").write_text(
        "[scim_core.backends]\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(CUSTOM_BACKEND))
    backend = load_backend("sqlite")({"SCIM_SQLITE_PATH": ":memory:"})
    try:
        assert isinstance(backend, Backend)
        assert type(backend).__module__ == "scim_sqlite.backend"
    finally:
        backend.close()
    with pytest.raises(ConfigError, match="SCIM_SQLITE_PATH is required"):
        load_backend("sqlite")({})


def test_custom_backend_passes_its_own_plugin_driven_suite():
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=CUSTOM_BACKEND,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout
