"""validate_user: required attributes on create, and on a PATCH of an entry that lacked them."""

import pytest

from scim_core.errors import InvalidValue
from scim_core.schemas.resources import validate_user

COMPLETE = {
    "userName": "carol",
    "name": {"givenName": "Carol", "familyName": "Danvers"},
    "emails": [{"value": "carol@example.org"}],
}
# What 389-DS's dsidm makes: no givenName or sn (its nsPerson class cannot hold them).
TOOL_MADE = {"userName": "carol", "emails": [{"value": "carol@example.org"}]}


def test_a_new_user_needs_every_required_attribute():
    with pytest.raises(InvalidValue, match=r"name\.givenName, name\.familyName"):
        validate_user(dict(TOOL_MADE))
    assert validate_user(dict(COMPLETE))["userName"] == "carol"


def test_a_patch_is_not_asked_for_what_the_stored_user_never_had():
    patched = {**TOOL_MADE, "active": False}
    assert validate_user(patched, before=dict(TOOL_MADE))["active"] is False


def test_a_patch_may_not_remove_a_required_attribute():
    patched = {**COMPLETE, "name": {"givenName": "Carol"}}
    with pytest.raises(InvalidValue, match=r"name\.familyName"):
        validate_user(patched, before=dict(COMPLETE))
