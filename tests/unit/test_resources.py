"""User and Group validation: types, bounds, SASLprep passwords and group names, through
validate_user, validate_group, group_name_problem and mapped_attributes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scim_core.errors import InvalidValue
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, Attribute
from scim_core.schemas.resources import (
    ENTERPRISE_URN,
    USER_URN,
    group_name_problem,
    mapped_attributes,
    validate_group,
    validate_user,
)

ACME = "urn:example:params:scim:schemas:extension:acme:2.0:User"
ACME_GROUP = "urn:example:params:scim:schemas:extension:acme:2.0:Group"

FULL_USER: dict[str, Any] = {
    "id": "2819c223",
    "externalId": "e-1",
    "userName": "carol",
    "name": {"formatted": "Carol Danvers", "givenName": "Carol", "familyName": "Danvers"},
    "displayName": "Carol D.",
    "title": "Pilot",
    "emails": [{"value": "carol@example.org", "type": "work", "primary": True, "display": "Carol"}],
    "active": True,
    "password": "hunter2",
    ENTERPRISE_URN: {
        "employeeNumber": "701984",
        "manager": {
            "value": "26118915",
            "display": "Nick Fury",
            "displayName": "Nick",
            "type": "User",
            "$ref": "../Users/26118915",
        },
    },
}
REQUIRED: dict[str, Any] = {
    "userName": "carol",
    "name": {"givenName": "Carol", "familyName": "Danvers"},
    "emails": [{"value": "carol@example.org"}],
}


def _refusal(resource: dict[str, Any], **kwargs: Any) -> str:
    with pytest.raises(InvalidValue) as refused:
        validate_user(resource, **kwargs)
    return str(refused.value.detail)


def _group_refusal(resource: dict[str, Any], **kwargs: Any) -> str:
    with pytest.raises(InvalidValue) as refused:
        validate_group(resource, **kwargs)
    return str(refused.value.detail)


def test_every_user_attribute_comes_back_as_given():
    assert validate_user(FULL_USER) == FULL_USER


def test_unknown_keys_are_dropped_and_a_user_name_loses_its_surrounding_space():
    checked = validate_user({**REQUIRED, "userName": " \tcarol \n", "nickName": "x", "meta": {}})
    assert checked == {**REQUIRED, "userName": "carol"}


def test_a_malformed_attribute_is_named_by_its_path_without_its_value():
    resource = {**REQUIRED, "emails": [{"value": "secret-xy"}, {"value": "a@"}], "active": "maybe"}
    detail = _refusal(resource)
    assert detail == (
        "Invalid User: emails.1.value: Length must be between 3 and 256.;"
        " active: Not a valid boolean."
    )


@pytest.mark.parametrize(
    ("path", "shortest", "longest"),
    [
        (("externalId",), 1, 256),
        (("userName",), 1, 256),
        (("displayName",), 1, 1024),
        (("title",), 1, 1024),
        (("name", "formatted"), 1, 1024),
        (("name", "givenName"), 1, 1024),
        (("name", "familyName"), 1, 1024),
        (("emails", 0, "value"), 3, 256),
        (("emails", 0, "type"), 0, 64),
        (("password",), 1, 1024),
        ((ENTERPRISE_URN, "employeeNumber"), 0, 256),
        ((ENTERPRISE_URN, "manager", "value"), 1, 256),
    ],
)
def test_text_is_held_to_its_bounds(path, shortest, longest):
    def with_value(text: str) -> dict[str, Any]:
        resource: Any = copy.deepcopy(REQUIRED)
        resource[ENTERPRISE_URN] = {"manager": {"value": "m"}}
        holder = resource
        for key in path[:-1]:
            holder = holder.setdefault(key, {}) if isinstance(key, str) else holder[key]
        holder[path[-1]] = text
        return resource

    name = ".".join(str(key) for key in path)
    for size in (shortest, longest):
        validate_user(with_value("x" * size))
    if shortest:
        problem = f"{name}: Length must be between {shortest} and {longest}."
        assert problem in _refusal(with_value("x" * (shortest - 1)))
    else:
        problem = f"{name}: Longer than maximum length {longest}."
    assert problem in _refusal(with_value("x" * (longest + 1)))


def test_an_email_and_a_manager_need_a_value():
    assert _refusal({**REQUIRED, "emails": [{"type": "work"}]}) == (
        "Invalid User: emails.0.value: Missing data for required field."
    )
    manager_without_value = {**REQUIRED, ENTERPRISE_URN: {"manager": {"display": "Nick"}}}
    assert "manager.value: Missing data for required field." in _refusal(manager_without_value)


def test_a_new_user_is_told_every_required_attribute_it_lacks():
    assert _refusal({}) == (
        "Missing required attributes: userName, name.givenName, name.familyName, emails."
    )
    assert _refusal({**REQUIRED, "emails": []}) == "Missing required attributes: emails."
    assert validate_user({}, complete=False) == {}


@pytest.mark.parametrize(
    "password",
    [
        "pass\u00adword",  # a soft hyphen is mapped to nothing
        "pass\u00a0word",  # a no-break space is mapped to a space
        "pass\u1680word",  # so is an ogham space mark, which NFKC leaves as it is
        "\u05d0\u3000\u05d1",  # the space it becomes has no direction
        "\ufb01ne-ligature",  # NFKC folds the ligature
        "\u05d0\u05d1\u05d2",  # right-to-left throughout
        "\u05d0123\u05d1",  # right-to-left at both ends, digits between
        "x",
    ],
)
def test_a_password_saslprep_can_prepare_is_taken(password):
    assert validate_user({**REQUIRED, "password": password})["password"] == password


@pytest.mark.parametrize(
    ("password", "problem"),
    [
        ("\u00ad", "Nothing is left of it once prepared (RFC 4013)."),
        ("\u00ad\u200b", "Nothing is left of it once prepared (RFC 4013)."),
        ("ctrl\u0001char", "It holds a character RFC 4013 (SASLprep) prohibits."),
        ("nul\u0000", "It holds a character RFC 4013 (SASLprep) prohibits."),
        ("tab\tbed", "It holds a character RFC 4013 (SASLprep) prohibits."),
        ("private\ue000use", "It holds a character RFC 4013 (SASLprep) prohibits."),
        ("\ufffe", "It holds a character RFC 4013 (SASLprep) prohibits."),
        ("\u05d0mixed-direction", "It mixes text directions as RFC 4013 §6 prohibits."),
        ("\u05d0abc\u05d1", "It mixes text directions as RFC 4013 §6 prohibits."),
        ("\u05d0\u05d11", "It mixes text directions as RFC 4013 §6 prohibits."),
        ("1\u05d0\u05d1", "It mixes text directions as RFC 4013 §6 prohibits."),
        ("abc\u05d0", "It mixes text directions as RFC 4013 §6 prohibits."),
    ],
)
def test_a_password_saslprep_refuses_is_refused_without_being_quoted(password, problem):
    assert _refusal({**REQUIRED, "password": password}) == f"Invalid User: password: {problem}"


def test_a_patch_checks_the_types_of_what_it_changed_only():
    stored = {**REQUIRED, "title": "", "meta": {"version": 'W/"1"'}}
    patched = {**stored, "displayName": "Carol"}
    checked = validate_user(patched, changed={"displayName", "nickName"}, before=stored)
    assert checked == {**REQUIRED, "title": "", "displayName": "Carol"}
    assert _refusal({**patched, "displayName": ""}, changed={"displayName"}, before=stored) == (
        "Invalid User: displayName: Length must be between 1 and 1024."
    )
    removed = {k: v for k, v in stored.items() if k != "emails"}
    assert _refusal(removed, changed={"emails"}, before=stored) == (
        "Missing required attributes: emails."
    )


def test_a_mapping_adds_attributes_kept_as_typed_and_bounded():
    schemas = DEFAULT_SCHEMAS.with_attributes(
        "User", USER_URN, (Attribute("preferredLanguage", "string"),)
    ).with_attributes("User", ACME, (Attribute("badge", "string"), Attribute("level", "integer")))
    user = {**REQUIRED, "preferredLanguage": "de", ACME: {"badge": "B" * 1024, "level": 3}}
    assert validate_user(user, schemas=schemas) == user
    assert validate_user(user) == REQUIRED
    assert validate_user({**REQUIRED, ACME: "B-1", "preferredLanguage": None}, schemas=schemas) == (
        REQUIRED
    )
    assert validate_user({**REQUIRED, ACME: {"level": 2}}, schemas=schemas) == {
        **REQUIRED,
        ACME: {"level": 2},
    }
    too_long = {**REQUIRED, ACME: {"badge": "B" * 1025}}
    assert _refusal(too_long, schemas=schemas) == (
        "Invalid User: badge: Longer than 1024 characters."
    )


def test_mapped_attributes_are_those_beyond_the_default_schemas():
    assert mapped_attributes(DEFAULT_SCHEMAS) == ()
    language = Attribute("preferredLanguage", "string")
    badge = Attribute("badge", "string")
    schemas = (
        DEFAULT_SCHEMAS.with_attributes("User", USER_URN.upper(), (Attribute("TITLE", "string"),))
        .with_attributes("User", USER_URN, (language,))
        .with_attributes("User", ACME, (badge,))
        .with_attributes("Group", ACME_GROUP, (badge,))
    )
    assert mapped_attributes(schemas) == ((None, language), (ACME, badge))
    assert mapped_attributes(schemas, "Group") == ((ACME_GROUP, badge),)


def test_a_group_keeps_its_members_and_its_mapped_attributes():
    member = {
        "value": "2819c223",
        "display": "carol",
        "displayName": "Carol",
        "type": "User",
        "$ref": "../Users/2819c223",
    }
    group = {"id": "admins", "externalId": "g-1", "displayName": "admins", "members": [member]}
    assert validate_group({**group, "owner": "x"}) == group
    schemas = DEFAULT_SCHEMAS.with_attributes(
        "Group", ACME_GROUP, (Attribute("costCenter", "string"),)
    )
    extended = {**group, ACME_GROUP: {"costCenter": "4130"}}
    assert validate_group(extended, schemas=schemas) == extended
    assert validate_group(extended) == group


def test_a_group_needs_a_usable_name():
    assert _group_refusal({}) == "Missing required attribute: displayName."
    assert _group_refusal({"displayName": "a\u200bdmins"}) == (
        "Invalid Group: displayName: It holds a control, invisible or unassigned character."
    )
    assert "displayName: Shorter than minimum length 1." in _group_refusal({"displayName": ""})
    assert _group_refusal({"displayName": "x", "externalId": ""}) == (
        "Invalid Group: externalId: Length must be between 1 and 256."
    )
    assert "members.0.value: Missing data" in _group_refusal(
        {"displayName": "x", "members": [{"display": "carol"}]}
    )
    assert validate_group({"displayName": "x", "externalId": "e" * 256})["displayName"] == "x"
    assert "externalId: Length must be between 1 and 256." in _group_refusal(
        {"displayName": "x", "externalId": "e" * 257}
    )


UNSEEN = "It holds a control, invisible or unassigned character."
NOT_NFKC = "Write it in Unicode NFKC form (for example no full-width or ligature letters)."
LOOKALIKE = "It mixes Latin letters with Cyrillic or Greek ones drawn like them."
NOT_A_PATH = "It must be a URL path of its own: not '.search', no empty, '.' or '..' part."
TOO_LONG = "At most 240 bytes of UTF-8 (it is the cn)."


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("admins\u0001", UNSEEN),  # control
        ("admins\u200b", UNSEEN),  # zero-width space (format)
        ("\u202eadmins", UNSEEN),  # right-to-left override (format)
        ("admins\ue000", UNSEEN),  # private use
        ("admins\u0378", UNSEEN),  # unassigned
        ("admins\ud800", UNSEEN),  # surrogate
        ("admins\u2028", UNSEEN),  # line separator
        ("admins\u2029", UNSEEN),  # paragraph separator
        ("\uff41dmins", NOT_NFKC),  # full-width a
        ("\ufb01nance", NOT_NFKC),  # fi ligature
        ("\u0430dmins", LOOKALIKE),  # Cyrillic a
        ("\u03bfps", LOOKALIKE),  # Greek omicron
        (".search", NOT_A_PATH),
        (".SEARCH", NOT_A_PATH),
        ("/admins", NOT_A_PATH),
        ("admins//eu", NOT_A_PATH),
        ("admins/.", NOT_A_PATH),
        ("../admins", NOT_A_PATH),
        ("a" * 241, TOO_LONG),
        ("\u00e9" * 121, TOO_LONG),  # 242 bytes in 121 characters
    ],
)
def test_a_name_no_group_may_have_is_told_why(name, problem):
    assert group_name_problem(name) == problem


@pytest.mark.parametrize(
    "name",
    [
        "admins",
        "Xavier's team",  # Latin letters, none of them a lookalike
        "\u0411\u0443\u0445\u0433\u0430\u043b\u0442\u0435\u0440\u0438\u044f",  # Cyrillic only
        "\u03a9mega \u0416 team",  # Greek omega and Cyrillic zhe are drawn like no Latin letter
        "\u0430\u0431\u0432 123",  # lookalikes without Latin letters
        "\U00017000\u0430",  # a letter without a Unicode name (Tangut) beside a lookalike
        "eu/admins",
        "admins.search",
        "..admins",
        "a" * 240,
        "\u00e9" * 120,  # 240 bytes
        "x",
    ],
)
def test_a_name_a_group_may_have_has_no_problem(name):
    assert group_name_problem(name) is None
    assert validate_group({"displayName": name})["displayName"] == name
