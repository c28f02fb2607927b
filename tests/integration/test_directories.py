"""The service over HTTP on each real directory (OpenLDAP, 389-DS, Samba AD), checked in the
directory itself: binds, disables, passwords, renames, groups, deletes, pages, If-Match.

Every request is also held to a bound far below the LDAP timeout: an answer the service did
not expect must fail the operation at once, never after the timeout.
"""

from __future__ import annotations

import base64
import dataclasses
import logging
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from ldap3 import MODIFY_REPLACE
from ldap3.core.exceptions import LDAPOperationResult
from scim_http import Http, counted_operations, make_app

from scim_core.backends.ldap import LdapBackend, operations, paging
from scim_core.backends.ldap.sitemap import default_mapping, load_mapping
from scim_core.backends.ldap.syntaxes import to_ldap
from scim_core.testing._common import Binder

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
TOKEN = "directories-token"
PASSWORD = "Initial-Px5S-word!"
NEW_PASSWORD = "Changed-Px5S-word!"
#: No request comes near the backend's 10 s operation timeout.
QUICK = 5.0


class TimedHttp(Http):
    """:class:`Http` that fails a request which waited anywhere near the LDAP timeout, or
    answered 400 for something the directory refused (a 5xx is its side, never the client's)."""

    def __call__(self, method, path, json=None, token=..., **kwargs):
        started = time.monotonic()
        response = super().__call__(method, path, json=json, token=token, **kwargs)
        elapsed = time.monotonic() - started
        assert elapsed < QUICK, f"{method} {path} took {elapsed:.1f} s"
        assert response.status_code != 500, response.get_data(as_text=True)
        return response


@pytest.fixture(scope="module")
def app(directory_backend):
    return make_app(directory_backend, TOKEN)


@pytest.fixture
def http(app) -> TimedHttp:
    return TimedHttp(app.test_client(), TOKEN)


@pytest.fixture
def other_service(directory_backend):
    """A function giving the service over the same directory with other LDAP settings: its
    backend and a client; each backend is closed after the test."""
    made = []

    def make(**changes):
        backend = LdapBackend(dataclasses.replace(directory_backend.settings, **changes))
        made.append(backend)
        return backend, TimedHttp(make_app(backend, TOKEN).test_client(), TOKEN)

    yield make
    for backend in made:
        backend.close()


@pytest.fixture
def mapped_service(directory, other_service, tmp_path):
    """A function giving the service over the same directory with a site mapping file of the
    given text (extending the profile's own): its backend and a client."""

    def make(text: str):
        site = tmp_path / "site.toml"
        site.write_text(text, encoding="utf-8")
        return other_service(mapping=load_mapping(site, default_mapping(directory.dialect)))

    return make


def body_of(response) -> dict[str, Any]:
    return response.get_json(force=True)


def new_user(http, password=None, **extra) -> dict[str, Any]:
    # Digits only: 389-DS's password syntax check refuses a password holding any 3-character
    # piece of the uid, and hex digits can spell "a55" of the test passwords.
    name = f"dx{uuid.uuid4().int % 10**10:010d}"
    body = {
        "userName": f"{name}@example.org",
        "name": {"givenName": "Dora", "familyName": "Rectory"},
        "emails": [{"value": f"{name}@example.org", "type": "work", "primary": True}],
        **extra,
    }
    if password:
        body["password"] = password
    response = http("POST", "/Users", json=body)
    assert response.status_code == 201, body_of(response)
    return body_of(response)


def patch(http, path, *operations, **kwargs):
    return http(
        "PATCH", path, json={"schemas": [PATCH_OP], "Operations": list(operations)}, **kwargs
    )


def assert_taken(http, user_name: str, token: str) -> dict[str, Any]:
    """Creating another user with ``user_name`` is 409 ``uniqueness``, wherever its holder
    lives; the error body."""
    twin = http(
        "POST",
        "/Users",
        json={
            "userName": user_name,
            "name": {"givenName": "T", "familyName": "W"},
            "emails": [{"value": f"twin{token}@example.org"}],
        },
    )
    assert twin.status_code == 409, body_of(twin)
    assert body_of(twin)["scimType"] == "uniqueness"
    return body_of(twin)


def dn_of(backend, user) -> str:
    entry = backend._user_entry(user["id"], ["1.1"])
    assert entry is not None, user
    return str(entry["dn"])


def binds(directory, backend, user, password) -> bool:
    """Whether the user can log in, by DN (and on AD by userPrincipalName, which must agree)."""
    by_dn = directory.can_bind(dn_of(backend, user), password)
    if directory.dialect == "ad":
        assert directory.can_bind(user["userName"], password) == by_dn
    return by_dn


def test_create_with_password_binds_disable_enable_and_change(http, directory, directory_backend):
    user = new_user(http, password=PASSWORD)
    path = "/Users/" + user["id"]
    assert user["active"] is True
    assert binds(directory, directory_backend, user, PASSWORD)
    for _ in range(2):  # a repeated disable is the same 200
        response = patch(http, path, {"op": "Replace", "path": "active", "value": "False"})
        assert response.status_code == 200, body_of(response)
        assert body_of(response)["active"] is False
        assert not binds(directory, directory_backend, user, PASSWORD)
    listed = http("GET", "/Users", query_string={"filter": "active eq false", "count": "200"})
    assert user["id"] in [r["id"] for r in body_of(listed)["Resources"]]
    response = patch(http, path, {"op": "replace", "path": "active", "value": True})
    assert response.status_code == 200 and body_of(response)["active"] is True
    assert binds(directory, directory_backend, user, PASSWORD)
    response = patch(http, path, {"op": "replace", "path": "password", "value": NEW_PASSWORD})
    assert response.status_code == 200, body_of(response)
    assert "password" not in body_of(response)
    assert binds(directory, directory_backend, user, NEW_PASSWORD)
    assert not binds(directory, directory_backend, user, PASSWORD)


def test_a_disabled_user_stays_disabled_through_a_password_change(
    http, directory, directory_backend
):
    user = new_user(http, password=PASSWORD, active=False)
    assert user["active"] is False
    assert not binds(directory, directory_backend, user, PASSWORD)
    path = "/Users/" + user["id"]
    response = patch(http, path, {"op": "replace", "path": "password", "value": NEW_PASSWORD})
    assert response.status_code == 200 and body_of(response)["active"] is False
    assert not binds(directory, directory_backend, user, NEW_PASSWORD)


def binder_for(directory) -> Binder:
    """Binds back to back on one connection to ``directory`` (over TLS where its URL is)."""
    url = urlsplit(directory.url)
    tls = url.scheme == "ldaps"
    port = url.port or (636 if tls else 389)
    return Binder(str(url.hostname), port, ca_file=directory.ca_file if tls else None)


class BindRace:
    """A thread binding as one account in a tight loop, with whatever password the test
    is about to set, until stopped (or 60 s, or 200,000 binds): its successes are the
    instants at which the account could log in."""

    LIMIT_S = 60.0
    LIMIT_TRIES = 200_000

    def __init__(self, directory) -> None:
        self.bind = binder_for(directory)
        self.target: tuple[str, str] | None = None  # (DN, password)
        self.tries = self.successes = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        deadline = time.monotonic() + self.LIMIT_S
        while not self.stop.is_set() and time.monotonic() < deadline:
            if self.tries >= self.LIMIT_TRIES:
                break
            target = self.target
            if target is None:
                time.sleep(0.001)
                continue
            self.tries += 1
            self.successes += self.bind(*target) == 0

    def __enter__(self) -> BindRace:
        self.thread.start()
        return self

    def binds_after(self, count: int, limit_s: float = 5.0) -> None:
        """Wait (at most ``limit_s``) until ``count`` binds in all were tried: binds after a
        request too, so a late unlock shows, however busy the machine is."""
        deadline = time.monotonic() + limit_s
        while self.tries < count and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.001)

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)
        self.bind.close()


def fresh() -> str:
    """Six random letters outside the hex digits, so that no piece of a password repeats a
    piece of a (hex) userName, which 389-DS's password syntax check refuses (the passwords'
    fixed parts hold no three hex digits in a row either: "a55" once matched a uid)."""
    return uuid.uuid4().hex[:6].translate(str.maketrans("0123456789abcdef", "ghjkmnpqrstvwxyz"))


#: Password changes of a disabled user per race (half by PUT, half by PATCH), and the time
#: bound of the loop making them.
RACE_ROUNDS = 40
RACE_SECONDS = 45.0


def test_a_disabled_user_cannot_bind_at_any_instant_while_its_password_changes(
    http, directory, directory_backend
):
    """A binder hammers the account, with the password being set, while that password
    changes again and again by PUT and PATCH. OpenLDAP's ppolicy lifts the lock with every
    password; writing it back afterwards once let about one bind in thirty through, in
    nearly every change."""
    user = new_user(http, password=PASSWORD, active=False)
    path = "/Users/" + user["id"]
    dn = dn_of(directory_backend, user)
    rounds = 0
    started = time.monotonic()
    with BindRace(directory) as race:
        while rounds < RACE_ROUNDS and time.monotonic() - started < RACE_SECONDS:
            rounds += 1
            password = f"Rush-{fresh()}-Px5S-word!"
            race.target = (dn, password)
            if rounds % 2:
                body = {
                    "userName": user["userName"],
                    "name": {"givenName": "Dora", "familyName": "Rectory"},
                    "emails": user["emails"],
                    "active": False,
                    "password": password,
                }
                response = http("PUT", path, json=body)
            else:
                operation = {"op": "replace", "path": "password", "value": password}
                response = patch(http, path, operation)
            assert response.status_code == 200 and body_of(response)["active"] is False
            race.binds_after(2 * rounds)
    print(
        f"[bind-race] {directory.dialect}: {rounds} password changes, {race.tries} binds, "
        f"{race.successes} succeeded"
    )
    assert rounds == RACE_ROUNDS and race.tries >= 2 * rounds, (rounds, race.tries)
    assert race.successes == 0, f"{race.successes} of {race.tries} binds of a disabled user"
    assert not binds(directory, directory_backend, user, password)


def test_a_user_created_disabled_with_a_password_cannot_bind_at_any_instant(
    http, directory, directory_backend
):
    """Each create with ``active: false`` and a password sets the password after the add
    (RFC 3062) or in it (AD): a binder hammers the account-to-be all along."""
    creates = 0
    started = time.monotonic()
    with BindRace(directory) as race:
        while creates < RACE_ROUNDS // 2 and time.monotonic() - started < RACE_SECONDS:
            creates += 1
            name = "dk" + uuid.uuid4().hex[:10] + "@example.org"
            password = f"Born-{fresh()}-Px5S-word!"
            race.target = (directory_backend.user_dn(name), password)
            body = {
                "userName": name,
                "name": {"givenName": "Dora", "familyName": "Rectory"},
                "emails": [{"value": name}],
                "active": False,
                "password": password,
            }
            response = http("POST", "/Users", json=body)
            assert response.status_code == 201 and body_of(response)["active"] is False
            race.binds_after(2 * creates)
    print(
        f"[bind-race] {directory.dialect}: {creates} disabled creates, {race.tries} binds, "
        f"{race.successes} succeeded"
    )
    assert creates == RACE_ROUNDS // 2 and race.tries >= 2 * creates, (creates, race.tries)
    assert race.successes == 0, f"{race.successes} of {race.tries} binds of a disabled user"


#: Per directory, what disables a user beside "*": operational on OpenLDAP (the ppolicy lock
#: and the bind guard the service may hold over a password change).
MARKERS = {
    "openldap": ("pwdAccountLockedTime", "pwdEndTime"),
    "389ds": ("nsAccountLock",),
    "ad": ("userAccountControl",),
}


def entry_of(directory, backend, user) -> tuple[str, dict[str, list[str]]]:
    """The user's DN and every attribute the service account can read, markers included."""
    dn = dn_of(backend, user)
    names = ["*", *MARKERS[directory.dialect]]
    entries, _ = backend._search(dn, "(objectClass=*)", names, scope="BASE")
    attributes = {k.lower(): sorted(map(str, v)) for k, v in entries[0]["attributes"].items()}
    return dn, {k: v for k, v in attributes.items() if v}


def refused_request(http, form, path, user, *, renamed, password, **values):
    """A PUT or a PATCH renaming the user, changing its title, disabling it and setting
    ``password``, plus ``values`` (SCIM attribute -> value)."""
    if form == "PUT":
        body = {
            "userName": renamed,
            "name": {"givenName": "Dora", "familyName": "Rectory"},
            "emails": user["emails"],
            "title": "After",
            "active": False,
            "password": password,
            **values,
        }
        return http("PUT", path, json=body)
    operations = [
        {"op": "replace", "path": "userName", "value": renamed},
        {"op": "replace", "path": "title", "value": "After"},
        {"op": "replace", "path": "active", "value": False},
        {"op": "replace", "path": "password", "value": password},
        *({"op": "replace", "path": k, "value": v} for k, v in values.items()),
    ]
    return patch(http, path, *operations)


def assert_untouched(http, directory, directory_backend, user, before, renamed, refused_pw):
    """The entry reads back as ``before`` (DN and every attribute), enabled, with its old
    password; the refused one does not bind; the new userName finds nobody."""
    assert entry_of(directory, directory_backend, user) == before
    resource = body_of(http("GET", "/Users/" + user["id"]))
    assert resource["active"] is True and resource["userName"] == user["userName"]
    assert binds(directory, directory_backend, user, PASSWORD)
    assert not binds(directory, directory_backend, user, refused_pw)
    found = http("GET", "/Users", query_string={"filter": f'userName eq "{renamed}"'})
    assert body_of(found)["totalResults"] == 0


def audited(caplog) -> list[dict[str, Any]]:
    return [r.audit for r in caplog.records if r.name == "scim.audit"]


@pytest.mark.parametrize("form", ["PUT", "PATCH"])
def test_a_refused_password_leaves_the_whole_entry_as_it_was(
    http, directory, directory_backend, form, caplog
):
    """Rename, title, disable and a password the policy refuses (too short everywhere), in
    one request: 400, and nothing of it is written; the audit line says it failed."""
    user = new_user(http, password=PASSWORD, title="Before")
    before = entry_of(directory, directory_backend, user)
    renamed = "dz" + uuid.uuid4().hex[:10] + "@example.org"
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="scim.audit"):
        response = refused_request(
            http, form, "/Users/" + user["id"], user, renamed=renamed, password="short"
        )
    assert response.status_code == 400, body_of(response)
    assert body_of(response)["scimType"] == "invalidValue"
    assert "short" not in response.get_data(as_text=True)
    assert_untouched(http, directory, directory_backend, user, before, renamed, "short")
    (record,) = audited(caplog)
    assert record["status"] == 400 and record["result"] == "failure", record
    assert record["id"] == user["id"] and "partial" not in record, record


#: Values each directory refuses, where the service has no rule of its own about them:
#: OpenLDAP and 389-DS hold mail as IA5String (ASCII) and telephone numbers as
#: PrintableStrings; AD's title has at most 128 characters, its telephoneNumber 64.
_PHONE = {"phoneNumbers": [{"type": "work", "value": "+41 44 123 45 67 #2"}]}
REFUSED_VALUES = {
    "openldap": [{"emails": [{"value": "d\u00f6rte@example.org", "primary": True}]}, _PHONE],
    "389ds": [{"emails": [{"value": "d\u00f6rte@example.org", "primary": True}]}, _PHONE],
    "ad": [{"title": "T" * 200}, {"phoneNumbers": [{"type": "work", "value": "4" * 80}]}],
}


@pytest.mark.parametrize("case", [0, 1], ids=["mail-or-title", "telephone"])
@pytest.mark.parametrize("form", ["PUT", "PATCH"])
def test_a_refused_value_leaves_the_password_as_it_was(
    http, directory, directory_backend, form, case, caplog
):
    """The same request with a good new password and a value the directory refuses: 400,
    and the password is not changed either (it was, before the other attributes failed)."""
    user = new_user(http, password=PASSWORD, title="Before")
    before = entry_of(directory, directory_backend, user)
    renamed = "dz" + uuid.uuid4().hex[:10] + "@example.org"
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="scim.audit"):
        response = refused_request(
            http,
            form,
            "/Users/" + user["id"],
            user,
            renamed=renamed,
            password=NEW_PASSWORD,
            **REFUSED_VALUES[directory.dialect][case],
        )
    assert response.status_code == 400, body_of(response)
    assert_untouched(http, directory, directory_backend, user, before, renamed, NEW_PASSWORD)
    (record,) = audited(caplog)
    assert record["status"] == 400 and "partial" not in record, record


def test_a_refused_password_leaves_nothing_behind(http, directory):
    name = "dr" + uuid.uuid4().hex[:10] + "@example.org"
    body = {
        "userName": name,
        "name": {"givenName": "Roll", "familyName": "Back"},
        "emails": [{"value": name}],
        "password": "short",
    }
    response = http("POST", "/Users", json=body)
    assert response.status_code == 400, body_of(response)
    assert "short" not in response.get_data(as_text=True)
    found = http("GET", "/Users", query_string={"filter": f'userName eq "{name}"'})
    assert body_of(found)["totalResults"] == 0


def test_rename_keeps_the_id_and_the_groups(http, directory):
    user = new_user(http)
    group = http("POST", "/Groups", json={"displayName": "dg" + uuid.uuid4().hex[:8]})
    assert group.status_code == 201, body_of(group)
    group_path = "/Groups/" + body_of(group)["id"]
    added = patch(
        http, group_path, {"op": "add", "path": "members", "value": [{"value": user["id"]}]}
    )
    assert added.status_code in (200, 204), body_of(added)
    new_name = "dn" + uuid.uuid4().hex[:10] + "@example.org"
    renamed = patch(
        http, "/Users/" + user["id"], {"op": "replace", "path": "userName", "value": new_name}
    )
    assert renamed.status_code == 200, body_of(renamed)
    assert body_of(renamed)["id"] == user["id"] and body_of(renamed)["userName"] == new_name
    found = http("GET", "/Users", query_string={"filter": f'userName eq "{new_name}"'})
    assert [r["id"] for r in body_of(found)["Resources"]] == [user["id"]]
    members = body_of(http("GET", group_path))["members"]
    assert [m["value"] for m in members] == [user["id"]]


def test_a_user_name_comes_back_as_written_and_never_reaches_another_user(
    http, directory, directory_backend
):
    """userName is kept as written and found in any case; the RDN holds its normalized form
    (the uid); a different userName sharing that uid finds nothing and cannot be created; a
    rename in case only keeps the entry where it is."""
    token = uuid.uuid4().hex[:8]
    name = f"Jane.Doe+{token}@Atko.COM"
    uid = f"jane.doe-{token}@atko.com"
    user = new_user(http, userName=name)
    assert user["userName"] == name
    assert body_of(http("GET", "/Users/" + user["id"]))["userName"] == name
    for spelled in (name, name.lower(), name.upper()):
        found = http("GET", "/Users", query_string={"filter": f'userName eq "{spelled}"'})
        assert [r["id"] for r in body_of(found)["Resources"]] == [user["id"]], spelled
    dn = dn_of(directory_backend, user)
    assert dn.split(",", 1)[0].split("=", 1)[1].lower() == uid
    found = http("GET", "/Users", query_string={"filter": f'userName eq "{uid}"'})
    assert body_of(found)["Resources"] == []
    detail = assert_taken(http, uid, token)["detail"]
    assert token not in detail and "jane" not in detail.lower()
    swapped = name.swapcase()
    renamed = patch(
        http, "/Users/" + user["id"], {"op": "replace", "path": "userName", "value": swapped}
    )
    assert renamed.status_code == 200, body_of(renamed)
    assert body_of(renamed)["userName"] == swapped
    assert dn_of(directory_backend, user) == dn


def test_groups_create_find_and_change_members_both_ways(http, directory, directory_backend):
    first, second = new_user(http), new_user(http)
    name = "dg" + uuid.uuid4().hex[:8]
    created = http("POST", "/Groups", json={"displayName": name})
    assert created.status_code == 201, body_of(created)
    group = body_of(created)
    assert group["displayName"] == name and not group.get("members")
    assert http("POST", "/Groups", json={"displayName": name}).status_code == 409
    if directory.dialect == "ad":  # a global security group, as AD's own tools make
        entry = directory_backend._search(
            directory_backend.group_dn(name), "(objectClass=group)", ["groupType"], scope="BASE"
        )[0][0]
        assert entry["attributes"]["groupType"] == ["-2147483646"]
    path = "/Groups/" + group["id"]
    found = http("GET", "/Groups", query_string={"filter": f'displayName eq "{name}"'})
    assert [g["id"] for g in body_of(found)["Resources"]] == [group["id"]]
    okta_add = {
        "op": "add",
        "path": "members",
        "value": [{"value": first["id"]}, {"value": second["id"]}],
    }
    for _ in range(2):  # idempotent
        assert patch(http, path, okta_add).status_code in (200, 204)
    members = {m["value"] for m in body_of(http("GET", path))["members"]}
    assert members == {first["id"], second["id"]}
    entra_remove = {"op": "Remove", "path": "members", "value": [{"value": first["id"]}]}
    okta_remove = {"op": "remove", "path": f'members[value eq "{second["id"]}"]'}
    for _ in range(2):
        assert patch(http, path, entra_remove).status_code in (200, 204)
        assert patch(http, path, okta_remove).status_code in (200, 204)
    assert not body_of(http("GET", path)).get("members")
    unknown = patch(http, path, {"op": "add", "path": "members", "value": [{"value": "nobody"}]})
    assert unknown.status_code == 400
    assert http("PUT", path, json={"displayName": name}).status_code == 501
    assert http("DELETE", path).status_code == 501


def test_a_group_past_the_member_limit_is_too_many(http, other_service):
    """SCIM_LDAP_MAX_MEMBERS on each directory: the member search stops one past the limit
    (an LDAP size limit) and the answer is 400 tooMany naming the way to read the group."""
    users = [new_user(http) for _ in range(3)]
    name = "dl" + uuid.uuid4().hex[:8]
    body = {"displayName": name, "members": [{"value": u["id"]} for u in users]}
    created = http("POST", "/Groups", json=body)
    assert created.status_code == 201, body_of(created)
    path = "/Groups/" + body_of(created)["id"]
    _, capped = other_service(max_members=2)
    refused = capped("GET", path)
    assert refused.status_code == 400 and body_of(refused)["scimType"] == "tooMany"
    assert "excludedAttributes=members" in body_of(refused)["detail"]
    bare = capped("GET", path, query_string={"excludedAttributes": "members"})
    assert bare.status_code == 200 and "members" not in body_of(bare)
    _, enough = other_service(max_members=3)
    listed = body_of(enough("GET", path))["members"]
    assert sorted(m["value"] for m in listed) == sorted(u["id"] for u in users)


def test_a_group_streamed_in_chunks_is_the_whole_body_byte_for_byte(http, monkeypatch):
    """A group's GET in chunks (as past STREAMED_MEMBERS, here from one member) is the same
    bytes, status and ETag as the whole body, on each directory's ids and member reads."""
    from scim_core import service

    users = [new_user(http) for _ in range(3)]
    name = "ds" + uuid.uuid4().hex[:8]
    body = {"displayName": name, "members": [{"value": u["id"]} for u in users]}
    created = http("POST", "/Groups", json=body)
    assert created.status_code == 201, body_of(created)
    path = "/Groups/" + body_of(created)["id"]
    for query in ({}, {"attributes": "members.value,members.display"}):
        monkeypatch.setattr(service, "STREAMED_MEMBERS", 0)
        streamed = http("GET", path, query_string=query)
        monkeypatch.setattr(service, "STREAMED_MEMBERS", 1000)
        whole = http("GET", path, query_string=query)
        assert streamed.status_code == whole.status_code == 200
        assert "Content-Length" not in streamed.headers and "Content-Length" in whole.headers
        assert streamed.get_data() == whole.get_data()
        assert streamed.headers.get("ETag") == whole.headers.get("ETag")
        shown = body_of(streamed)["members"]
        assert sorted(m["value"] for m in shown) == sorted(u["id"] for u in users)


def test_a_write_names_the_manager_without_a_search_after_it(
    http, directory, directory_backend, monkeypatch
):
    """The manager a write sets was looked up before it and needs no search after it, on every
    directory; one it leaves as it was (the same DN) is the one the read before the write
    resolved, and a read asks for the manager its entry named last time in its own search."""
    boss, other = new_user(http), new_user(http)
    user = new_user(http, **{ENTERPRISE: {"manager": {"value": boss["id"]}}})
    lookups: list[str] = []
    search_in = LdapBackend._search_in
    id_only = [directory_backend.profile.id_attribute]

    def counting(self, place, search_filter, attributes, **kwargs):
        if search_filter.startswith("(|(") and list(attributes) == id_only:
            lookups.append(search_filter)  # users' DNs -> their ids
        return search_in(self, place, search_filter, attributes, **kwargs)

    monkeypatch.setattr(LdapBackend, "_search_in", counting)
    sent = counted_operations(monkeypatch)
    path = "/Users/" + user["id"]
    retitled = patch(http, path, {"op": "replace", "path": "title", "value": "T"})
    assert body_of(retitled)[ENTERPRISE]["manager"]["value"] == boss["id"]
    # The manager came with the user in the read; the one it still names is known after.
    assert lookups == [], lookups
    assert sent == ["search", "modify", *read_back(directory)], sent
    lookups.clear()
    sent.clear()
    moved = {"op": "replace", "path": f"{ENTERPRISE}:manager", "value": {"value": other["id"]}}
    changed = patch(http, path, moved)
    assert body_of(changed)[ENTERPRISE]["manager"]["value"] == other["id"]
    assert lookups == [], lookups  # the new manager was found by its id, before the write
    # The read (the former manager with it), the new manager's DN by its id, the modify.
    assert sent == ["search", "search", "modify", *read_back(directory)], sent
    sent.clear()
    assert body_of(http("GET", path))[ENTERPRISE]["manager"]["value"] == other["id"]
    # The entry the write left named the new manager: the read asks for it with the user.
    assert sent == ["search"] and lookups == [], (sent, lookups)


def read_back(directory) -> list[str]:
    """What follows a modify to tell the entry it left: nothing where the directory answers
    the post-read control (OpenLDAP, 389-DS), a search on Samba AD (no such control)."""
    return ["search"] if directory.dialect == "ad" else []


def test_a_patch_reads_once_diffs_once_and_writes_once(http, directory, monkeypatch):
    """PATCH of an attribute of a user with a manager, on each directory: one search (the
    entry, its manager's id with it) and one modify (its post-read entry the answer, where
    the directory has the control); the same PATCH again: the search alone, nothing written,
    the same ETag. Disabling and enabling the user are one modify each as well."""
    boss = new_user(http)
    user = new_user(http, **{ENTERPRISE: {"manager": {"value": boss["id"]}}})
    path = "/Users/" + user["id"]
    sent = counted_operations(monkeypatch)
    retitle = {"op": "replace", "path": "title", "value": "Head of " + uuid.uuid4().hex[:6]}
    first = patch(http, path, retitle)
    assert first.status_code == 200, body_of(first)
    assert body_of(first)["title"] == retitle["value"]
    assert body_of(first)[ENTERPRISE]["manager"]["value"] == boss["id"]
    assert sent == ["search", "modify", *read_back(directory)], sent
    sent.clear()
    again = patch(http, path, retitle)
    assert again.status_code == 200 and sent == ["search"], sent
    assert again.headers["ETag"] == first.headers["ETag"]
    assert body_of(again) == body_of(first)
    for active in (False, True):
        sent.clear()
        toggled = patch(http, path, {"op": "replace", "path": "active", "value": active})
        assert toggled.status_code == 200 and body_of(toggled)["active"] is active
        assert sent == ["search", "modify", *read_back(directory)], sent
    assert body_of(http("GET", path))["title"] == retitle["value"]


def test_an_entry_of_another_kind_is_no_user_by_its_id(
    http, directory, directory_backend, sibling_ous, monkeypatch
):
    """An entry under the users' base that is no user (an OU), named by its id, is not read,
    not written and not taken as a member, on each directory. Where users are told by their
    classes (OpenLDAP, 389-DS) the lookup names the id alone and the directory is asked once
    more, with the users' filter; on AD the kind is in the one search."""
    backend = directory_backend
    (ou,) = sibling_ous(backend.settings.users_base, "kind" + uuid.uuid4().hex[:8])
    id_attribute = backend.profile.id_attribute
    entry = backend._search(ou, "(objectClass=*)", [id_attribute], scope="BASE")[0][0]
    ident = backend.profile.format_id(entry["attributes"][id_attribute][0])
    sent = counted_operations(monkeypatch)
    assert http("GET", "/Users/" + ident).status_code == 404
    assert sent == (["search"] if directory.dialect == "ad" else ["search", "search"]), sent
    retitle = {"op": "replace", "path": "title", "value": "Not a user"}
    assert patch(http, "/Users/" + ident, retitle).status_code == 404
    group = {"displayName": "kind" + uuid.uuid4().hex[:8], "members": [{"value": ident}]}
    refused = http("POST", "/Groups", json=group)
    assert refused.status_code == 400, body_of(refused)
    assert not {"modify", "add", "rename", "delete"} & set(sent), sent


def test_a_group_renamed_keeps_its_id_and_members(http, directory, directory_backend):
    """Entra renames a group with ``replace displayName``: a modify of the display name
    attribute; the cn (the id) and the members stay, the new name finds it, the old one not,
    and neither name can be taken by another group."""
    member = new_user(http)
    name = "dr" + uuid.uuid4().hex[:8]
    created = http(
        "POST", "/Groups", json={"displayName": name, "members": [{"value": member["id"]}]}
    )
    assert created.status_code == 201, body_of(created)
    path = "/Groups/" + body_of(created)["id"]
    new_name = f"Renamed {name}"
    for _ in range(2):  # the same rename again changes nothing
        renamed = patch(http, path, {"op": "replace", "path": "displayName", "value": new_name})
        assert renamed.status_code == 200, body_of(renamed)
        group = body_of(renamed)
        assert (group["id"], group["displayName"]) == (name, new_name)
    assert [m["value"] for m in body_of(http("GET", path))["members"]] == [member["id"]]
    for shown, ids in ((new_name.lower(), [name]), (name, [])):
        found = http("GET", "/Groups", query_string={"filter": f'displayName eq "{shown}"'})
        assert [g["id"] for g in body_of(found)["Resources"]] == ids
    entry = directory_backend._search(
        directory_backend.group_dn(name), "(objectClass=*)", ["cn", "displayName"], scope="BASE"
    )[0][0]["attributes"]
    assert (entry["cn"], entry["displayName"]) == ([name], [new_name])
    for taken in (name, new_name):
        assert http("POST", "/Groups", json={"displayName": taken}).status_code == 409
    # externalId: kept where groups have a place for it (scimGroup), else listed as not kept.
    kept = directory.dialect != "ad"
    schema = body_of(http("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group"))
    external = next(a for a in schema["attributes"] if a["name"] == "externalId")
    assert external["mutability"] == ("readWrite" if kept else "readOnly")
    set_external = {"op": "replace", "path": "externalId", "value": "ext-" + name}
    assert patch(http, path, set_external).status_code == 200
    assert body_of(http("GET", path)).get("externalId") == ("ext-" + name if kept else None)
    cleared = patch(http, path, {"op": "replace", "path": "externalId", "value": ""})
    assert cleared.status_code == 200 and "externalId" not in body_of(cleared)
    with_external = http(
        "POST", "/Groups", json={"displayName": "dx" + uuid.uuid4().hex[:8], "externalId": "e1"}
    )
    assert with_external.status_code == 201
    assert body_of(with_external).get("externalId") == ("e1" if kept else None)
    other = body_of(http("POST", "/Groups", json={"displayName": "do" + uuid.uuid4().hex[:8]}))
    clash = patch(
        http, "/Groups/" + other["id"], {"op": "replace", "path": "displayName", "value": new_name}
    )
    assert clash.status_code == 409 and body_of(clash)["scimType"] == "uniqueness"


def test_optional_attributes_clear_with_an_empty_string_or_null(http, directory_backend):
    """Entra clears every optional attribute with "" (one operation per attribute, and in a
    path-less replace), and the manager with replace "": each is gone on read-back and in the
    directory."""
    manager, other = new_user(http), new_user(http)
    optional = {
        "displayName": "Dee",
        "title": "Tester",
        "externalId": "ext-" + uuid.uuid4().hex[:6],
        ENTERPRISE: {"employeeNumber": "42", "manager": {"value": manager["id"]}},
    }
    if directory_backend.settings.external_id_attribute is None:
        del optional["externalId"]
    user = new_user(http, **optional)
    path = "/Users/" + user["id"]
    assert body_of(http("GET", path))[ENTERPRISE]["manager"]["value"] == manager["id"]
    changed = patch(http, path, {"op": "replace", "path": "manager", "value": other["id"]})
    assert body_of(changed)[ENTERPRISE]["manager"]["value"] == other["id"]
    for clear in ("", None):
        operations = [
            {"op": "replace", "path": key, "value": clear}
            for key in ("displayName", "title", f"{ENTERPRISE}:employeeNumber", "manager")
        ]
        if "externalId" in optional:
            operations.append({"op": "replace", "value": {"externalId": clear}})
        cleared = patch(http, path, *operations)
        assert cleared.status_code == 200, body_of(cleared)
        body = body_of(http("GET", path))
        assert not {"displayName", "title", "externalId", ENTERPRISE} & set(body), body
        restored = patch(http, path, {"op": "add", "value": optional})
        assert restored.status_code == 200, body_of(restored)
    entry = directory_backend._search(
        dn_of(directory_backend, user), "(objectClass=*)", ["title", "manager"], scope="BASE"
    )[0][0]["attributes"]
    assert entry.get("title") == ["Tester"]
    cleared = patch(http, path, {"op": "replace", "value": {"title": "", "manager": ""}})
    assert cleared.status_code == 200, body_of(cleared)
    entry = directory_backend._search(
        dn_of(directory_backend, user), "(objectClass=*)", ["title", "manager"], scope="BASE"
    )[0][0]["attributes"]
    assert not entry.get("title") and not entry.get("manager"), entry
    required = patch(http, path, {"op": "replace", "path": "name.givenName", "value": ""})
    assert required.status_code == 400 and body_of(required)["scimType"] == "invalidValue"


def test_a_user_in_groups_can_be_deleted(http, directory):
    user = new_user(http, password=PASSWORD)
    group = body_of(http("POST", "/Groups", json={"displayName": "dd" + uuid.uuid4().hex[:8]}))
    path = "/Groups/" + group["id"]
    patch(http, path, {"op": "add", "path": "members", "value": [{"value": user["id"]}]})
    assert [m["value"] for m in body_of(http("GET", path))["members"]] == [user["id"]]
    assert http("DELETE", "/Users/" + user["id"]).status_code == 204
    assert http("GET", "/Users/" + user["id"]).status_code == 404
    assert not body_of(http("GET", path)).get("members")
    assert http("DELETE", "/Users/" + user["id"]).status_code == 404


def test_pages_are_sorted_and_complete_at_any_start(http, directory):
    for _ in range(3):
        new_user(http)
    total = body_of(http("GET", "/Users", query_string={"count": "0"}))["totalResults"]
    assert total >= 3
    # Other tests of the session may have made users before: the whole list, 200 at a time.
    names = [
        r["userName"]
        for start in range(1, total + 1, 200)
        for r in body_of(
            http("GET", "/Users", query_string={"startIndex": str(start), "count": "200"})
        )["Resources"]
    ]
    assert len(names) == total
    assert names == sorted(names, key=str.lower)
    walked: list[str] = []
    for start in range(1, total + 1, 2):
        page = body_of(http("GET", "/Users", query_string={"startIndex": str(start), "count": "2"}))
        assert page["totalResults"] == total and page["startIndex"] == start
        walked += [r["userName"] for r in page["Resources"]]
    assert walked == names[:total]
    past = body_of(http("GET", "/Users", query_string={"startIndex": str(total + 5), "count": "2"}))
    assert past["Resources"] == [] and past["totalResults"] == total


def test_a_directory_without_a_change_marker_is_asked_for_one_once(http, directory, monkeypatch):
    """389-DS and AD keep no contextCSN: once the service has seen that, a list page there is
    its search alone, not a read of the marker and a search each time. On OpenLDAP the marker
    is read before each page of a large list: it tells whether the sorted snapshot holds."""
    monkeypatch.setattr(paging, "_REUSE_FROM", 1)  # every list counts as large here
    for _ in range(3):
        new_user(http)
    assert len(body_of(http("GET", "/Users", query_string={"count": "1"}))["Resources"]) == 1
    marker_reads: list[str] = []
    search = operations.search

    def counting(connection: Any, request: operations.Search) -> Any:
        if list(request.attributes) == ["contextCSN"]:
            marker_reads.append(request.base)
        return search(connection, request)

    monkeypatch.setattr(operations, "search", counting)
    for start in ("2", "3"):
        page = body_of(http("GET", "/Users", query_string={"startIndex": start, "count": "1"}))
        assert len(page["Resources"]) == 1
    assert len(marker_reads) == (2 if directory.dialect == "openldap" else 0), marker_reads


def test_a_stale_if_match_is_412_and_a_current_one_applies(http, directory):
    user = new_user(http)
    path = "/Users/" + user["id"]
    stale = user["meta"]["version"]
    changed = patch(http, path, {"op": "replace", "path": "title", "value": "First"})
    assert changed.status_code == 200
    current = changed.headers["ETag"]
    assert current != stale
    refused = patch(
        http,
        path,
        {"op": "replace", "path": "title", "value": "Second"},
        headers={"If-Match": stale},
    )
    assert refused.status_code == 412
    assert body_of(http("GET", path))["title"] == "First"
    applied = patch(
        http,
        path,
        {"op": "replace", "path": "title", "value": "Second"},
        headers={"If-Match": current},
    )
    assert applied.status_code == 200 and body_of(applied)["title"] == "Second"


def test_two_writes_in_one_second_have_two_versions(http, directory):
    user = new_user(http)
    path = "/Users/" + user["id"]
    versions = {user["meta"]["version"]}
    for title in ("One", "Two", "Three"):
        response = patch(http, path, {"op": "replace", "path": "title", "value": title})
        versions.add(response.headers["ETag"])
    assert len(versions) == 4


def test_entries_made_by_the_directorys_own_tools_are_found_and_managed(
    http, directory, directory_backend
):
    """Seeded users with passwords, made by each directory's own tool (OpenLDAP: ldapadd;
    389-DS: carol by dsidm, an nsPerson; AD: samba-tool): found by userName, disabled and
    enabled over SCIM; alice is in the seeded group developers."""
    everyone = body_of(http("GET", "/Users", query_string={"count": "200"}))["Resources"]
    by_name = {r["userName"].split("@")[0].lower(): r for r in everyone}
    for name in ("carol", "alice") if "carol" in directory.seed_passwords else ("alice",):
        user = by_name[name]
        query = {"filter": f'userName eq "{user["userName"]}"'}
        found = http("GET", "/Users", query_string=query)
        assert [r["id"] for r in body_of(found)["Resources"]] == [user["id"]]
        password = directory.seed_passwords[name]
        assert binds(directory, directory_backend, user, password)
        path = "/Users/" + user["id"]
        off = {"op": "replace", "path": "active", "value": False}
        on = {"op": "replace", "path": "active", "value": True}
        try:
            assert patch(http, path, off).status_code == 200
            assert not binds(directory, directory_backend, user, password)
        finally:
            assert patch(http, path, on).status_code == 200
        assert binds(directory, directory_backend, user, password)
    groups = body_of(http("GET", "/Groups", query_string={"filter": 'displayName eq "developers"'}))
    members = groups["Resources"][0]["members"]
    assert by_name["alice"]["id"] in [m["value"] for m in members]


def test_readiness_on_each_directory(app):
    response = app.test_client().get("/readyz")
    assert response.status_code == 200, response.get_data(as_text=True)


def test_a_canary_password_never_reaches_a_log_or_an_answer(http, directory, caplog):
    """On each directory, including AD's unicodePwd (UTF-16LE) and ldap3's own protocol dump."""
    from ldap3.utils.log import EXTENDED, set_library_log_detail_level

    # Letters a-f only: 389-DS refuses a password sharing 3 characters with the (digit) uid.
    canary = "Canary-Pw-" + uuid.uuid4().hex[:8].translate(
        str.maketrans("0123456789", "abcdefabcd")
    )
    forms = (canary, canary.encode("utf-16-le").decode("latin-1"), repr(canary.encode("utf-16-le")))
    logging.getLogger("ldap3").setLevel(logging.DEBUG)
    set_library_log_detail_level(EXTENDED)
    try:
        with caplog.at_level(logging.DEBUG):
            user = new_user(http, password=canary + "1!")
            answers = [http("GET", "/Users/" + user["id"]).get_data(as_text=True)]
            for value in (canary + "2!", "short"):
                op = {"op": "replace", "path": "password", "value": value}
                answers.append(patch(http, "/Users/" + user["id"], op).get_data(as_text=True))
    finally:
        set_library_log_detail_level(0)
        logging.getLogger("ldap3").setLevel(logging.NOTSET)
    assert caplog.records
    logged = "\n".join(caplog.handler.format(r) + repr(r.__dict__) for r in caplog.records)
    for form in forms:
        assert form not in logged
        assert all(form not in answer for answer in answers)


# What docs/directories.md says each server offers: (assertion, values-return filter,
# sort + VLV, post-read, Who am I?).
OFFERS = {
    "openldap": (True, True, True, True, True),
    "389ds": (False, False, True, True, True),
    "ad": (False, False, True, False, False),
}


def test_each_server_offers_what_the_documentation_says(directory, directory_backend):
    from scim_core.backends.ldap.capabilities import POST_READ

    found = directory_backend.connections.capabilities()
    offered = (
        found.assertion,
        found.values_return_filter,
        found.sorted_windows,
        POST_READ in found.controls,
        found.who_am_i,
    )
    assert offered == OFFERS[directory.dialect]


def test_users_in_several_ous_are_paged_together_and_a_move_keeps_the_id(
    directory, directory_backend, other_service
):
    """SCIM_LDAP_USERS_SCOPE=sub: users in a second OU below the users base are listed and
    paged with the others; one an admin moves there keeps its id and stays writable; its uid
    stays taken; a service confined to one level answers 404 for it."""
    backend, http = other_service(users_scope="sub")
    settings = backend.settings
    token = uuid.uuid4().hex[:8]
    ou = f"ou=contractors{token},{settings.users_base}"
    run = backend.connections.run
    run(lambda c: operations.add(c, ou, {"objectClass": ["top", "organizationalUnit"]}))
    users = [new_user(http) for _ in range(3)]
    moved = users[1]
    old_dn = dn_of(backend, moved)
    rdn = old_dn.split(",", 1)[0]
    run(lambda c: c.modify_dn(old_dn, rdn, new_superior=ou) or _refused(c))
    try:
        assert dn_of(backend, moved).lower() == f"{rdn},{ou}".lower()
        fetched = body_of(http("GET", "/Users/" + moved["id"]))
        assert (fetched["id"], fetched["userName"]) == (moved["id"], moved["userName"])
        listed, start = [], 1
        while True:
            page = body_of(http("GET", "/Users", query_string={"startIndex": start, "count": 2}))
            listed += [r["id"] for r in page["Resources"]]
            start += 2
            if start > page["totalResults"]:
                break
        assert len(listed) == len(set(listed)) == page["totalResults"]
        assert {u["id"] for u in users} <= set(listed)
        query = {"filter": f'userName eq "{moved["userName"].upper()}"'}
        found = body_of(http("GET", "/Users", query_string=query))["Resources"]
        assert [r["id"] for r in found] == [moved["id"]]
        changed = patch(
            http, "/Users/" + moved["id"], {"op": "replace", "path": "title", "value": "Moved"}
        )
        assert changed.status_code == 200 and body_of(changed)["title"] == "Moved"
        stored = backend._search(dn_of(backend, moved), "(objectClass=*)", ["title"], scope="BASE")
        assert stored[0][0]["attributes"]["title"] == ["Moved"]
        assert_taken(http, moved["userName"], token)
        one_level = TimedHttp(make_app(directory_backend, TOKEN).test_client(), TOKEN)
        assert one_level("GET", "/Users/" + moved["id"]).status_code == 404
        renamed = f"moved{token}@example.org"
        response = patch(
            http, "/Users/" + moved["id"], {"op": "replace", "path": "userName", "value": renamed}
        )
        assert response.status_code == 200 and body_of(response)["userName"] == renamed
        assert dn_of(backend, moved).lower().endswith("," + ou.lower())
    finally:
        for user in users:
            http("DELETE", "/Users/" + user["id"])
        run(lambda c: operations.delete(c, ou))


def _refused(connection) -> None:
    raise AssertionError(f"the directory refused the move: {connection.result}")


def test_groups_in_several_ous_are_found_by_their_id(directory, other_service):
    """SCIM_LDAP_GROUPS_SCOPE=sub: a group an admin moved to an OU below the groups base keeps
    its id (its cn), its members and its writes; a second group with that cn is refused."""
    backend, http = other_service(groups_scope="sub")
    settings = backend.settings
    token = uuid.uuid4().hex[:8]
    ou = f"ou=teams{token},{settings.groups_base}"
    run = backend.connections.run
    run(lambda c: operations.add(c, ou, {"objectClass": ["top", "organizationalUnit"]}))
    member = new_user(http)
    name = "dm" + token
    created = http("POST", "/Groups", json={"displayName": name})
    assert created.status_code == 201, body_of(created)
    old_dn = f"cn={name},{settings.groups_base}"
    run(lambda c: c.modify_dn(old_dn, f"cn={name}", new_superior=ou) or _refused(c))
    try:
        path = "/Groups/" + name
        add = {"op": "add", "path": "members", "value": [{"value": member["id"]}]}
        assert patch(http, path, add).status_code == 200
        group = body_of(http("GET", path))
        assert (group["id"], [m["value"] for m in group["members"]]) == (name, [member["id"]])
        assert backend.group_dn(name).lower() == f"cn={name},{ou}".lower()
        assert http("POST", "/Groups", json={"displayName": name}).status_code == 409
        listed = body_of(http("GET", "/Groups", query_string={"count": 200}))["Resources"]
        assert name in [g["id"] for g in listed]
        renamed = patch(http, path, {"op": "replace", "path": "displayName", "value": "N" + name})
        assert renamed.status_code == 200 and body_of(renamed)["id"] == name
    finally:
        run(lambda c: operations.delete(c, f"cn={name},{ou}"))
        run(lambda c: operations.delete(c, ou))
        http("DELETE", "/Users/" + member["id"])


@pytest.fixture
def sibling_ous(directory_backend):
    """A function adding OUs (the DNs of ``names`` below ``parent``) for one test: the service
    account makes them and removes them, with whatever is left in them, afterwards."""
    made: list[str] = []
    run = directory_backend.connections.run

    def make(parent: str, *names: str) -> list[str]:
        dns = [f"ou={name},{parent}" for name in names]
        for dn in dns:
            run(
                lambda c, dn=dn: operations.add(
                    c, dn, {"objectClass": ["top", "organizationalUnit"]}
                )
            )
            made.append(dn)
        return dns

    yield make
    for ou in reversed(made):
        left, _ = directory_backend._search(ou, "(objectClass=*)", ["1.1"], scope="LEVEL")
        for entry in left:
            run(lambda c, dn=entry["dn"]: operations.delete(c, dn))
        run(lambda c, ou=ou: operations.delete(c, ou))


def named_user(http, user_name: str, **extra) -> dict[str, Any]:
    body = {
        "userName": user_name,
        "name": {"givenName": "Bea", "familyName": "Sis"},
        "emails": [{"value": user_name, "type": "work", "primary": True}],
        **extra,
    }
    response = http("POST", "/Users", json=body)
    assert response.status_code == 201, body_of(response)
    return body_of(response)


def listed(http, path: str, **query) -> dict[str, Any]:
    response = http("GET", path, query_string=query)
    assert response.status_code == 200, body_of(response)
    return body_of(response)


def test_users_under_two_bases_are_listed_paged_and_found_together(
    directory, directory_backend, other_service, sibling_ous
):
    """SCIM_LDAP_USERS_BASE naming two sibling OUs: their users are listed in one userName
    order across page boundaries at every start, counted together, found by filter and id
    and written wherever they are; creates go to the new-users base; a third OU that is not
    configured stays out (its users 404)."""
    token = uuid.uuid4().hex[:6]
    staff, contractors, other = sibling_ous(
        directory_backend.settings.users_base, f"s{token}", f"c{token}", f"o{token}"
    )
    both = {"users_base": staff, "users_bases": (staff, contractors)}
    backend, http = other_service(**both, new_users_base=staff)
    _, into_contractors = other_service(**both, new_users_base=contractors)
    _, elsewhere = other_service(users_base=other, users_bases=(other,), new_users_base=other)
    prefix = f"mb{token}"
    # Interleaved names, mixed case: the order is userName's, case aside, whatever the base.
    plan = {"b": staff, "C": staff, "f": staff, "G": staff, "a": contractors, "D": contractors}
    plan["e"] = contractors
    shared = f"shared{token}@example.org"
    users = {}
    for letter, base in plan.items():
        client = http if base == staff else into_contractors
        disabled = {"active": False} if letter in "bCa" else {}
        emails = [{"value": shared, "type": "work", "primary": True}] if letter in "fD" else None
        extra = {**disabled, **({"emails": emails} if emails else {})}
        users[letter] = named_user(client, f"{prefix}-{letter}@example.org", **extra)
        assert dn_of(backend, users[letter]).lower().endswith("," + base.lower())
    outsider = named_user(elsewhere, f"{prefix}-0@example.org")
    in_order = [users[k]["id"] for k in sorted(users, key=str.casefold)]

    everyone = listed(http, "/Users", count=50)
    assert [r["id"] for r in everyone["Resources"]] == in_order
    assert everyone["totalResults"] == 7
    beyond = listed(http, "/Users", startIndex=2**31 - 1, count=200)  # RFC 4511 maxInt
    assert beyond["totalResults"] == 7 and not beyond.get("Resources")
    only_counted = listed(http, "/Users", count=0)
    assert only_counted["totalResults"] == 7 and not only_counted.get("Resources")
    for count in (1, 2, 3):
        for start in range(1, 10):
            page = listed(http, "/Users", startIndex=start, count=count)
            assert page["totalResults"] == 7 and page["startIndex"] == start
            assert [r["id"] for r in page["Resources"]] == in_order[start - 1 : start - 1 + count]
            # The page's entries are read in full, with the attributes asked.
            assert all(r["name"]["givenName"] == "Bea" for r in page["Resources"])

    second = users["D"]
    found = listed(http, "/Users", filter=f'userName eq "{second["userName"].upper()}"')
    assert [r["id"] for r in found["Resources"]] == [second["id"]]
    inactive = [users[k]["id"] for k in ("a", "b", "C")]
    for count in (1, 2):
        walked = []
        for start in range(1, 5, count):
            page = listed(http, "/Users", filter="active eq false", startIndex=start, count=count)
            assert page["totalResults"] == 3
            walked += [r["id"] for r in page["Resources"]]
        assert walked == inactive
    by_mail = listed(http, "/Users", filter=f'emails.value eq "{shared}"')
    assert [r["id"] for r in by_mail["Resources"]] == [users["D"]["id"], users["f"]["id"]]

    # The id of a user of the second base is found, written, and its name stays taken.
    assert listed(http, "/Users/" + second["id"])["userName"] == second["userName"]
    title = {"op": "replace", "path": "title", "value": "Contractor"}
    changed = patch(http, "/Users/" + second["id"], title)
    assert changed.status_code == 200 and body_of(changed)["title"] == "Contractor"
    assert_taken(http, second["userName"], token)

    assert outsider["id"] not in {r["id"] for r in listed(http, "/Users", count=50)["Resources"]}
    assert http("GET", "/Users/" + outsider["id"]).status_code == 404
    assert patch(http, "/Users/" + outsider["id"], title).status_code == 404
    lookup = listed(http, "/Users", filter=f'userName eq "{outsider["userName"]}"')
    assert lookup["totalResults"] == 0


def test_groups_under_two_bases_are_listed_found_and_take_members_of_either(
    directory, directory_backend, other_service, sibling_ous
):
    """SCIM_LDAP_GROUPS_BASE naming two sibling OUs: a group of the second base is found by
    its id and its displayName, listed with the others in order, and takes as members users
    of either users base; a group of a third OU stays out."""
    token = uuid.uuid4().hex[:6]
    settings = directory_backend.settings
    people, contractors = sibling_ous(settings.users_base, f"p{token}", f"c{token}")
    teams, projects, other = sibling_ous(
        settings.groups_base, f"t{token}", f"j{token}", f"o{token}"
    )
    shape = {
        "users_base": people,
        "users_bases": (people, contractors),
        "groups_base": teams,
        "groups_bases": (teams, projects),
    }
    backend, http = other_service(**shape, new_users_base=people, new_groups_base=teams)
    _, second = other_service(**shape, new_users_base=contractors, new_groups_base=projects)
    _, elsewhere = other_service(groups_base=other, groups_bases=(other,), new_groups_base=other)
    prefix = f"gb{token}"
    names = {"b": http, "D": http, "a": second, "c": second, "E": second}
    groups = {}
    for letter, client in names.items():
        created = client("POST", "/Groups", json={"displayName": f"{prefix}{letter}"})
        assert created.status_code == 201, body_of(created)
        groups[letter] = body_of(created)
    outsider = elsewhere("POST", "/Groups", json={"displayName": f"{prefix}0"})
    assert outsider.status_code == 201, body_of(outsider)
    assert backend.group_dn(groups["c"]["id"]).lower().endswith("," + projects.lower())

    in_order = [groups[k]["id"] for k in sorted(groups, key=str.casefold)]
    for count in (2, 3):
        walked = []
        for start in range(1, 7, count):
            page = listed(http, "/Groups", startIndex=start, count=count)
            assert page["totalResults"] == 5
            walked += [g["id"] for g in page["Resources"]]
        assert walked == in_order

    group = groups["c"]
    found = listed(http, "/Groups", filter=f'displayName eq "{group["displayName"]}"')
    assert [g["id"] for g in found["Resources"]] == [group["id"]]
    assert listed(http, "/Groups/" + group["id"])["displayName"] == group["displayName"]
    assert http("POST", "/Groups", json={"displayName": group["displayName"]}).status_code == 409

    member_here = named_user(http, f"{prefix}-u@example.org")
    member_there = named_user(second, f"{prefix}-v@example.org")
    members = [{"value": member_here["id"]}, {"value": member_there["id"]}]
    for target in (groups["c"], groups["b"]):
        path = "/Groups/" + target["id"]
        added = patch(http, path, {"op": "add", "path": "members", "value": members})
        assert added.status_code in (200, 204), body_of(added)
        read = {m["value"] for m in listed(http, path)["members"]}
        assert read == {member_here["id"], member_there["id"]}
    listed_members = {
        g["id"]: {m["value"] for m in g.get("members") or ()}
        for g in listed(http, "/Groups", count=50)["Resources"]
    }
    assert listed_members[groups["c"]["id"]] == {member_here["id"], member_there["id"]}
    remove = {"op": "remove", "path": f'members[value eq "{member_there["id"]}"]'}
    assert patch(http, "/Groups/" + group["id"], remove).status_code in (200, 204)
    read = [m["value"] for m in listed(http, "/Groups/" + group["id"])["members"]]
    assert read == [member_here["id"]]

    absent = body_of(outsider)["id"]
    assert http("GET", "/Groups/" + absent).status_code == 404
    by_name = listed(http, "/Groups", filter=f'displayName eq "{prefix}0"')
    assert by_name["totalResults"] == 0
    assert absent not in {g["id"] for g in listed(http, "/Groups", count=50)["Resources"]}


ACME = "urn:example:params:scim:schemas:extension:acme:2.0:User"


def test_a_mapping_file_adds_attributes_without_code(
    directory, directory_backend, other_service, tmp_path
):
    """A site mapping file: an enterprise attribute of the profile held in another LDAP
    attribute, and the site's own extension (a filterable string, an integer, octets), each
    written, stored in its LDAP attribute, returned as sent, listed in /Schemas and
    /ResourceTypes."""
    ad = directory.dialect == "ad"
    department, badge_attribute, level = (
        ("physicalDeliveryOfficeName", "employeeID", "msDS-cloudExtensionAttribute5")
        if ad
        else ("ou", "carLicense", "roomNumber")
    )
    signature = "thumbnailPhoto" if ad else "audio"
    octets = b"\x00\xffsigned\x80"  # not UTF-8: held and returned as octets
    mapping = tmp_path / "mapping.toml"
    mapping.write_text(
        f"""
[[user]]
scim = "{ENTERPRISE}:department"
ldap = "{department}"

[[user]]
scim = "{ACME}:badgeNumber"
ldap = "{badge_attribute}"
filter = true
description = "The badge printed on the card."

[[user]]
scim = "{ACME}:level"
ldap = "{level}"
type = "integer"

[[user]]
scim = "{ACME}:signature"
ldap = "{signature}"
type = "binary"

[schema."{ACME}"]
name = "AcmeUser"
""",
        encoding="utf-8",
    )
    base = default_mapping(directory.dialect)
    backend, http = other_service(mapping=load_mapping(mapping, base))
    badge = "B-" + uuid.uuid4().hex[:6]
    extra = {
        "preferredLanguage": "de-CH",
        ENTERPRISE: {"department": "Finance"},
        ACME: {"badgeNumber": badge, "level": 3, "signature": base64.b64encode(octets).decode()},
    }
    user = new_user(http, **extra)
    fetched = body_of(http("GET", "/Users/" + user["id"]))
    for got in (user, fetched):
        assert got["preferredLanguage"] == "de-CH"
        assert got[ENTERPRISE]["department"] == "Finance"
        assert got[ACME] == extra[ACME]
        assert ACME in got["schemas"]
    default_department = base_ldap(base, f"{ENTERPRISE}:department")
    entry = backend._search(
        dn_of(backend, user),
        "(objectClass=*)",
        [department, default_department, badge_attribute, level, signature],
        scope="BASE",
    )[0][0]["attributes"]
    assert entry[department] == ["Finance"] and not entry.get(default_department)
    assert entry[badge_attribute] == [badge] and entry[level] == ["3"]
    assert entry[signature] == [octets]
    not_base64 = patch(
        http,
        "/Users/" + user["id"],
        {"op": "replace", "path": f"{ACME}:signature", "value": "not base64!"},
    )
    assert not_base64.status_code == 400 and body_of(not_base64)["scimType"] == "invalidValue"
    query = {"filter": f'{ACME}:badgeNumber eq "{badge}"'}
    found = body_of(http("GET", "/Users", query_string=query))["Resources"]
    assert [r["id"] for r in found] == [user["id"]]
    refused = http("GET", "/Users", query_string={"filter": 'preferredLanguage eq "de-CH"'})
    assert refused.status_code == 400 and body_of(refused)["scimType"] == "invalidFilter"
    path = "/Users/" + user["id"]
    changed = patch(
        http,
        path,
        {"op": "replace", "path": f"{ACME}:level", "value": 4},
        {"op": "replace", "value": {"preferredLanguage": "fr", f"{ACME}:badgeNumber": ""}},
    )
    assert changed.status_code == 200, body_of(changed)
    assert body_of(changed)[ACME] == {"level": 4, "signature": extra[ACME]["signature"]}
    assert body_of(changed)["preferredLanguage"] == "fr"
    schemas = body_of(http("GET", "/Schemas/" + ACME))
    assert schemas["name"] == "AcmeUser"
    assert [a["name"] for a in schemas["attributes"]] == ["badgeNumber", "level", "signature"]
    assert [a["type"] for a in schemas["attributes"]] == ["string", "integer", "binary"]
    resource_type = body_of(http("GET", "/ResourceTypes/User"))
    assert ACME in [e["schema"] for e in resource_type["schemaExtensions"]]
    document = body_of(http("GET", "/openapi.json"))["components"]["schemas"]
    for shape in ("User", "UserRequest"):
        properties = document[shape]["properties"]
        assert properties["preferredLanguage"] == {"type": "string"}
        assert properties[ACME]["properties"]["level"] == {"type": "integer"}
        assert properties[ACME]["properties"]["signature"] == {"type": "string", "format": "byte"}
    # Without the file the extension is neither kept nor listed, and the department is
    # where the profile keeps it.
    plain = TimedHttp(make_app(directory_backend, TOKEN).test_client(), TOKEN)
    bare = body_of(plain("GET", path))
    assert ACME not in bare and "department" not in bare.get(ENTERPRISE, {})
    assert bare["preferredLanguage"] == "fr"
    assert plain("GET", "/Schemas/" + ACME).status_code == 404


def base_ldap(mapping, filter_name: str) -> str:
    """The LDAP attribute ``mapping`` keeps ``filter_name`` in."""
    return next(m.ldap for m in mapping.users if m.filter_name == filter_name)


def test_the_profile_mapping_and_the_shipped_example_round_trip_every_attribute(
    directory, directory_backend, other_service
):
    """The profile's own mapping extended by examples/mapping/<directory>.toml: every
    attribute (singular ones and the typed elements of phoneNumbers and addresses) is written,
    stored in its LDAP attribute in that attribute's syntax, returned as sent, and cleared
    with "" on this directory."""
    example = Path(__file__).resolve().parents[2] / "examples" / "mapping"
    base = default_mapping(directory.dialect)
    site = load_mapping(example / f"{directory.dialect}.toml", base)
    backend, http = other_service(mapping=site)
    mapping = base.extended_by(site)
    token = uuid.uuid4().hex[:6]

    def value_of(attribute) -> str:
        # Short values: AD's attributes have ranges (employeeID: 16 characters).
        if attribute.name == "profileUrl":
            return f"https://example.org/{token}"
        if attribute.sub == "formatted":
            return f"Building {token}\nFloor $3, C:\\Mail"
        if attribute.name == "phoneNumbers":  # a number per type: equal values are one
            kind = ["work", "mobile", "fax"].index(str(attribute.element_type))
            return f"+41 4{kind} {int(token, 16) % 10**6:06d}"
        return f"{(attribute.sub or attribute.name)[:7]}{token}"

    def holder_of(resource, attribute, *, create=False):
        if attribute.element_type is not None:
            elements = (
                resource.setdefault(attribute.name, [])
                if create
                else resource.get(attribute.name, [])
            )
            for element in elements:
                if element.get("type") == attribute.element_type:
                    return element
            if not create:
                raise AssertionError(f"no {attribute.filter_name} in {resource}")
            elements.append({"type": attribute.element_type})
            return elements[-1]
        if len(attribute.path) == 1:
            return resource
        return resource.setdefault(attribute.schema, {}) if create else resource[attribute.schema]

    values = {m: value_of(m) for m in mapping.users if m.name != "name"}
    body: dict[str, Any] = {}
    for attribute, value in values.items():
        holder_of(body, attribute, create=True)[attribute.sub or attribute.name] = value
    user = new_user(http, **body)
    fetched = body_of(http("GET", "/Users/" + user["id"]))
    entry = backend._search(
        dn_of(backend, user), "(objectClass=*)", [m.ldap for m in values], scope="BASE"
    )[0][0]["attributes"]
    for attribute, value in values.items():
        for got in (user, fetched):
            assert holder_of(got, attribute)[attribute.sub or attribute.name] == value
        stored = to_ldap(attribute.syntax, attribute.filter_name, value)
        assert entry[attribute.ldap] == [stored], attribute
    clear = [{"op": "replace", "path": attribute.filter_name, "value": ""} for attribute in values]
    cleared = patch(http, "/Users/" + user["id"], *clear)
    assert cleared.status_code == 200, body_of(cleared)
    entry = backend._search(
        dn_of(backend, user), "(objectClass=*)", [m.ldap for m in values], scope="BASE"
    )[0][0]["attributes"]
    assert not any(entry.get(m.ldap) for m in values), entry
    left = body_of(http("GET", "/Users/" + user["id"]))
    assert not any(a.name in left.get(a.schema, left) for a in values), left


def test_entra_default_attributes_round_trip_in_both_patch_forms(
    directory, directory_backend, other_service
):
    """Every attribute of Entra ID's default user mapping, with the profile's own mapping:
    a create, then each value changed with one operation per attribute (Entra's default
    PATCH) and again with one path-less replace of dotted and URN keys (its 2020 behaviour);
    each time every value is stored and comes back as sent. Then each optional one is
    cleared with "" and is gone, set again, and cleared with null. (AD keeps no
    name.formatted: its cn is the RDN.)"""
    backend, http = other_service()
    manager = new_user(http)
    token = f"{uuid.uuid4().int % 10**6:06d}"

    def values(round_: str) -> dict[str, Any]:
        # Entra's default attribute mappings: target attribute -> a value of this round.
        country = "CH" if round_ == "a" else "DE"
        plain = {
            "displayName": f"Dee {round_}{token}",
            "title": f"Title {round_}",
            "preferredLanguage": "de-CH" if round_ == "a" else "fr-CH",
            "name.givenName": f"Given{round_}",
            "name.familyName": f"Family{round_}",
            "externalId": f"nick{round_}{token}",
            'phoneNumbers[type eq "work"].value': f"+41 44 1{token}",
            'phoneNumbers[type eq "mobile"].value': f"+41 79 2{token}",
            'phoneNumbers[type eq "fax"].value': f"+41 44 3{token}",
            'addresses[type eq "work"].streetAddress': f"Street {round_} 1",
            'addresses[type eq "work"].locality': f"Town {round_}",
            'addresses[type eq "work"].region': f"Region {round_}",
            'addresses[type eq "work"].postalCode': f"80{token[:2]}",
            'addresses[type eq "work"].formatted': f"Office {round_}{token}",
            f"{ENTERPRISE}:employeeNumber": f"E{round_}{token}",
            f"{ENTERPRISE}:department": f"Dept {round_}",
        }
        if round_ == "b":
            plain = {
                k: v.replace("+41 44 1", "+41 44 4") if "work" in k else v for k, v in plain.items()
            }
        plain['addresses[type eq "work"].country'] = country
        if directory.dialect != "ad":
            plain["name.formatted"] = f"Given{round_} Family{round_}"
        return plain

    def read(resource: dict[str, Any], path: str) -> Any:
        if "[" in path:
            name, rest = path.split("[", 1)
            kind = rest.split('"')[1]
            sub = rest.rsplit(".", 1)[1]
            found = [e for e in resource.get(name, []) if e.get("type") == kind]
            return found[0].get(sub) if found else None
        if path.startswith(ENTERPRISE):
            return resource.get(ENTERPRISE, {}).get(path.rsplit(":", 1)[1])
        holder: Any = resource
        for part in path.split("."):
            holder = holder.get(part) if isinstance(holder, dict) else None
        return holder

    def check(user_id: str, expected: dict[str, Any]) -> None:
        fetched = body_of(http("GET", "/Users/" + user_id))
        for path, value in expected.items():
            assert read(fetched, path) == value, (path, fetched)

    first = values("a")
    body = {
        "userName": f"Entra.User{token}@Contoso.example",
        "active": True,
        "emails": [{"value": f"entra{token}@contoso.example", "type": "work", "primary": True}],
        "name": {k.split(".")[1]: v for k, v in first.items() if k.startswith("name.")},
        "displayName": first["displayName"],
        "title": first["title"],
        "preferredLanguage": first["preferredLanguage"],
        "externalId": first["externalId"],
        "phoneNumbers": [
            {"type": kind, "value": first[f'phoneNumbers[type eq "{kind}"].value']}
            for kind in ("work", "mobile", "fax")
        ],
        "addresses": [
            {
                "type": "work",
                **{
                    sub: first[f'addresses[type eq "work"].{sub}']
                    for sub in (
                        "streetAddress",
                        "locality",
                        "region",
                        "postalCode",
                        "country",
                        "formatted",
                    )
                },
            }
        ],
        ENTERPRISE: {
            "employeeNumber": first[f"{ENTERPRISE}:employeeNumber"],
            "department": first[f"{ENTERPRISE}:department"],
            "manager": {"value": manager["id"]},
        },
    }
    if backend.settings.external_id_attribute is None:
        del body["externalId"], first["externalId"]
    created = http("POST", "/Users", json=body)
    assert created.status_code == 201, body_of(created)
    user_id = body_of(created)["id"]
    check(user_id, first)
    second = values("b")
    if "externalId" not in first:
        del second["externalId"]
    one_by_one = [{"op": "Replace", "path": path, "value": value} for path, value in second.items()]
    assert patch(http, "/Users/" + user_id, *one_by_one).status_code == 200
    check(user_id, second)
    path_less = {k: v for k, v in first.items() if "[" not in k}
    filtered = [{"op": "replace", "path": k, "value": v} for k, v in first.items() if "[" in k]
    replaced = patch(http, "/Users/" + user_id, *filtered, {"op": "replace", "value": path_less})
    assert replaced.status_code == 200, body_of(replaced)
    check(user_id, first)
    optional = [k for k in first if not k.startswith("name.")]
    cleared = patch(
        http,
        "/Users/" + user_id,
        *({"op": "replace", "path": k, "value": ""} for k in optional),
        {"op": "replace", "path": "manager", "value": ""},
    )
    assert cleared.status_code == 200, body_of(cleared)
    check(user_id, dict.fromkeys(optional))
    assert ENTERPRISE not in body_of(cleared) or "manager" not in body_of(cleared)[ENTERPRISE]
    # Set again, then cleared with null.
    again = patch(http, "/Users/" + user_id, *filtered, {"op": "replace", "value": path_less})
    assert again.status_code == 200, body_of(again)
    check(user_id, first)
    nulled = patch(
        http,
        "/Users/" + user_id,
        *({"op": "replace", "path": k, "value": None} for k in optional),
    )
    assert nulled.status_code == 200, body_of(nulled)
    check(user_id, dict.fromkeys(optional))


#: What Okta's SCIM 2.0 app sends by default beyond the service's own table (its profile
#: mappings).
OKTA_DEFAULTS = {
    "nickName": "Babs",
    "profileUrl": "https://profiles.example/babs",
    "userType": "Employee",
    "preferredLanguage": "en-US",
    "locale": "en-US",
    "timezone": "America/Los_Angeles",
    f"{ENTERPRISE}:organization": "Universal Studios",
    f"{ENTERPRISE}:division": "Theme Park",
    f"{ENTERPRISE}:department": "Tour Operations",
    f"{ENTERPRISE}:costCenter": "4130",
}


def test_okta_default_attributes_round_trip_through_create_put_and_patch(directory, other_service):
    """Okta's default profile attributes with the profile's own mapping: created, changed by
    a PUT (Okta's profile update) and by a path-less PATCH, each stored and returned as sent.
    (AD holds four of them in its cloud extension attributes.)"""
    _backend, http = other_service()

    def shaped(values: dict[str, str]) -> dict[str, Any]:
        body: dict[str, Any] = {}
        for key, value in values.items():
            if key.startswith(ENTERPRISE):
                body.setdefault(ENTERPRISE, {})[key.rsplit(":", 1)[1]] = value
            else:
                body[key] = value
        return body

    def stored(user_id: str) -> dict[str, str]:
        fetched = body_of(http("GET", "/Users/" + user_id))
        flat = {k: v for k, v in fetched.items() if k in OKTA_DEFAULTS}
        flat.update({f"{ENTERPRISE}:{k}": v for k, v in fetched.get(ENTERPRISE, {}).items()})
        return {k: v for k, v in flat.items() if k in OKTA_DEFAULTS}

    user = new_user(http, **shaped(OKTA_DEFAULTS))
    assert stored(user["id"]) == OKTA_DEFAULTS
    changed = {
        k: v + " 2" if not k.endswith(("Url", "locale", "Language")) else v
        for k, v in OKTA_DEFAULTS.items()
    }
    put_body = {
        "schemas": [USER_SCHEMA, ENTERPRISE],
        "userName": user["userName"],
        "name": user["name"],
        "emails": user["emails"],
        "active": True,
        **shaped(changed),
    }
    assert http("PUT", "/Users/" + user["id"], json=put_body).status_code == 200
    assert stored(user["id"]) == changed
    path_less = {"op": "replace", "value": {"nickName": "Barbara", "userType": "Contractor"}}
    assert patch(http, "/Users/" + user["id"], path_less).status_code == 200
    assert stored(user["id"]) == {**changed, "nickName": "Barbara", "userType": "Contractor"}


def test_a_site_file_takes_a_profile_attribute_away(directory, mapped_service):
    """``ldap = "none"`` for title: not written, not returned, not listed in /Schemas; a PATCH
    of it is skipped, as for any attribute nothing stores."""
    backend, http = mapped_service('[[user]]\nscim = "title"\nldap = "none"\n')
    user = new_user(http, title="Ignored")
    assert "title" not in user and "title" not in body_of(http("GET", "/Users/" + user["id"]))
    entry = backend._search(dn_of(backend, user), "(objectClass=*)", ["title"], scope="BASE")
    assert not entry[0][0]["attributes"].get("title")
    changed = patch(http, "/Users/" + user["id"], {"op": "replace", "path": "title", "value": "X"})
    assert changed.status_code == 200 and "title" not in body_of(changed)
    core = body_of(http("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User"))
    assert "title" not in [a["name"] for a in core["attributes"]]


def test_the_syntax_a_mapping_names_is_the_directorys(directory, directory_backend):
    """What the profile's mapping checks before a write is what the directory refuses: a
    telephone number is a PrintableString on OpenLDAP and 389-DS; AD takes it as written."""
    user = new_user(TimedHttp(make_app(directory_backend, TOKEN).test_client(), TOKEN))
    dn = dn_of(directory_backend, user)
    change = {"telephoneNumber": [(MODIFY_REPLACE, ["+41 44 1 #2"])]}
    try:
        directory_backend.connections.run(lambda c: operations.modify(c, dn, change))
        refused = None
    except LDAPOperationResult as error:
        refused = error.result
    assert refused == (None if directory.dialect == "ad" else 21)


def _snapshot(backend) -> dict[str, Any]:
    """Every entry under the users and groups bases: DN -> attribute -> sorted values."""
    found = {}
    version = backend.profile.version_attribute
    for base in (backend.settings.users_base, backend.settings.groups_base):
        entries, _ = backend._search(base, "(objectClass=*)", ["*", version], scope="SUBTREE")
        for entry in entries:
            found[entry["dn"].lower()] = {
                name.lower(): sorted(map(repr, values))
                for name, values in entry["attributes"].items()
            }
    return found


def test_a_dry_run_plans_every_kind_of_write_and_writes_nothing(
    http, directory, other_service, tmp_path
):
    """A dry-run instance over the same directory: a create, a PUT, a PATCH that disables and
    renames, a group create and a membership add, a delete, each answered as a real run would
    (X-Dry-Run, no ETag) and planned as LDIF; the directory is the same afterwards, down to
    the version of every entry."""
    user = new_user(http, password=PASSWORD, title="Real")
    group = http("POST", "/Groups", json={"displayName": "dd" + uuid.uuid4().hex[:8]})
    assert group.status_code == 201, body_of(group)
    ldif = tmp_path / "plan.ldif"
    backend, dry = other_service(dry_run=True, dry_run_ldif=str(ldif))
    before = _snapshot(backend)
    path = "/Users/" + user["id"]
    renamed = "dz" + uuid.uuid4().hex[:10] + "@example.org"
    put_body = {
        "userName": user["userName"],
        "name": user["name"],
        "emails": user["emails"],
        "title": "Put",
        "phoneNumbers": [{"type": "work", "value": "+41 44 555 00 00"}],
    }
    answers = {
        "create": dry(
            "POST",
            "/Users",
            json={
                "userName": "dp" + uuid.uuid4().hex[:10],
                "name": {"givenName": "Plan", "familyName": "Ned"},
                "emails": [{"value": "planned@example.org"}],
                "password": NEW_PASSWORD,
            },
        ),
        "put": dry("PUT", path, json=put_body),
        "patch": patch(
            dry,
            path,
            {"op": "replace", "path": "active", "value": False},
            {"op": "replace", "path": "userName", "value": renamed},
        ),
        "member": patch(
            dry,
            "/Groups/" + body_of(group)["id"],
            {"op": "add", "path": "members", "value": [{"value": user["id"]}]},
        ),
        "group": dry("POST", "/Groups", json={"displayName": "dq" + uuid.uuid4().hex[:8]}),
        "delete": dry("DELETE", path),
    }
    expected = {"create": 201, "put": 200, "patch": 200, "member": 200, "group": 201}
    for what, response in answers.items():
        assert response.status_code == expected.get(what, 204), what
        assert response.headers.get("X-Dry-Run") == "true", what
        assert "ETag" not in response.headers, what
    assert body_of(answers["patch"])["active"] is False
    assert body_of(answers["patch"])["userName"] == renamed
    assert body_of(answers["put"])["title"] == "Put"
    assert answers["delete"].status_code == 204
    assert _snapshot(backend) == before
    plan = ldif.read_text()
    for change in ("changetype: add", "changetype: modify", "changetype: delete"):
        assert change in plan, plan
    # The membership is planned in the group; the answer lists members through the
    # directory's memberOf, which only a real write changes.
    assert f"member: {dn_of(backend, user)}".lower() in plan.lower(), plan
    assert PASSWORD not in plan and NEW_PASSWORD not in plan
    assert body_of(http("GET", path))["title"] == "Real"


def test_a_mapped_reference_names_another_user_as_the_manager_does(directory, mapped_service):
    """A site's ``type = "reference"`` attribute: the id of another user in SCIM (a bare id
    or ``{"value": id}``), its DN in the directory, ``$ref`` derived; an unknown id is 400
    and changes nothing; "" clears it; /Schemas shows a complex attribute referencing User."""
    backend, http = mapped_service(
        f'[[user]]\nscim = "{ACME}:sponsor"\nldap = "seeAlso"\ntype = "reference"\n'
    )
    first_sponsor, second_sponsor = new_user(http), new_user(http)
    user = new_user(http, **{ACME: {"sponsor": {"value": first_sponsor["id"]}}})
    path = "/Users/" + user["id"]

    def stored() -> list[str]:
        entry = backend._search(dn_of(backend, user), "(objectClass=*)", ["seeAlso"], scope="BASE")
        return [dn.lower() for dn in entry[0][0]["attributes"].get("seeAlso", [])]

    for got in (user, body_of(http("GET", path))):
        assert got[ACME]["sponsor"]["value"] == first_sponsor["id"]
        assert got[ACME]["sponsor"]["$ref"].endswith("/Users/" + first_sponsor["id"])
    assert stored() == [dn_of(backend, first_sponsor).lower()]
    moved = patch(
        http, path, {"op": "replace", "path": f"{ACME}:sponsor", "value": second_sponsor["id"]}
    )
    assert body_of(moved)[ACME]["sponsor"]["value"] == second_sponsor["id"]
    assert stored() == [dn_of(backend, second_sponsor).lower()]
    unknown = patch(
        http, path, {"op": "replace", "path": f"{ACME}:sponsor", "value": str(uuid.uuid4())}
    )
    assert unknown.status_code == 400 and body_of(unknown)["scimType"] == "invalidValue"
    assert stored() == [dn_of(backend, second_sponsor).lower()]
    cleared = patch(http, path, {"op": "replace", "path": f"{ACME}:sponsor", "value": ""})
    assert cleared.status_code == 200 and ACME not in body_of(cleared)
    assert stored() == []
    schema = body_of(http("GET", "/Schemas/" + ACME))
    (sponsor,) = schema["attributes"]
    assert sponsor["type"] == "complex"
    assert [s["name"] for s in sponsor["subAttributes"]] == ["value", "$ref"]
    assert sponsor["subAttributes"][1]["referenceTypes"] == ["User"]


ACME_GROUP = "urn:example:params:scim:schemas:extension:acme:2.0:Group"


def test_a_mapping_file_maps_a_groups_own_attributes(directory, mapped_service):
    """``[[group]]`` entries: the attributes of a site's Group extension, each in an attribute
    of the group entry: set on create, returned under the URN, found with ``eq`` where the
    file allows it, changed and cleared by PATCH (path and path-less), listed in /Schemas and
    in the Group resource type; members and the name are untouched."""
    ad = directory.dialect == "ad"
    cost, rank = ("info", "adminDescription") if ad else ("businessCategory", "ou")
    backend, http = mapped_service(
        f"""
[[group]]
scim = "{ACME_GROUP}:costCenter"
ldap = "{cost}"
filter = true

[[group]]
scim = "{ACME_GROUP}:rank"
ldap = "{rank}"
type = "integer"

[schema."{ACME_GROUP}"]
name = "AcmeGroup"
""",
    )
    member = new_user(http)
    name = "dk" + uuid.uuid4().hex[:8]
    created = http(
        "POST",
        "/Groups",
        json={
            "displayName": name,
            "members": [{"value": member["id"]}],
            ACME_GROUP: {"costCenter": "CC-1", "rank": 2},
        },
    )
    assert created.status_code == 201, body_of(created)
    group = body_of(created)
    path = "/Groups/" + group["id"]
    for got in (group, body_of(http("GET", path))):
        assert got[ACME_GROUP] == {"costCenter": "CC-1", "rank": 2}
        assert ACME_GROUP in got["schemas"]
    dn = backend.group_dn(group["id"])
    entry = backend._search(dn, "(objectClass=*)", [cost, rank], scope="BASE")[0][0]
    assert entry["attributes"][cost] == ["CC-1"] and entry["attributes"][rank] == ["2"]
    found = http("GET", "/Groups", query_string={"filter": f'{ACME_GROUP}:costCenter eq "CC-1"'})
    assert [g["id"] for g in body_of(found)["Resources"]] == [group["id"]]
    changed = patch(
        http,
        path,
        {"op": "replace", "path": f"{ACME_GROUP}:costCenter", "value": "CC-2"},
        {"op": "replace", "value": {ACME_GROUP: {"rank": 3}}},
    )
    assert changed.status_code == 200, body_of(changed)
    assert body_of(http("GET", path))[ACME_GROUP] == {"costCenter": "CC-2", "rank": 3}
    cleared = patch(
        http,
        path,
        {"op": "remove", "path": f"{ACME_GROUP}:rank"},
        {"op": "replace", "value": {f"{ACME_GROUP}:costCenter": ""}},
    )
    assert cleared.status_code == 200, body_of(cleared)
    after = body_of(http("GET", path))
    assert ACME_GROUP not in after and after["displayName"] == name
    assert [m["value"] for m in after["members"]] == [member["id"]]
    wrong = patch(http, path, {"op": "replace", "path": f"{ACME_GROUP}:rank", "value": "x"})
    assert wrong.status_code == 400 and body_of(wrong)["scimType"] == "invalidValue"
    schema = body_of(http("GET", "/Schemas/" + ACME_GROUP))
    assert schema["name"] == "AcmeGroup"
    assert [(a["name"], a["type"]) for a in schema["attributes"]] == [
        ("costCenter", "string"),
        ("rank", "integer"),
    ]
    group_type = body_of(http("GET", "/ResourceTypes/Group"))
    assert [e["schema"] for e in group_type["schemaExtensions"]] == [ACME_GROUP]


def test_a_multi_valued_extension_attribute_holds_every_value(directory, mapped_service):
    """``multi_valued = true``: a list in SCIM, every value of the LDAP attribute; PATCH add
    appends, replace sets, the same values in another order write nothing, [] clears."""
    holder = "url" if directory.dialect == "ad" else "businessCategory"
    backend, http = mapped_service(
        f'[[user]]\nscim = "{ACME}:skills"\nldap = "{holder}"\nmulti_valued = true\n'
        "filter = true\n",
    )
    user = new_user(http, **{ACME: {"skills": ["LDAP", "SCIM"]}})
    path = "/Users/" + user["id"]

    def stored() -> list[str]:
        entry = backend._search(dn_of(backend, user), "(objectClass=*)", [holder], scope="BASE")
        return sorted(entry[0][0]["attributes"].get(holder, []))

    assert sorted(body_of(http("GET", path))[ACME]["skills"]) == ["LDAP", "SCIM"]
    assert stored() == ["LDAP", "SCIM"]
    found = http("GET", "/Users", query_string={"filter": f'{ACME}:skills eq "SCIM"'})
    assert [r["id"] for r in body_of(found)["Resources"]] == [user["id"]]
    added = patch(http, path, {"op": "add", "path": f"{ACME}:skills", "value": ["Kerberos"]})
    assert added.status_code == 200, body_of(added)
    assert stored() == ["Kerberos", "LDAP", "SCIM"]
    version = added.headers["ETag"]
    same = patch(
        http,
        path,
        {"op": "replace", "path": f"{ACME}:skills", "value": ["SCIM", "Kerberos", "LDAP"]},
    )
    assert same.status_code == 200 and same.headers["ETag"] == version
    replaced = patch(http, path, {"op": "replace", "path": f"{ACME}:skills", "value": ["AD"]})
    assert body_of(replaced)[ACME]["skills"] == ["AD"] and stored() == ["AD"]
    cleared = patch(http, path, {"op": "replace", "path": f"{ACME}:skills", "value": []})
    assert cleared.status_code == 200 and ACME not in body_of(cleared)
    assert stored() == []


def test_a_mapped_attribute_keeps_its_mutability_and_returned(directory, other_service, tmp_path):
    """``mutability`` and ``returned`` of a mapping entry hold as RFC 7643 §7 says: an
    immutable value is set once and a change is 400 ``mutability``, a readOnly one sent by a
    client is ignored, a writeOnly / returned-never one is stored but never answered, a
    returned-request one comes only when asked for."""
    ad = directory.dialect == "ad"
    hired, pin, score = (
        ("employeeType", "employeeID", "msDS-cloudExtensionAttribute5")
        if ad
        else ("carLicense", "roomNumber", "businessCategory")
    )
    site = tmp_path / "site.toml"
    site.write_text(
        f"""
[[user]]
scim = "{ACME}:badge"
ldap = "{hired}"
mutability = "immutable"

[[user]]
scim = "{ACME}:pin"
ldap = "{pin}"
mutability = "writeOnly"
returned = "never"

[[user]]
scim = "{ACME}:score"
ldap = "{score}"
type = "integer"
mutability = "readOnly"
returned = "request"
""",
        encoding="utf-8",
    )
    if ad:  # employeeType holds userType in AD's own mapping: move that one away
        site.write_text(
            site.read_text() + '\n[[user]]\nscim = "userType"\nldap = "none"\n', encoding="utf-8"
        )
    backend, http = other_service(mapping=load_mapping(site, default_mapping(directory.dialect)))
    user = new_user(http, **{ACME: {"badge": "B-1", "pin": "4321", "score": 7}})
    path = "/Users/" + user["id"]
    dn = dn_of(backend, user)

    def stored(attribute: str) -> list[str]:
        entry = backend._search(dn, "(objectClass=*)", [attribute], scope="BASE")
        return list(entry[0][0]["attributes"].get(attribute, []))

    assert stored(hired) == ["B-1"] and stored(pin) == ["4321"] and stored(score) == []
    assert user[ACME] == {"badge": "B-1"}  # pin never returned, score never written
    backend.connections.run(lambda c: operations.modify(c, dn, {score: [(MODIFY_REPLACE, ["9"])]}))
    assert body_of(http("GET", path))[ACME] == {"badge": "B-1"}
    asked = http("GET", path, query_string={"attributes": f"{ACME}:score"})
    assert body_of(asked)[ACME] == {"score": 9}
    again = patch(http, path, {"op": "replace", "path": f"{ACME}:badge", "value": "B-1"})
    assert again.status_code == 200
    changed = patch(http, path, {"op": "replace", "path": f"{ACME}:badge", "value": "B-2"})
    assert changed.status_code == 400 and body_of(changed)["scimType"] == "mutability"
    assert stored(hired) == ["B-1"]
    # A PUT keeps the readOnly score and, left out, the writeOnly pin and the immutable badge;
    # it may repeat the badge but not change it.
    body = {
        "userName": user["userName"],
        "name": user["name"],
        "emails": user["emails"],
        ACME: {"score": 1},
    }
    assert http("PUT", path, json=body).status_code == 200
    assert (stored(hired), stored(pin), stored(score)) == (["B-1"], ["4321"], ["9"])
    body[ACME] = {"badge": "B-1", "pin": "1111"}
    assert http("PUT", path, json=body).status_code == 200
    assert stored(pin) == ["1111"]
    body[ACME] = {"badge": "B-3"}
    refused = http("PUT", path, json=body)
    assert refused.status_code == 400 and body_of(refused)["scimType"] == "mutability"
    assert stored(hired) == ["B-1"]


def test_a_groups_reference_names_a_user(directory, mapped_service):
    """A ``[[group]]`` reference (the group's owner): a user id in SCIM with ``$ref``, the
    user's DN in the group entry; changed by PATCH with a bare id, an unknown id is 400 and
    changes nothing, "" clears it."""
    holder = "managedBy" if directory.dialect == "ad" else "owner"
    backend, http = mapped_service(
        f'[[group]]\nscim = "{ACME_GROUP}:owner"\nldap = "{holder}"\ntype = "reference"\n'
    )
    first_owner, second_owner = new_user(http), new_user(http)
    name = "do" + uuid.uuid4().hex[:8]
    created = http(
        "POST",
        "/Groups",
        json={
            "displayName": name,
            ACME_GROUP: {"owner": {"value": first_owner["id"]}},
        },
    )
    assert created.status_code == 201, body_of(created)
    path = "/Groups/" + body_of(created)["id"]
    dn = backend.group_dn(body_of(created)["id"])

    def stored() -> list[str]:
        entry = backend._search(dn, "(objectClass=*)", [holder], scope="BASE")
        return [v.lower() for v in entry[0][0]["attributes"].get(holder, [])]

    owner = body_of(http("GET", path))[ACME_GROUP]["owner"]
    assert owner["value"] == first_owner["id"]
    assert owner["$ref"].endswith("/Users/" + first_owner["id"])
    assert stored() == [dn_of(backend, first_owner).lower()]
    changed = patch(
        http, path, {"op": "replace", "path": f"{ACME_GROUP}:owner", "value": second_owner["id"]}
    )
    assert changed.status_code == 200, body_of(changed)
    assert stored() == [dn_of(backend, second_owner).lower()]
    query = {"filter": f'displayName eq "{name}"'}
    listed = body_of(http("GET", "/Groups", query_string=query))
    assert listed["Resources"][0][ACME_GROUP]["owner"]["value"] == second_owner["id"]
    unknown = patch(
        http, path, {"op": "replace", "path": f"{ACME_GROUP}:owner", "value": str(uuid.uuid4())}
    )
    assert unknown.status_code == 400 and body_of(unknown)["scimType"] == "invalidValue"
    assert stored() == [dn_of(backend, second_owner).lower()]
    cleared = patch(http, path, {"op": "replace", "path": f"{ACME_GROUP}:owner", "value": ""})
    assert cleared.status_code == 200 and ACME_GROUP not in body_of(http("GET", path))
    assert stored() == []
