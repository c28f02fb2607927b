"""The OpenAPI document, and schemathesis generating requests from it against the real app.

schemathesis (in-process, through the WSGI app, on the session's slapd) sends schema-valid and
schema-violating requests to every operation and checks each answer: no 5xx, a documented
status, the documented content type and headers, a body that fits the response schema (the
response schemas are strict: an undocumented key such as a password breaks them).

The run is bounded and reproducible (``derandomize``); ``SCIM_SOAK=1`` makes it twenty times
larger. It writes under its own ``ou=fuzz`` subtrees, so the entries it creates never meet the
other tests' searches.
"""

from __future__ import annotations

import hashlib
import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from ldap3 import Connection, Server
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from scim_core.auth import parse_tokens
from scim_core.backends.ldap import LdapBackend, LdapSettings
from scim_core.config import ServiceConfig
from scim_core.secret import Secret
from scim_core.service import _ROUTES
from scim_flask import AppSettings, create_app

TOKEN = "fuzz-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SOAK = os.environ.get("SCIM_SOAK") == "1"
EXAMPLES = 400 if SOAK else 20  # per operation, generation mode and kind of id


def not_a_server_fault(ctx, response, case):
    """schemathesis' not_a_server_error, less the 501 that group PUT and DELETE answer by design."""
    if response.status_code == 501 and case.operation.path == "/Groups/{id}":
        return True
    return not_a_server_error(ctx, response, case)


CHECKS = [
    not_a_server_fault,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
#: Filled by the run, read by test_figures (printed with -s; copied into docs/reliability.md).
FIGURES: dict[str, int] = {}


@pytest.fixture(scope="module")
def fuzz_app(slapd):
    """The app over an LDAP backend rooted in ou=fuzz subtrees of people and groups."""
    admin = Connection(Server(slapd.url), slapd.admin_dn, slapd.admin_password, auto_bind=True)
    bases = []
    for parent in (slapd.users_base, slapd.groups_base):
        dn = f"ou=fuzz,{parent}"
        admin.add(dn, ["top", "organizationalUnit"], {"ou": "fuzz"})
        assert admin.result["result"] in (0, 68), admin.result
        bases.append(dn)
    admin.unbind()
    backend = LdapBackend(
        LdapSettings(
            urls=(slapd.url,),
            bind_dn=slapd.service_dn,
            bind_password=slapd.service_password,
            users_base=bases[0],
            groups_base=bases[1],
            placeholder_dn=slapd.placeholder_dn,
        )
    )
    settings_ = AppSettings(
        # Cursor paging on, so that generated cursors and counts reach it too.
        service=ServiceConfig(cursor_secret=Secret("fuzz-cursor-secret-" + "f" * 32)),
        tokens=parse_tokens("fuzzer=" + hashlib.sha256(TOKEN.encode()).hexdigest()),
        backend="ldap",
        log_level="INFO",
    )
    yield create_app(settings=settings_, backend=backend)
    backend.close()


@pytest.fixture(scope="module")
def api(fuzz_app):
    return schemathesis.openapi.from_wsgi("/scim/v2/openapi.json", fuzz_app, headers=AUTH)


def test_the_document_is_served_behind_the_token(fuzz_app):
    client = fuzz_app.test_client()
    refused = client.get("/scim/v2/openapi.json")
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    response = client.get("/scim/v2/openapi.json", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    document = response.get_json()
    assert document["openapi"].startswith("3.")
    assert document["servers"] == [{"url": "http://localhost/scim/v2"}]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert document["security"] == [{"bearer": []}]
    user = document["components"]["schemas"]["User"]
    assert user["additionalProperties"] is False
    assert "password" not in user["properties"]
    assert "password" in document["components"]["schemas"]["UserRequest"]["properties"]


def test_every_route_of_the_service_is_described(fuzz_app):
    paths = fuzz_app.test_client().get("/scim/v2/openapi.json", headers=AUTH).get_json()["paths"]
    described = {(method.upper(), path) for path, item in paths.items() for method in item}
    names = {
        "serviceproviderconfig": "ServiceProviderConfig",
        "resourcetypes": "ResourceTypes",
        "schemas": "Schemas",
        "openapi.json": "openapi.json",
        "users": "Users",
        "groups": "Groups",
        "users/.search": "Users/.search",
        "groups/.search": "Groups/.search",
    }
    expected = {
        (method, f"/{names[endpoint]}/{{id}}" if with_id else f"/{names[endpoint]}")
        for (endpoint, with_id), route in _ROUTES.items()
        for method in [*route.handlers, *route.by_design_unsupported]
    }
    assert expected == described - {("PARAMETERS", path) for path in paths}


def _operations(fuzz_app):
    api = schemathesis.openapi.from_wsgi("/scim/v2/openapi.json", fuzz_app, headers=AUTH)
    return [result.ok() for result in api.get_all_operations()]


def _existing_ids(fuzz_app):
    """Ids that exist, so that generated bodies also reach PATCH, PUT and DELETE of entries."""
    client = fuzz_app.test_client()
    user = client.post(
        "/scim/v2/Users",
        headers=AUTH,
        json={
            "userName": "fuzz-target",
            "name": {"givenName": "Fuzz", "familyName": "Target"},
            "emails": [{"value": "fuzz-target@example.com"}],
        },
    )
    group = client.post("/scim/v2/Groups", headers=AUTH, json={"displayName": "fuzz-target"})
    found = client.get(
        "/scim/v2/Users", headers=AUTH, query_string={"filter": 'userName eq "fuzz-target"'}
    )
    assert user.status_code in (201, 409) and group.status_code in (201, 409)
    return {
        "/Users/{id}": found.get_json()["Resources"][0]["id"],
        "/Groups/{id}": "fuzz-target",
        "/ResourceTypes/{id}": "User",
        "/Schemas/{id}": "urn:ietf:params:scim:schemas:core:2.0:User",
    }


def _fuzz(operation, mode, statuses, path_parameters=None):
    """Run ``EXAMPLES`` generated requests of one operation; count the statuses answered."""

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=path_parameters))
    def run(case):
        response = case.call_and_validate(headers=AUTH, checks=CHECKS)
        assert "Traceback" not in response.text
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

    run()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_schemathesis_finds_no_server_error_and_no_schema_violation(fuzz_app, mode):
    statuses: dict[int, int] = {}
    operations = _operations(fuzz_app)
    for operation in operations:
        _fuzz(operation, mode, statuses)
        existing = _existing_ids(fuzz_app).get(operation.path)
        if existing is not None:
            _fuzz(operation, mode, statuses, {"id": existing})
    examples = sum(statuses.values())
    FIGURES[f"{mode.value} operations"] = len(operations)
    FIGURES[f"{mode.value} examples"] = examples
    for status, count in statuses.items():
        FIGURES[f"{mode.value} status {status}"] = count
    assert examples >= len(operations) * 2
    assert not any(status >= 500 and status != 501 for status in statuses)


def test_figures(capsys):
    """The run's figures add up, and are printed (``pytest -s``) for docs/reliability.md.

    Runs after the fuzz tests above (file order); alone, it has no figures and fails.
    """
    for mode in GenerationMode.POSITIVE, GenerationMode.NEGATIVE:
        prefix = f"{mode.value} status "
        counts = {int(k[len(prefix) :]): v for k, v in FIGURES.items() if k.startswith(prefix)}
        assert FIGURES[f"{mode.value} operations"] > 0
        assert sum(counts.values()) == FIGURES[f"{mode.value} examples"]
        assert all(status < 500 or status == 501 for status in counts), counts
    with capsys.disabled():
        for key in sorted(FIGURES):
            print(f"schemathesis {key}: {FIGURES[key]}")
