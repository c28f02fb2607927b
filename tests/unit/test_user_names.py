"""How a userName names a user entry: its uid, the values naming a new entry and the filter
that finds it (pure functions, no directory)."""

from __future__ import annotations

import pytest

from scim_core.backends.ldap.profiles import ACTIVE_DIRECTORY, OPENLDAP
from scim_core.backends.ldap.user_names import UserNaming
from scim_core.errors import InvalidValue

KEPT = UserNaming(OPENLDAP)  # the userName kept as written in scimUserName
UID_ONLY = UserNaming(OPENLDAP, user_name_attribute=None)
AD = UserNaming(ACTIVE_DIRECTORY, user_name_attribute="userPrincipalName")


def test_a_read_asks_for_the_lookup_attribute_and_the_kept_userName() -> None:
    assert KEPT.user_name_attributes == ["uid", "scimUserName"]
    assert UID_ONLY.user_name_attributes == ["uid"]


def test_an_entry_answers_with_its_kept_userName_else_its_uid() -> None:
    assert KEPT.user_name({"uid": ["jane-x"], "scimUserName": ["Jane+X"]}) == "Jane+X"
    assert KEPT.user_name({"uid": ["jane"]}) == "jane"  # made by another tool
    assert UID_ONLY.user_name({"uid": ["jane-x"], "scimUserName": ["Jane+X"]}) == "jane-x"


def test_the_uid_is_the_normalized_userName() -> None:
    assert KEPT.uid(" Jane+X ") == "jane-x"
    assert KEPT.naming_values("Jane+X") == {"uid": ["jane-x"], "scimUserName": ["Jane+X"]}
    with pytest.raises(InvalidValue, match="no letters or digits"):
        KEPT.uid("+++")


@pytest.mark.parametrize(
    ("user_name", "uid"),
    [
        ("Jane.Doe", "jane.doe"),
        ("  Jane ", "jane"),  # spaces around are no part of a userName
        ("\uff2a\uff21\uff2e\uff25", "jane"),  # full-width letters are the same letters
        ("STRAẞE", "strasse"),  # a case-folded ß is ss
    ],
)
def test_without_a_kept_userName_a_change_of_case_alone_is_allowed(user_name, uid) -> None:
    assert UID_ONLY.uid(user_name) == uid
    assert UID_ONLY.naming_values(user_name) == {"uid": [uid]}
    assert KEPT.is_plain(user_name)


@pytest.mark.parametrize("user_name", ["Jane+X", "Jane X", "José", "-jane", "+++"])
def test_without_a_kept_userName_one_the_uid_cannot_give_back_is_refused(user_name) -> None:
    with pytest.raises(InvalidValue, match=r"userName may hold only|no letters or digits"):
        UID_ONLY.uid(user_name)
    assert not KEPT.is_plain(user_name)
    assert not UID_ONLY.is_plain(user_name)


def test_where_the_lookup_attribute_keeps_the_userName_it_names_the_entry_as_written() -> None:
    assert AD.naming_values("Jane+X@Example.org") == {
        "cn": ["jane-x@example.org"],
        "userPrincipalName": ["Jane+X@Example.org"],
    }
    assert AD.lookup_value("Jane+X@Example.org") == "Jane+X@Example.org"
    assert AD.user_name_filter("J*ne@x") == "(userPrincipalName=J\\2ane@x)"
    bare = UserNaming(ACTIVE_DIRECTORY, user_name_attribute=None)
    assert bare.naming_values("Jane@x") == {"cn": ["jane@x"], "userPrincipalName": ["jane@x"]}
    assert bare.lookup_value("Jane@x") == "jane@x"


def test_the_lookup_value_of_a_uid_directory_is_the_uid() -> None:
    assert KEPT.lookup_value("Jane+X") == "jane-x"
    assert UID_ONLY.lookup_value("Jane") == "jane"


def test_the_filter_finds_the_kept_userName_under_its_uid_or_an_entry_of_another_tool() -> None:
    assert KEPT.user_name_filter("Jane(X)") == (
        "(|(&(uid=jane-x)(scimUserName=Jane\\28X\\29))(&(uid=Jane\\28X\\29)(!(scimUserName=*))))"
    )
    # A userName that has no uid can only be an entry of another tool's, as written.
    assert KEPT.user_name_filter("(*)") == "(&(uid=\\28\\2a\\29)(!(scimUserName=*)))"
    assert UID_ONLY.user_name_filter("Jane*") == "(uid=Jane\\2a)"


def test_a_site_rule_names_the_uid() -> None:
    def reversed_rule(user_name: str) -> str:
        return user_name[::-1].lower()

    custom = UserNaming(OPENLDAP, normalize=reversed_rule)
    assert custom.uid("Jane") == "enaj"
    assert custom.user_name_filter("Jane").startswith("(|(&(uid=enaj)(scimUserName=Jane))")
    assert not custom.is_plain("Jane")
