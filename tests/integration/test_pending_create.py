"""A create is an add, then the RFC 3062 password: what lies between is *pending*.

The entry is born disabled and stamped ``scimPendingSince`` until its password is in, so a
create cut between the two steps (tests/integration/test_outage_load.py kills slapd there)
leaves nobody able to log in, and the client's retry of the POST takes the entry over and
completes it. Here the pending entries are written by the admin, so every case is exact.
"""

import uuid
from datetime import UTC, datetime, timedelta

from ldap3 import BASE, MODIFY_REPLACE

from scim_core.backends.ldap.creates import PENDING_CREATE_GRACE

PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
LOCKED = "000001010000Z"


def body(name, password=None, **extra):
    user = {
        "userName": name,
        "name": {"givenName": "Pen", "familyName": "Ding"},
        "emails": [{"value": f"{name}@example.com", "primary": True}],
        **extra,
    }
    if password:
        user["password"] = password
    return user


def stamp(age_seconds):
    moment = datetime.now(UTC) - timedelta(seconds=age_seconds)
    return moment.strftime("%Y%m%d%H%M%S.%fZ")


def add_pending(admin, slapd, name, age_seconds):
    """What a create cut before its password leaves: disabled, stamped, no password."""
    dn = f"uid={name},{slapd.users_base}"
    assert admin.add(
        dn,
        ["inetOrgPerson", "scimPerson"],
        {
            "uid": name,
            "cn": "Half Made",
            "sn": "Made",
            "givenName": "Half",
            "mail": f"{name}@example.com",
            "title": "from the cut create",
            "pwdAccountLockedTime": LOCKED,
            "scimPendingSince": stamp(age_seconds),
        },
    ), admin.result
    admin.search(dn, "(objectClass=*)", BASE, attributes=["entryUUID"])
    return dn, str(admin.entries[0].entryUUID.value)


def read(admin, dn, *attributes):
    admin.search(dn, "(objectClass=*)", BASE, attributes=list(attributes))
    return admin.entries[0]


def test_a_complete_create_leaves_no_stamp(http, admin, slapd, can_bind):
    name = "pc" + uuid.uuid4().hex[:8]
    created = http("POST", "/Users", json=body(name, "Pw-complete-123"))
    assert created.status_code == 201 and created.get_json(force=True)["active"] is True
    dn = f"uid={name},{slapd.users_base}"
    entry = read(admin, dn, "scimPendingSince", "pwdAccountLockedTime")
    assert entry.scimPendingSince.value is None and entry.pwdAccountLockedTime.value is None
    assert can_bind(slapd, dn, "Pw-complete-123")


def test_a_retry_takes_over_a_stale_pending_entry_and_completes_it(http, admin, slapd, can_bind):
    name = "pt" + uuid.uuid4().hex[:8]
    dn, pending_id = add_pending(admin, slapd, name, age_seconds=PENDING_CREATE_GRACE + 1)
    shown = http("GET", "/Users/" + pending_id).get_json(force=True)
    assert shown["active"] is False  # nobody can use a half-made user
    retry = http("POST", "/Users", json=body(name, "Pw-retry-12345", title="from the retry"))
    assert retry.status_code == 201, retry.get_json(force=True)
    user = retry.get_json(force=True)
    assert user["id"] == pending_id and user["active"] is True
    assert user["title"] == "from the retry" and user["name"]["givenName"] == "Pen"
    entry = read(admin, dn, "scimPendingSince", "pwdAccountLockedTime", "title", "cn")
    assert entry.scimPendingSince.value is None and entry.pwdAccountLockedTime.value is None
    assert entry.title.value == "from the retry" and entry.cn.value == "Pen Ding"
    assert can_bind(slapd, dn, "Pw-retry-12345")
    again = http("POST", "/Users", json=body(name, "Pw-retry-12345"))
    assert again.status_code == 409


def test_a_retry_asking_for_an_inactive_user_completes_it_disabled(http, admin, slapd, can_bind):
    name = "pi" + uuid.uuid4().hex[:8]
    dn, _ = add_pending(admin, slapd, name, age_seconds=PENDING_CREATE_GRACE + 1)
    retry = http("POST", "/Users", json=body(name, "Pw-inactive-123", active=False))
    assert retry.status_code == 201 and retry.get_json(force=True)["active"] is False
    assert read(admin, dn, "pwdAccountLockedTime").pwdAccountLockedTime.value is not None
    assert not can_bind(slapd, dn, "Pw-inactive-123")


def test_a_young_pending_entry_is_a_create_in_flight_not_taken_over(http, admin, slapd):
    name = "py" + uuid.uuid4().hex[:8]
    dn, _ = add_pending(admin, slapd, name, age_seconds=0)
    conflict = http("POST", "/Users", json=body(name, "Pw-young-12345"))
    assert conflict.status_code == 409
    entry = read(admin, dn, "title", "scimPendingSince")
    assert entry.title.value == "from the cut create" and entry.scimPendingSince.value


def test_a_retry_without_password_does_not_take_over(http, admin, slapd):
    name = "pn" + uuid.uuid4().hex[:8]
    add_pending(admin, slapd, name, age_seconds=PENDING_CREATE_GRACE + 1)
    assert http("POST", "/Users", json=body(name)).status_code == 409


def test_a_taken_over_entry_answers_the_winner_only(http, admin, slapd):
    """Two retries of one cut create: the stamp changes hands under an assertion, once."""
    name = "pw" + uuid.uuid4().hex[:8]
    dn, _ = add_pending(admin, slapd, name, age_seconds=PENDING_CREATE_GRACE + 1)
    # A retry that took the entry over moments ago holds a fresh stamp: a second one waits.
    admin.modify(dn, {"scimPendingSince": [(MODIFY_REPLACE, [stamp(0)])]})
    assert http("POST", "/Users", json=body(name, "Pw-second-1234")).status_code == 409


def test_a_user_created_inactive_with_a_password_stays_disabled(http, admin, slapd, can_bind):
    """OpenLDAP's ppolicy unlocks an account when its password is set: the lock goes back."""
    name = "pd" + uuid.uuid4().hex[:8]
    dn = f"uid={name},{slapd.users_base}"
    created = http("POST", "/Users", json=body(name, "Pw-disabled-123", active=False))
    assert created.status_code == 201 and created.get_json(force=True)["active"] is False
    assert not can_bind(slapd, dn, "Pw-disabled-123")
    user_id = created.get_json(force=True)["id"]
    operations = [{"op": "replace", "path": "password", "value": "Pw-changed-1234"}]
    changed = http(
        "PATCH", "/Users/" + user_id, json={"schemas": [PATCH_OP], "Operations": operations}
    )
    assert changed.status_code == 200 and changed.get_json(force=True)["active"] is False
    assert not can_bind(slapd, dn, "Pw-changed-1234")
    enable = [{"op": "replace", "path": "active", "value": True}]
    enabled = http("PATCH", "/Users/" + user_id, json={"schemas": [PATCH_OP], "Operations": enable})
    assert enabled.get_json(force=True)["active"] is True
    assert can_bind(slapd, dn, "Pw-changed-1234")
