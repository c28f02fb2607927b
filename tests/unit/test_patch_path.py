"""PATCH paths (RFC 7644 §3.5.2: PATH = attrPath / valuePath [subAttr]): text -> AST -> text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scim_core.errors import InvalidPath
from scim_core.filter import (
    And,
    AttrPath,
    Compare,
    Filter,
    Not,
    Or,
    PatchPath,
    Present,
    parse_path,
)

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
MEMBER = "2819c223-7f76-453a-919d-413861904646"
WORK = Compare(AttrPath("type"), "eq", "work")

PATHS: list[tuple[str, PatchPath, str | None]] = [
    # RFC 7644 §3.5.2 and §3.5.2.1-3 examples.
    ("members", PatchPath(AttrPath("members")), None),
    ("name.familyName", PatchPath(AttrPath("name", "familyName")), None),
    ('addresses[type eq "work"]', PatchPath(AttrPath("addresses"), WORK), None),
    (
        f'members[value eq "{MEMBER}"]',
        PatchPath(AttrPath("members"), Compare(AttrPath("value"), "eq", MEMBER)),
        None,
    ),
    (
        f'members[value eq "{MEMBER}"].displayName',
        PatchPath(AttrPath("members"), Compare(AttrPath("value"), "eq", MEMBER), "displayName"),
        None,
    ),
    ('emails[type eq "work"].value', PatchPath(AttrPath("emails"), WORK, "value"), None),
    (
        'addresses[type eq "work"].streetAddress',
        PatchPath(AttrPath("addresses"), WORK, "streetAddress"),
        None,
    ),
    (
        'emails[type eq "work" and value ew "example.com"]',
        PatchPath(AttrPath("emails"), And(WORK, Compare(AttrPath("value"), "ew", "example.com"))),
        None,
    ),
    # Schema-qualified paths (RFC 7644 §3.10), e.g. what Entra ID sends for the manager.
    (f"{ENTERPRISE}:manager", PatchPath(AttrPath("manager", None, ENTERPRISE)), None),
    (f"{ENTERPRISE}:manager.value", PatchPath(AttrPath("manager", "value", ENTERPRISE)), None),
    (f"{USER}:name.givenName", PatchPath(AttrPath("name", "givenName", USER)), None),
    (
        f'{USER}:emails[type eq "work"].value',
        PatchPath(AttrPath("emails", None, USER), WORK, "value"),
        None,
    ),
    # Logic inside the brackets, case-insensitive keywords, free whitespace.
    (
        'emails[not (type eq "work") OR primary EQ TRUE]',
        PatchPath(AttrPath("emails"), Or(Not(WORK), Compare(AttrPath("primary"), "eq", True))),
        'emails[not (type eq "work") or primary eq true]',
    ),
    (
        "  emails[ display pr ] .value ",
        PatchPath(AttrPath("emails"), Present(AttrPath("display")), "value"),
        "emails[display pr].value",
    ),
    ("members[$ref pr]", PatchPath(AttrPath("members"), Present(AttrPath("$ref"))), None),
]


@pytest.mark.parametrize(("text", "ast", "canonical"), PATHS)
def test_parse_path(text: str, ast: PatchPath, canonical: str | None) -> None:
    parsed = parse_path(text)
    assert parsed == ast
    assert str(parsed) == (text if canonical is None else canonical)
    assert parse_path(str(parsed)) == parsed


def test_attr_key() -> None:
    assert parse_path("name.givenName").attr.key() == "name.givenname"
    assert parse_path(f"{ENTERPRISE}:Manager").attr.key() == "manager"


@pytest.mark.parametrize(
    ("text", "column", "reason"),
    [
        ("", 1, "unexpected end of text; expected an attribute path"),
        ("emails[", 8, "end of text; expected an attribute path"),
        ('emails[type eq "work"', 22, "expected 'and', 'or' or ']'"),
        ('emails[type eq "work"].', 23, "unexpected '.'"),
        ('emails[type eq "work"]]', 23, "unexpected ']'"),
        ('emails[type eq "work"].value.x', 29, "unexpected '.'; expected the end"),
        ("name.givenName.x", 15, "unexpected '.'"),
        ("userName eq", 10, "expected '[' or the end"),
        ("emails[type[value pr]]", 12, "unexpected '['"),
        ("emails[]", 8, "unexpected ']'"),
        ("(members)", 1, "unexpected '('"),
        ("a b", 3, "expected '[' or the end"),
    ],
)
def test_path_errors(text: str, column: int, reason: str) -> None:
    with pytest.raises(InvalidPath) as caught:
        parse_path(text)
    assert f"column {column}:" in caught.value.detail
    assert reason in caught.value.detail
    assert caught.value.to_body()["scimType"] == "invalidPath"


def test_path_size_limit() -> None:
    with pytest.raises(InvalidPath, match="limit is 4096"):
        parse_path("a" * 5000)
    with pytest.raises(InvalidPath, match="deeper than"):
        parse_path("emails[" + "(" * 40 + "a pr" + ")" * 40 + "]")


def test_sub_attr_needs_a_value_filter() -> None:
    with pytest.raises(ValueError, match="sub_attr"):
        PatchPath(AttrPath("emails"), None, "value")


names = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,6}", fullmatch=True)
simple = st.builds(AttrPath, names, st.none() | names)
leaves: st.SearchStrategy[Filter] = st.builds(
    Compare, simple, st.sampled_from(["eq", "ne", "co", "gt"]), st.text() | st.integers()
) | st.builds(Present, simple)
inner = st.recursive(
    leaves,
    lambda x: st.builds(And, x, x) | st.builds(Or, x, x) | st.builds(Not, x),
    max_leaves=5,
)
patch_paths = st.builds(
    PatchPath, st.builds(AttrPath, names, st.none() | names, st.none() | st.just(ENTERPRISE))
) | st.builds(
    PatchPath,
    st.builds(AttrPath, names, st.none(), st.none() | st.just(USER)),
    inner,
    st.none() | names,
)


@given(patch_paths)
def test_path_round_trips(path: PatchPath) -> None:
    assert parse_path(str(path)) == path
