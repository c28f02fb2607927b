"""User <-> entry mapping and the diff it produces (pure functions, no directory)."""

from ldap3 import MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE

from scim_core.backends.ldap.dialects import DS389, OPENLDAP
from scim_core.backends.ldap.escape import dn_value, filter_value
from scim_core.backends.ldap.mapping import UserMapping, generalized_to_iso

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
MAPPING = UserMapping(dialect=OPENLDAP, users_base="ou=people,dc=example,dc=org")
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


def test_external_id_brings_its_object_class():
    entry = {k: v for k, v in ENTRY.items() if k != "scimExternalId"}
    entry["objectClass"] = ["inetOrgPerson"]
    current = MAPPING.to_resource(entry, manager_id=None)
    changes = MAPPING.changes(current, {**current, "externalId": "new"}, None, None, entry)
    assert changes["objectClass"] == [(MODIFY_ADD, ["scimPerson"])]
    assert changes["scimExternalId"] == [(MODIFY_REPLACE, ["new"])]


def test_unmapped_external_id_is_never_written():
    mapping = UserMapping(DS389, "ou=people,o=x", external_id_attribute=None)
    assert "scimExternalId" not in mapping.read_attributes
    values = mapping.to_attributes({"userName": "x", "externalId": "e"}, None)
    assert not any(v == ["e"] for v in values.values())


def test_generalized_time():
    assert generalized_to_iso("20261121214500Z") == "2026-11-21T21:45:00Z"
    assert generalized_to_iso("2026") is None and generalized_to_iso(None) is None


def test_escaping_functions():
    assert filter_value("*)(uid=*") == "\\2a\\29\\28uid=\\2a"
    assert filter_value("a\\b\x00") == "a\\5cb\\00"
    assert dn_value('a,b+c"d\\e<f>g;h=i') == 'a\\,b\\+c\\"d\\\\e\\<f\\>g\\;h\\=i'
    assert dn_value("#lead") == "\\#lead"
    assert dn_value(" both ") == "\\ both\\ "
    assert dn_value("nul\x00") == "nul\\00"
