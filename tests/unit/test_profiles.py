"""Directory profiles and the modify lists they produce (pure; OpenLDAP is also tested on slapd)."""

import pytest
from ldap3 import MODIFY_REPLACE

from scim_core.backends.ldap.profiles import ACTIVE_DIRECTORY, DS389, OPENLDAP, PROFILES


def test_every_dialect_is_registered_by_name():
    assert set(PROFILES) == {"openldap", "389ds", "ad"}


@pytest.mark.parametrize(
    ("dialect", "locked", "unlocked"),
    [
        (OPENLDAP, {"pwdAccountLockedTime": ["000001010000Z"]}, {}),
        (DS389, {"nsAccountLock": ["TRUE"]}, {}),
        (DS389, {"nsAccountLock": ["true"]}, {"nsAccountLock": ["FALSE"]}),
        (ACTIVE_DIRECTORY, {"userAccountControl": ["514"]}, {"userAccountControl": ["512"]}),
    ],
)
def test_active_is_read_from_the_marker(dialect, locked, unlocked):
    assert dialect.is_active(locked) is False
    assert dialect.is_active(unlocked) is True


def test_a_temporary_ppolicy_lockout_is_not_inactive():
    assert OPENLDAP.is_active({"pwdAccountLockedTime": ["20261121120000Z"]}) is True


def test_the_bind_guard_reads_as_disabled():
    """Left alone (an outage cut a disabled user's password change) it still stops binds."""
    assert OPENLDAP.lock_attributes == ("pwdAccountLockedTime", "pwdEndTime")
    assert DS389.lock_attributes == ("nsAccountLock",)
    assert OPENLDAP.is_active({"pwdEndTime": ["19700101000000Z"]}) is False
    assert OPENLDAP.is_active({"pwdEndTime": ["20991231000000Z"]}) is True  # the site's own


@pytest.mark.parametrize(
    ("dialect", "current", "active", "expected"),
    [
        (OPENLDAP, {}, False, {"pwdAccountLockedTime": [(MODIFY_REPLACE, ["000001010000Z"])]}),
        (
            OPENLDAP,
            {"pwdAccountLockedTime": ["000001010000Z"]},
            True,
            {"pwdAccountLockedTime": [(MODIFY_REPLACE, [])]},
        ),
        (  # a guard left by a cut password change goes too; a site's own end time stays
            OPENLDAP,
            {"pwdEndTime": ["19700101000000Z"]},
            True,
            {"pwdAccountLockedTime": [(MODIFY_REPLACE, [])], "pwdEndTime": [(MODIFY_REPLACE, [])]},
        ),
        (
            OPENLDAP,
            {"pwdAccountLockedTime": ["000001010000Z"], "pwdEndTime": ["20991231000000Z"]},
            True,
            {"pwdAccountLockedTime": [(MODIFY_REPLACE, [])]},
        ),
        (OPENLDAP, {"pwdAccountLockedTime": ["000001010000Z"]}, False, {}),
        (OPENLDAP, {}, True, {}),
        (DS389, {}, False, {"nsAccountLock": [(MODIFY_REPLACE, ["TRUE"])]}),
        (DS389, {"nsAccountLock": ["TRUE"]}, True, {"nsAccountLock": [(MODIFY_REPLACE, [])]}),
        (
            ACTIVE_DIRECTORY,
            {"userAccountControl": ["66048"]},
            False,
            {"userAccountControl": [(MODIFY_REPLACE, ["66050"])]},
        ),
        (
            ACTIVE_DIRECTORY,
            {"userAccountControl": ["66050"]},
            True,
            {"userAccountControl": [(MODIFY_REPLACE, ["66048"])]},
        ),
        (ACTIVE_DIRECTORY, {"userAccountControl": ["512"]}, True, {}),
    ],
)
def test_active_changes(dialect, current, active, expected):
    assert dialect.active_changes(current, active) == expected


@pytest.mark.parametrize(
    ("dialect", "current", "active", "expected"),
    [
        (OPENLDAP, {}, True, {"pwdAccountLockedTime": [(MODIFY_REPLACE, [])]}),
        (
            OPENLDAP,
            {"pwdAccountLockedTime": ["000001010000Z"]},
            False,
            {"pwdAccountLockedTime": [(MODIFY_REPLACE, ["000001010000Z"])]},
        ),
        (DS389, {}, True, {"nsAccountLock": [(MODIFY_REPLACE, [])]}),
        (
            ACTIVE_DIRECTORY,
            {"userAccountControl": ["512"]},
            True,
            {"userAccountControl": [(MODIFY_REPLACE, ["512"])]},
        ),
    ],
)
def test_forced_active_changes_write_the_state_even_when_it_is_there(
    dialect, current, active, expected
):
    """After a password change (OpenLDAP ppolicy unlocks) the state is written regardless."""
    assert dialect.active_changes(current, active, force=True) == expected


def test_new_entries():
    assert OPENLDAP.initial_attributes(True) == {}
    assert OPENLDAP.initial_attributes(False) == {"pwdAccountLockedTime": ["000001010000Z"]}
    assert DS389.initial_attributes(False) == {"nsAccountLock": ["TRUE"]}
    assert ACTIVE_DIRECTORY.initial_attributes(True) == {"userAccountControl": ["512"]}
    assert ACTIVE_DIRECTORY.initial_attributes(False) == {"userAccountControl": ["514"]}


def test_filters():
    disabled = "(|(pwdAccountLockedTime=000001010000Z)(pwdEndTime=19700101000000Z))"
    assert OPENLDAP.active_filter(False) == disabled
    assert OPENLDAP.active_filter(True) == f"(!{disabled})"
    assert DS389.active_filter(False) == "(nsAccountLock=TRUE)"
    assert ACTIVE_DIRECTORY.active_filter(False) == (
        "(userAccountControl:1.2.840.113556.1.4.803:=2)"
    )


def test_ids():
    assert OPENLDAP.is_valid_id("2819c223-7f76-453a-919d-413861904646")
    assert not OPENLDAP.is_valid_id("2819c223")
    assert not OPENLDAP.is_valid_id("*)(uid=*")
    assert DS389.is_valid_id("6a8e4c01-1dd211b2-80d4b5ef-0b5a0000")
    guid = bytes(range(16))
    assert ACTIVE_DIRECTORY.format_id(guid) == "03020100-0504-0706-0809-0a0b0c0d0e0f"
    assert ACTIVE_DIRECTORY.is_valid_id(ACTIVE_DIRECTORY.format_id(guid))


# ---------------------------------------------------------------- Active Directory specifics


def test_an_object_guid_reads_as_the_usual_text_and_filters_as_its_octets():
    text = "7c3c4b2a-91f0-4a1e-8d4c-0123456789ab"
    octets = ACTIVE_DIRECTORY.id_value(text)
    assert isinstance(octets, bytes) and len(octets) == 16
    # objectGUID is little-endian in its first three fields.
    assert octets[:4] == bytes.fromhex("2a4b3c7c")
    assert ACTIVE_DIRECTORY.format_id(octets) == text
    assert ACTIVE_DIRECTORY.is_valid_id(text) and not ACTIVE_DIRECTORY.is_valid_id("x")


def test_text_ids_stay_text():
    assert OPENLDAP.id_value("abc") == "abc" and OPENLDAP.format_id("abc") == "abc"
    assert DS389.is_valid_id("1e0b4c01-55f611ef-8a02d2b4-13a6f7c8")


@pytest.mark.parametrize(
    ("user_name", "expected_first"),
    [
        ("jdoe", "jdoe"),
        ("jane.doe@example.com", "jane.doe"),
        ("exactly-twenty-chars@x.org", "exactly-twenty-chars"),
    ],
)
def test_the_account_name_is_the_local_part_when_it_fits(user_name, expected_first):
    candidates = ACTIVE_DIRECTORY.account_names(user_name)
    assert candidates[0] == expected_first
    assert all(len(c) <= 20 for c in candidates)


def test_a_long_account_name_is_shortened_the_same_way_every_time():
    name = "a.very.long.local.part.indeed@example.com"
    first = ACTIVE_DIRECTORY.account_names(name)
    assert first == ACTIVE_DIRECTORY.account_names(name)
    assert len(first) == 1 and len(first[0]) <= 20 and first[0].startswith("a.very.long.loc")
    other = ACTIVE_DIRECTORY.account_names("a.very.long.local.part.other@example.com")
    assert other != first  # the digest tells them apart


def test_a_fitting_account_name_has_a_shortened_fallback():
    candidates = ACTIVE_DIRECTORY.account_names("jdoe@example.com")
    assert candidates[0] == "jdoe" and candidates[1].startswith("jdoe-") and len(candidates) == 2


def test_an_ad_password_is_quoted_utf16le():
    assert ACTIVE_DIRECTORY.password_value("Pä55") == '"Pä55"'.encode("utf-16-le")


def test_a_new_ad_account_is_a_normal_account():
    assert ACTIVE_DIRECTORY.initial_attributes(True) == {"userAccountControl": ["512"]}
    assert ACTIVE_DIRECTORY.initial_attributes(False) == {"userAccountControl": ["514"]}


def test_ad_groups_are_global_security_groups_without_a_placeholder():
    extra = ACTIVE_DIRECTORY.group_extra("Sales & Co")
    assert extra == {"sAMAccountName": ["Sales & Co"], "groupType": ["-2147483646"]}
    assert not ACTIVE_DIRECTORY.group_needs_member and OPENLDAP.group_needs_member
    assert OPENLDAP.group_extra("x") == {}


def test_only_openldap_names_an_ordering_rule():
    assert OPENLDAP.ordering_rule == "caseIgnoreOrderingMatch"
    assert DS389.ordering_rule is None and ACTIVE_DIRECTORY.ordering_rule is None


def test_the_schema_extension_is_offered_where_the_directory_can_load_it():
    assert OPENLDAP.schema.external_id == DS389.schema.external_id == "scimExternalId"
    assert ACTIVE_DIRECTORY.schema.external_id is None
    assert ACTIVE_DIRECTORY.schema.pending is None


# ---------------------------------------------------------------- reading entries


def test_a_text_id_read_as_octets_is_ascii_text_with_anything_else_replaced():
    uuid_text = "2819c223-7f76-453a-919d-413861904646"
    assert OPENLDAP.format_id(uuid_text.encode()) == uuid_text
    assert DS389.format_id(b"6a8e4c01-1dd211b2\xff") == "6a8e4c01-1dd211b2\ufffd"
    assert OPENLDAP.format_id(uuid_text) == uuid_text


def test_an_object_guid_not_read_as_16_octets_is_shown_as_read():
    """Text is never taken for a GUID's octets, however long it is."""
    assert ACTIVE_DIRECTORY.format_id("0123456789abcdef") == "0123456789abcdef"
    text = "7c3c4b2a-91f0-4a1e-8d4c-0123456789ab"
    assert ACTIVE_DIRECTORY.format_id(text) == text
    assert ACTIVE_DIRECTORY.format_id(b"\x01\x02") == "b'\\x01\\x02'"


@pytest.mark.parametrize(
    ("dialect", "disabled"),
    [
        (OPENLDAP, {"pwdaccountlockedtime": ["000001010000Z"]}),
        (OPENLDAP, {"PWDENDTIME": ["19700101000000Z"]}),
        (DS389, {"NSACCOUNTLOCK": ["true"]}),
        (ACTIVE_DIRECTORY, {"useraccountcontrol": ["514"]}),
    ],
)
def test_the_marker_is_read_whatever_the_case_of_its_name(dialect, disabled):
    """Directories (and ldap3) may hand an attribute back spelled as its schema has it."""
    assert dialect.is_active(disabled) is False
    assert dialect.active_changes(disabled, False) == {}
    assert dialect.active_changes(disabled, True) != {}


def test_the_name_spelled_as_the_profile_has_it_is_read_first():
    assert DS389.is_active({"NSACCOUNTLOCK": ["TRUE"], "nsAccountLock": ["FALSE"]}) is True
    assert DS389.is_active({"NSACCOUNTLOCK": ["FALSE"], "nsAccountLock": ["TRUE"]}) is False


def test_a_bind_guard_is_recognised_in_any_case_and_removed_with_the_marker():
    guarded = {"pwdAccountLockedTime": ["000001010000z"], "pwdEndTime": ["19700101000000z"]}
    assert OPENLDAP.is_active(guarded) is False
    assert OPENLDAP.active_changes(guarded, True) == {
        "pwdAccountLockedTime": [(MODIFY_REPLACE, [])],
        "pwdEndTime": [(MODIFY_REPLACE, [])],
    }


def test_an_ad_account_without_flags_is_active_and_disabled_as_a_normal_account():
    assert ACTIVE_DIRECTORY.is_active({}) is True
    assert ACTIVE_DIRECTORY.active_changes({}, False) == {
        "userAccountControl": [(MODIFY_REPLACE, ["514"])]
    }
    assert ACTIVE_DIRECTORY.active_changes({}, True, force=True) == {
        "userAccountControl": [(MODIFY_REPLACE, ["512"])]
    }


def test_active_filters_of_every_profile():
    assert DS389.active_filter(True) == "(!(nsAccountLock=TRUE))"
    assert ACTIVE_DIRECTORY.active_filter(True) == (
        "(!(userAccountControl:1.2.840.113556.1.4.803:=2))"
    )


# ---------------------------------------------------------------- account names


@pytest.mark.parametrize(
    ("user_name", "expected"),
    [
        ("jdoe@example.com", ["jdoe", "jdoe-24dd"]),
        # Only the part before the first @, without dots at its ends (AD refuses a final dot).
        ("a@b@example.com", ["a", "a-de77"]),
        (".x.@example.com", ["x", "x-709f"]),
        ("Xena.@example.com", ["Xena", "Xena-f6ff"]),
        # 21 characters: too long for sAMAccountName, so only the shortened form.
        ("abcdefghijklmnopqrstu@x.org", ["abcdefghijklmno-78de"]),
        # Shortened at a dot: the dot goes (a name may not end in one), the rest stays.
        ("abcdefghijklmn.opqrstuvw@x", ["abcdefghijklmn-0ab2"]),
        ("aaaaaaaaaaaaaX.bbbbbbbbbb@example.com", ["aaaaaaaaaaaaaX-9f1c"]),
    ],
)
def test_account_names_are_the_local_part_and_a_digest_suffixed_form(user_name, expected):
    """The digest is of the whole userName and stable across releases: a retry after an
    upgrade picks the account name the first attempt did."""
    assert ACTIVE_DIRECTORY.account_names(user_name) == expected
