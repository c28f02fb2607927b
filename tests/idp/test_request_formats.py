"""Request and response formats as identity providers meet them (RFC 7644 §3.1, §3.4.3, §8.1).

``tests/integration/test_http.py`` already covers bad JSON, 415 for ``text/plain``, one
``application/json; charset=utf-8`` create and two 405s; this module covers the rest: both media
types on every write, ``application/scim+json`` on every kind of answer, every write to a
discovery endpoint, and POST ``.search`` (same policy as GET) per resource type and at the root.
"""

import json

import pytest

SCIM_JSON = "application/scim+json"
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"
LIST_URN = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
SEARCH_URN = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

MEDIA_TYPES = [
    "application/scim+json",
    "application/scim+json; charset=utf-8",
    "application/json",
    "Application/JSON; charset=UTF-8",
]


def send(http, method, path, body, content_type=SCIM_JSON, **kwargs):
    data = json.dumps(body).encode()
    return http(method, path, data=data, headers={"Content-Type": content_type}, **kwargs)


def user_body(name):
    return {
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": name,
        "name": {"givenName": "Media", "familyName": "Type"},
        "emails": [{"value": f"{name}@example.com", "type": "work"}],
    }


def assert_scim_json(response, status):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.headers["Content-Type"] == SCIM_JSON
    return response.get_json(force=True)


@pytest.mark.parametrize("content_type", MEDIA_TYPES)
def test_both_media_types_on_every_write(http, directory, run_id, content_type):
    name = f"media-{run_id}"
    created = assert_scim_json(send(http, "POST", "/Users", user_body(name), content_type), 201)
    path = "/Users/" + created["id"]
    replaced = {**user_body(name), "title": "Replaced"}
    assert assert_scim_json(send(http, "PUT", path, replaced, content_type), 200)["title"] == (
        "Replaced"
    )
    operations = {
        "schemas": [PATCH_OP],
        "Operations": [{"op": "replace", "path": "title", "value": "Patched"}],
    }
    assert assert_scim_json(send(http, "PATCH", path, operations, content_type), 200)["title"] == (
        "Patched"
    )
    assert directory.user(created["id"], "title")["title"] == ["Patched"]
    group = f"Media {run_id}"
    body = {"displayName": group, "members": [{"value": created["id"]}]}
    assert assert_scim_json(send(http, "POST", "/Groups", body, content_type), 201)["id"] == group
    remove = {"schemas": [PATCH_OP], "Operations": [{"op": "remove", "path": "members"}]}
    assert_scim_json(send(http, "PATCH", "/Groups/" + group, remove, content_type), 200)
    assert directory.members(group) == set()
    assert http("DELETE", path).status_code == 204


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/xml", "application/x-www-form-urlencoded"]
)
def test_other_media_types_are_415_on_every_write(http, content_type):
    for method, path in (
        ("POST", "/Users"),
        ("PUT", "/Users/x"),
        ("PATCH", "/Groups/x"),
        ("POST", "/Users/.search"),
    ):
        response = send(http, method, path, {"userName": "x"}, content_type)
        body = assert_scim_json(response, 415)
        assert body["schemas"] == [ERROR_URN]


def test_every_answer_is_scim_json(http, run_id):
    created = send(http, "POST", "/Users", user_body(f"answer-{run_id}"))
    assert_scim_json(created, 201)
    assert created.headers["Location"].endswith("/Users/" + created.get_json()["id"])
    for path in (
        "/Users",
        "/Groups",
        "/Users/" + created.get_json()["id"],
        "/ServiceProviderConfig",
        "/ResourceTypes",
        "/Schemas",
    ):
        assert_scim_json(http("GET", path), 200)
    for path, status in (("/Users/missing", 404), ("/Nowhere", 404)):
        assert assert_scim_json(http("GET", path), status)["schemas"] == [ERROR_URN]
    assert_scim_json(http("GET", "/Users", token=None), 401)


DISCOVERY_PATHS = [
    "/ServiceProviderConfig",
    "/ResourceTypes",
    "/ResourceTypes/User",
    "/Schemas",
    "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User",
]


@pytest.mark.parametrize("path", DISCOVERY_PATHS)
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_discovery_endpoints_answer_405_to_writes(http, method, path):
    response = send(http, method, path, {"schemas": []})
    body = assert_scim_json(response, 405)
    assert body["schemas"] == [ERROR_URN] and body["status"] == "405"
    assert response.headers["Allow"] == "GET"
    assert http("GET", path).status_code == 200  # still there, unchanged


@pytest.fixture
def two_users(http, run_id):
    ids = []
    for suffix in ("a", "b"):
        created = send(http, "POST", "/Users", user_body(f"search-{run_id}-{suffix}"))
        ids.append(assert_scim_json(created, 201)["id"])
    return ids


def search(http, resource, body, **kwargs):
    return send(http, "POST", f"/{resource}/.search", {"schemas": [SEARCH_URN], **body}, **kwargs)


def test_users_search_matches_get(http, run_id, two_users):
    query = {"filter": f'userName eq "SEARCH-{run_id}-A"'}
    posted = assert_scim_json(search(http, "Users", query), 200)
    got = assert_scim_json(http("GET", "/Users", query_string=query), 200)
    assert posted["schemas"] == [LIST_URN]
    assert [r["id"] for r in posted["Resources"]] == [two_users[0]]
    assert posted["Resources"] == got["Resources"] and posted["totalResults"] == 1


def test_users_search_takes_paging_and_attribute_lists(http, run_id, two_users):
    body = {
        "filter": f'emails.value eq "search-{run_id}-b@example.com"',
        "attributes": ["userName", "emails.value"],
        "startIndex": 1,
        "count": 5,
    }
    posted = assert_scim_json(search(http, "Users", body), 200)
    assert (posted["startIndex"], posted["itemsPerPage"], posted["totalResults"]) == (1, 5, 1)
    assert posted["Resources"] == [
        {
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "id": two_users[1],
            "userName": f"search-{run_id}-b",
            "emails": [{"value": f"search-{run_id}-b@example.com"}],
            "meta": posted["Resources"][0]["meta"],
        }
    ]
    excluded = {
        "filter": f'userName eq "search-{run_id}-b"',
        "excludedAttributes": ["emails", "name"],
    }
    resource = assert_scim_json(search(http, "Users", excluded), 200)["Resources"][0]
    assert "emails" not in resource and "name" not in resource and resource["userName"]


def test_search_applies_the_same_filter_policy_as_get(http):
    for filter_text in ('title co "x"', 'userName sw "a"', "userName eq"):
        posted = assert_scim_json(search(http, "Users", {"filter": filter_text}), 400)
        got = http("GET", "/Users", query_string={"filter": filter_text}).get_json(force=True)
        assert posted["scimType"] == got["scimType"] == "invalidFilter"
        assert posted["detail"] == got["detail"]


def test_groups_search(http, run_id):
    name = f"Searchable {run_id}"
    assert_scim_json(send(http, "POST", "/Groups", {"displayName": name}), 201)
    body = {"filter": f'displayName eq "{name}"', "excludedAttributes": ["members"]}
    posted = assert_scim_json(search(http, "Groups", body), 200)
    assert [r["id"] for r in posted["Resources"]] == [name]
    assert "members" not in posted["Resources"][0]
    refused = assert_scim_json(search(http, "Groups", {"filter": f'id eq "{name}"'}), 400)
    assert refused["scimType"] == "invalidFilter"


def test_search_needs_a_json_object(http):
    response = http("POST", "/Users/.search", data=b"[]", headers={"Content-Type": SCIM_JSON})
    assert assert_scim_json(response, 400)["scimType"] == "invalidSyntax"
    assert assert_scim_json(http("GET", "/Users/.search"), 405)["status"] == "405"


def test_root_search_is_501(http):
    response = send(
        http, "POST", "/.search", {"schemas": [SEARCH_URN], "filter": 'userName eq "x"'}
    )
    body = assert_scim_json(response, 501)
    assert body["schemas"] == [ERROR_URN] and body["status"] == "501"
    assert "/Users/.search" in body["detail"]


def test_bulk_is_501(http):
    bulk = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
        "Operations": [{"method": "POST", "path": "/Users", "bulkId": "1", "data": {}}],
    }
    body = assert_scim_json(send(http, "POST", "/Bulk", bulk), 501)
    assert body["schemas"] == [ERROR_URN] and body["status"] == "501"
    assert "bulk.supported" in body["detail"]
    discovery = assert_scim_json(http("GET", "/ServiceProviderConfig"), 200)
    assert discovery["bulk"]["supported"] is False
