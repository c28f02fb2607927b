"""The HTTP edge: authentication, discovery, error bodies, content types, health."""

import json

import pytest

from scim_flask import SCIM_PREFIX

SCIM_JSON = "application/scim+json"
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"


def assert_scim_error(response, status, scim_type=None):
    assert response.status_code == status
    assert response.headers["Content-Type"] == SCIM_JSON
    body = response.get_json(force=True)
    assert body["schemas"] == [ERROR_URN]
    assert body["status"] == str(status)
    if scim_type:
        assert body["scimType"] == scim_type
    assert "Traceback" not in response.get_data(as_text=True)
    return body


def test_discovery_with_a_token(http):
    response = http("GET", "/ServiceProviderConfig")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == SCIM_JSON
    body = response.get_json(force=True)
    assert body["patch"]["supported"] is True
    assert body["filter"] == {"supported": True, "maxResults": 200}
    types = http("GET", "/ResourceTypes").get_json(force=True)
    assert {r["id"] for r in types["Resources"]} == {"User", "Group"}
    schemas = http("GET", "/Schemas").get_json(force=True)
    user = next(s for s in schemas["Resources"] if s["id"].endswith(":User"))
    names = {a["name"] for a in user["attributes"]}
    assert {"userName", "name", "emails", "active", "password"} <= names
    assert "ims" not in names and "photos" not in names  # only what the service stores
    phones = next(a for a in user["attributes"] if a["name"] == "phoneNumbers")
    assert [s["name"] for s in phones["subAttributes"]] == ["value", "type"]
    assert phones["subAttributes"][1]["canonicalValues"] == ["work", "mobile", "fax"]


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_no_or_bad_token_is_401(http, token):
    response = http("GET", "/ServiceProviderConfig", token=token)
    body = assert_scim_error(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert "token" in body["detail"].lower()


def test_every_scim_route_needs_a_token(app, http):
    rules = [r for r in app.url_map.iter_rules() if r.rule.startswith(SCIM_PREFIX)]
    assert rules
    for rule in rules:
        path = rule.rule.replace("<path:subpath>", "Users")[len(SCIM_PREFIX) :]
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            assert http(method, path or "/", token=None).status_code == 401, (method, path)


def test_health_endpoints_need_no_token(app):
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200


def test_unknown_url_and_wrong_method_get_scim_bodies(app, http):
    assert_scim_error(http("GET", "/Nothing"), 404)
    assert_scim_error(app.test_client().get("/elsewhere"), 404)
    response = http("POST", "/ServiceProviderConfig", json={})
    assert_scim_error(response, 405)
    assert_scim_error(http("DELETE", "/Schemas"), 405)


def test_bodies_are_checked(http):
    assert_scim_error(
        http("POST", "/Users", data=b"{not json", headers={"Content-Type": SCIM_JSON}),
        400,
        "invalidSyntax",
    )
    assert_scim_error(
        http("POST", "/Users", data=b'{"userName": "\xff"}', headers={"Content-Type": SCIM_JSON}),
        400,
        "invalidSyntax",
    )
    assert_scim_error(
        http("POST", "/Users", data=b"userName=x", headers={"Content-Type": "text/plain"}), 415
    )
    nested = b"[" * 5000 + b"]" * 5000
    assert_scim_error(
        http("POST", "/Users", data=nested, headers={"Content-Type": SCIM_JSON}),
        400,
        "invalidSyntax",
    )
    huge = json.dumps({"userName": "x" * (1024 * 1024 + 1)}).encode()
    assert_scim_error(http("POST", "/Users", data=huge, headers={"Content-Type": SCIM_JSON}), 413)


def test_plain_json_is_accepted_and_scim_json_answered(http):
    body = {
        "userName": "plainjson",
        "name": {"givenName": "Plain", "familyName": "Json"},
        "emails": [{"value": "plainjson@example.com"}],
    }
    response = http(
        "POST",
        "/Users",
        data=json.dumps(body),
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert response.status_code in (201, 409)
    assert response.headers["Content-Type"] == SCIM_JSON


def test_request_id_is_returned(http):
    response = http("GET", "/ServiceProviderConfig", headers={"X-Request-Id": "abc123"})
    assert response.headers["X-Request-Id"] == "abc123"
