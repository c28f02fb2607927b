"""User <-> entry mapping and the diff it produces (pure functions, no directory)."""

import pytest
from ldap3 import MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE

from scim_core.backends.ldap.escape import dn_value, filter_value
from scim_core.backends.ldap.mapped import MappedAttribute
from scim_core.backends.ldap.mapping import UserMapping
from scim_core.backends.ldap.profiles import ACTIVE_DIRECTORY, DS389, OPENLDAP
from scim_core.backends.ldap.values import generalized_to_iso
from scim_core.errors import InvalidValue
from scim_core.schemas.attributes import USER_URN

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


# What a site's mapping adds: auxiliary classes, references, another attribute for cn.

ACME = "urn:example:params:scim:schemas:extension:acme:2.0:User"
BADGE = MappedAttribute(ACME, "badge", "carLicense", object_class="acmePerson")
HIRED = MappedAttribute(ACME, "hired", "acmeHired", object_class="acmePerson")
PAGER = MappedAttribute(ACME, "pager", "pager", syntax="telephoneNumber")
SPONSOR = MappedAttribute(ACME, "sponsor", "seeAlso", type="complex", points_to="User")
SITE = UserMapping(OPENLDAP, mapped=(*MAPPING.plain, *MAPPING.elements, BADGE, HIRED, PAGER))


def test_a_new_entry_gets_the_class_of_each_mapped_attribute_it_holds_once() -> None:
    classes = list(OPENLDAP.user_classes)
    assert SITE.object_classes(False, {"carLicense": ["b"], "acmeHired": ["h"]}) == [
        *classes,
        "acmePerson",
    ]
    assert SITE.object_classes(False, {"carLicense": [], "title": ["CTO"]}) == classes
    nick = SITE.object_classes(False, {"scimNickName": ["babs"]})
    assert nick == [*classes, "scimPerson"]


def test_a_new_value_brings_its_class_and_an_unchanged_one_does_not() -> None:
    entry = {**ENTRY, "objectClass": ["inetOrgPerson", "scimPerson"]}
    current = SITE.to_resource(entry, None)
    badge = {**current, ACME: {"badge": "B-1"}}
    assert SITE.changes(current, badge, None, None, entry) == {
        "carLicense": [(MODIFY_REPLACE, ["B-1"])],
        "objectClass": [(MODIFY_ADD, ["acmePerson"])],
    }
    # carLicense is inetOrgPerson's too: an entry may hold it without the site's class, and
    # a change beside it adds no class.
    badged = {**entry, "carLicense": ["B-1"]}
    current = SITE.to_resource(badged, None)
    pager = {**current, ACME: {**current[ACME], "pager": "+1 555"}}
    assert SITE.changes(current, pager, None, None, badged) == {
        "pager": [(MODIFY_REPLACE, ["+1 555"])]
    }
    assert SITE.changes(current, {**current, "nickName": "babs"}, None, None, badged) == {
        "scimNickName": [(MODIFY_REPLACE, ["babs"])]  # scimPerson is there
    }
    upper = {**badged, "objectClass": ["INETORGPERSON", "SCIMPERSON"]}
    assert "objectClass" not in SITE.changes(
        current, {**current, "externalId": "e"}, None, None, upper
    )


def test_an_unchanged_flag_brings_no_class() -> None:
    # An entry of another tool whose schema allows the flag without scimPerson.
    entry = {**ENTRY, "objectClass": ["inetOrgPerson"], "scimNoPrimaryEmail": ["TRUE"]}
    del entry["scimExternalId"]
    current = MAPPING.to_resource(entry, None)
    desired = {**current, "emails": [{**e, "value": e["value"].upper()} for e in current["emails"]]}
    assert MAPPING.changes(current, desired, None, None, entry) == {
        "mail": [(MODIFY_REPLACE, ["BJENSEN@EXAMPLE.COM", "BABS@EXAMPLE.ORG"])]
    }


def test_a_stored_value_outside_its_syntax_blocks_only_a_change_of_it() -> None:
    entry = {**ENTRY, "pager": ["call@me"], "carLicense": ["B-1"]}
    current = SITE.to_resource(entry, None)
    assert current[ACME]["pager"] == "call@me"
    for desired in (
        {**current, "title": "CTO"},
        {**current, "name": {**current["name"], "givenName": "Babs"}},
        {**current, "userName": "babs"},
    ):
        assert "pager" not in SITE.changes(current, desired, None, None, entry)
    with pytest.raises(InvalidValue):
        SITE.changes(current, {**current, ACME: {"pager": "call@you"}}, None, None, entry)


def test_cn_held_for_another_attribute_follows_the_name_it_defaults_to() -> None:
    display = MappedAttribute(USER_URN, "displayName", "cn")
    names = tuple(m for m in MAPPING.plain if m.ldap in ("givenName", "sn"))
    mapping = UserMapping(OPENLDAP, mapped=(*names, display))
    entry = {"entryUUID": ["u"], "uid": ["bjensen"], "givenName": ["Barbara"], "sn": ["Jensen"]}
    current = mapping.to_resource(entry, None)
    assert "displayName" not in current
    renamed = {**current, "name": {"givenName": "Babs", "familyName": "Jensen"}}
    assert mapping.changes(current, renamed, None, None, entry) == {
        "givenName": [(MODIFY_REPLACE, ["Babs"])],
        "cn": [(MODIFY_REPLACE, ["Babs Jensen"])],
    }


def test_an_element_is_read_from_the_resource_without_changing_it() -> None:
    phones = [{"type": "home", "value": "+1 555"}]
    user = {"userName": "x", "phoneNumbers": phones}
    values = MAPPING.to_attributes(user, None)
    assert values["telephoneNumber"] == [] and values["mobile"] == []
    assert user["phoneNumbers"] == [{"type": "home", "value": "+1 555"}]


def test_only_the_elements_a_change_touches_are_compared() -> None:
    current = MAPPING.to_resource(ENTRY, None)
    moved = {**current, "addresses": [{"type": "work", "locality": "Oslo"}]}
    assert MAPPING.changes(current, moved, None, None, ENTRY) == {"l": [(MODIFY_REPLACE, ["Oslo"])]}


def test_the_manager_and_the_references_are_written_as_dns() -> None:
    boss, other = "uid=boss,ou=people,dc=example,dc=org", "uid=other,ou=people,dc=example,dc=org"
    assert MAPPING.to_attributes({"userName": "x"}, boss)["manager"] == [boss]
    mapping = UserMapping(OPENLDAP, mapped=(SPONSOR,))
    user = {"userName": "x", ACME: {"sponsor": {"value": "gone"}}}
    assert mapping.to_attributes(user, None, {"seeAlso": None})["seeAlso"] == []
    assert mapping.to_attributes(user, None)["seeAlso"] == []
    current = MAPPING.to_resource(ENTRY, "boss-id")
    assert MAPPING.changes(current, current, boss, boss, ENTRY) == {}
    assert MAPPING.changes(current, current, boss, other, ENTRY) == {
        "manager": [(MODIFY_REPLACE, [other])]
    }
    assert MAPPING.changes(current, current, boss, None, ENTRY) == {
        "manager": [(MODIFY_DELETE, [])]
    }
    entry = {"entryUUID": ["u"], "uid": ["x"], "seeAlso": [boss]}
    read = mapping.to_resource(entry, None, {boss: "boss-id"})
    assert (
        mapping.changes(read, read, None, None, entry, {"seeAlso": boss}, {"seeAlso": boss}) == {}
    )
    assert mapping.changes(
        read, read, None, None, entry, {"seeAlso": boss}, {"seeAlso": other}
    ) == {"seeAlso": [(MODIFY_REPLACE, [other])]}


def test_the_manager_id_is_the_enterprise_manager_s_value() -> None:
    assert MAPPING.manager_id({ENTERPRISE: {"manager": {"value": "boss-id"}}}) == "boss-id"
    assert MAPPING.manager_id({ENTERPRISE: {"manager": {"value": 7}}}) == "7"
    assert MAPPING.manager_id({ENTERPRISE: {"manager": {"value": ""}}}) is None
    assert MAPPING.manager_id({ENTERPRISE: {"employeeNumber": "1"}}) is None
    assert MAPPING.manager_id({}) is None


def test_a_manager_alone_makes_the_enterprise_extension() -> None:
    entry = {k: v for k, v in ENTRY.items() if k != "employeeNumber"}
    assert MAPPING.to_resource(entry, "boss-id")[ENTERPRISE] == {"manager": {"value": "boss-id"}}
    assert ENTERPRISE not in MAPPING.to_resource(entry, None)


def test_a_new_userName_keeps_the_userName_and_leaves_the_uid_to_the_rename() -> None:
    current = MAPPING.to_resource(ENTRY, None)
    changes = MAPPING.changes(current, {**current, "userName": "Babs"}, None, None, ENTRY)
    assert changes["scimUserName"] == [(MODIFY_REPLACE, ["Babs"])]
    assert "uid" not in changes


def test_a_new_primary_email_reorders_mail() -> None:
    current = MAPPING.to_resource(ENTRY, None)
    emails = [{**current["emails"][0], "primary": False}, {**current["emails"][1], "primary": True}]
    assert MAPPING.changes(current, {**current, "emails": emails}, None, None, ENTRY) == {
        "mail": [(MODIFY_REPLACE, ["babs@example.org", "bjensen@example.com"])]
    }


def test_an_email_without_a_value_stores_nothing() -> None:
    values = MAPPING.to_attributes({"userName": "x", "emails": [{"type": "work"}]}, None)
    assert values["mail"] == [] and values["scimNoPrimaryEmail"] == []


def test_active_directory_holds_one_email_address() -> None:
    mapping = UserMapping(ACTIVE_DIRECTORY, user_name_attribute="userPrincipalName")
    one = mapping.to_attributes({"userName": "x", "emails": [{"value": "jösé@x"}]}, None)
    assert one["mail"] == ["jösé@x"]  # AD's mail is Unicode
    two = {"userName": "x", "emails": [{"value": "a@x"}, {"value": "b@x"}]}
    with pytest.raises(InvalidValue):
        mapping.to_attributes(two, None)
    with pytest.raises(InvalidValue):
        MAPPING.to_attributes({"userName": "x", "emails": [{"value": "jösé@x"}]}, None)


LOCKED = {**ENTRY, "pwdAccountLockedTime": ["000001010000Z"]}


def test_a_resource_without_active_is_active() -> None:
    disabled = MAPPING.to_resource(LOCKED, None)
    assert disabled["active"] is False
    unsaid = {k: v for k, v in disabled.items() if k != "active"}
    assert MAPPING.changes(disabled, unsaid, None, None, LOCKED) == {
        "pwdAccountLockedTime": [(MODIFY_REPLACE, [])]
    }


def test_only_a_change_of_active_between_the_resources_writes_the_state() -> None:
    # The attributes given need not show the state (a create's follow-up gives none).
    current = {k: v for k, v in MAPPING.to_resource(ENTRY, None).items() if k != "active"}
    assert MAPPING.changes(current, current, None, None, LOCKED) == {}
    disabled = {**current, "active": False}
    assert MAPPING.changes(disabled, disabled, None, None, {}) == {}
    assert MAPPING.changes(current, disabled, None, None, ENTRY) == {
        "pwdAccountLockedTime": [(MODIFY_REPLACE, ["000001010000Z"])]
    }


def test_a_listed_user_is_read_without_its_object_classes():
    """Only a write needs them (to add an auxiliary class): a list page or a GET reads all
    the rest."""
    assert "objectClass" in MAPPING.read_attributes
    assert MAPPING.list_attributes == [a for a in MAPPING.read_attributes if a != "objectClass"]
