"""The default userName -> uid rule, pinned rule by rule."""

from __future__ import annotations

import pytest

from scim_core import normalize_username
from scim_core.errors import InvalidValue
from scim_core.normalize import MAX_UID_LENGTH


@pytest.mark.parametrize(
    ("user_name", "uid"),
    [
        ("bjensen", "bjensen"),
        ("  bjensen \t", "bjensen"),  # surrounding space stripped
        ("BJensen@Example.COM", "bjensen@example.com"),  # case-folded, @ kept
        ("Straße", "strasse"),  # full case folding, not lower()
        ("\uff42\uff4a\uff45\uff4e\uff53\uff45\uff4e", "bjensen"),  # NFKC: fullwidth letters
        ("Zoë.Núñez", "zoe.nunez"),  # accents dropped where a decomposition exists
        ("first_last", "first_last"),  # _ kept
        ("first-last", "first-last"),  # - kept inside
        ("a.b", "a.b"),  # . kept inside
        ("0123", "0123"),  # digits kept
        ("a+b", "a-b"),  # a disallowed character becomes -
        ("a + b", "a-b"),  # a run of them becomes one -
        ("a+++b", "a-b"),
        ("a+!b+c", "a-b-c"),  # each run separately
        ("a b/c", "a-b-c"),
        ("-.bjensen.-", "bjensen"),  # . and - trimmed from both ends
        ("..a", "a"),
        ("a--", "a"),
        ("+a+", "a"),  # a run at an end becomes - and is trimmed
        ("_a_", "_a_"),  # _ is not trimmed
        ("@a@", "@a@"),  # nor @
        ("Łukasz", "ukasz"),  # Ł has no decomposition: becomes -, then trimmed
        ("o-Ł-o", "o---o"),  # an allowed - is no part of a run
    ],
)
def test_the_rule(user_name, uid):
    assert normalize_username(user_name) == uid


@pytest.mark.parametrize("user_name", ["", "   ", "+++", ".-.", "ŁŁ", "-"])
def test_nothing_usable_is_invalid(user_name):
    with pytest.raises(InvalidValue) as caught:
        normalize_username(user_name)
    assert caught.value.to_body()["scimType"] == "invalidValue"
    assert caught.value.status == 400


def test_the_limit_is_64_characters():
    assert MAX_UID_LENGTH == 64
    assert normalize_username("a" * 64) == "a" * 64
    assert normalize_username("A" * 63) == "a" * 63
    with pytest.raises(InvalidValue, match="64"):
        normalize_username("a" * 65)


def test_the_limit_applies_to_the_normalized_form():
    # 70 characters as sent, 64 once trimmed: accepted; 64 as sent, 65 once folded: refused.
    assert normalize_username("---" + "a" * 64 + "---") == "a" * 64
    with pytest.raises(InvalidValue):
        normalize_username("ß" * 33)  # each ß folds to "ss": 66 characters
