"""Hostile input over HTTP on the real slapd: every answer a SCIM body with a sane status.

Each request here is built to break something: the size limit, the JSON parser, the text
encoding, the content type, the paging parameters, DN and filter escaping. Every response must
be an RFC 7644 §3.12 body (or a success), never a 5xx, never a traceback; and a victim user
and a victim group, created first, must come out of every test untouched (same version, same
members) and never be returned by a request that does not name them exactly.
"""

from __future__ import annotations

import http.client
import json
import threading
import uuid
from urllib.parse import quote

import pytest
from ldap3 import BASE, LEVEL, Connection, Server
from scim_http import INTEGRATION_TOKEN as TOKEN
from werkzeug.serving import make_server

from scim_core.backends.ldap.escape import dn_value
from scim_core.normalize import normalize_username

SCIM_JSON = "application/scim+json"
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"
LIMIT = 1024 * 1024
VICTIM = "hostile-victim"
VICTIM_GROUP = "hostile-victim-group"
VICTIM_PASSWORD = "Victim-Canary-Pass-1"
DN_SPECIALS = [",", "+", '"', "\\", "<", ">", ";", "="]


def sane(response, *allowed):
    """Assert a SCIM answer: a documented status, the SCIM media type, no traceback."""
    status = response.status_code
    text = response.get_data(as_text=True)
    assert status < 500 or status in allowed, (status, text[:300])
    assert "Traceback" not in text and 'File "' not in text
    if allowed:
        assert status in allowed, (status, text[:300])
    if status == 204:
        return None
    assert response.headers["Content-Type"] == SCIM_JSON
    body = json.loads(text)
    if status >= 400:
        assert body["schemas"] == [ERROR_URN]
        assert body["status"] == str(status)
        assert isinstance(body["detail"], str)
    return body


def user_body(name, email=None, **extra):
    return {
        "userName": name,
        "name": {"givenName": "Hostile", "familyName": "Input"},
        "emails": [{"value": email or f"h{uuid.uuid4().hex[:8]}@example.com"}],
        **extra,
    }


@pytest.fixture(scope="module")
def directory(slapd):
    connection = Connection(Server(slapd.url), slapd.admin_dn, slapd.admin_password, auto_bind=True)
    yield connection
    connection.unbind()


@pytest.fixture(scope="module")
def victim(app, directory):
    """A user with a password, in a group: the entries hostile requests must not reach."""
    client = app.test_client()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    created = client.post(
        "/scim/v2/Users", headers=headers, json=user_body(VICTIM, password=VICTIM_PASSWORD)
    )
    assert created.status_code in (201, 409)
    found = client.get(
        "/scim/v2/Users", headers=headers, query_string={"filter": f'userName eq "{VICTIM}"'}
    )
    user = found.get_json(force=True)["Resources"][0]
    group = client.post(
        "/scim/v2/Groups",
        headers=headers,
        json={"displayName": VICTIM_GROUP, "members": [{"value": user["id"]}]},
    )
    assert group.status_code in (201, 409)
    return user


def snapshot(directory, slapd):
    """Every attribute (operational ones too) of the victim entries, as the directory has them."""
    entries = {}
    for dn in (
        f"uid={VICTIM},{slapd.users_base}",
        f"cn={VICTIM_GROUP},{slapd.groups_base}",
    ):
        directory.search(dn, "(objectClass=*)", BASE, attributes=["*", "+"])
        assert directory.response, dn
        entries[dn] = {
            k: sorted(map(str, v)) for k, v in directory.response[0]["raw_attributes"].items()
        }
    return entries


@pytest.fixture
def untouched(victim, directory, slapd):
    """Fail the test if it changed the victim user or group in any way."""
    before = snapshot(directory, slapd)
    yield victim
    assert snapshot(directory, slapd) == before


def never_victim(body, victim):
    """A list or resource body that holds neither the victim user nor the victim group."""
    resources = body.get("Resources", [body])
    ids = {resource.get("id") for resource in resources}
    assert victim["id"] not in ids and VICTIM_GROUP not in ids
    for resource in resources:
        assert victim["id"] not in {m.get("value") for m in resource.get("members", ())}


# --------------------------------------------------------------------------- sizes


def _writes(victim):
    return [
        ("POST", "/Users"),
        ("PUT", f"/Users/{victim['id']}"),
        ("PATCH", f"/Users/{victim['id']}"),
        ("POST", "/Users/.search"),
        ("POST", "/Groups"),
        ("PATCH", f"/Groups/{VICTIM_GROUP}"),
    ]


def test_bodies_over_the_limit_are_413(http, untouched):
    over = json.dumps({"userName": "x" * LIMIT}).encode()
    for method, path in _writes(untouched):
        response = http(method, path, data=over, headers={"Content-Type": SCIM_JSON})
        assert "1048576" in sane(response, 413)["detail"]


def test_a_body_at_the_limit_is_read(http, untouched):
    exact = json.dumps({"userName": "x" * (LIMIT - 16)}).encode()
    assert len(exact) == LIMIT
    sane(http("POST", "/Users", data=exact, headers={"Content-Type": SCIM_JSON}), 400)


def test_chunked_bodies_over_the_limit_are_413_over_real_http(app, untouched):
    """Without Content-Length the limit still holds (gunicorn and werkzeug mark the input)."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        results = []
        for body in (b'{"userName": "' + b"x" * (LIMIT + 10) + b'"}', b'{"userName": 5}'):
            connection = http.client.HTTPConnection(*server.server_address, timeout=30)
            connection.request(
                "POST",
                "/scim/v2/Users",
                body=iter([body[i : i + 65536] for i in range(0, len(body), 65536)]),
                headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": SCIM_JSON},
                encode_chunked=True,
            )
            answer = connection.getresponse()
            results.append((answer.status, json.loads(answer.read())["status"]))
            connection.close()
    finally:
        server.shutdown()
        server.server_close()
    assert results == [(413, "413"), (400, "400")]


def test_patch_operation_and_value_counts_are_bounded(http, untouched):
    path = f"/Users/{untouched['id']}"
    many = [{"op": "replace", "path": "title", "value": "t"}] * 1001
    sane(http("PATCH", path, json=many), 413)
    emails = [{"value": f"e{i}@example.com"} for i in range(101)]
    body = sane(http("PATCH", path, json=[{"op": "add", "path": "emails", "value": emails}]), 400)
    assert "at most 100" in body["detail"]


def test_group_patch_operations_are_bounded_like_user_ones(http, untouched):
    member = [{"op": "add", "path": "members", "value": [{"value": untouched["id"]}]}]
    body = sane(http("PATCH", f"/Groups/{VICTIM_GROUP}", json=member * 1001), 413)
    assert "at most 1000 operations" in body["detail"]
    assert http("PATCH", f"/Groups/{VICTIM_GROUP}", json=member * 1000).status_code == 200


@pytest.mark.parametrize("where", ["query", "search"])
def test_attribute_lists_are_bounded(http, untouched, where):
    """A 1 MiB list of 92,000 names held a worker for 30 s before it was killed."""
    too_many = ",".join(f"x{i}" for i in range(92_000))
    too_long = "name." + "x" * 300
    for names, detail in ((too_many, "at most 200 names"), (too_long, "longer than 256")):
        for key in ("attributes", "excludedAttributes"):
            if where == "query":
                response = http("GET", "/Users", query_string={key: names})
            else:
                response = http("POST", "/Users/.search", json={key: names.split(",")})
            assert detail in sane(response, 400)["detail"]
    allowed = ",".join(["userName"] * 200)
    assert http("GET", "/Users", query_string={"attributes": allowed}).status_code == 200


# --------------------------------------------------------------------------- JSON and text


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 5000 + b"]" * 5000,
        b'{"a":' * 33 + b"1" + b"}" * 33,
        b'{"userName": "' + b"[" * 100000 + b'"' + b"{" * 100,  # brackets in a string, then junk
        b"\xff\xfe{}",  # not UTF-8
        b'{"userName": "\xc0\xaf"}',  # overlong encoding
        b'{"userName": "\xed\xa0\x80"}',  # a surrogate, UTF-8 encoded
        b'{"userName": "\xe2\x82"}',  # truncated sequence
        b'{"userName": "a\x00b"}',  # a raw NUL: not JSON
        b'{"userName": "\\ud800"}',  # an unpaired surrogate escape
        b'{"userName": 1e999999}',
        b'{"userName": ' + b"9" * 5000 + b"}",  # over Python's digit limit
        b"null",
        b'"text"',
        b"",
        b"   ",
        b"{",
    ],
)
def test_malformed_json_is_400(http, untouched, data):
    for method, path in _writes(untouched):
        response = http(method, path, data=data, headers={"Content-Type": SCIM_JSON})
        if path.endswith(".search") and data == b'{"userName": 1e999999}':
            sane(response, 200)  # a SearchRequest ignores attributes it does not know
            continue
        body = sane(response, 400)
        assert body["scimType"] in ("invalidSyntax", "invalidValue")


def test_nesting_up_to_the_bound_is_parsed(http, untouched):
    nested = b'{"title":' + b'{"a":' * 30 + b"1" + b"}" * 30 + b"}"
    body = sane(http("POST", "/Users", data=nested, headers={"Content-Type": SCIM_JSON}), 400)
    assert "nested" not in body["detail"]


@pytest.mark.parametrize(
    "where",
    ["userName", "givenName", "email", "password", "title", "externalId", "patch", "group"],
)
def test_nul_characters_in_values_are_400(http, untouched, where):
    nul = "in\u0000side"
    if where == "patch":
        response = http(
            "PATCH",
            f"/Users/{untouched['id']}",
            json=[{"op": "replace", "path": "title", "value": nul}],
        )
    elif where == "group":
        response = http("POST", "/Groups", json={"displayName": nul})
    else:
        body = user_body("nul-" + uuid.uuid4().hex[:6])
        if where == "givenName":
            body["name"]["givenName"] = nul
        elif where == "email":
            body["emails"][0]["value"] = nul + "@example.com"
        else:
            body[where] = nul
        response = http("POST", "/Users", json=body)
    assert sane(response, 400)["scimType"] == "invalidValue"


@pytest.mark.parametrize(
    "password",
    ["ctrl\u0001char", "\u00ad", "private\ue000use", "\u05d0mixed-direction", "tab\tbed"],
)
def test_passwords_no_directory_can_hold_are_400_and_never_echoed(http, untouched, password):
    body = user_body("pw-" + uuid.uuid4().hex[:6], password=password)
    answer = sane(http("POST", "/Users", json=body), 400)
    assert "password" in answer["detail"] and password not in answer["detail"]
    patched = http(
        "PATCH",
        f"/Users/{untouched['id']}",
        json=[{"op": "replace", "path": "password", "value": password}],
    )
    assert password not in json.dumps(sane(patched, 400))


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/xml",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json-patch+json",
        "application/scim+json+evil",
        "text/json",
    ],
)
def test_wrong_content_types_are_415(http, untouched, content_type):
    for method, path in _writes(untouched):
        response = http(method, path, data=b"{}", headers={"Content-Type": content_type})
        sane(response, 415)


# --------------------------------------------------------------------------- paging


ODD_NUMBERS = [
    "-1",
    "0",
    "-0",
    "+5",
    " 7 ",
    "1",
    str(2**31 - 1),
    str(2**31),
    str(2**63),
    str(10**30),
    str(-(10**30)),
    "1.5",
    "1e3",
    "0x10",
    "abc",
    "",
    " ",
    "NaN",
    "Infinity",
    "\u0661",  # ARABIC-INDIC DIGIT ONE: int() reads it
    "1" * 5000,
]


@pytest.mark.parametrize("name", ["count", "startIndex"])
@pytest.mark.parametrize("endpoint", ["/Users", "/Groups"])
def test_paging_parameters_of_every_odd_kind(http, untouched, name, endpoint):
    for value in ODD_NUMBERS:
        body = sane(http("GET", endpoint, query_string={name: value}), 200, 400)
        if "Resources" in body:
            assert 1 <= body["startIndex"] <= 2**31 - 1
            assert 0 <= body["itemsPerPage"] <= 200
            assert len(body["Resources"]) <= body["itemsPerPage"]
        else:
            assert body["scimType"] == "invalidValue"
            assert name in body["detail"]


@pytest.mark.parametrize("endpoint", ["/Users", "/Groups"])
def test_repeated_paging_parameters_take_the_first(http, untouched, endpoint):
    body = sane(
        http("GET", endpoint, query_string="count=1&count=2&startIndex=1&startIndex=9"), 200
    )
    assert body["itemsPerPage"] == 1 and body["startIndex"] == 1


@pytest.mark.parametrize(
    "value", [-1, 0, 10**30, 1.5, "abc", "", True, None, [1], {"a": 1}, "1" * 5000]
)
@pytest.mark.parametrize("name", ["count", "startIndex"])
def test_search_bodies_with_odd_paging(http, untouched, name, value):
    body = sane(http("POST", "/Users/.search", json={name: value}), 200, 400)
    if "Resources" in body:
        assert body["startIndex"] >= 1 and 0 <= body["itemsPerPage"] <= 200


def test_a_start_index_past_every_result_is_an_empty_page(http, untouched):
    body = sane(http("GET", "/Users", query_string={"startIndex": str(10**30)}), 200)
    assert body["Resources"] == [] and body["totalResults"] >= 1


# --------------------------------------------------------------------------- DN escaping


def _hostile_names():
    names = []
    for special in DN_SPECIALS:
        names += [f"{VICTIM}{special}", f"x{special}{VICTIM}", f"{special}{VICTIM}"]
    return [
        *names,
        f"#{VICTIM}",
        f" {VICTIM}",
        f"{VICTIM} ",
        f"{VICTIM},ou=people,dc=example,dc=org",
        f"uid={VICTIM}",
        f"{VICTIM}\\2c",
        f"{VICTIM}*",
        "*",
        f"{VICTIM})(uid=*",
    ]


@pytest.mark.parametrize("name", _hostile_names())
def test_usernames_with_dn_specials_reach_no_other_entry(http, untouched, directory, slapd, name):
    response = http("POST", "/Users", json=user_body(name))
    body = sane(response, 201, 400, 409)
    if response.status_code != 201:
        return
    try:
        assert body["userName"] == name.strip()
        uid = normalize_username(name)
        assert uid != VICTIM and not set(uid) & set(',+"\\<>;=# *()')
        directory.search(slapd.users_base, f"(entryUUID={body['id']})", LEVEL, attributes=["uid"])
        assert [e["dn"] for e in directory.response] == [f"uid={uid},{slapd.users_base}"]
    finally:
        sane(http("DELETE", f"/Users/{body['id']}"), 204)


def _group_names():
    names = [f"{VICTIM_GROUP}{s}x" for s in DN_SPECIALS] + [
        f"x{s}{VICTIM_GROUP}" for s in DN_SPECIALS
    ]
    return [
        *names,
        f"#{VICTIM_GROUP}",
        f"{VICTIM_GROUP},ou=groups,dc=example,dc=org",
        f"cn={VICTIM_GROUP}",
        f"{VICTIM_GROUP}\\2c",
        f"{VICTIM_GROUP}*",
        f"{VICTIM_GROUP})(cn=*",
        "*",
        "sl/ash/..",
        "..",
        "%2e%2e",
        "?query=1",
        "#fragment",
    ]


@pytest.mark.parametrize("name", ["new\nline", "tab\tbed", "nul\u0000", "del\u007f", "c1\u0085"])
def test_group_names_with_control_characters_are_400(http, untouched, name):
    body = sane(http("POST", "/Groups", json={"displayName": name}), 400)
    assert "control, invisible" in body["detail"] or "NUL" in body["detail"]


@pytest.mark.parametrize("name", ["€" * 80, "g" * 240, "€" * 81, "é" * 121, "g" * 241, "𝄞" * 61])
def test_group_names_too_long_for_an_rdn_are_400_not_503(http, untouched, directory, slapd, name):
    name = name[:-4] + uuid.uuid4().hex[:4] if len(name.encode()) <= 240 else name
    response = http("POST", "/Groups", json={"displayName": name})
    if len(name.encode()) > 240:
        assert "240 bytes" in sane(response, 400)["detail"]
        return
    assert sane(response, 201)["id"] == name
    directory.delete(f"cn={dn_value(name)},{slapd.groups_base}")


@pytest.mark.parametrize("name", _group_names())
def test_group_names_with_dn_specials_reach_no_other_entry(http, untouched, directory, slapd, name):
    name = name + "-" + uuid.uuid4().hex[:4] if not name.startswith("#") else name
    response = http("POST", "/Groups", json={"displayName": name})
    body = sane(response, 201, 409)
    if response.status_code == 409:
        return
    dn = f"cn={dn_value(name)},{slapd.groups_base}"
    try:
        assert body["id"] == body["displayName"] == name
        never_victim(body, untouched)
        directory.search(dn, "(objectClass=groupOfNames)", BASE, attributes=["cn"])
        assert directory.response[0]["attributes"]["cn"] == [name]
        location = response.headers["Location"]
        assert location.endswith("/Groups/" + quote(name, safe=""))
        fetched = sane(http("GET", "/Groups/" + quote(name, safe="")), 200)
        assert fetched["id"] == name
        found = sane(
            http("GET", "/Groups", query_string={"filter": f"displayName eq {json.dumps(name)}"}),
            200,
        )
        assert [g["id"] for g in found["Resources"]] == [name]
        added = http(
            "PATCH",
            "/Groups/" + quote(name, safe=""),
            json=[{"op": "add", "path": "members", "value": [{"value": untouched["id"]}]}],
        )
        assert [m["value"] for m in sane(added, 200)["members"]] == [untouched["id"]]
        # the victim joined this group only: its own group is checked by ``untouched``
    finally:
        directory.delete(dn)


@pytest.mark.parametrize(
    "ident",
    [
        "*",
        f"{VICTIM_GROUP}*",
        f"{VICTIM_GROUP},ou=groups,dc=example,dc=org",
        f"cn={VICTIM_GROUP}",
        f"{VICTIM_GROUP})(cn=*",
        f"{VICTIM_GROUP}\u0000",
        f"{VICTIM_GROUP}\\",
        f"{VICTIM_GROUP}/..",
        f"{VICTIM_GROUP}/x",
    ],
)
def test_group_ids_in_urls_reach_no_other_group(http, untouched, ident):
    path = "/Groups/" + quote(ident, safe="")
    sane(http("GET", path), 404)
    patched = http("PATCH", path, json=[{"op": "remove", "path": "members"}])
    sane(patched, 404)
    sane(http("DELETE", path), 501)


@pytest.mark.parametrize(
    "ident",
    ["*", "{id}*", "*{id}", "({id})", "{id})(uid=*", "{id}\u0000", "{id}/x", "..", "{id}%00"],
)
def test_user_ids_in_urls_reach_no_other_user(http, untouched, ident):
    path = "/Users/" + quote(ident.replace("{id}", untouched["id"]), safe="")
    sane(http("GET", path), 404)
    sane(http("PATCH", path, json=[{"op": "replace", "path": "title", "value": "x"}]), 404)
    sane(http("PUT", path, json=user_body(VICTIM)), 404)
    sane(http("DELETE", path), 404)


# --------------------------------------------------------------------------- filters


FILTER_VALUES = [
    "*",
    "**",
    f"{VICTIM}*",
    f"*{VICTIM}",
    f"*{VICTIM[2:5]}*",
    "(",
    ")",
    "\\",
    "\\2a",
    "\\5c2a",
    f"{VICTIM})(uid=*",
    f"{VICTIM})(|(uid=*",
    "*)(objectClass=*",
    f"{VICTIM}@example.com*",
    "\u0000",
    "a\u0000*",
]


@pytest.mark.parametrize("value", FILTER_VALUES)
@pytest.mark.parametrize(
    ("endpoint", "attribute"),
    [
        ("/Users", "userName"),
        ("/Users", "email"),
        ("/Users", "emails.value"),
        ("/Groups", "displayName"),
    ],
)
def test_filter_values_are_literals(http, untouched, endpoint, attribute, value):
    text = f"{attribute} eq {json.dumps(value)}"
    body = sane(http("GET", endpoint, query_string={"filter": text}), 200, 400)
    if body.get("scimType"):
        assert body["scimType"] == "invalidFilter"
        return
    searched = sane(http("POST", f"{endpoint}/.search", json={"filter": text}), 200, 400)
    never_victim(body, untouched)
    never_victim(searched, untouched)


def test_wildcards_in_stored_values_match_only_themselves(http, untouched):
    stars = user_body(
        "star-" + uuid.uuid4().hex[:6], email=f"a*b{uuid.uuid4().hex[:4]}@example.com"
    )
    created = sane(http("POST", "/Users", json=stars), 201)
    other = sane(http("POST", "/Users", json=user_body("plain-" + uuid.uuid4().hex[:6])), 201)
    try:
        email = stars["emails"][0]["value"]
        found = sane(http("GET", "/Users", query_string={"filter": f'email eq "{email}"'}), 200)
        assert [u["id"] for u in found["Resources"]] == [created["id"]]
        group = "(" + uuid.uuid4().hex[:6] + "*)"
        sane(http("POST", "/Groups", json={"displayName": group}), 201)
        found = sane(
            http("GET", "/Groups", query_string={"filter": f'displayName eq "{group}"'}), 200
        )
        assert [g["id"] for g in found["Resources"]] == [group]
    finally:
        sane(http("DELETE", f"/Users/{created['id']}"), 204)
        sane(http("DELETE", f"/Users/{other['id']}"), 204)


def test_filters_too_long_or_too_deep_are_400(http, untouched):
    for text in [
        "(" * 40 + 'userName eq "x"' + ")" * 40,
        "not(" * 40 + 'userName eq "x"' + ")" * 40,
        'userName eq "' + "x" * 5000 + '"',
        " or ".join(['userName eq "x"'] * 300),
        'userName eq "x" or userName pr',
        "userName sw",
    ]:
        sane(http("GET", "/Users", query_string={"filter": text}), 400)


def test_json_nested_too_deep_is_400_whatever_the_depth(http, untouched):
    def nested(levels):
        return '{"userName": ' + '{"a": ' * levels + "1" + "}" * levels + "}"

    for levels in (32, 200, 100_000):  # past ours, and past the JSON parser's own guard
        body = sane(
            http("POST", "/Users", data=nested(levels), headers={"Content-Type": SCIM_JSON}),
            400,
        )
        assert body["scimType"] == "invalidSyntax"
        assert "nested deeper than 32 levels" in body["detail"]
    shallow = sane(
        http("POST", "/Users", data=nested(30), headers={"Content-Type": SCIM_JSON}), 400
    )
    assert "nested" not in shallow["detail"]  # refused for its content, not its depth


# --------------------------------------------------------------------------- headers


def test_hostile_headers(http, untouched):
    for request_id in ["a" * 10000, "has space", "new\tline", "<script>", "é"]:
        response = http("GET", "/ServiceProviderConfig", headers={"X-Request-Id": request_id})
        sane(response, 200)
        assert response.headers["X-Request-Id"] != request_id
        assert len(response.headers["X-Request-Id"]) == 32
    for if_match in ["x" * 10000, "*x", 'W/"0"', '"', ","]:
        patched = http(
            "PATCH",
            f"/Users/{untouched['id']}",
            json=[{"op": "replace", "path": "title", "value": "changed"}],
            headers={"If-Match": if_match},
        )
        sane(patched, 412)
    for authorization in ["Bearer " + "x" * 100000, "Bearer é", "Bearer \t", "Basic " + TOKEN]:
        response = http("GET", "/Users", token=None, headers={"Authorization": authorization})
        sane(response, 401)


# --------------------------------------------------------------------------- names and echoes


ROUND_TRIP_NAMES = ["x/", "/x", "/", "//", ".search", "a//b", "..", ".", "a/./b", "a/../x"]
ROUND_TRIP_NAMES += ["%2F", "x?y", "x#y", "x%", "x%2F", "a/b", "x y", "x+y"]


@pytest.mark.parametrize("name", ROUND_TRIP_NAMES)
def test_a_group_name_is_refused_or_its_location_reaches_it_alone(http, untouched, name):
    decoy = "hostile-decoy-" + uuid.uuid4().hex[:6]
    assert http("POST", "/Groups", json={"displayName": decoy}).status_code == 201
    full = f"{decoy}{name}" if name not in (".", "..", ".search", "/", "//") else name
    created = http("POST", "/Groups", json={"displayName": full})
    if created.status_code == 400:
        assert "URL path" in sane(created, 400)["detail"]
        return
    body = sane(created, 201)
    location = created.headers["Location"]
    assert location == body["meta"]["location"]
    path = location.split("/scim/v2", 1)[1]
    assert sane(http("GET", path), 200)["displayName"] == full
    member = [{"op": "add", "path": "members", "value": [{"value": untouched["id"]}]}]
    assert sane(http("PATCH", path, json=member), 200)["displayName"] == full
    decoy_members = sane(http("GET", f"/Groups/{quote(decoy, safe='')}"), 200)
    assert not decoy_members.get("members"), "the PATCH reached the decoy"
    remove = [{"op": "remove", "path": f'members[value eq "{untouched["id"]}"]'}]
    assert sane(http("PATCH", path, json=remove), 200)["displayName"] == full


LOOKALIKE_USER_NAMES = [
    VICTIM + "!",
    VICTIM.replace("o", "\u014d"),  # o with macron
    VICTIM + "\u200b",  # zero-width space
    VICTIM.upper() + ".",
    " ." + VICTIM,
    VICTIM.replace("-", "+"),
]


@pytest.mark.parametrize("user_name", LOOKALIKE_USER_NAMES)
def test_a_user_name_sharing_a_uid_is_taken_and_finds_no_one(http, untouched, user_name):
    """Each of these is another userName than the victim's, with the victim's uid: its create
    is 409 without naming either, and a lookup of it never answers the victim."""
    created = sane(http("POST", "/Users", json=user_body(user_name)), 409)
    assert created["scimType"] == "uniqueness" and "hostile" not in created["detail"]
    found = http("GET", "/Users", query_string={"filter": f'userName eq "{user_name}"'})
    never_victim(sane(found, 200), untouched)


def test_a_user_name_differing_only_in_case_is_the_same_user(http, untouched):
    found = http("GET", "/Users", query_string={"filter": f'userName eq "{VICTIM.upper()}"'})
    assert [r["id"] for r in sane(found, 200)["Resources"]] == [untouched["id"]]
    assert sane(http("POST", "/Users", json=user_body(VICTIM.title())), 409)


LOOKALIKE_GROUP_NAMES = [
    VICTIM_GROUP + "\u200b",  # zero-width space
    "\u202e" + VICTIM_GROUP,  # right-to-left override
    VICTIM_GROUP.replace("o", "\u043e"),  # Cyrillic o among Latin letters
    VICTIM_GROUP.replace("h", "\uff48"),  # full-width h (NFKC folds it)
    VICTIM_GROUP + "\ufeff",  # byte order mark
]


@pytest.mark.parametrize("name", LOOKALIKE_GROUP_NAMES)
def test_lookalike_group_names_are_refused_on_create_and_lookup(http, untouched, name):
    assert sane(http("POST", "/Groups", json={"displayName": name}), 400)["scimType"] == (
        "invalidValue"
    )
    found = http("GET", "/Groups", query_string={"filter": f'displayName eq "{name}"'})
    assert sane(found, 400)["scimType"] == "invalidFilter"
    sane(http("GET", "/Groups/" + quote(name, safe="")), 404)
    other_script = sane(http("POST", "/Groups", json={"displayName": "Бухгалтерия"}), 201, 409)
    assert other_script is not None


CANARY = "Canary-Secret-5f2e9"


def _canary_requests(victim_id):
    """(method, path, query, body) with the canary where it does not belong."""
    user = f"/Users/{victim_id}"
    patch = [
        [{"op": CANARY, "path": "title", "value": "x"}],
        [{"op": "replace", "path": CANARY, "value": "x"}],
        [{"op": "replace", "path": f"{CANARY}.sub", "value": "x"}],
        [{"op": "replace", "path": f"emails[{CANARY}]", "value": "x"}],
        [{"op": "replace", "path": f'emails[type eq "{CANARY}"].{CANARY}', "value": "x"}],
        [{"op": "replace", "path": f"urn:{CANARY}:title", "value": "x"}],
        [{"op": "replace", "path": "active", "value": CANARY}],
        [{"op": "replace", "path": "password", "value": [CANARY]}],
        [{"op": "replace", "path": "password", "value": {"value": CANARY}}],
        [{"op": "add", "path": "emails", "value": [{"value": CANARY, "primary": "maybe"}]}],
        [{"op": "replace", "path": "name", "value": CANARY}],
        [{"op": "replace", "value": {"active": CANARY}}],
        [{"op": "replace", "value": {"name": {"givenName": [CANARY]}}}],
        [{"op": "remove", "path": f"members[value eq {CANARY}]"}],
    ]
    requests = [("PATCH", user, None, body) for body in patch]
    requests += [("PATCH", f"/Groups/{VICTIM_GROUP}", None, body) for body in patch]
    for value in (CANARY, f"{CANARY} eq 1", f'userName eq "x" {CANARY}', f"userName {CANARY}"):
        requests.append(("GET", "/Users", {"filter": value}, None))
        requests.append(("GET", "/Groups", {"filter": value}, None))
        requests.append(("POST", "/Users/.search", None, {"filter": value}))
    for key in ("count", "startIndex", "sortBy", "sortOrder"):
        requests.append(("GET", "/Users", {key: CANARY}, None))
    requests.append(("POST", "/Users/.search", None, {"count": CANARY, "attributes": CANARY}))
    requests.append(("GET", f"/Users/{CANARY}", None, None))
    requests.append(("GET", f"/Groups/{CANARY}", None, None))
    requests.append(("DELETE", f"/Users/{CANARY}", None, None))
    requests.append(("GET", f"/{CANARY}", None, None))
    bodies = [
        user_body("canary-a", password=[CANARY]),
        user_body("canary-b", active=CANARY),
        user_body(CANARY + "!"),
        user_body("canary-c", emails=CANARY),
        {**user_body("canary-d"), "name": {"givenName": {CANARY: 1}}},
        {
            **user_body("canary-e"),
            "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": CANARY,
        },
        {"displayName": CANARY + "\u200b"},
        {"displayName": [CANARY]},
    ]
    requests += [("POST", "/Users", None, body) for body in bodies]
    requests += [("PUT", user, None, body) for body in bodies[:6]]
    requests.append(("POST", "/Groups", None, {"displayName": "g", "members": [{"value": CANARY}]}))
    requests.append(("POST", "/Groups", None, {"displayName": CANARY + "\u200b"}))
    return requests


def test_error_bodies_never_carry_the_input_a_secret_could_be_in(http, untouched):
    """A password pasted in the wrong place must not come back; nor LDAP or Python internals."""
    from ldap3.core.results import RESULT_CODES

    internals = set(RESULT_CODES.values()) - {"success", "other", "busy", "unavailable"}
    internals |= {"{'", "Traceback", "<class", "ldap3", "LDAP"}
    requests = _canary_requests(untouched["id"])
    assert len(requests) >= 40
    seen = 0
    for method, path, query, body in requests:
        response = http(method, path, json=body, query_string=query)
        if response.status_code < 400:
            continue
        seen += 1
        text = response.get_data(as_text=True)
        assert CANARY not in text, (method, path, query, body, text)
        found = [word for word in internals if word in text]
        assert not found, (method, path, found, text)
    assert seen >= 40
