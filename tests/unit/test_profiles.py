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
    assert OPENLDAP.active_filter(False) == "(pwdAccountLockedTime=000001010000Z)"
    assert OPENLDAP.active_filter(True) == "(!(pwdAccountLockedTime=000001010000Z))"
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
