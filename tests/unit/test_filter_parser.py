"""Filter text -> AST -> canonical text (RFC 7644 §3.4.2.2), errors, limits, round trips."""

from __future__ import annotations

import importlib.resources
import subprocess
import sys
from urllib.parse import parse_qs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scim_core.errors import InvalidFilter, InvalidPath
from scim_core.filter import (
    And,
    AttrPath,
    Compare,
    Filter,
    Not,
    Or,
    Present,
    ValueFilter,
    parse_filter,
    parse_path,
)

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"


def P(attr: str, sub: str | None = None, schema: str | None = None) -> AttrPath:
    return AttrPath(attr, sub, schema)


LAST_MODIFIED = P("meta", "lastModified")
EMPLOYEE = Compare(P("userType"), "eq", "Employee")
EMAILS_CO = Or(
    Compare(P("emails"), "co", "example.com"),
    Compare(P("emails", "value"), "co", "example.org"),
)
WORK_EMAIL = ValueFilter(
    P("emails"),
    And(Compare(P("type"), "eq", "work"), Compare(P("value"), "co", "@example.com")),
)

# Every example filter of RFC 7644 §3.4.2.2: text, AST, canonical text (None: the text itself).
RFC_EXAMPLES: list[tuple[str, Filter, str | None]] = [
    ('userName eq "bjensen"', Compare(P("userName"), "eq", "bjensen"), None),
    ('name.familyName co "O\'Malley"', Compare(P("name", "familyName"), "co", "O'Malley"), None),
    ('userName sw "J"', Compare(P("userName"), "sw", "J"), None),
    (f'{USER}:userName sw "J"', Compare(P("userName", None, USER), "sw", "J"), None),
    ("title pr", Present(P("title")), None),
    (
        'meta.lastModified gt "2011-05-13T04:42:34Z"',
        Compare(LAST_MODIFIED, "gt", "2011-05-13T04:42:34Z"),
        None,
    ),
    (
        'meta.lastModified ge "2011-05-13T04:42:34Z"',
        Compare(LAST_MODIFIED, "ge", "2011-05-13T04:42:34Z"),
        None,
    ),
    (
        'meta.lastModified lt "2011-05-13T04:42:34Z"',
        Compare(LAST_MODIFIED, "lt", "2011-05-13T04:42:34Z"),
        None,
    ),
    (
        'meta.lastModified le "2011-05-13T04:42:34Z"',
        Compare(LAST_MODIFIED, "le", "2011-05-13T04:42:34Z"),
        None,
    ),
    ('title pr and userType eq "Employee"', And(Present(P("title")), EMPLOYEE), None),
    (
        'title pr or userType eq "Intern"',
        Or(Present(P("title")), Compare(P("userType"), "eq", "Intern")),
        None,
    ),
    (f'schemas eq "{ENTERPRISE}"', Compare(P("schemas"), "eq", ENTERPRISE), None),
    (
        'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
        And(EMPLOYEE, EMAILS_CO),
        None,
    ),
    (
        'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
        And(Compare(P("userType"), "ne", "Employee"), Not(EMAILS_CO)),
        None,
    ),
    (
        'userType eq "Employee" and (emails.type eq "work")',
        And(EMPLOYEE, Compare(P("emails", "type"), "eq", "work")),
        'userType eq "Employee" and emails.type eq "work"',
    ),
    (
        'userType eq "Employee" and emails[type eq "work" and value co "@example.com"]',
        And(EMPLOYEE, WORK_EMAIL),
        None,
    ),
    (
        'emails[type eq "work" and value co "@example.com"] or '
        'ims[type eq "xmpp" and value co "@foo.com"]',
        Or(
            WORK_EMAIL,
            ValueFilter(
                P("ims"),
                And(Compare(P("type"), "eq", "xmpp"), Compare(P("value"), "co", "@foo.com")),
            ),
        ),
        None,
    ),
]

a, b, c, d = (Present(P(name)) for name in "abcd")

MORE: list[tuple[str, Filter, str | None]] = [
    # Precedence: not > and > or; and/or associate to the left.
    ("a pr or b pr and c pr", Or(a, And(b, c)), "a pr or b pr and c pr"),
    ("a pr and b pr or c pr", Or(And(a, b), c), "a pr and b pr or c pr"),
    ("(a pr or b pr) and c pr", And(Or(a, b), c), "(a pr or b pr) and c pr"),
    ("a pr and (b pr and c pr)", And(a, And(b, c)), "a pr and (b pr and c pr)"),
    ("a pr and b pr and c pr", And(And(a, b), c), "a pr and b pr and c pr"),
    ("a pr or (b pr or c pr)", Or(a, Or(b, c)), "a pr or (b pr or c pr)"),
    ("not (a pr) and b pr", And(Not(a), b), "not (a pr) and b pr"),
    ("not(not(a pr))", Not(Not(a)), "not (not (a pr))"),
    ("((((a pr))))", a, "a pr"),
    ("a pr and not (b pr or c pr) or d pr", Or(And(a, Not(Or(b, c))), d), None),
    # Case-insensitive keywords, operators and literals; names keep their spelling.
    (
        'userName EQ "x" AND Title PR',
        And(Compare(P("userName"), "eq", "x"), Present(P("Title"))),
        'userName eq "x" and Title pr',
    ),
    (
        "a Eq TRUE oR b ne False",
        Or(Compare(P("a"), "eq", True), Compare(P("b"), "ne", False)),
        "a eq true or b ne false",
    ),
    ("NOT (a pr)", Not(a), "not (a pr)"),
    # JSON values (RFC 7159).
    ("a eq null", Compare(P("a"), "eq", None), "a eq null"),
    ("a gt 10", Compare(P("a"), "gt", 10), "a gt 10"),
    ("a gt -0", Compare(P("a"), "gt", 0), "a gt 0"),
    ("a lt -1.5e3", Compare(P("a"), "lt", -1500.0), "a lt -1500.0"),
    ("a le 2.5E-1", Compare(P("a"), "le", 0.25), "a le 0.25"),
    ("a eq 1e999", Compare(P("a"), "eq", float("inf")), "a eq 1e999"),
    ('a eq ""', Compare(P("a"), "eq", ""), 'a eq ""'),
    (
        r'a eq "q\"b\\s\/\b\f\n\r\t"',
        Compare(P("a"), "eq", 'q"b\\s/\b\f\n\r\t'),
        r'a eq "q\"b\\s/\b\f\n\r\t"',
    ),
    (r'a eq "\u00e9\ud83d\ude00é"', Compare(P("a"), "eq", "é\U0001f600é"), 'a eq "é\U0001f600é"'),
    (r'a eq "nul\u0000"', Compare(P("a"), "eq", "nul\x00"), r'a eq "nul\u0000"'),
    # Attribute paths: schema URIs, sub-attributes, $ref, names that look like keywords.
    (f"{ENTERPRISE}:manager.value pr", Present(P("manager", "value", ENTERPRISE)), None),
    ('members[$ref eq "x"]', ValueFilter(P("members"), Compare(P("$ref"), "eq", "x")), None),
    ('not eq "x"', Compare(P("not"), "eq", "x"), None),
    ("pr pr", Present(P("pr")), None),
    ("and-or_2 pr", Present(P("and-or_2")), None),
    (
        'emails[not (type eq "work")]',
        ValueFilter(P("emails"), Not(Compare(P("type"), "eq", "work"))),
        None,
    ),
    # Whitespace is free between tokens.
    ('  userName\teq\n"x"  ', Compare(P("userName"), "eq", "x"), 'userName eq "x"'),
    (
        'emails [ type eq "w" ]',
        ValueFilter(P("emails"), Compare(P("type"), "eq", "w")),
        'emails[type eq "w"]',
    ),
]


@pytest.mark.parametrize(("text", "ast", "canonical"), RFC_EXAMPLES + MORE)
def test_parse_and_canonical(text: str, ast: Filter, canonical: str | None) -> None:
    parsed = parse_filter(text)
    assert parsed == ast
    expected = text if canonical is None else canonical
    assert str(parsed) == expected
    assert parse_filter(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("query", "ast"),
    [
        ("filter=userName+eq+%22bjensen%22", Compare(P("userName"), "eq", "bjensen")),
        ("filter=userName%20eq%20%22bjensen%22", Compare(P("userName"), "eq", "bjensen")),
        (
            "filter=emails%5Btype+eq+%22work%22%5D&count=1",
            ValueFilter(P("emails"), Compare(P("type"), "eq", "work")),
        ),
        (
            "filter=name.familyName+co+%22O%27Malley%22",
            Compare(P("name", "familyName"), "co", "O'Malley"),
        ),
        (
            "filter=title+pr+and+userType+eq+%22a%2Bb%22",
            And(Present(P("title")), Compare(P("userType"), "eq", "a+b")),
        ),
    ],
)
def test_url_decoded(query: str, ast: Filter) -> None:
    (text,) = parse_qs(query)["filter"]
    assert parse_filter(text) == ast


def test_builds_ast_not_tree() -> None:
    node = parse_filter('a eq "x"')
    assert type(node) is Compare
    assert type(node.path.attr) is str  # plain str, not a lark Token
    assert type(node.value) is str


@pytest.mark.parametrize(
    ("text", "column", "reason"),
    [
        ("", 1, "unexpected end of text; expected an attribute path"),
        ("userName", 9, "end of text; expected an operator"),
        ("userName eq", 12, "expected a value"),
        ('userName eqx "a"', 10, "expected an operator"),
        ("userName eq bjensen", 13, "expected a value"),
        ('userName eq "a" andx b pr', 17, "expected 'and', 'or' or the end"),
        ("(a pr", 6, "expected 'and', 'or' or ')'"),
        ("a pr)", 5, "unexpected ')'; expected 'and', 'or' or the end"),
        ("a pr and", 9, "end of text; expected an attribute path, 'not (' or '('"),
        ('a eq "unterminated', 6, "expected a value"),
        ('a eq "raw\x00nul"', 6, "expected a value"),
        (r'a eq "\ud800"', 6, "expected a value"),  # a lone surrogate is no JSON text
        (r'a eq "\x"', 6, "expected a value"),
        ("a eq 01", 7, "expected 'and', 'or' or the end"),
        ("a[b[c pr]]", 4, "unexpected '['"),
        ("not a pr", 5, "expected an operator"),
        ("a pr [", 6, "unexpected '['"),
        ("a.b.c pr", 4, "unexpected '.'; expected an operator"),
        ('emails[type eq "w"].value eq "x"', 20, "unexpected '.'; expected 'and'"),
        ("a pr\nand\n@", 10, "unexpected '@'"),
        ("a ~ 1", 3, "unexpected '~'"),
        # At the first character; a quote or an underscore starts client text: not quoted back.
        ("!a pr", 1, "Invalid filter at column 1: unexpected '!'; expected an attribute path"),
        (")", 1, "Invalid filter at column 1: unexpected ')'; expected an attribute path"),
        ('"secret" pr', 1, "Invalid filter at column 1: expected an attribute path"),
        ("_secret pr", 1, "Invalid filter at column 1: expected an attribute path"),
    ],
)
def test_errors_name_the_column(text: str, column: int, reason: str) -> None:
    with pytest.raises(InvalidFilter) as caught:
        parse_filter(text)
    detail = caught.value.detail
    assert f"column {column}:" in detail
    assert reason in detail
    assert caught.value.to_body()["scimType"] == "invalidFilter"


def test_length_limit() -> None:
    text = 'a eq "' + "x" * 4090 + '"'
    assert len(text) == 4097
    with pytest.raises(InvalidFilter, match="4097 characters long; the limit is 4096"):
        parse_filter(text)
    assert parse_filter(text[:-2] + '"') == Compare(P("a"), "eq", "x" * 4089)
    with pytest.raises(InvalidFilter, match="limit is 10"):
        parse_filter("a pr and b pr", max_length=10)


def test_errors_say_what_was_parsed_and_where() -> None:
    with pytest.raises(InvalidFilter) as caught:
        parse_filter("a pr )")
    assert (
        caught.value.detail
        == "Invalid filter at column 6: unexpected ')'; expected 'and', 'or' or the end."
    )
    with pytest.raises(InvalidFilter) as caught:
        parse_filter("a pr and")
    assert caught.value.detail.startswith("Invalid filter at column 9: unexpected end of text;")
    with pytest.raises(InvalidPath) as caught:
        parse_path("name..x")
    assert caught.value.detail.startswith("Invalid path at column ")
    with pytest.raises(InvalidPath) as caught:
        parse_path('emails[type eq "w"].value x')
    assert caught.value.detail == "Invalid path at column 27: expected the end."


def test_depth_counts_closed_groups_down() -> None:
    # Three openers, but never deeper than two: the closed group no longer counts.
    assert isinstance(parse_filter("(a eq 1) and ((b eq 1))", max_depth=2), And)
    with pytest.raises(InvalidFilter, match="deeper than 1 levels at column 15"):
        parse_filter("(a eq 1) and ((b eq 1))", max_depth=1)


def test_numbers_and_strings_as_json() -> None:
    assert parse_filter("a eq 1E3") == Compare(P("a"), "eq", 1000.0)
    assert parse_filter("a eq -2") == Compare(P("a"), "eq", -2)
    assert parse_filter('a eq "x\\u00e9"') == Compare(P("a"), "eq", "x\u00e9")
    assert parse_filter('a eq "é"') == Compare(P("a"), "eq", "é")


def test_depth_limit() -> None:
    assert parse_filter("(" * 32 + "a pr" + ")" * 32) == a
    with pytest.raises(InvalidFilter, match="deeper than 32 levels at column 33"):
        parse_filter("(" * 33 + "a pr" + ")" * 33)
    with pytest.raises(InvalidFilter, match="deeper than 3 levels at column 20"):
        parse_filter("not (not (not (not (a pr))))", max_depth=3)
    with pytest.raises(InvalidFilter, match="deeper than 1 levels"):
        parse_filter('emails[not (type eq "w")]', max_depth=1)
    # Brackets inside strings are data, not nesting.
    assert parse_filter('a eq "' + "((([[[" * 20 + '"', max_depth=1) == Compare(
        P("a"), "eq", "((([[[" * 20
    )
    # Many groups side by side are shallow.
    flat = " or ".join(["(a pr)"] * 40)
    assert isinstance(parse_filter(flat), Or)


def test_long_chains_stay_off_the_recursion_limit() -> None:
    text = " and ".join(["a pr"] * 800)
    node = parse_filter(text, max_length=10_000)
    assert str(node) == text


def test_grammar_ships_as_package_data() -> None:
    grammar = importlib.resources.files("scim_core.filter").joinpath("filter.lark")
    assert grammar.is_file()
    assert '"("' in grammar.read_text("utf-8")


def test_no_framework_imports() -> None:
    code = (
        "import sys, scim_core.filter as f; f.parse_filter('a pr'); "
        "print(sorted(m for m in ('flask', 'werkzeug', 'ldap3') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------- property: str() round-trips

names = st.from_regex(r"\$?[A-Za-z][A-Za-z0-9_-]{0,6}", fullmatch=True)
schemas = st.sampled_from([USER, ENTERPRISE, "urn:example:ext:1.0", "https://x.example/s"])
paths = st.builds(AttrPath, names, st.none() | names, st.none() | schemas)
simple_paths = st.builds(AttrPath, names, st.none() | names)
values = st.text() | st.booleans() | st.none() | st.integers() | st.floats(allow_nan=False)
ops = st.sampled_from(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"])


def _tree(leaf: st.SearchStrategy[Filter]) -> st.SearchStrategy[Filter]:
    return st.recursive(
        leaf,
        lambda inner: (
            st.builds(And, inner, inner) | st.builds(Or, inner, inner) | st.builds(Not, inner)
        ),
        max_leaves=8,
    )


def _leaves(path: st.SearchStrategy[AttrPath]) -> st.SearchStrategy[Filter]:
    return st.builds(Compare, path, ops, values) | st.builds(Present, path)


inner_filters = _tree(_leaves(simple_paths))
filters = _tree(_leaves(paths) | st.builds(ValueFilter, paths, inner_filters))


@given(filters)
def test_canonical_string_round_trips(ast: Filter) -> None:
    text = str(ast)
    assert parse_filter(text, max_length=100_000, max_depth=1_000) == ast
    assert str(parse_filter(text, max_length=100_000, max_depth=1_000)) == text


@pytest.mark.parametrize(("value", "text"), [(float("inf"), "1e999"), (float("-inf"), "-1e999")])
def test_infinities_render_as_numbers_that_parse_back(value: float, text: str) -> None:
    rendered = str(Compare(P("a"), "gt", value))
    assert rendered == f"a gt {text}"
    assert parse_filter(rendered) == Compare(P("a"), "gt", value)
