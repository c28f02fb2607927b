"""Users over HTTP, checked in the directory itself: binds, hashes, renames, rollback."""

import logging
import uuid

import pytest
from ldap3 import BASE

from scim_core.backends.ldap.escape import dn_value

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
CANARY = "Canary-Pw-" + uuid.uuid4().hex[:8]


def new_user(http, password=None, **extra):
    name = "it" + uuid.uuid4().hex[:10]
    body = {
        "userName": name,
        "name": {"givenName": "Ina", "familyName": "Tegration"},
        "emails": [{"value": f"{name}@example.com", "type": "work"}],
        **extra,
    }
    if password:
        body["password"] = password
    response = http("POST", "/Users", json=body)
    assert response.status_code == 201, response.get_json(force=True)
    return response.get_json(force=True)


def patch(http, user, *operations, **kwargs):
    body = {"schemas": [PATCH_OP], "Operations": list(operations)}
    return http("PATCH", "/Users/" + user["id"], json=body, **kwargs)


def dn_of(slapd, user):
    return f"uid={user['userName']},{slapd.users_base}"


def test_password_is_hashed_by_the_directory(http, slapd, admin, can_bind):
    user = new_user(http, password="Initial-Pa55")
    admin.search(dn_of(slapd, user), "(objectClass=*)", BASE, attributes=["userPassword"])
    stored = admin.response[0]["attributes"]["userPassword"][0]
    stored = stored.decode() if isinstance(stored, bytes) else stored
    assert stored.startswith("{") and "Initial-Pa55" not in stored
    assert can_bind(slapd, dn_of(slapd, user), "Initial-Pa55")


def test_disable_is_enforced_and_reversible(http, slapd, can_bind):
    user = new_user(http, password="Initial-Pa55")
    dn = dn_of(slapd, user)
    for _ in range(2):
        response = patch(http, user, {"op": "Replace", "path": "active", "value": "False"})
        assert response.status_code == 200
        assert response.get_json(force=True)["active"] is False
        assert not can_bind(slapd, dn, "Initial-Pa55")
    listed = http("GET", "/Users", query_string={"filter": "active eq false", "count": "200"})
    assert user["id"] in [r["id"] for r in listed.get_json(force=True)["Resources"]]
    response = patch(http, user, {"op": "replace", "path": "active", "value": True})
    assert response.get_json(force=True)["active"] is True
    assert can_bind(slapd, dn, "Initial-Pa55")


def test_a_noop_patch_writes_nothing(http):
    user = new_user(http, title="Engineer")
    op = {"op": "replace", "path": "title", "value": "Engineer"}
    response = patch(http, user, op)
    assert response.status_code == 200
    assert response.headers["ETag"] == user["meta"]["version"]


def test_refused_password_rolls_the_create_back(http, admin, slapd):
    name = "rb" + uuid.uuid4().hex[:10]
    body = {
        "userName": name,
        "name": {"givenName": "Roll", "familyName": "Back"},
        "emails": [{"value": f"{name}@example.com"}],
        "password": "short",
    }
    response = http("POST", "/Users", json=body)
    assert response.status_code == 400
    assert "short" not in response.get_data(as_text=True)
    admin.search(slapd.users_base, f"(uid={name})", attributes=["uid"])
    assert admin.response == [] or all(r["type"] != "searchResEntry" for r in admin.response)


def test_rename_is_a_modrdn_and_memberships_follow(http, slapd, admin):
    user = new_user(http)
    group = "Renamers " + uuid.uuid4().hex[:6]
    http("POST", "/Groups", json={"displayName": group, "members": [{"value": user["id"]}]})
    new_name = "renamed" + uuid.uuid4().hex[:8]
    response = patch(http, user, {"op": "replace", "path": "userName", "value": new_name})
    assert response.status_code == 200
    body = response.get_json(force=True)
    assert (body["id"], body["userName"]) == (user["id"], new_name)
    admin.search(f"cn={group},{slapd.groups_base}", "(objectClass=*)", BASE, attributes=["member"])
    members = [m.lower() for m in admin.response[0]["attributes"]["member"]]
    assert f"uid={new_name},{slapd.users_base}".lower() in members
    assert dn_of(slapd, user).lower() not in members
    fetched = http(
        "GET", "/Groups/" + group, query_string={"attributes": "members.display"}
    ).get_json(force=True)
    assert [m["display"] for m in fetched["members"]] == [new_name]


def test_manager_is_stored_as_a_dn(http, slapd, admin):
    boss = new_user(http)
    worker = new_user(http, **{ENTERPRISE: {"manager": {"value": boss["id"]}}})
    assert worker[ENTERPRISE]["manager"]["value"] == boss["id"]
    admin.search(dn_of(slapd, worker), "(objectClass=*)", BASE, attributes=["manager"])
    assert admin.response[0]["attributes"]["manager"] == [dn_of(slapd, boss)]


def test_a_manager_whose_uid_a_dn_escapes_is_found_again(http, slapd, admin):
    """A user loaded into the directory by other means, whose uid holds characters its DN
    escapes (RFC 4514): as a manager it is looked up by the uid, not by the escaped text."""
    uid = f"doe, jane+{uuid.uuid4().hex[:6]}"
    boss_dn = f"uid={dn_value(uid)},{slapd.users_base}"
    assert admin.add(boss_dn, ["inetOrgPerson"], {"uid": uid, "cn": "Jane Doe", "sn": "Doe"}), (
        admin.result
    )
    admin.search(boss_dn, "(objectClass=*)", BASE, attributes=["entryUUID"])
    boss_id = str(admin.response[0]["attributes"]["entryUUID"])
    worker = new_user(http, **{ENTERPRISE: {"manager": {"value": boss_id}}})
    admin.search(dn_of(slapd, worker), "(objectClass=*)", BASE, attributes=["manager"])
    assert "\\" in admin.response[0]["attributes"]["manager"][0]  # escaped in the DN
    fetched = http("GET", "/Users/" + worker["id"]).get_json(force=True)
    assert fetched[ENTERPRISE]["manager"]["value"] == boss_id
    by_name = {"filter": f'userName eq "{worker["userName"]}"'}
    listed = http("GET", "/Users", query_string=by_name).get_json(force=True)
    assert listed.get("Resources"), listed
    assert listed["Resources"][0][ENTERPRISE]["manager"]["value"] == boss_id


def test_external_id_round_trips(http):
    user = new_user(http, externalId="Ext-ID-42")
    assert http("GET", "/Users/" + user["id"]).get_json(force=True)["externalId"] == "Ext-ID-42"


def test_filter_values_cannot_inject(http):
    new_user(http)
    for value in ("*", "*)(uid=*", "a)(|(uid=*", "\\\\2a", "x\\u0000"):
        response = http("GET", "/Users", query_string={"filter": f'userName eq "{value}"'})
        assert response.status_code in (200, 400)
        if response.status_code == 200:
            assert response.get_json(force=True)["totalResults"] == 0


def test_filter_is_url_decoded(http):
    user = new_user(http)
    response = http("GET", "/Users?filter=userName+eq+%22" + user["userName"].upper() + "%22")
    assert [r["id"] for r in response.get_json(force=True)["Resources"]] == [user["id"]]


def test_canary_password_never_leaks(http, caplog):
    logging.getLogger("ldap3").setLevel(logging.DEBUG)
    from ldap3.utils.log import EXTENDED, set_library_log_detail_level

    set_library_log_detail_level(EXTENDED)
    try:
        with caplog.at_level(logging.DEBUG):
            seen = []
            user = new_user(http, password=CANARY + "1")
            seen.append(http("GET", "/Users/" + user["id"]).get_data(as_text=True))
            for op in (
                {"op": "replace", "path": "password", "value": CANARY + "2"},
                {"op": "replace", "value": {"password": CANARY + "3"}},
                {"op": "replace", "path": "password", "value": "short"},
            ):
                seen.append(patch(http, user, op).get_data(as_text=True))
            body = {
                "userName": user["userName"],
                "name": {"givenName": "A", "familyName": "B"},
                "emails": [{"value": "a@example.com"}],
                "password": CANARY + "4",
            }
            seen.append(http("PUT", "/Users/" + user["id"], json=body).get_data(as_text=True))
            seen.append(
                http("POST", "/Users", json={"password": CANARY + "5"}).get_data(as_text=True)
            )
    finally:
        set_library_log_detail_level(0)
        logging.getLogger("ldap3").setLevel(logging.NOTSET)
    assert len(caplog.records) > 0
    assert all(CANARY not in text for text in seen)
    logged = "\n".join(caplog.handler.format(r) + repr(r.__dict__) for r in caplog.records)
    assert CANARY not in logged


@pytest.mark.parametrize("ident", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_get_delete_unknown(http, ident):
    assert http("GET", "/Users/" + ident).status_code == 404
    assert http("DELETE", "/Users/" + ident).status_code == 404


def test_a_write_is_conditional_on_the_version_read(http, ldap_backend):
    from scim_core.errors import VersionConflict

    user = new_user(http, title="Before")
    stale = ldap_backend.get_user(user["id"])
    patch(http, user, {"op": "replace", "path": "title", "value": "Concurrent"})
    with pytest.raises(VersionConflict):
        ldap_backend.update_user(user["id"], stale, {**stale, "title": "Lost update"}, None)
    fetched = http("GET", "/Users/" + user["id"]).get_json(force=True)
    assert fetched["title"] == "Concurrent"


def test_password_on_add_is_atomic(ldap_settings, slapd, admin, can_bind):
    """SCIM_LDAP_PASSWORD_ON_ADD: one add, hashed and quality-checked by the directory."""
    import dataclasses

    from scim_core.backends.ldap import LdapBackend
    from scim_core.errors import InvalidValue
    from scim_core.secret import Secret

    backend = LdapBackend(dataclasses.replace(ldap_settings, password_on_add=True))
    try:
        name = "atomic" + uuid.uuid4().hex[:8]
        user = {
            "userName": name,
            "name": {"givenName": "A", "familyName": "Tomic"},
            "emails": [{"value": f"{name}@example.com"}],
        }
        called = []
        backend._set_password = lambda *args: called.append(args)  # must not be needed
        created = backend.create_user(user, Secret("Atomic-Pa55"))
        assert created["userName"] == name and called == []
        dn = f"uid={name},{slapd.users_base}"
        assert can_bind(slapd, dn, "Atomic-Pa55")
        admin.search(dn, "(objectClass=*)", BASE, attributes=["userPassword"])
        stored = admin.response[0]["attributes"]["userPassword"][0]
        assert (stored.decode() if isinstance(stored, bytes) else stored).startswith("{")
        weak = {**user, "userName": name + "w"}
        with pytest.raises(InvalidValue) as caught:
            backend.create_user(weak, Secret("short"))
        assert "short" not in str(caught.value)
        admin.search(slapd.users_base, f"(uid={name}w)", attributes=["uid"])
        assert not [r for r in admin.response if r["type"] == "searchResEntry"]
        taken = backend.create_user
        with pytest.raises(Exception) as duplicate:
            taken({**user}, Secret("Atomic-Pa55"))
        assert getattr(duplicate.value, "status", None) == 409
    finally:
        backend.close()


# ------------------------------------------------------------------ primary email flag (§2.4)

NO_PRIMARY = "scimNoPrimaryEmail"


def stored_flag(admin, dn):
    """The flag and the object classes of an entry, as the rootdn reads them."""
    admin.search(dn, "(objectClass=*)", BASE, attributes=[NO_PRIMARY, "objectClass", "mail"])
    attributes = admin.response[0]["attributes"]
    flag = attributes.get(NO_PRIMARY)
    return (flag if flag != [] else None), {str(c).lower() for c in attributes["objectClass"]}


def test_emails_without_a_primary_are_flagged_in_the_entry(http, slapd, admin):
    address = "np" + uuid.uuid4().hex[:10] + "@example.com"
    lone = [{"value": address, "type": "work", "primary": False}]
    user = new_user(http, emails=lone)
    dn = dn_of(slapd, user)
    assert user["emails"] == lone
    flag, classes = stored_flag(admin, dn)
    assert flag is True and "scimperson" in classes  # the add brought the auxiliary class
    assert http("GET", "/Users/" + user["id"]).get_json(force=True)["emails"] == lone
    projected = http("GET", "/Users/" + user["id"], query_string={"attributes": "emails"})
    assert projected.get_json(force=True)["emails"] == lone  # the projection reads the flag too

    # A primary written again clears the flag (here through a value-filter path).
    path = f'emails[value eq "{address}"].primary'
    response = patch(http, user, {"op": "replace", "path": path, "value": True})
    assert response.get_json(force=True)["emails"] == [{**lone[0], "primary": True}]
    assert stored_flag(admin, dn)[0] is None
    # ... and no primary sets it again, on an entry that has the class already.
    response = patch(http, user, {"op": "replace", "path": "emails", "value": lone})
    assert response.get_json(force=True)["emails"] == lone
    assert stored_flag(admin, dn)[0] is True
    # emails[primary eq true] finds none: the flat alias adds a primary work address.
    response = patch(http, user, {"op": "add", "value": {"email": "p" + address}})
    emails = response.get_json(force=True)["emails"]
    assert {(e["value"], e["primary"]) for e in emails} == {(address, False), ("p" + address, True)}
    assert emails[0]["value"] == "p" + address  # stored first in mail, as the primary
    assert stored_flag(admin, dn)[0] is None
    # Back to no primary: PUT (as scim2-tester's replace does) sets it again.
    body = {k: user[k] for k in ("userName", "name")} | {"emails": lone}
    assert http("PUT", "/Users/" + user["id"], json=body).get_json(force=True)["emails"] == lone
    assert stored_flag(admin, dn)[0] is True


def test_a_directory_entry_without_the_flag_reports_its_first_mail_primary(
    http, slapd, admin, tmp_path
):
    """Entries other tools write (here ldapadd) never carry the flag: the first mail is primary."""
    name = "ldif" + uuid.uuid4().hex[:10]
    dn = f"uid={name},{slapd.users_base}"
    ldif = tmp_path / "user.ldif"
    ldif.write_text(
        f"dn: {dn}\nobjectClass: inetOrgPerson\nuid: {name}\ncn: L Dif\ngivenName: L\nsn: Dif\n"
        f"mail: {name}@example.com\nmail: {name}.alt@example.com\n",
        encoding="utf-8",
    )
    slapd.ldapadd(ldif)
    listed = http("GET", "/Users", query_string={"filter": f'userName eq "{name}"'})
    (user,) = listed.get_json(force=True)["Resources"]
    assert [(e["value"], e["primary"]) for e in user["emails"]] == [
        (f"{name}@example.com", True),
        (f"{name}.alt@example.com", False),
    ]
    # A write that leaves the emails as they are does not add the flag (nor the class).
    assert patch(http, user, {"op": "replace", "path": "title", "value": "T"}).status_code == 200
    flag, classes = stored_flag(admin, dn)
    assert flag is None and "scimperson" not in classes
    # Writing no primary brings the flag and, in the same modify, its auxiliary class.
    lone = [{"value": f"{name}@example.com", "type": "work", "primary": False}]
    response = patch(http, user, {"op": "replace", "path": "emails", "value": lone})
    assert response.get_json(force=True)["emails"] == lone
    flag, classes = stored_flag(admin, dn)
    assert flag is True and "scimperson" in classes


def test_an_unmapped_flag_keeps_the_first_mail_primary(ldap_settings, ldap_backend, slapd, admin):
    """SCIM_LDAP_NO_PRIMARY_EMAIL_ATTRIBUTE=none: neither written nor read, as before."""
    import dataclasses

    from scim_core.backends.ldap import LdapBackend

    # The uid alone names the user here, so scimPerson is needed by nothing written.
    settings = dataclasses.replace(
        ldap_settings, no_primary_email_attribute=None, user_name_attribute=None
    )
    backend = LdapBackend(settings)
    try:
        name = "unmapped" + uuid.uuid4().hex[:8]
        lone = [{"value": f"{name}@example.com", "type": "work", "primary": False}]
        user = {"userName": name, "name": {"givenName": "U", "familyName": "M"}, "emails": lone}
        created = backend.create_user(user, None)
        assert created["emails"] == [{**lone[0], "primary": True}]
        dn = f"uid={name},{slapd.users_base}"
        flag, classes = stored_flag(admin, dn)
        assert flag is None and "scimperson" not in classes
        # An entry the default mapping flagged reads, unmapped, as the first mail primary.
        flagged = ldap_backend.create_user({**user, "userName": name + "f"}, None)
        assert flagged["emails"] == lone
        assert stored_flag(admin, f"uid={name}f,{slapd.users_base}")[0] is True
        assert backend.get_user(flagged["id"])["emails"] == [{**lone[0], "primary": True}]
    finally:
        backend.close()


def test_a_tool_made_uid_is_the_user_name_and_can_be_renamed(http, slapd, admin, tmp_path):
    """An entry without a kept userName (ldapadd) answers to its uid as written, is changed in
    place even when the uid is not in normalized form, and a rename keeps the name as sent."""
    token = uuid.uuid4().hex[:8]
    uid = f"Tool+User{token}"
    dn = f"uid=Tool\\+User{token},{slapd.users_base}"
    ldif = tmp_path / "tool.ldif"
    ldif.write_text(
        f"dn: {dn}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: T U\nsn: U\n"
        f"mail: tool{token}@example.com\n",
        encoding="utf-8",
    )
    slapd.ldapadd(ldif)
    for spelled in (uid, uid.upper()):
        listed = http("GET", "/Users", query_string={"filter": f'userName eq "{spelled}"'})
        assert [r["userName"] for r in listed.get_json(force=True)["Resources"]] == [uid]
    # The normalized form of that uid is another userName: it does not reach this entry.
    other = http("GET", "/Users", query_string={"filter": f'userName eq "tool-user{token}"'})
    assert other.get_json(force=True)["Resources"] == []
    (user,) = listed.get_json(force=True)["Resources"]
    assert patch(http, user, {"op": "replace", "path": "title", "value": "T"}).status_code == 200
    admin.search(dn, "(objectClass=*)", BASE, attributes=["title"])
    assert [str(v) for v in admin.entries[0]["title"]] == ["T"]
    new_name = f"Tool.Renamed{token}@Example.com"
    response = patch(http, user, {"op": "replace", "path": "userName", "value": new_name})
    assert response.get_json(force=True)["userName"] == new_name
    new_dn = f"uid=tool.renamed{token}@example.com,{slapd.users_base}"
    admin.search(new_dn, "(objectClass=*)", BASE, attributes=["scimUserName", "objectClass"])
    (entry,) = admin.entries
    assert str(entry["scimUserName"]) == new_name
    assert "scimperson" in {str(c).lower() for c in entry["objectClass"]}


def test_without_a_kept_user_name_only_names_the_uid_gives_back_are_taken(ldap_settings):
    """SCIM_LDAP_USER_NAME_ATTRIBUTE=none: the uid alone names a user, so a userName it would
    change beyond case is 400 and finds nothing; one differing only in case is stored as its
    uid."""
    import dataclasses

    from scim_core.backend import Query
    from scim_core.backends.ldap import LdapBackend
    from scim_core.errors import InvalidValue
    from scim_core.filter import parse_filter

    backend = LdapBackend(dataclasses.replace(ldap_settings, user_name_attribute=None))
    try:
        token = uuid.uuid4().hex[:8]
        user = {
            "userName": f"Jane+{token}",
            "name": {"givenName": "J", "familyName": "D"},
            "emails": [{"value": f"jane{token}@example.com"}],
        }
        with pytest.raises(InvalidValue) as refused:
            backend.create_user(user, None)
        assert "a-z" in refused.value.detail and token not in refused.value.detail
        query = Query(filter=parse_filter(f'userName eq "jane+{token}"'))
        assert backend.find_users(query).total_results == 0
        created = backend.create_user({**user, "userName": f"Jane.{token}"}, None)
        assert created["userName"] == f"jane.{token}"
        query = Query(filter=parse_filter(f'userName eq "JANE.{token}"'))
        assert [u["id"] for u in backend.find_users(query).resources] == [created["id"]]
    finally:
        backend.close()
