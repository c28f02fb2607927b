"""The service over the in-process backend, as a client sees it: discovery, searches, PUT's
kept attributes, group renames and extensions, streamed big groups, and the audit log."""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import replace
from typing import Any

import pytest

from scim_core import ScimRequest, ScimResponse, ScimService, __version__, discovery
from scim_core.backends.memory import MemoryBackend
from scim_core.config import ServiceConfig
from scim_core.cursor import CursorBinding, CursorCodec
from scim_core.errors import Uniqueness
from scim_core.filter import DEFAULT_POLICY, parse_filter
from scim_core.members import MemberList
from scim_core.schemas.attributes import GROUP_EXTERNAL_ID, Attribute
from scim_core.secret import Secret
from scim_core.service import DRY_RUN_HEADER
from scim_core.testing.contract import Client, user_body
from scim_core.urns import ENTERPRISE_URN, GROUP_URN, LIST_RESPONSE_URN, PATCH_OP_URN, USER_URN

BASE = "https://scim.test/v2"
SCIM_JSON = "application/scim+json"
SITE_URN = "urn:example:params:scim:schemas:extension:site:2.0:User"
TEAM_URN = "urn:example:params:scim:schemas:extension:team:2.0:Group"


def request(
    method: str,
    path: str,
    body: Any = None,
    *,
    query: dict[str, str] | None = None,
    if_match: str | None = None,
    principal: str = "tester",
) -> ScimRequest:
    return ScimRequest(
        method=method,
        path=path,
        query=query or {},
        body=b"" if body is None else json.dumps(body).encode(),
        content_type=SCIM_JSON if body is not None else None,
        if_match=if_match,
        base_url=BASE,
        principal=principal,
    )


def patch_body(*operations: dict[str, Any]) -> dict[str, Any]:
    return {"schemas": [PATCH_OP_URN], "Operations": list(operations)}


def audit_records(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [r.audit for r in caplog.records if r.name == "scim.audit"]  # type: ignore[attr-defined]


@pytest.fixture
def service() -> ScimService:
    return ScimService(MemoryBackend())


@pytest.fixture
def client(service: ScimService) -> Client:
    return Client(service, BASE)


# ---------------------------------------------------------------------- discovery


def test_service_provider_config_reports_the_configured_bounds():
    config = ServiceConfig(max_results=50, default_count=7)
    answer = ScimService(MemoryBackend(), config).handle(request("GET", "/ServiceProviderConfig"))
    assert answer.status == 200
    assert answer.headers == {"Content-Type": SCIM_JSON}
    assert answer.body == discovery.service_provider_config(BASE, 50, default_count=7)


def test_service_provider_config_offers_cursors_with_a_secret():
    config = ServiceConfig(cursor_secret=Secret("s" * 40), cursor_timeout=120)
    answer = ScimService(MemoryBackend(), config).handle(request("GET", "/ServiceProviderConfig"))
    expected = discovery.service_provider_config(
        BASE, config.max_results, default_count=config.default_count, cursor_timeout=120
    )
    assert answer.body == expected


@pytest.mark.parametrize(
    ("path", "listing", "kind"),
    [
        ("/ResourceTypes", discovery.resource_types, "ResourceType"),
        ("/Schemas", discovery.schemas, "Schema"),
    ],
)
def test_discovery_listings_and_their_items(path, listing, kind):
    service = ScimService(SiteBackend())  # its mapping adds an extension the defaults lack
    items = listing(BASE, SiteBackend.schemas)
    assert items != listing(BASE)
    answer = service.handle(request("GET", path))
    assert (answer.status, answer.headers) == (200, {"Content-Type": SCIM_JSON})
    assert answer.body == {
        "schemas": [LIST_RESPONSE_URN],
        "totalResults": len(items),
        "startIndex": 1,
        "itemsPerPage": len(items),
        "Resources": items,
    }
    assert len(items) > 1
    for item in items:
        one = service.handle(request("GET", f"{path}/{item['id']}"))
        assert (one.status, one.body, one.headers) == (200, item, {"Content-Type": SCIM_JSON})
    missing = service.handle(request("GET", f"{path}/Nothing"))
    assert missing.status == 404
    assert missing.headers == {"Content-Type": SCIM_JSON}
    assert dict(missing.body or {})["detail"] == f"No {kind} has this id."


def test_openapi_document():
    pytest.importorskip("apispec")
    from scim_core.schemas.openapi import openapi_document

    answer = ScimService(SiteBackend()).handle(request("GET", "/openapi.json"))
    assert (answer.status, answer.headers) == (200, {"Content-Type": "application/json"})
    assert answer.body == openapi_document(BASE, __version__, SiteBackend.schemas)
    assert SITE_URN in json.dumps(answer.body)


# ---------------------------------------------------------------------- searches


def test_search_request_body_is_the_query_parameters(client):
    for name in ("sa", "sb", "sc"):
        client.ok("POST", "/Users", user_body(name, displayName=name.upper()))
    found = client.ok(
        "POST",
        "/Users/.search",
        {
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
            "filter": 'userName eq "sb"',
            "attributes": ["userName", "displayName"],
        },
    )
    assert found["totalResults"] == 1
    (user,) = found["Resources"]
    assert set(user) == {"schemas", "id", "userName", "displayName", "meta"}
    assert (user["userName"], user["displayName"]) == ("sb", "SB")
    paged = client.ok(
        "POST",
        "/Users/.search",
        {"startIndex": 2, "count": 1, "excludedAttributes": "emails,name"},
    )
    assert (paged["totalResults"], paged["startIndex"], paged["itemsPerPage"]) == (3, 2, 1)
    (second,) = paged["Resources"]
    assert second["userName"] == "sb" and "emails" not in second and "name" not in second
    assert "displayName" in second
    listed = client.ok("POST", "/Users/.search", {"excludedAttributes": ["emails", "name"]})
    assert all("emails" not in u and "name" not in u for u in listed["Resources"])
    assert [u["userName"] for u in listed["Resources"]] == ["sa", "sb", "sc"]


def test_search_groups_and_its_cursor_parameter():
    config = ServiceConfig(cursor_secret=Secret("c" * 40))
    client = Client(ScimService(MemoryBackend(), config), BASE)
    for name in ("ga", "gb", "gc"):
        client.ok("POST", "/Groups", {"displayName": name})
    found = client.ok("POST", "/Groups/.search", {"filter": 'displayName eq "gb"'})
    assert [g["displayName"] for g in found["Resources"]] == ["gb"]
    first = client.ok("POST", "/Groups/.search", {"cursor": "", "count": 2})
    assert first["itemsPerPage"] == 2 and "startIndex" not in first
    rest = client.ok("POST", "/Groups/.search", {"cursor": first["nextCursor"], "count": 2})
    assert "nextCursor" not in rest
    names = [g["displayName"] for g in first["Resources"] + rest["Resources"]]
    assert sorted(names) == ["ga", "gb", "gc"]


def test_attributes_named_by_their_full_urn(client):
    client.ok("POST", "/Users", user_body("urn-user", displayName="U"))
    client.ok("POST", "/Groups", {"displayName": "urn-group"})
    users = client.ok("GET", "/Users", query={"attributes": f"{USER_URN}:displayName"})
    assert [set(u) for u in users["Resources"]] == [{"schemas", "id", "displayName", "meta"}]
    groups = client.ok("GET", "/Groups", query={"attributes": f"{GROUP_URN}:displayName"})
    assert [set(g) for g in groups["Resources"]] == [{"schemas", "id", "displayName", "meta"}]
    group = client.ok("GET", "/Groups/urn-group", query={"attributes": f"{GROUP_URN}:displayName"})
    assert set(group) == {"schemas", "id", "displayName", "meta"}


# ---------------------------------------------------------------------- cursors


def cursor_client(principal: str = "tester") -> tuple[Client, ScimService]:
    service = ScimService(MemoryBackend(), ServiceConfig(cursor_secret=Secret("k" * 40)))
    return Client(service, BASE), service


def list_with(service: ScimService, path: str, principal: str, **query: str) -> ScimResponse:
    return service.handle(request("GET", path, query=query, principal=principal))


def test_a_cursor_walks_one_at_a_time_and_belongs_to_its_query():
    client, service = cursor_client()
    for name in ("ca", "cb", "cc"):
        client.ok("POST", "/Users", user_body(name))
    client.ok("POST", "/Groups", {"displayName": "cg"})
    seen: list[str] = []
    answer = list_with(service, "/Users", "me", filter="active eq true", cursor="", count="1")
    while True:
        assert answer.status == 200, answer.body
        body = dict(answer.body or {})
        assert body["totalResults"] == 3 and body["itemsPerPage"] == 1
        seen += [u["userName"] for u in body["Resources"]]
        if "nextCursor" not in body:
            break
        cursor = body["nextCursor"]
        answer = list_with(
            service, "/Users", "me", filter="active eq true", cursor=cursor, count="1"
        )
    assert sorted(seen) == ["ca", "cb", "cc"]
    first = list_with(service, "/Users", "me", filter="active eq true", cursor="", count="1")
    cursor = dict(first.body or {})["nextCursor"]
    for path, principal, query in [
        ("/Users", "me", {"filter": "active eq false"}),
        ("/Users", "me", {}),
        ("/Users", "someone else", {"filter": "active eq true"}),
        ("/Groups", "me", {}),
    ]:
        refused = list_with(service, path, principal, cursor=cursor, count="1", **query)
        assert refused.status == 400, (path, principal, query)
        assert dict(refused.body or {})["scimType"] == "invalidCursor"
    unfiltered = list_with(service, "/Users", "me", cursor="", count="2")
    more = list_with(
        service, "/Users", "me", cursor=dict(unfiltered.body or {})["nextCursor"], count="2"
    )
    assert more.status == 200 and [u["userName"] for u in dict(more.body or {})["Resources"]]


def test_a_cursor_another_instance_sealed_for_the_same_walk_is_taken():
    secret = Secret("k" * 40)
    client = Client(ScimService(MemoryBackend(), ServiceConfig(cursor_secret=secret)), BASE)
    ids = sorted(client.ok("POST", "/Users", user_body(f"i{n}"))["id"] for n in range(3))
    for text, binding in [("", ""), ("active eq true", repr(parse_filter("active eq true")))]:
        sealed = CursorCodec(secret, 60).seal(ids[0], 1, CursorBinding("User", binding, "contract"))
        query = {"cursor": sealed, "count": "1", **({"filter": text} if text else {})}
        page = client.ok("GET", "/Users", query=query)
        assert [u["id"] for u in page["Resources"]] == [ids[1]]


def test_a_cursor_where_none_is_offered_is_refused(client):
    answer = client.call("GET", "/Users", query={"cursor": ""})
    assert answer.status == 400 and dict(answer.body or {})["scimType"] == "invalidCursor"


# ---------------------------------------------------------------------- filters on names


def permissive(**kwargs: Any) -> ServiceConfig:
    forms = DEFAULT_POLICY.forms | {
        ("Group", "externalId", "eq"),
        ("Group", "members.value", "eq"),
        ("Group", "members.displayName", "eq"),
        ("User", "displayName", "eq"),
    }
    policy = DEFAULT_POLICY.__class__(
        forms=forms,
        value_types=DEFAULT_POLICY.value_types,
        logical=frozenset({"and", "or", "not"}),
        value_filters=True,
    )
    return ServiceConfig(filter_policy=policy, **kwargs)


@pytest.fixture
def named() -> Client:
    client = Client(ScimService(MemoryBackend(), permissive()), BASE)
    for name in ("alpha", "beta", "gamma"):
        client.ok("POST", "/Groups", {"displayName": name})
    return client


BAD_NAME = "bad\u200bname"  # an invisible character: no group can be named so


@pytest.mark.parametrize(
    "text",
    [
        f'displayName eq "{BAD_NAME}"',
        f'displayName eq "alpha" and displayName eq "{BAD_NAME}"',
        f'displayName eq "{BAD_NAME}" or displayName eq "alpha"',
        f'not (displayName eq "{BAD_NAME}")',
        f'members[displayName eq "{BAD_NAME}"]',
    ],
)
def test_a_group_name_no_group_can_have_is_an_invalid_filter(named, text):
    answer = named.call("GET", "/Groups", query={"filter": text})
    assert answer.status == 400, answer.body
    assert dict(answer.body or {})["scimType"] == "invalidFilter"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ('displayName eq "beta"', ["beta"]),
        ('displayName eq "alpha" or displayName eq "gamma"', ["alpha", "gamma"]),
        ('displayName eq "alpha" and displayName eq "alpha"', ["alpha"]),
        ('not (displayName eq "alpha")', ["beta", "gamma"]),
        ('members[value eq "nobody"]', []),
        (f'externalId eq "{BAD_NAME}"', []),
    ],
)
def test_filters_on_good_names_find_their_groups(named, text, names):
    found = named.ok("GET", "/Groups", query={"filter": text})
    assert [g["displayName"] for g in found["Resources"]] == names


def test_a_user_filter_may_name_what_no_group_can_be_named(named):
    named.ok("POST", "/Users", user_body("odd", displayName=BAD_NAME))
    found = named.ok("GET", "/Users", query={"filter": f'displayName eq "{BAD_NAME}"'})
    assert [u["userName"] for u in found["Resources"]] == ["odd"]


def test_a_filter_over_the_configured_length_is_refused():
    client = Client(ScimService(MemoryBackend(), ServiceConfig(max_filter_length=20)), BASE)
    answer = client.call("GET", "/Users", query={"filter": 'userName eq "a-rather-long-name"'})
    assert answer.status == 400 and dict(answer.body or {})["scimType"] == "invalidFilter"


# ---------------------------------------------------------------------- PUT keeps what it must


class SiteBackend(MemoryBackend):
    """A directory whose mapping adds attributes a client cannot simply overwrite: read-only
    ones the directory sets (``badge``, ``seat``), write-only and immutable ones."""

    schemas = MemoryBackend.schemas.with_attributes(
        "User",
        USER_URN,
        (
            Attribute("badge", "string", mutability="readOnly"),
            Attribute("pin", "string", mutability="writeOnly", returned="never"),
            Attribute("hireDate", "string", mutability="immutable"),
        ),
    ).with_attributes(
        "User",
        SITE_URN,
        (
            Attribute("seat", "string", mutability="readOnly"),
            Attribute("token", "string", mutability="writeOnly", returned="never"),
            Attribute("origin", "string", mutability="immutable"),
        ),
        name="Site",
    )

    def create_user(self, user: dict[str, Any], password: Secret | None) -> dict[str, Any]:
        site = {**user.get(SITE_URN, {}), "seat": f"seat-{user['userName']}"}
        return super().create_user(
            {**user, "badge": f"badge-{user['userName']}", SITE_URN: site}, password
        )


@pytest.fixture
def site() -> tuple[Client, SiteBackend]:
    backend = SiteBackend()
    return Client(ScimService(backend), BASE), backend


def stored(backend: MemoryBackend, user_id: str) -> dict[str, Any]:
    user = backend.get_user(user_id)
    assert user is not None
    return {k: v for k, v in user.items() if k != "meta"}


def test_a_put_keeps_read_only_write_only_and_immutable_values(site):
    client, backend = site
    created = client.ok(
        "POST",
        "/Users",
        user_body(
            "keeper",
            pin="1234",
            hireDate="2020-01-01",
            **{SITE_URN: {"token": "t1", "origin": "o1"}},
        ),
    )
    before = stored(backend, created["id"])
    assert before["badge"] == "badge-keeper" and before[SITE_URN]["seat"] == "seat-keeper"
    replaced = client.ok("PUT", f"/Users/{created['id']}", user_body("keeper", title="Boss"))
    after = stored(backend, created["id"])
    assert after == {**before, "title": "Boss"}
    assert replaced["badge"] == "badge-keeper"
    assert replaced[SITE_URN] == {"seat": "seat-keeper", "origin": "o1"}


def test_a_put_sets_write_only_values_and_cannot_change_read_only_ones(site):
    client, backend = site
    created = client.ok(
        "POST", "/Users", user_body("writer", pin="1234", **{SITE_URN: {"token": "t1"}})
    )
    sent = user_body(
        "writer",
        pin="9999",
        badge="forged",
        hireDate="2021-02-02",
        **{SITE_URN: {"token": "t2", "seat": "forged", "origin": "o2"}},
    )
    client.ok("PUT", f"/Users/{created['id']}", sent)
    after = stored(backend, created["id"])
    assert (after["pin"], after["badge"], after["hireDate"]) == (
        "9999",
        "badge-writer",
        "2021-02-02",
    )
    assert after[SITE_URN] == {"token": "t2", "seat": "seat-writer", "origin": "o2"}


@pytest.mark.parametrize(
    "sent",
    [{"hireDate": "2021-01-01"}, {SITE_URN: {"origin": "elsewhere"}}],
)
def test_a_put_that_changes_an_immutable_value_is_refused(site, sent):
    client, backend = site
    created = client.ok(
        "POST", "/Users", user_body("fixed", hireDate="2020-01-01", **{SITE_URN: {"origin": "o1"}})
    )
    before = stored(backend, created["id"])
    answer = client.call("PUT", f"/Users/{created['id']}", user_body("fixed", **sent))
    assert answer.status == 400 and dict(answer.body or {})["scimType"] == "mutability"
    assert stored(backend, created["id"]) == before
    same = user_body("fixed", hireDate="2020-01-01", **{SITE_URN: {"origin": "o1"}})
    assert client.call("PUT", f"/Users/{created['id']}", same).status == 200


def test_a_put_without_an_extension_the_directory_fills_drops_it_when_empty():
    class Plain(SiteBackend):
        def create_user(self, user, password):
            return MemoryBackend.create_user(self, user, password)

    backend = Plain()
    client = Client(ScimService(backend), BASE)
    created = client.ok("POST", "/Users", user_body("plain"))
    replaced = client.ok("PUT", f"/Users/{created['id']}", user_body("plain", title="T"))
    assert SITE_URN not in stored(backend, created["id"])
    assert SITE_URN not in replaced and replaced["schemas"] == [USER_URN]


def test_an_immutable_value_held_empty_may_be_set():
    class EmptyHeld(SiteBackend):
        def create_user(self, user: dict[str, Any], password: Secret | None) -> dict[str, Any]:
            return super().create_user({**user, "hireDate": ""}, password)

    backend = EmptyHeld()
    client = Client(ScimService(backend), BASE)
    created = client.ok("POST", "/Users", user_body("late"))
    assert stored(backend, created["id"])["hireDate"] == ""
    client.ok("PUT", f"/Users/{created['id']}", user_body("late", hireDate="2022-02-02"))
    assert stored(backend, created["id"])["hireDate"] == "2022-02-02"


def test_a_put_without_active_keeps_a_disabled_user_disabled(client):
    created = client.ok("POST", "/Users", user_body("sleeper", active=False))
    replaced = client.ok("PUT", f"/Users/{created['id']}", user_body("sleeper", title="T"))
    assert replaced["active"] is False
    enabled = client.ok("PUT", f"/Users/{created['id']}", user_body("sleeper", active=True))
    assert enabled["active"] is True
    kept = client.ok("PUT", f"/Users/{created['id']}", user_body("sleeper"))
    assert kept["active"] is True


def test_a_put_that_changes_nothing_keeps_the_version(client):
    created = client.ok("POST", "/Users", user_body("same"))
    again = client.call("PUT", f"/Users/{created['id']}", user_body("same"))
    assert again.status == 200 and again.headers["ETag"] == created["meta"]["version"]


# ---------------------------------------------------------------------- passwords


def test_passwords_sent_by_post_put_and_patch_are_set(service, client):
    backend = service.backend
    assert isinstance(backend, MemoryBackend)
    created = client.ok("POST", "/Users", user_body("pw", password="first-Secret1"))
    uid = created["id"]
    assert backend.check_password(uid, "first-Secret1")
    same = client.call("PUT", f"/Users/{uid}", user_body("pw", password="second-Secret2"))
    assert same.status == 200 and same.headers["ETag"] != created["meta"]["version"]
    assert backend.check_password(uid, "second-Secret2")
    retitled = client.patch(f"/Users/{uid}", {"op": "replace", "path": "title", "value": "T"})
    assert retitled.status == 200 and backend.check_password(uid, "second-Secret2")
    patched = client.patch(
        f"/Users/{uid}", {"op": "replace", "path": "password", "value": "third-Secret3"}
    )
    assert patched.status == 200 and "password" not in dict(patched.body or {})
    assert backend.check_password(uid, "third-Secret3")
    assert not backend.check_password(uid, "second-Secret2")


# ---------------------------------------------------------------------- PATCH of a user


def test_a_patch_that_changes_nothing_once_checked_keeps_the_version(client):
    created = client.ok("POST", "/Users", user_body("trim"))
    answer = client.patch(
        f"/Users/{created['id']}", {"op": "replace", "path": "userName", "value": "  trim  "}
    )
    assert answer.status == 200 and answer.headers["ETag"] == created["meta"]["version"]
    assert dict(answer.body or {})["userName"] == "trim"


def test_a_patch_checks_only_what_it_changed_against_the_stored_user(site):
    client, backend = site
    created = client.ok("POST", "/Users", user_body("patcher", hireDate="2020-01-01"))
    patched = client.patch(
        f"/Users/{created['id']}",
        {"op": "replace", "path": "title", "value": "Chief"},
        {"op": "add", "path": "pin", "value": "4321"},
    )
    assert patched.status == 200, patched.body
    after = stored(backend, created["id"])
    assert (after["title"], after["pin"], after["hireDate"]) == ("Chief", "4321", "2020-01-01")
    refused = client.patch(
        f"/Users/{created['id']}", {"op": "replace", "path": "hireDate", "value": "1999-01-01"}
    )
    assert refused.status == 400 and dict(refused.body or {})["scimType"] == "mutability"
    removed = client.patch(f"/Users/{created['id']}", {"op": "remove", "path": "active"})
    assert removed.status == 400 and dict(removed.body or {})["scimType"] == "invalidValue"


def test_a_patch_rename_onto_a_taken_user_name_is_409(client):
    client.ok("POST", "/Users", user_body("taken"))
    other = client.ok("POST", "/Users", user_body("other"))
    answer = client.patch(
        f"/Users/{other['id']}", {"op": "replace", "path": "userName", "value": "TAKEN"}
    )
    assert answer.status == 409


@pytest.mark.parametrize(
    "body",
    [{"schemas": [PATCH_OP_URN], "Operations": []}, {"schemas": [PATCH_OP_URN]}, [], "text"],
)
def test_a_patch_without_operations_is_invalid_syntax(client, body):
    created = client.ok("POST", "/Users", user_body())
    answer = client.call("PATCH", f"/Users/{created['id']}", body)
    assert answer.status == 400 and dict(answer.body or {})["scimType"] == "invalidSyntax"


def test_a_patch_envelope_key_in_any_case(client):
    created = client.ok("POST", "/Users", user_body())
    body = {
        "schemas": [PATCH_OP_URN],
        "OPERATIONS": [{"op": "replace", "path": "title", "value": "X"}],
    }
    assert client.ok("PATCH", f"/Users/{created['id']}", body)["title"] == "X"


# ---------------------------------------------------------------------- versions


def test_if_match_on_user_writes(client):
    created = client.ok("POST", "/Users", user_body("versioned"))
    uid, version = created["id"], created["meta"]["version"]
    stale = 'W/"stale"'
    op = {"op": "replace", "path": "title", "value": "T"}
    assert client.patch(f"/Users/{uid}", op, if_match=stale).status == 412
    assert client.call("PUT", f"/Users/{uid}", user_body("versioned"), if_match=stale).status == 412
    assert client.call("DELETE", f"/Users/{uid}", if_match=stale).status == 412
    assert client.patch(f"/Users/{uid}", op, if_match=f'{version}, W/"other"').status == 200
    version = client.ok("GET", f"/Users/{uid}")["meta"]["version"]
    op = {"op": "replace", "path": "title", "value": "U"}
    patched = client.patch(f"/Users/{uid}", op, if_match=f'W/"other",{version}')
    assert patched.status == 200
    assert client.call("DELETE", f"/Users/{uid}", if_match="*").status == 204
    assert client.call("DELETE", f"/Users/{uid}", if_match="*").status == 404
    assert client.call("DELETE", f"/Users/{uid}").status == 404


class RacingBackend(MemoryBackend):
    """Another writer changes the user between each read and write, ``races`` times."""

    def __init__(self, races: int) -> None:
        super().__init__()
        self.races = races

    def update_user(self, user_id, current, desired, password):
        if self.races:
            self.races -= 1
            latest = self.get_user(user_id)
            assert latest is not None
            super().update_user(user_id, latest, {**latest, "nickName": f"race{self.races}"}, None)
        return super().update_user(user_id, current, desired, password)


def test_a_concurrent_change_is_retried_without_if_match_and_412_with_it():
    backend = RacingBackend(races=2)
    client = Client(ScimService(backend), BASE)
    created = client.ok("POST", "/Users", user_body("racer"))
    op = {"op": "replace", "path": "title", "value": "Won"}
    patched = client.patch(f"/Users/{created['id']}", op)
    assert patched.status == 200 and dict(patched.body or {})["title"] == "Won"
    assert dict(patched.body or {})["nickName"] == "race0"
    backend.races = 1
    current = client.ok("GET", f"/Users/{created['id']}")
    op = {"op": "replace", "path": "title", "value": "Again"}
    refused = client.patch(f"/Users/{created['id']}", op, if_match=current["meta"]["version"])
    assert refused.status == 412
    backend.races = 3
    busy = client.patch(
        f"/Users/{created['id']}", {"op": "replace", "path": "title", "value": "No"}
    )
    assert busy.status == 409


# ---------------------------------------------------------------------- groups


class TeamBackend(MemoryBackend):
    """A directory that keeps a group's externalId and a Team extension's costCenter."""

    schemas = MemoryBackend.schemas.with_attributes(
        "Group", GROUP_URN, (GROUP_EXTERNAL_ID,)
    ).with_attributes("Group", TEAM_URN, (Attribute("costCenter", "string"),), name="Team")

    def create_group(self, group: dict[str, Any]) -> dict[str, Any]:
        super().create_group(group)
        kept = {k: group[k] for k in ("externalId", TEAM_URN) if k in group}
        self._group(group["displayName"]).update(copy.deepcopy(kept))  # type: ignore[union-attr]
        found = self.get_group(group["displayName"])
        assert found is not None
        return found

    def update_group(self, group_id: str, changes: Any) -> bool:
        kept = {k: v for k, v in changes.items() if k != "displayName"}
        if not super().update_group(group_id, changes):
            return False
        group = self._group(group_id)
        assert group is not None
        for key, value in kept.items():
            holder = group.setdefault(TEAM_URN, {}) if key.startswith(TEAM_URN) else group
            name = key.rpartition(":")[2] if key.startswith(TEAM_URN) else key
            if value is None:
                holder.pop(name, None)
            else:
                holder[name] = value
        self._stamp(group)
        return True


@pytest.fixture
def team() -> Client:
    client = Client(ScimService(TeamBackend()), BASE)
    client.ok("POST", "/Groups", {"displayName": "team"})
    return client


def test_a_group_patch_writes_external_id_and_extension_values(team):
    op = {"op": "replace", "path": "externalId", "value": "ext-1"}
    patched = team.patch(
        "/Groups/team", op, {"op": "add", "path": f"{TEAM_URN}:costCenter", "value": "42"}
    )
    assert patched.status == 200, patched.body
    body = dict(patched.body or {})
    assert body["externalId"] == "ext-1" and body[TEAM_URN] == {"costCenter": "42"}
    assert body["schemas"] == [GROUP_URN, TEAM_URN]
    version = body["meta"]["version"]
    again = team.patch("/Groups/team", op)
    assert again.status == 200 and again.headers["ETag"] == version
    cleared = team.patch("/Groups/team", {"op": "remove", "path": "externalId"})
    assert "externalId" not in dict(cleared.body or {})


def test_a_rename_leaves_the_external_id_alone(team):
    team.patch("/Groups/team", {"op": "add", "path": "externalId", "value": "kept"})
    renamed = team.patch("/Groups/team", {"op": "replace", "path": "displayName", "value": "T2"})
    body = dict(renamed.body or {})
    assert (body["displayName"], body["externalId"]) == ("T2", "kept")


def test_a_new_group_with_external_id_and_extension_values():
    client = Client(ScimService(TeamBackend()), BASE)
    body = {"displayName": "made", "externalId": "e-7", TEAM_URN: {"costCenter": "7"}}
    created = client.ok("POST", "/Groups", body)
    assert (created["externalId"], created[TEAM_URN]) == ("e-7", {"costCenter": "7"})
    assert created["schemas"] == [GROUP_URN, TEAM_URN]


def test_a_group_external_id_where_the_backend_keeps_none_is_ignored(client, caplog):
    caplog.set_level(logging.INFO, "scim.audit")
    client.ok("POST", "/Groups", {"displayName": "plain"})
    caplog.clear()
    answer = client.patch("/Groups/plain", {"op": "replace", "path": "externalId", "value": "x"})
    assert answer.status == 200 and "externalId" not in dict(answer.body or {})
    assert audit_records(caplog) == []  # nothing changed


def test_a_group_rename(client, caplog):
    caplog.set_level(logging.INFO, "scim.audit")
    created = client.ok("POST", "/Groups", {"displayName": "old"})
    caplog.clear()
    renamed = client.patch("/Groups/old", {"op": "replace", "path": "displayName", "value": "new"})
    assert renamed.status == 200
    same = client.patch("/Groups/old", {"op": "replace", "path": "displayName", "value": "new"})
    body = dict(renamed.body or {})
    assert (body["id"], body["displayName"]) == ("old", "new")
    assert body["meta"]["version"] != created["meta"]["version"]
    assert same.status == 200 and same.headers["ETag"] == renamed.headers["ETag"]
    assert audit_records(caplog) == [
        {
            "who": "contract",
            "action": "patch",
            "resourceType": "Group",
            "id": "old",
            "status": 200,
            "result": "success",
        }
    ]
    bad = client.patch("/Groups/old", {"op": "replace", "path": "displayName", "value": BAD_NAME})
    assert bad.status == 400 and dict(bad.body or {})["scimType"] == "invalidValue"


class FixedNames(MemoryBackend):
    """A directory where a group's name is its id (no ``update_group``)."""

    def __getattribute__(self, name: str) -> Any:
        if name == "update_group":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_a_group_name_that_is_its_id_changes_only_in_case_of_a_no_op(caplog):
    caplog.set_level(logging.INFO, "scim.audit")
    client = Client(ScimService(FixedNames()), BASE)
    client.ok("POST", "/Groups", {"displayName": "Fixed"})
    caplog.clear()
    refused = client.patch(
        "/Groups/Fixed", {"op": "replace", "path": "displayName", "value": "Other"}
    )
    assert refused.status == 400 and dict(refused.body or {})["scimType"] == "mutability"
    same = client.patch("/Groups/Fixed", {"op": "replace", "path": "displayName", "value": "FIXED"})
    assert same.status == 200 and dict(same.body or {})["displayName"] == "Fixed"
    assert [r["status"] for r in audit_records(caplog)] == [400]  # the refusal; no change


def test_group_membership_audit_and_if_match(client, caplog):
    caplog.set_level(logging.WARNING, "scim.audit")
    alice = client.ok("POST", "/Users", user_body("alice"))["id"]
    bob = client.ok("POST", "/Users", user_body("bob"))["id"]
    group = client.ok("POST", "/Groups", {"displayName": "crew", "members": [{"value": alice}]})
    stale = client.patch(
        "/Groups/crew",
        {"op": "add", "path": "members", "value": [{"value": bob}]},
        if_match='W/"0"',
    )
    assert stale.status == 412
    caplog.set_level(logging.INFO, "scim.audit")
    added = client.patch(
        "/Groups/crew",
        {"op": "add", "path": "members", "value": [{"value": bob}]},
        if_match=group["meta"]["version"],
    )
    assert added.status == 200
    unchanged = client.patch(
        "/Groups/crew",
        {"op": "replace", "path": "members", "value": [{"value": alice}, {"value": bob}]},
    )
    assert unchanged.status == 200
    swapped = client.patch(
        "/Groups/crew", {"op": "replace", "path": "members", "value": [{"value": bob}]}
    )
    assert [m["value"] for m in dict(added.body or {})["members"]] == sorted(
        [alice, bob], key=lambda i: {alice: "alice", bob: "bob"}[i]
    )
    assert [m["value"] for m in dict(swapped.body or {})["members"]] == [bob]
    records = audit_records(caplog)
    assert [(r["action"], r["status"]) for r in records] == [
        ("patch", 412),
        ("patch", 200),
        ("patch", 200),
    ]
    assert all(r["resourceType"] == "Group" and r["id"] == "crew" for r in records)
    assert (
        client.patch(
            "/Groups/nothing", {"op": "add", "path": "members", "value": [{"value": bob}]}
        ).status
        == 404
    )
    slim = client.patch(
        "/Groups/crew", {"op": "add", "path": "members", "value": [{"value": alice}]}
    )
    assert slim.status == 200
    shown = client.call(
        "PATCH",
        "/Groups/crew",
        patch_body({"op": "remove", "path": f'members[value eq "{alice}"]'}),
        query={"attributes": "displayName"},
    )
    assert set(dict(shown.body or {})) == {"schemas", "id", "displayName", "meta"}


def test_a_rename_then_a_refused_member_is_audited_as_partial(client, caplog):
    client.ok("POST", "/Groups", {"displayName": "half"})
    caplog.clear()
    answer = client.patch(
        "/Groups/half",
        {"op": "replace", "path": "displayName", "value": "halved"},
        {"op": "add", "path": "members", "value": [{"value": "nobody"}]},
    )
    only = client.patch(
        "/Groups/half", {"op": "add", "path": "members", "value": [{"value": "nobody"}]}
    )
    assert answer.status == 400 and only.status == 400
    first, second = audit_records(caplog)
    assert first == {
        "who": "contract",
        "action": "patch",
        "resourceType": "Group",
        "id": "half",
        "status": 400,
        "result": "failure",
        "scimType": "invalidValue",
        "partial": True,
    }
    assert "partial" not in second and second["status"] == 400


# ---------------------------------------------------------------------- big groups


class ListedBackend(MemoryBackend):
    """Hands a group's members over as a :class:`MemberList`, as the LDAP plugin does, and
    reads them even where the answer leaves them out (a backend may return more)."""

    def get_group(self, group_id: str, members: bool = True) -> dict[str, Any] | None:
        group = super().get_group(group_id)
        if group is not None:
            group["members"] = MemberList([(m["display"], m["value"]) for m in group["members"]])
        return group


@pytest.fixture
def big(monkeypatch) -> tuple[Client, list[str]]:
    import scim_core.service

    monkeypatch.setattr(scim_core.service, "STREAMED_MEMBERS", 2)
    client = Client(ScimService(ListedBackend()), BASE)
    ids = [client.ok("POST", "/Users", user_body(f"m{i}"))["id"] for i in range(3)]
    client.ok("POST", "/Groups", {"displayName": "big", "members": [{"value": i} for i in ids]})
    return client, ids


def streamed_json(answer: ScimResponse) -> dict[str, Any]:
    assert answer.status == 200 and answer.body is None and answer.chunks is not None
    assert answer.headers["Content-Type"] == SCIM_JSON and answer.headers["ETag"]
    return json.loads(b"".join(answer.chunks))


def whole(client: Client, monkeypatch, method: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The answer rendered the ordinary way (no group is big enough to stream)."""
    import scim_core.service

    with monkeypatch.context() as patched:
        patched.setattr(scim_core.service, "STREAMED_MEMBERS", 10**6)
        answer = (
            client.patch(*args, **kwargs)
            if method == "PATCH"
            else client.call(method, *args, **kwargs)
        )
    assert answer.status == 200 and answer.chunks is None
    return dict(answer.body or {})


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"attributes": "members.value"},
        {"excludedAttributes": "displayName"},
        {"attributes": "members.display"},
    ],
)
def test_a_big_group_is_streamed_as_the_same_json(big, monkeypatch, query):
    client, ids = big
    body = streamed_json(client.call("GET", "/Groups/big", query=query))
    assert body == whole(client, monkeypatch, "GET", "/Groups/big", query=query)
    assert [m.get("value") for m in body["members"]] == (
        [None] * 3 if "members.display" in str(query) else ids
    )
    assert ("displayName" in body) == (not query)
    op = {"op": "replace", "path": "displayName", "value": "Big"}
    patched = streamed_json(client.patch("/Groups/big", op, query=query))
    assert patched.get("displayName") == (None if query else "Big")
    assert patched == whole(client, monkeypatch, "PATCH", "/Groups/big", op, query=query)


def test_a_big_group_shown_without_its_members_is_one_body(big):
    client, _ids = big
    shown = client.call("GET", "/Groups/big", query={"attributes": "displayName"})
    assert shown.chunks is None and dict(shown.body or {})["displayName"] == "big"


def test_a_group_with_few_members_is_one_body(big, monkeypatch):
    import scim_core.service

    monkeypatch.setattr(scim_core.service, "STREAMED_MEMBERS", 3)
    client, ids = big
    answer = client.call("GET", "/Groups/big")
    assert answer.chunks is None and [m["value"] for m in dict(answer.body or {})["members"]] == ids


# ---------------------------------------------------------------------- audit


def record(action: str, kind: str, ident: str | None, status: int, **more: Any) -> dict[str, Any]:
    result = "success" if status < 400 else "failure"
    return {
        "who": "tester",
        "action": action,
        "resourceType": kind,
        "id": ident,
        "status": status,
        "result": result,
        **more,
    }


def test_each_change_made_is_audited_once(service, caplog):
    caplog.set_level(logging.INFO, "scim.audit")
    created = service.handle(request("POST", "/Users", user_body("audited")))
    assert created.status == 201
    uid = dict(created.body or {})["id"]
    assert (
        service.handle(request("PUT", f"/Users/{uid}", user_body("audited", title="A"))).status
        == 200
    )
    assert (
        service.handle(request("PUT", f"/Users/{uid}", user_body("audited", title="A"))).status
        == 200
    )
    op = patch_body({"op": "replace", "path": "title", "value": "B"})
    assert service.handle(request("PATCH", f"/Users/{uid}", op)).status == 200
    group = service.handle(request("POST", "/Groups", {"displayName": "audited"}))
    assert group.status == 201 and group.headers["Location"] == f"{BASE}/Groups/audited"
    assert service.handle(request("DELETE", f"/Users/{uid}")).status == 204
    assert audit_records(caplog) == [
        record("create", "User", uid, 201),
        record("replace", "User", uid, 200),
        record("patch", "User", uid, 200),
        record("create", "Group", "audited", 201),
        record("delete", "User", uid, 204),
    ]
    assert {r.levelno for r in caplog.records if r.name == "scim.audit"} == {logging.INFO}


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        (
            "POST",
            "/Users",
            {"userName": ""},
            record("create", "User", None, 400, scimType="invalidValue"),
        ),
        ("PUT", "/users/missing", user_body("x"), record("replace", "User", "missing", 404)),
        (
            "PATCH",
            "/Groups/missing/",
            patch_body({"op": "add", "path": "members", "value": []}),
            record("patch", "Group", "missing", 404),
        ),
        (
            "PATCH",
            "/Groups/a/b",
            patch_body({"op": "add", "path": "members", "value": [{"value": "x"}]}),
            record("patch", "Group", "a/b", 404),
        ),
        ("DELETE", "/Groups/a/b", None, record("delete", "Group", "a/b", 501)),
        ("DELETE", "/Users/missing", None, record("delete", "User", "missing", 404)),
        ("DELETE", "/Users/X", None, record("delete", "User", "X", 404)),
        ("PUT", "/Users/.search", {}, None),
        ("POST", "/Users/.search", [], None),
        ("POST", "/Users/someone", user_body("x"), None),
        ("PUT", "/Users", user_body("x"), None),
        ("POST", "/Schemas", {}, None),
        ("GET", "/Users/missing", None, None),
    ],
)
def test_each_refused_change_is_audited_as_a_failure(service, caplog, method, path, body, expected):
    answer = service.handle(request(method, path, body))
    assert answer.status >= 400
    failures = [r for r in caplog.records if r.name == "scim.audit"]
    assert [r.audit for r in failures] == ([expected] if expected else [])  # type: ignore[attr-defined]
    assert all(r.levelno == logging.WARNING for r in failures)


def test_a_change_that_fails_unexpectedly_is_audited_as_a_500(caplog):
    class Broken(MemoryBackend):
        def delete_user(self, user_id: str) -> bool:
            raise RuntimeError("the store is gone")

    with pytest.raises(RuntimeError):
        ScimService(Broken()).handle(request("DELETE", "/Users/u1"))
    assert audit_records(caplog) == [record("delete", "User", "u1", 500)]


def test_a_request_refused_before_the_service_is_audited_and_answered(service, caplog):
    error = Uniqueness("made up by the adapter")
    answer = service.refuse(request("POST", "/Users", user_body()), error)
    assert answer.status == 409 and answer.headers == {"Content-Type": SCIM_JSON}
    assert answer.body == error.to_body()
    assert audit_records(caplog) == [record("create", "User", None, 409, scimType="uniqueness")]


def test_a_group_id_with_a_slash_has_its_own_location(client):
    created = client.call("POST", "/Groups", {"displayName": "a/b"})
    assert created.status == 201
    assert created.headers["Location"] == f"{BASE}/Groups/a%2Fb"
    assert client.ok("GET", "/Groups/a/b")["meta"]["location"] == f"{BASE}/Groups/a%2Fb"


def test_reads_answer_200(client):
    created = client.ok("POST", "/Users", user_body("reader"))
    client.ok("POST", "/Groups", {"displayName": "readers"})
    for path in (f"/Users/{created['id']}", "/Groups/readers", "/Users", "/Groups"):
        assert client.call("GET", path).status == 200, path


def test_a_list_answer_is_scim_json(client):
    answer = client.call("GET", "/Users")
    assert answer.headers == {"Content-Type": SCIM_JSON}


class BareMembers(MemoryBackend):
    """A backend that takes a new group's members as bare ids only (what the contract gives)."""

    def create_group(self, group: dict[str, Any]) -> dict[str, Any]:
        assert all(set(member) == {"value"} for member in group["members"]), group["members"]
        return super().create_group(group)


def test_a_new_group_reaches_the_backend_with_bare_member_ids():
    client = Client(ScimService(BareMembers()), BASE)
    uid = client.ok("POST", "/Users", user_body("bare"))["id"]
    body = {"displayName": "bare", "members": [{"value": uid, "display": "bare", "type": "User"}]}
    created = client.call("POST", "/Groups", body)
    assert created.status == 201
    assert [m["value"] for m in dict(created.body or {})["members"]] == [uid]
    empty = client.call("POST", "/Groups", {"displayName": "empty"})
    assert empty.status == 201 and dict(empty.body or {})["members"] == []


class NoAccountState(MemoryBackend):
    """A directory that keeps no account state: its users have no ``active``."""

    def get_user(self, user_id: str, attributes: frozenset[str] | None = None) -> Any:
        user = super().get_user(user_id, attributes)
        if user is not None:
            user.pop("active", None)
        return user


def test_a_put_without_active_where_none_is_kept_leaves_the_user_active():
    client = Client(ScimService(NoAccountState()), BASE)
    created = client.ok("POST", "/Users", user_body("stateless"))
    replaced = client.ok("PUT", f"/Users/{created['id']}", user_body("stateless", title="T"))
    assert replaced["active"] is True and replaced["title"] == "T"


class AlwaysMore(MemoryBackend):
    """A backend that names a next position on every page, even one of no resources."""

    def find_users(self, query: Any) -> Any:
        page = super().find_users(query)
        return replace(page, next_position=page.next_position or "~")


def test_a_cursor_page_of_no_resources_has_no_next_cursor():
    config = ServiceConfig(cursor_secret=Secret("n" * 40))
    client = Client(ScimService(AlwaysMore(), config), BASE)
    client.ok("POST", "/Users", user_body("only"))
    empty = client.ok("GET", "/Users", query={"cursor": "", "count": "0"})
    assert (empty["totalResults"], empty["itemsPerPage"], empty["Resources"]) == (1, 0, [])
    assert "nextCursor" not in empty
    one = client.ok("GET", "/Users", query={"cursor": "", "count": "1"})
    assert one["itemsPerPage"] == 1 and one["nextCursor"]


def test_what_a_client_cannot_write_is_left_out_of_a_new_resource(client):
    forged = {"ID": "forged", "Meta": {"version": 'W/"99"'}, "groups": [{"value": "g"}]}
    made = client.ok("POST", "/Users", user_body("honest", **forged))
    assert made["id"] != "forged" and made["meta"]["version"] != 'W/"99"' and "groups" not in made
    replaced = client.ok("PUT", f"/Users/{made['id']}", user_body("honest", **forged))
    assert replaced["id"] == made["id"] and replaced["meta"]["version"] == made["meta"]["version"]
    group = client.ok("POST", "/Groups", {"displayName": "honest", **forged})
    assert group["id"] == "honest" and group["meta"]["version"] != 'W/"99"'


def test_a_manager_is_rendered_with_its_reference(client):
    boss = client.ok("POST", "/Users", user_body("the-boss"))["id"]
    worker = client.ok(
        "POST", "/Users", user_body("worker", **{ENTERPRISE_URN: {"manager": {"value": boss}}})
    )
    assert worker[ENTERPRISE_URN]["manager"] == {"value": boss, "$ref": f"{BASE}/Users/{boss}"}
    fetched = client.ok("GET", f"/Users/{worker['id']}")
    assert fetched[ENTERPRISE_URN] == worker[ENTERPRISE_URN]


# ---------------------------------------------------------------------- request bodies


def raw(method: str, path: str, body: bytes, content_type: str | None = SCIM_JSON) -> ScimRequest:
    return ScimRequest(method, path, body=body, content_type=content_type, base_url=BASE)


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize(
    ("body", "content_type", "status", "scim_type"),
    [
        (b"x" * 101, SCIM_JSON, 413, None),
        (b"{}", "text/plain", 415, None),
        (b"  ", SCIM_JSON, 400, "invalidSyntax"),
        (b"{", SCIM_JSON, 400, "invalidSyntax"),
        (b'{"userName": "\xff"}', SCIM_JSON, 400, "invalidSyntax"),
        (b'{"userName": "a\\u0000b"}', SCIM_JSON, 400, "invalidValue"),
        (b'{"a\\u0000": "b"}', SCIM_JSON, 400, "invalidValue"),
        (b'{"userName": "\\ud800"}', SCIM_JSON, 400, "invalidSyntax"),
        (b'["\\u0000"]', None, 400, "invalidValue"),
        (b"[" * 40 + b"]" * 40, "application/json; charset=utf-8", 400, "invalidSyntax"),
    ],
)
def test_a_body_no_directory_could_take_is_refused(body, content_type, status, scim_type):
    service = ScimService(MemoryBackend(), ServiceConfig(max_body_bytes=100))
    answer = service.handle(raw("POST", "/Users", body, content_type))
    assert answer.status == status, answer.body
    assert dict(answer.body or {}).get("scimType") == scim_type


def test_json_nested_to_the_limit_is_read_and_one_deeper_is_not(client):
    for depth, status in [(31, 201), (32, 400)]:
        body = user_body(f"deep{depth}", x=nested(depth))
        answer = client.service.handle(raw("POST", "/Users", json.dumps(body).encode()))
        assert answer.status == status, (depth, answer.body)
    deepest = json.dumps({"userName": "deeper", "x": "[" * 5000 + "]" * 5000}).replace('"[', "[")
    answer = client.service.handle(raw("POST", "/Users", deepest.replace(']"', "]").encode()))
    assert answer.status == 400 and dict(answer.body or {})["scimType"] == "invalidSyntax"


# ---------------------------------------------------------------------- routing


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/", 404),
        ("GET", "/Nothing", 404),
        ("POST", "/.search", 501),
        ("POST", "/.SEARCH", 404),
        ("POST", "/Bulk", 501),
        ("GET", "/Bulk", 501),
        ("POST", "/bulk", 501),
        ("POST", "/Bulk/x", 404),
        ("DELETE", "/Users", 405),
        ("PUT", "/Groups/g", 501),
        ("GET", "/Groups/.", 404),
        ("GET", "/users/.search", 405),
    ],
)
def test_routes(service, method, path, status):
    answer = service.handle(request(method, path))
    assert answer.status == status, answer.body
    if status == 405:
        assert answer.headers["Allow"] in ("GET, POST", "POST")


# ---------------------------------------------------------------------- dry runs


class PlanningBackend(MemoryBackend):
    """A backend that plans its writes (``dry_run``) inside one scope per request."""

    dry_run = True

    def __init__(self) -> None:
        super().__init__()
        self.scopes = 0

    def plan_scope(self) -> Any:
        backend = self

        class Scope:
            def __enter__(self) -> None:
                backend.scopes += 1

            def __exit__(self, *exc: object) -> None:
                return None

        return Scope()


def test_a_dry_run_marks_every_write_and_audits_it(caplog):
    caplog.set_level(logging.INFO, "scim.audit")
    backend = PlanningBackend()
    service = ScimService(backend)
    created = service.handle(request("POST", "/Users", user_body("planned")))
    assert created.status == 201 and created.headers[DRY_RUN_HEADER] == "true"
    refused = service.handle(request("POST", "/Users", {"userName": ""}))
    assert refused.status == 400 and refused.headers[DRY_RUN_HEADER] == "true"
    for read in (request("GET", "/Users"), request("POST", "/Users/.search", {})):
        answer = service.handle(read)
        assert answer.status == 200 and DRY_RUN_HEADER not in answer.headers
    assert backend.scopes == 4
    first, second = audit_records(caplog)
    assert first["dryRun"] is True and second["dryRun"] is True
    assert [r.getMessage() for r in caplog.records if r.name == "scim.audit"] == [
        f"create User {first['id']} 201",
        "create User - 400",
    ]
    plain = ScimService(MemoryBackend()).handle(request("POST", "/Users", user_body("real")))
    assert DRY_RUN_HEADER not in plain.headers


class PlanningWithoutScope(MemoryBackend):
    """A backend that plans its writes and needs no scope per request."""

    dry_run = True


def test_a_dry_run_without_a_request_scope_marks_writes_only():
    service = ScimService(PlanningWithoutScope())
    created = service.handle(request("POST", "/Users", user_body("unscoped")))
    assert created.status == 201 and created.headers[DRY_RUN_HEADER] == "true"
    searched = service.handle(request("POST", "/Groups/.search", {}))
    assert searched.status == 200 and DRY_RUN_HEADER not in searched.headers
    # Not a search: a write to a path that ends alike is answered as one and marked.
    refused = service.handle(request("POST", "/Users/x.search", {}))
    assert refused.status == 405 and refused.headers[DRY_RUN_HEADER] == "true"
