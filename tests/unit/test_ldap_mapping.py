"""User <-> entry mapping and the diff it produces (pure functions, no directory)."""

from ldap3 import MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE

from scim_core.backends.ldap.escape import dn_value, filter_value
from scim_core.backends.ldap.mapping import UserMapping
from scim_core.backends.ldap.profiles import DS389, OPENLDAP
from scim_core.backends.ldap.values import generalized_to_iso

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
MAPPING = UserMapping(profile=OPENLDAP)
ENTRY = {
    "entryUUID": ["2819c223-7f76-453a-919d-413861904646"],
    "uid": ["bjensen"],
    "givenName": ["Barbara"],
    "sn": ["Jensen"],
    "cn": ["Barbara Jensen"],
    "mail": ["bjensen@example.com", "babs@example.org"],
    "employeeNumber": ["701984"],
    "scimExternalId": ["ext-1"],
    "createTimestamp": ["20260101120000Z"],
    "modifyTimestamp": ["20260102130405Z"],
    "entryCSN": ["20260102130405.000000Z#000000#000#000000"],
}


def test_entry_to_resource():
    user = MAPPING.to_resource(ENTRY, manager_id="boss-id")
    assert user["id"] == "2819c223-7f76-453a-919d-413861904646"
    assert user["userName"] == "bjensen"
    assert user["name"] == {
        "givenName": "Barbara",
        "familyName": "Jensen",
        "formatted": "Barbara Jensen",
    }
    assert user["emails"] == [
        {"value": "bjensen@example.com", "type": "work", "primary": True},
        {"value": "babs@example.org", "type": "work", "primary": False},
    ]
    assert user["active"] is True
    assert user["externalId"] == "ext-1"
    assert user[ENTERPRISE] == {"employeeNumber": "701984", "manager": {"value": "boss-id"}}
    assert user["meta"] == {
        "created": "2026-01-01T12:00:00Z",
        "lastModified": "2026-01-02T13:04:05Z",
        "version": 'W/"20260102130405.000000Z#000000#000#000000"',
    }


def test_primary_email_is_stored_first_and_cn_defaults():
    values = MAPPING.to_attributes(
        {
            "userName": "x",
            "name": {"givenName": "A", "familyName": "B"},
            "emails": [
                {"value": "second@x"},
                {"value": "first@x", "primary": True},
                {"value": "FIRST@x"},
            ],
        },
        manager_dn=None,
    )
    assert values["mail"] == ["first@x", "second@x"]
    assert values["cn"] == ["A B"]
    assert values["displayName"] == [] and values["manager"] == []


def test_diff_touches_only_what_changed():
    current = MAPPING.to_resource(ENTRY, manager_id=None)
    desired = {**current, "title": "CTO", "active": False}
    del desired["externalId"]
    changes = MAPPING.changes(current, desired, None, None, ENTRY)
    assert changes == {
        "title": [(MODIFY_REPLACE, ["CTO"])],
        "scimExternalId": [(MODIFY_DELETE, [])],
        "pwdAccountLockedTime": [(MODIFY_REPLACE, ["000001010000Z"])],
    }
    assert MAPPING.changes(current, current, None, None, ENTRY) == {}


def test_a_new_name_moves_the_cn_it_defaults_to():
    entry = {k: v for k, v in ENTRY.items() if k != "cn"}
    current = MAPPING.to_resource(entry, manager_id=None)
    renamed = {**current, "name": {"givenName": "Babs", "familyName": "Jensen"}}
    assert MAPPING.changes(current, renamed, None, None, entry) == {
        "givenName": [(MODIFY_REPLACE, ["Babs"])],
        "cn": [(MODIFY_REPLACE, ["Babs Jensen"])],
    }
    nameless = {k: v for k, v in current.items() if k != "name"}
    moved = MAPPING.changes(nameless, {**nameless, "userName": "barbara"}, None, None, entry)
    assert moved["cn"] == [(MODIFY_REPLACE, ["barbara"])]


def test_the_diff_leaves_values_it_was_not_asked_to_change_unchecked():
    # A value as stored is the directory's to judge: only what the request changes is
    # converted, so a stored value outside the mapped syntax does not block other changes.
    entry = {**ENTRY, "telephoneNumber": ["call@me"]}
    current = MAPPING.to_resource(entry, manager_id=None)
    assert current["phoneNumbers"] == [{"type": "work", "value": "call@me"}]
    assert MAPPING.changes(current, {**current, "title": "CTO"}, None, None, entry) == {
        "title": [(MODIFY_REPLACE, ["CTO"])]
    }


def test_external_id_brings_its_object_class():
    entry = {k: v for k, v in ENTRY.items() if k != "scimExternalId"}
    entry["objectClass"] = ["inetOrgPerson"]
    current = MAPPING.to_resource(entry, manager_id=None)
    changes = MAPPING.changes(current, {**current, "externalId": "new"}, None, None, entry)
    assert changes["objectClass"] == [(MODIFY_ADD, ["scimPerson"])]
    assert changes["scimExternalId"] == [(MODIFY_REPLACE, ["new"])]


def test_unmapped_external_id_is_never_written():
    mapping = UserMapping(DS389, external_id_attribute=None)
    assert "scimExternalId" not in mapping.read_attributes
    values = mapping.to_attributes({"userName": "x", "externalId": "e"}, None)
    assert not any(v == ["e"] for v in values.values())


LONE_NON_PRIMARY = [{"value": "a@x", "type": "work", "primary": False}]


def test_first_mail_is_primary_unless_the_flag_says_none_is():
    """Entries without the flag (other tools' data) keep "the first mail is primary"."""
    for flag, first_is_primary in (
        (None, True),
        (["FALSE"], True),
        (["TRUE"], False),
        ([True], False),  # ldap3 with schema info
        ([b"TRUE"], False),
    ):
        entry = dict(ENTRY) if flag is None else {**ENTRY, "scimNoPrimaryEmail": flag}
        emails = MAPPING.to_resource(entry, manager_id=None)["emails"]
        assert [e["primary"] for e in emails] == [first_is_primary, False], flag
        assert [e["value"] for e in emails] == ENTRY["mail"]
    assert "scimNoPrimaryEmail" in MAPPING.read_attributes


def test_the_flag_is_written_only_when_no_email_is_primary():
    def flag(emails):
        return MAPPING.to_attributes({"userName": "x", "emails": emails}, None)[
            "scimNoPrimaryEmail"
        ]

    assert flag(LONE_NON_PRIMARY) == ["TRUE"]
    assert flag([{"value": "a@x"}, {"value": "b@x"}]) == ["TRUE"]  # absent primary: not primary
    assert flag([{"value": "a@x"}, {"value": "b@x", "primary": True}]) == []
    assert flag([]) == [] and flag([{"value": ""}]) == []  # no mail, nothing to flag
    # A primary element without a value stores no mail, so it makes no address primary.
    assert flag([{"value": "", "primary": True}, {"value": "b@x"}]) == ["TRUE"]


def test_the_flag_round_trips_through_a_modify():
    entry = {k: v for k, v in ENTRY.items() if k != "scimExternalId"}
    entry["objectClass"] = ["inetOrgPerson"]
    current = MAPPING.to_resource(entry, manager_id=None)
    desired = {**current, "emails": LONE_NON_PRIMARY}
    changes = MAPPING.changes(current, desired, None, None, entry)
    assert changes == {
        "mail": [(MODIFY_REPLACE, ["a@x"])],
        "scimNoPrimaryEmail": [(MODIFY_REPLACE, ["TRUE"])],
        "objectClass": [(MODIFY_ADD, ["scimPerson"])],
    }
    flagged = MAPPING.to_resource({**entry, "mail": ["a@x"], "scimNoPrimaryEmail": ["TRUE"]}, None)
    assert flagged["emails"] == LONE_NON_PRIMARY
    assert MAPPING.changes(flagged, flagged, None, None, entry) == {}
    made_primary = {**flagged, "emails": [{**LONE_NON_PRIMARY[0], "primary": True}]}
    assert MAPPING.changes(flagged, made_primary, None, None, entry) == {
        "scimNoPrimaryEmail": [(MODIFY_DELETE, [])]
    }
    removed = {k: v for k, v in flagged.items() if k != "emails"}
    assert MAPPING.changes(flagged, removed, None, None, entry) == {
        "mail": [(MODIFY_DELETE, [])],
        "scimNoPrimaryEmail": [(MODIFY_DELETE, [])],
    }


def test_a_new_entry_with_the_flag_gets_the_auxiliary_class():
    values = MAPPING.to_attributes({"userName": "x", "emails": LONE_NON_PRIMARY}, None)
    assert MAPPING.object_classes(False, values)[-1] == "scimPerson"
    primary = MAPPING.to_attributes({"userName": "x", "emails": [{"value": "a@x"}]}, None)
    primary["scimNoPrimaryEmail"] = []  # as create_user drops empty values
    assert "scimPerson" not in MAPPING.object_classes(False, primary)
    assert "scimPerson" not in MAPPING.object_classes(False)
    assert MAPPING.object_classes(True)[-1] == "scimPerson"


def test_unmapped_flag_keeps_the_first_mail_primary():
    mapping = UserMapping(OPENLDAP, no_primary_email_attribute=None)
    assert "scimNoPrimaryEmail" not in mapping.read_attributes
    values = mapping.to_attributes({"userName": "x", "emails": LONE_NON_PRIMARY}, None)
    assert "scimNoPrimaryEmail" not in values
    assert mapping.object_classes(False, values) == MAPPING.object_classes(False)
    entry = {**ENTRY, "scimNoPrimaryEmail": ["TRUE"]}
    assert mapping.to_resource(entry, None)["emails"][0]["primary"] is True
    current = mapping.to_resource(entry, None)
    assert mapping.changes(current, {**current, "emails": LONE_NON_PRIMARY}, None, None, entry) == {
        "mail": [(MODIFY_REPLACE, ["a@x"])]
    }


def test_generalized_time():
    assert generalized_to_iso("20261121214500Z") == "2026-11-21T21:45:00Z"
    assert generalized_to_iso("2026") is None and generalized_to_iso(None) is None


def test_escaping_functions():
    assert filter_value("*)(uid=*") == "\\2a\\29\\28uid=\\2a"
    assert filter_value("a\\b\x00") == "a\\5cb\\00"
    assert filter_value(b"\x01a(") == "\\01\\61\\28"  # binary: every octet escaped
    assert dn_value('a,b+c"d\\e<f>g;h=i') == 'a\\,b\\+c\\"d\\\\e\\<f\\>g\\;h\\=i'
    assert dn_value("#lead") == "\\#lead"
    assert dn_value(" both ") == "\\ both\\ "
    assert dn_value("nul\x00") == "nul\\00"
