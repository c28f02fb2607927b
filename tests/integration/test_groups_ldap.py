"""Groups over HTTP on a real slapd: DN escaping, placeholder, a 10,000-member group."""

import json
import subprocess
import uuid

import pytest
from ldap3 import BASE

PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


def patch(http, group_id, *operations, **kwargs):
    body = {"schemas": [PATCH_OP], "Operations": list(operations)}
    return http("PATCH", "/Groups/" + group_id, json=body, **kwargs)


def new_user(http):
    name = "gm" + uuid.uuid4().hex[:10]
    body = {
        "userName": name,
        "name": {"givenName": "G", "familyName": "M"},
        "emails": [{"value": f"{name}@example.com"}],
    }
    response = http("POST", "/Users", json=body)
    assert response.status_code == 201
    return response.get_json(force=True)


def raw_members(admin, slapd, name):
    from scim_core.backends.ldap.escape import dn_value

    admin.search(
        f"cn={dn_value(name)},{slapd.groups_base}", "(objectClass=*)", BASE, attributes=["member"]
    )
    return [m.lower() for m in admin.response[0]["attributes"]["member"]]


@pytest.mark.parametrize(
    "special",
    [
        "Sales, EMEA",
        "a+b",
        'quote"d',
        "back\\slash",
        "<angle>",
        "semi;colon",
        "eq=ual",
        "#hash",
        " lead",
        "trail ",
        "Ünïcödé Grüppe",
    ],
)
def test_group_names_with_dn_specials(http, special):
    name = (
        special + uuid.uuid4().hex[:4]
        if not special.endswith(" ")
        else (uuid.uuid4().hex[:4] + special)
    )
    created = http("POST", "/Groups", json={"displayName": name})
    assert created.status_code == 201, created.get_json(force=True)
    assert created.get_json(force=True)["id"] == name
    from urllib.parse import quote

    fetched = http("GET", "/Groups/" + quote(name, safe=""))
    assert fetched.status_code == 200
    assert fetched.get_json(force=True)["displayName"] == name
    found = http("GET", "/Groups", query_string={"filter": f"displayName eq {json.dumps(name)}"})
    assert found.get_json(force=True)["totalResults"] == 1


def test_empty_group_holds_the_placeholder_unseen(http, admin, slapd):
    name = "empty" + uuid.uuid4().hex[:6]
    created = http(
        "POST",
        "/Groups",
        json={
            "schemas": [
                "urn:ietf:params:scim:schemas:core:2.0:Group",
                "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group",
            ],
            "displayName": name,
        },
    ).get_json(force=True)
    assert created.get("members", []) == []
    assert raw_members(admin, slapd, name) == [slapd.placeholder_dn.lower()]
    user = new_user(http)
    patch(http, name, {"op": "add", "path": "members", "value": [{"value": user["id"]}]})
    assert slapd.placeholder_dn.lower() not in raw_members(admin, slapd, name)
    patch(http, name, {"op": "remove", "path": f'members[value eq "{user["id"]}"]'})
    assert raw_members(admin, slapd, name) == [slapd.placeholder_dn.lower()]
    assert http("GET", "/Groups/" + name).get_json(force=True).get("members", []) == []


def test_put_and_delete_leave_the_directory_untouched(http, admin, slapd):
    name = "keep" + uuid.uuid4().hex[:6]
    http("POST", "/Groups", json={"displayName": name})
    before = raw_members(admin, slapd, name)
    for method in ("PUT", "DELETE"):
        response = http(
            method, "/Groups/" + name, json={"displayName": "other"} if method == "PUT" else None
        )
        assert response.status_code == 501
        body = response.get_json(force=True)
        assert body["status"] == "501" and "directory" in body["detail"]
    assert raw_members(admin, slapd, name) == before


@pytest.fixture(scope="module")
def big_group(slapd, tmp_path_factory):
    """10,000 users and one group holding them all, loaded with ldapadd as the admin."""
    size = 10_000
    name = "big" + uuid.uuid4().hex[:6]
    prefix = "bulk" + uuid.uuid4().hex[:4]
    ldif = tmp_path_factory.mktemp("bulk") / "bulk.ldif"
    with ldif.open("w") as out:
        for index in range(size):
            uid = f"{prefix}{index:05d}"
            out.write(
                f"dn: uid={uid},{slapd.users_base}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
                f"cn: Bulk {index}\nsn: Bulk\ngivenName: B\nmail: {uid}@example.com\n\n"
            )
        out.write(f"dn: cn={name},{slapd.groups_base}\nobjectClass: groupOfNames\ncn: {name}\n")
        for index in range(size):
            out.write(f"member: uid={prefix}{index:05d},{slapd.users_base}\n")
        out.write("\n")
    subprocess.run(
        [
            "ldapadd",
            "-x",
            "-H",
            slapd.url,
            "-D",
            slapd.admin_dn,
            "-w",
            slapd.admin_password,
            "-f",
            str(ldif),
        ],
        check=True,
        capture_output=True,
    )
    return name, size


def test_ten_thousand_members(http, big_group):
    name, size = big_group
    group = http("GET", "/Groups/" + name).get_json(force=True)
    assert len(group["members"]) == size
    assert len({m["value"] for m in group["members"]}) == size
    user = new_user(http)
    added = patch(
        http,
        name,
        {"op": "add", "path": "members", "value": [{"value": user["id"]}]},
        query_string={"excludedAttributes": "members"},
    )
    assert added.status_code == 200 and "members" not in added.get_json(force=True)
    again = http("GET", "/Groups/" + name).get_json(force=True)
    assert len(again["members"]) == size + 1
    removed = patch(
        http, name, {"op": "remove", "path": "members", "value": [{"value": user["id"]}]}
    )
    assert len(removed.get_json(force=True)["members"]) == size
    listed = http("GET", "/Groups", query_string={"filter": f'displayName eq "{name}"'})
    assert len(listed.get_json(force=True)["Resources"][0]["members"]) == size


def test_a_group_past_the_member_limit_is_refused_and_readable_without_members(
    http, big_group, slapd
):
    """SCIM_LDAP_MAX_MEMBERS: a larger group is a clear 400 tooMany that names the way out,
    never a worker holding every member; the same limit reads it in full."""
    from scim_http import INTEGRATION_TOKEN, Http, make_app, settings_for

    from scim_core.backends.ldap import LdapBackend

    name, size = big_group
    for limit, status in ((size - 1, 400), (size, 200)):
        backend = LdapBackend(settings_for(slapd, max_members=limit))
        try:
            small = Http(make_app(backend, INTEGRATION_TOKEN).test_client(), INTEGRATION_TOKEN)
            response = small("GET", "/Groups/" + name)
            assert response.status_code == status, (limit, response.get_data(as_text=True))
            body = response.get_json(force=True)
            if status == 400:
                assert body["scimType"] == "tooMany"
                assert "excludedAttributes=members" in body["detail"]
                listed = small(
                    "GET", "/Groups", query_string={"filter": f'displayName eq "{name}"'}
                )
                assert listed.status_code == 400
                without = small(
                    "GET", "/Groups/" + name, query_string={"excludedAttributes": "members"}
                )
                assert without.status_code == 200 and "members" not in without.get_json()
            else:
                assert len(body["members"]) == size
        finally:
            backend.close()


def test_member_display_is_returned_only_when_asked_for(http):
    """members.display is derived (the member's userName): RFC 7643 returned "request"."""
    name = "disp" + uuid.uuid4().hex[:8]
    user = new_user(http)
    created = http(
        "POST", "/Groups", json={"displayName": name, "members": [{"value": user["id"]}]}
    )
    assert created.status_code == 201
    assert "display" not in created.get_json(force=True)["members"][0]
    plain = http("GET", "/Groups/" + name).get_json(force=True)
    assert [sorted(m) for m in plain["members"]] == [["$ref", "type", "value"]]
    whole = http("GET", "/Groups/" + name, query_string={"attributes": "members"})
    assert "display" not in whole.get_json(force=True)["members"][0]
    asked = http("GET", "/Groups/" + name, query_string={"attributes": "members.display"})
    assert asked.get_json(force=True)["members"] == [{"display": user["userName"]}]
    both = http(
        "GET",
        "/Groups",
        query_string={
            "filter": f'displayName eq "{name}"',
            "attributes": "members.value,members.display",
        },
    )
    assert both.get_json(force=True)["Resources"][0]["members"] == [
        {"value": user["id"], "display": user["userName"]}
    ]
    schema = http("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group").get_json(
        force=True
    )
    members = next(a for a in schema["attributes"] if a["name"] == "members")
    display = next(s for s in members["subAttributes"] if s["name"] == "display")
    assert display["returned"] == "request"


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"attributes": "members.value,members.display"},
        {"attributes": "members"},
        {"attributes": "displayName,members.display"},
        {"excludedAttributes": "members.type"},
        {"excludedAttributes": "meta"},
    ],
)
def test_a_big_group_is_streamed_as_the_same_bytes(http, big_group, monkeypatch, query):
    """Past STREAMED_MEMBERS a group's GET is sent in chunks (no Content-Length): the body is
    byte for byte what the whole-body path gives, with the same status, ETag and headers,
    whatever the projection."""
    from scim_core import service

    name, size = big_group
    streamed = http("GET", "/Groups/" + name, query_string=query)
    assert streamed.status_code == 200 and "Content-Length" not in streamed.headers
    monkeypatch.setattr(service, "STREAMED_MEMBERS", size + 1)
    whole = http("GET", "/Groups/" + name, query_string=query)
    assert whole.status_code == 200 and "Content-Length" in whole.headers
    assert streamed.get_data() == whole.get_data()
    assert streamed.headers["ETag"] == whole.headers["ETag"]
    assert streamed.headers["Content-Type"] == whole.headers["Content-Type"]
    body = json.loads(streamed.get_data())
    assert len(body["members"]) == size
    if "attributes" not in query:
        assert body["meta"]["version"] == streamed.headers["ETag"]


def test_a_big_groups_patch_answer_is_streamed_as_the_same_bytes(http, big_group, monkeypatch):
    """A membership PATCH of a big group answers the group in chunks too, the same bytes."""
    from scim_core import service

    name, size = big_group
    user = new_user(http)
    add = {"op": "add", "path": "members", "value": [{"value": user["id"]}]}
    streamed = patch(http, name, add)
    assert streamed.status_code == 200 and "Content-Length" not in streamed.headers
    monkeypatch.setattr(service, "STREAMED_MEMBERS", size + 10)
    whole = patch(http, name, add)  # the same again: no change
    assert whole.status_code == 200 and "Content-Length" in whole.headers
    assert streamed.get_data() == whole.get_data()
    assert streamed.headers["ETag"] == whole.headers["ETag"]
    assert len(json.loads(whole.get_data())["members"]) == size + 1
    remove = {"op": "remove", "path": f'members[value eq "{user["id"]}"]'}
    assert patch(http, name, remove).status_code == 200


def test_a_big_group_streams_through_the_plain_wsgi_app(big_group, slapd):
    """The plain-WSGI example sends the chunks as they come; the JSON is whole."""
    import hashlib
    import sys
    from pathlib import Path

    from scim_http import settings_for
    from werkzeug.test import Client

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    try:
        from plain_wsgi import ScimWsgiApp
    finally:
        sys.path.pop(0)
    from scim_core import ScimService
    from scim_core.auth import parse_tokens
    from scim_core.backends.ldap import LdapBackend

    name, size = big_group
    backend = LdapBackend(settings_for(slapd))
    try:
        token = "plain-wsgi-token"
        digest = hashlib.sha256(token.encode()).hexdigest()
        app = ScimWsgiApp(ScimService(backend), parse_tokens(digest))
        response = Client(app).get(
            "/scim/v2/Groups/" + name,
            headers={"Authorization": f"Bearer {token}", "Host": "localhost"},
        )
        assert response.status_code == 200
        assert "Content-Length" not in response.headers
        assert len(json.loads(response.get_data())["members"]) == size
    finally:
        backend.close()


def test_a_membership_change_is_written_first_and_checked_only_when_refused(
    http, admin, slapd, monkeypatch
):
    """An add to a group without the placeholder, and a remove, are one modify each with no
    read of the group's members first (on a big group that read cost slapd three times a
    plain read); an add of a member already in is refused by the directory, then checked,
    and answered 200 with nothing changed."""
    from scim_core.backends.ldap import operations
    from scim_core.backends.ldap.controls import VALUES_RETURN_FILTER_OID

    first, second = new_user(http), new_user(http)
    name = "wf" + uuid.uuid4().hex[:10]
    created = http(
        "POST", "/Groups", json={"displayName": name, "members": [{"value": first["id"]}]}
    )
    assert created.status_code == 201
    group_dn = f"cn={name},{slapd.groups_base}".lower()
    sent: list[tuple[str, bool]] = []  # (operation, whether it read member values) on the group
    search, modify = operations.search, operations.modify

    def counted_search(connection, request):
        if request.base.lower() == group_dn:
            oids = {oid for oid, _, _ in request.controls or ()}
            sent.append(("search", VALUES_RETURN_FILTER_OID in oids))
        return search(connection, request)

    def counted_modify(connection, dn, *args, **kwargs):
        if dn.lower() == group_dn:
            sent.append(("modify", False))
        return modify(connection, dn, *args, **kwargs)

    monkeypatch.setattr(operations, "search", counted_search)
    monkeypatch.setattr(operations, "modify", counted_modify)
    add = {"op": "add", "path": "members", "value": [{"value": second["id"]}]}
    remove = {"op": "remove", "path": f'members[value eq "{second["id"]}"]'}
    plain = {"excludedAttributes": "members"}

    def writes_of(operation):
        sent.clear()
        assert patch(http, name, operation, query_string=plain).status_code == 200
        return [entry for entry in sent if entry[0] == "modify" or entry[1]]

    # The placeholder check is a filter on the group, not a read of its members.
    assert writes_of(add) == [("modify", False)]
    assert writes_of(add) == [("modify", False), ("search", True)]  # refused, then checked
    assert writes_of(remove) == [("modify", False)]
    assert raw_members(admin, slapd, name) == [
        f"uid={first['userName']},{slapd.users_base}".lower()
    ]
