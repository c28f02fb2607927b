"""Cursor walks (RFC 9865) over HTTP on the session's real slapd: every entry once, the
cursor's refusals, and writes between pages."""

from __future__ import annotations

import hashlib
import time
import uuid

import pytest
from scim_http import Http

from scim_core.config import ServiceConfig
from scim_core.cursor import CursorBinding, CursorCodec
from scim_core.secret import Secret
from scim_flask import AppSettings, create_app
from scim_flask.auth import parse_tokens

SECRET = Secret("cursor-test-secret-" + "k" * 32)
MAX = 50
SEEDED = 300


def _digest(token):
    return hashlib.sha256(token.encode()).hexdigest()


@pytest.fixture(scope="module")
def cursor_app(ldap_backend):
    settings = AppSettings(
        service=ServiceConfig(cursor_secret=SECRET, cursor_timeout=600, max_results=MAX),
        tokens=parse_tokens(f"idp={_digest('token-one')},other={_digest('token-two')}"),
        backend="ldap",
        log_level="INFO",
    )
    return create_app(settings=settings, backend=ldap_backend)


@pytest.fixture
def client(cursor_app):
    return Http(cursor_app.test_client(), "token-one")


@pytest.fixture(scope="module")
def seeded(slapd, ldap_backend):
    """A few hundred users added straight into the directory, their uids."""
    from ldap3 import Connection, Server

    admin = Connection(Server(slapd.url), slapd.admin_dn, slapd.admin_password, auto_bind=True)
    run = uuid.uuid4().hex[:6]
    uids = [f"walk-{run}-{index:04d}" for index in range(SEEDED)]
    for uid in uids:
        assert admin.add(
            f"uid={uid},{slapd.users_base}",
            ["inetOrgPerson"],
            {"uid": uid, "cn": uid, "sn": "Walk", "givenName": "W", "mail": f"{uid}@example.org"},
        ), admin.result
    admin.unbind()
    return uids


def walk(client, path="/Users", count=17, query="", between=None):
    """Every page of a walk: (the resources in order, the pages' bodies)."""
    seen, pages, cursor = [], [], ""
    while True:
        response = client("GET", f"{path}?count={count}&cursor={cursor}{query}")
        assert response.status_code == 200, response.json
        body = response.json
        pages.append(body)
        seen += body["Resources"]
        cursor = body.get("nextCursor")
        if cursor is None:
            return seen, pages
        if between is not None:
            between(len(pages))


def all_ids(ldap_backend, find="find_users"):
    from scim_core.backend import Query

    found = getattr(ldap_backend, find)(Query(count=100000))
    return {r["id"] for r in found.resources}


def test_a_walk_lists_every_user_once(client, seeded, ldap_backend):
    before = all_ids(ldap_backend)
    seen, pages = walk(client)
    ids = [r["id"] for r in seen]
    assert len(ids) == len(set(ids)), "a user was listed twice"
    assert set(ids) == before == all_ids(ldap_backend)
    assert len(ids) >= SEEDED and len(pages) == -(-len(ids) // 17)
    for body in pages:
        assert "startIndex" not in body
        assert body["totalResults"] == len(before)
        assert body["itemsPerPage"] == len(body["Resources"])
    assert all(len(p["Resources"]) == 17 for p in pages[:-1])
    assert "nextCursor" not in pages[-1]
    assert ids == sorted(ids), "the walk is in id order"


def test_search_posts_walk_as_gets_do(client, seeded, ldap_backend):
    seen, cursor = [], ""
    while cursor is not None:
        body = {"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"]}
        body.update({"count": 40, "cursor": cursor, "attributes": ["userName"]})
        response = client("POST", "/Users/.search", json=body)
        assert response.status_code == 200, response.json
        seen += [r["userName"] for r in response.json["Resources"]]
        cursor = response.json.get("nextCursor")
    from scim_core.backend import Query

    everyone = ldap_backend.find_users(Query(count=10**5, attributes=frozenset({"username"})))
    assert len(seen) == len(set(seen)) and set(seen) == {r["userName"] for r in everyone.resources}


def second_cursor(client, query="", count=10):
    response = client("GET", f"/Users?count={count}&cursor={query}")
    assert response.status_code == 200
    return response.json["nextCursor"]


def refused(response, scim_type):
    assert response.status_code == 400, response.json
    assert response.json["scimType"] == scim_type
    assert response.json["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    return response.json


@pytest.mark.usefixtures("seeded")
def test_a_tampered_cursor_is_invalid(client):
    cursor = second_cursor(client)
    payload, _, tag = cursor.partition(".")
    flipped = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1]
    for bad in (f"{flipped}.{tag}", cursor + "x", "not-a-cursor", "%00", cursor[:-3]):
        refused(client("GET", "/Users", query_string={"count": 10, "cursor": bad}), "invalidCursor")


@pytest.mark.usefixtures("seeded")
def test_a_cursor_belongs_to_its_filter_endpoint_and_client(client, cursor_app):
    cursor = second_cursor(client)
    filtered = {"count": 10, "cursor": cursor, "filter": 'userName eq "alice"'}
    body = refused(client("GET", "/Users", query_string=filtered), "invalidCursor")
    assert cursor not in body["detail"]
    refused(client("GET", "/Groups", query_string={"count": 10, "cursor": cursor}), "invalidCursor")
    other = Http(cursor_app.test_client(), "token-two")
    refused(other("GET", "/Users", query_string={"count": 10, "cursor": cursor}), "invalidCursor")
    # The same cursor, unchanged query, first client: still good.
    assert client("GET", "/Users", query_string={"count": 10, "cursor": cursor}).status_code == 200


@pytest.mark.usefixtures("seeded")
def test_an_expired_cursor_and_a_changed_count(client):
    cursor = second_cursor(client)
    refused(client("GET", "/Users", query_string={"count": 11, "cursor": cursor}), "invalidCount")
    refused(client("GET", "/Users", query_string={"count": "ten", "cursor": ""}), "invalidCount")
    # A cursor this service signed two hours ago, for this very walk.
    last_week = CursorCodec(SECRET, 600, clock=lambda: time.time() - 7200)
    old = last_week.seal(str(uuid.UUID(int=0)), 10, CursorBinding("User", "", "idp"))
    body = refused(
        client("GET", "/Users", query_string={"count": 10, "cursor": old}), "expiredCursor"
    )
    assert "600" in body["detail"]


@pytest.mark.usefixtures("seeded")
def test_count_zero_negative_and_over_the_maximum(client):
    for count in (0, -5):
        body = client("GET", "/Users", query_string={"count": count, "cursor": ""}).json
        assert body["Resources"] == [] and body["itemsPerPage"] == 0
        assert body["totalResults"] >= SEEDED and "nextCursor" not in body
    body = client("GET", "/Users", query_string={"count": MAX * 10, "cursor": ""}).json
    assert len(body["Resources"]) == MAX and "nextCursor" in body
    more = client("GET", "/Users", query_string={"count": MAX * 10, "cursor": body["nextCursor"]})
    assert more.status_code == 200 and len(more.json["Resources"]) == MAX


@pytest.mark.usefixtures("seeded")
def test_a_bare_cursor_parameter_starts_a_walk(client):
    body = client("GET", "/Users?cursor&count=5").json
    assert len(body["Resources"]) == 5 and "nextCursor" in body and "startIndex" not in body


def test_start_index_and_cursor_together_are_refused(client):
    body = refused(
        client("GET", "/Users", query_string={"startIndex": 1, "cursor": ""}), "invalidValue"
    )
    assert "startIndex" in body["detail"]


def test_service_provider_config_offers_cursors(client):
    pagination = client("GET", "/ServiceProviderConfig").json["pagination"]
    assert pagination == {
        "cursor": True,
        "index": True,
        "defaultPaginationMethod": "index",
        "defaultPageSize": MAX,
        "maxPageSize": MAX,
        "cursorTimeout": 600,
    }


def test_writes_between_pages_keep_every_lasting_user_once(client, seeded, ldap_backend, slapd):
    from scim_core.backend import Query

    everyone = ldap_backend.find_users(Query(count=100000, attributes=frozenset({"username"})))
    by_name = {r["userName"]: r["id"] for r in everyone.resources}
    victims = [by_name[uid] for uid in seeded[::7]]  # deleted during the walk
    # Their userName changes mid-walk (to sort first, before the cursor's place by name).
    renamed = [by_name[uid] for uid in seeded[3::11] if by_name[uid] not in victims]
    created = []
    listed_before_delete = set()

    def between(page_number):
        if page_number == 2:
            for ident in victims:
                assert client("DELETE", f"/Users/{ident}").status_code == 204
            for ident in renamed:
                operation = {"op": "replace", "path": "userName", "value": "aaa-" + ident[:8]}
                response = client(
                    "PATCH",
                    f"/Users/{ident}",
                    json={
                        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                        "Operations": [operation],
                    },
                )
                assert response.status_code == 200, response.json
        if page_number in (3, 6):
            name = f"new-{uuid.uuid4().hex[:8]}"
            body = {
                "userName": name,
                "name": {"givenName": "N", "familyName": "W"},
                "emails": [{"value": f"{name}@example.org"}],
            }
            response = client("POST", "/Users", json=body)
            assert response.status_code == 201
            created.append(response.json["id"])

    before = all_ids(ldap_backend)
    seen, pages = walk(client, count=13, between=between)
    ids = [r["id"] for r in seen]
    first_two = {r["id"] for p in pages[:2] for r in p["Resources"]}
    listed_before_delete |= first_two
    after = all_ids(ldap_backend)
    lasting = before & after
    assert len(ids) == len(set(ids)), "a user was listed twice"
    assert lasting <= set(ids), "a user that existed throughout was not listed"
    assert set(ids) <= before | after
    gone_unseen = set(victims) - listed_before_delete
    assert gone_unseen and not gone_unseen & set(ids), "a deleted user was listed after its delete"
    assert set(renamed) <= set(ids)


def test_a_walk_lists_every_group_once(client, seeded, ldap_backend):
    run = uuid.uuid4().hex[:6]
    names = [f"walkgroup-{run}-{index:02d}" for index in range(30)]
    for name in names:
        body = {"displayName": name, "members": [{"value": ldap_backend_first_user(client)}]}
        assert client("POST", "/Groups", json=body).status_code == 201
    before = all_ids(ldap_backend, "find_groups")
    seen, pages = walk(client, "/Groups", count=7)
    ids = [g["id"] for g in seen]
    assert len(ids) == len(set(ids)) and set(ids) == before
    assert set(names) <= set(ids)
    assert all(g.get("members") for g in seen if g["id"] in names)
    assert "nextCursor" not in pages[-1] and all("nextCursor" in p for p in pages[:-1])


def test_a_walk_over_groups_named_with_spaces_and_signs_lists_each_once(client, ldap_backend):
    # The directory orders cn with case and insignificant spaces aside (RFC 4518): " lead"
    # among the l's, not before every letter. A page whose last group sorts differently here
    # than there ended the walk early or dropped a group.
    run = uuid.uuid4().hex[:6]
    names = [
        f" lead{run}",
        f"trail{run} ",
        f"Two  spaces{run}",
        f"#hash{run}",
        f"back\\slash{run}",
        f"Zed{run}",
        f"a+b{run}",
        f"Sales, EMEA{run}",
    ]
    created = set()
    for name in names:
        response = client("POST", "/Groups", json={"displayName": name})
        assert response.status_code == 201, response.json
        created.add(response.json["id"])
    before = all_ids(ldap_backend, "find_groups")
    for count in (1, 2, 3):
        seen, _ = walk(client, "/Groups", count=count, query="&excludedAttributes=members")
        ids = [g["id"] for g in seen]
        assert len(ids) == len(set(ids)), f"a group listed twice with count={count}"
        assert set(ids) == before and created <= set(ids)


def ldap_backend_first_user(client):
    return client("GET", "/Users?count=1").json["Resources"][0]["id"]


@pytest.fixture(scope="module")
def dirsrv_backend(dirsrv):
    from scim_http import settings_for

    from scim_core.backends.ldap import LdapBackend

    backend = LdapBackend(settings_for(dirsrv))
    run = uuid.uuid4().hex[:6]
    for index in range(150):
        name = f"walk-{run}-{index:03d}"
        user = {
            "userName": name,
            "name": {"givenName": "W", "familyName": "D"},
            "emails": [{"value": f"{name}@example.org", "primary": True}],
            "active": True,
        }
        backend.create_user(user, None)
    yield backend
    backend.close()


def test_a_walk_on_389ds_follows_the_servers_order(dirsrv_backend):
    from scim_core.backend import Query

    everyone = all_ids(dirsrv_backend)
    ids, after = [], None
    while True:
        page = dirsrv_backend.find_users(Query(count=7, keyset=True, after=after))
        ids += [r["id"] for r in page.resources]
        assert page.total_results == len(everyone)
        if page.next_position is None:
            break
        after = page.next_position
    assert len(ids) == len(set(ids)) and set(ids) == everyone
    # The server's sort and the comparison made here agree, page after page.
    assert ids == sorted(ids, key=str.lower)


def test_another_instance_with_the_secret_continues_the_walk(client, seeded, slapd):
    """Nothing is kept between pages: a second app (its own backend and connections, as
    another worker or instance) takes the walk over, page by page, in turn with the first."""
    from scim_http import settings_for

    from scim_core.backends.ldap import LdapBackend

    backend = LdapBackend(settings_for(slapd))
    settings = AppSettings(
        service=ServiceConfig(cursor_secret=SECRET, cursor_timeout=600, max_results=MAX),
        tokens=parse_tokens(f"idp={_digest('token-one')}"),
        backend="ldap",
        log_level="INFO",
    )
    other = Http(create_app(settings=settings, backend=backend).test_client(), "token-one")
    try:
        alone, _ = walk(client, count=23)
        shared, cursor, turn = [], "", 0
        while cursor is not None:
            serving = (client, other)[turn % 2]
            body = serving("GET", "/Users", query_string={"count": 23, "cursor": cursor}).json
            shared += body["Resources"]
            cursor, turn = body.get("nextCursor"), turn + 1
        assert [r["id"] for r in shared] == [r["id"] for r in alone]
    finally:
        backend.close()


def test_a_walk_on_389ds_lists_every_group_once(dirsrv_backend):
    from scim_core.backend import Query

    run = uuid.uuid4().hex[:6]
    for index in range(12):
        dirsrv_backend.create_group({"displayName": f"walkgroup-{run}-{index:02d}", "members": []})
    everyone = all_ids(dirsrv_backend, "find_groups")
    ids, after = [], None
    while True:
        page = dirsrv_backend.find_groups(Query(count=5, keyset=True, after=after))
        ids += [g["id"] for g in page.resources]
        if page.next_position is None:
            break
        after = page.next_position
    assert len(ids) == len(set(ids)) and set(ids) == everyone and len(ids) >= 12


def test_filtered_walks(client, seeded, ldap_backend):
    from scim_core.backend import Query
    from scim_core.filter import parse_filter

    name = client("GET", "/Users?count=1&startIndex=3").json["Resources"][0]["userName"]
    one = {"filter": f'userName eq "{name}"', "cursor": "", "count": 5}
    body = client("GET", "/Users", query_string=one).json
    assert [r["userName"] for r in body["Resources"]] == [name]
    assert body["totalResults"] == 1 and "nextCursor" not in body
    active, pages = walk(client, count=40, query="&filter=active%20eq%20true")
    ids = [r["id"] for r in active]
    expected = ldap_backend.find_users(Query(filter=parse_filter("active eq true"), count=10**5))
    assert len(ids) == len(set(ids)) and set(ids) == {r["id"] for r in expected.resources}
    assert all(r["active"] is True for r in active) and len(pages) > 1
