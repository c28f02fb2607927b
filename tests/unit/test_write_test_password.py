"""The throwaway password of ``scim-ldap check --write-test``: no directory's quality rules
refuse it for the names the test gives its user."""

from __future__ import annotations

import string

from scim_core.backends.ldap.write_test import _throwaway_password

# The names the write test gives its throwaway user (the tag is random hex).
NAMES = (
    "scim-check-5ac239",
    "scim-check-ffffff",
    "Preflight Check",
    "Preflight",
    "Check",
    "scim-check-5ac239@example.invalid",
    "uid=scim-check-5ac239,ou=people,dc=example,dc=org",
)
DRAWS = 500


def _pieces(text: str) -> set[str]:
    lowered = text.lower()
    return {lowered[i : i + 3] for i in range(len(lowered) - 2)}


def test_no_three_characters_in_a_row_come_from_the_users_names() -> None:
    names = set().union(*(_pieces(name) for name in NAMES))
    for _ in range(DRAWS):
        password = _throwaway_password().reveal()
        assert not _pieces(password) & names, password
        # Why it holds for any names of letters, digits and "-.@ ": a symbol in every three.
        assert all(set(piece) & set("#%!") for piece in _pieces(password)), password


def test_it_has_the_character_classes_and_length_directories_demand() -> None:
    drawn = {_throwaway_password().reveal() for _ in range(DRAWS)}
    assert len(drawn) == DRAWS  # random, never one fixed value
    for password in drawn:
        assert len(password) >= 8
        assert set(password) & set(string.ascii_lowercase)
        assert set(password) & set(string.ascii_uppercase)
        assert set(password) & set("#%!")
