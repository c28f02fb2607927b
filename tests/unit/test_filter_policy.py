"""The filter allow-list: the contract's forms pass, everything else is a 400 invalidFilter."""

from __future__ import annotations

import pytest

from scim_core.errors import InvalidFilter
from scim_core.filter import DEFAULT_POLICY, FilterPolicy, parse_filter

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

USER_FORMS = "active eq true|false, email eq, emails.value eq, userName eq"

ALLOWED = [
    ("User", 'userName eq "bjensen"'),
    ("User", 'USERNAME EQ "bjensen"'),
    ("User", 'username eq "bjensen"'),
    ("User", f'{USER}:userName eq "bjensen"'),
    ("User", f'{USER.upper()}:userName eq "bjensen"'),
    ("User", 'email eq "b@example.com"'),
    ("User", 'Email eq "b@example.com"'),
    ("User", 'emails.value eq "b@example.com"'),
    ("User", 'Emails.VALUE eq "b@example.com"'),
    ("User", f'{USER}:emails.value eq "b@example.com"'),
    ("User", "active eq true"),
    ("User", "active eq FALSE"),
    ("User", "((active eq false))"),
    ("Group", 'displayName eq "Admins"'),
    ("Group", f'{GROUP}:displayName eq "Admins"'),
]


@pytest.mark.parametrize(("resource_type", "text"), ALLOWED)
def test_default_policy_allows_the_contract(resource_type: str, text: str) -> None:
    DEFAULT_POLICY.check(parse_filter(text), resource_type)


REJECTED = [
    # Operators other than eq, RFC examples among them.
    ("User", 'userName sw "J"', "'userName sw'"),
    ("User", 'userName ne "x"', "'userName ne'"),
    ("User", 'name.familyName co "O\'Malley"', "'name.familyName co'"),
    ("User", "title pr", "'title pr'"),
    ("User", "userName pr", "'userName pr'"),
    ("User", 'meta.lastModified gt "2011-05-13T04:42:34Z"', "'meta.lastModified gt'"),
    ("User", f'schemas eq "{ENTERPRISE}"', "'schemas eq'"),
    # Logical operators.
    ("User", 'title pr and userType eq "Employee"', "the logical operator 'and'"),
    ("User", 'userName eq "a" or userName eq "b"', "the logical operator 'or'"),
    ("User", "not (active eq true)", "the logical operator 'not'"),
    # Value filters and other schemas.
    ("User", 'emails[value eq "x"]', "a value filter 'attribute[...]'"),
    ("User", f'{GROUP}:userName eq "x"', "'an attribute eq'"),
    ("User", f'{ENTERPRISE}:employeeNumber eq "1"', f"'{ENTERPRISE}:employeeNumber eq'"),
    # Value types: active takes booleans only, the others strings only.
    ("User", 'active eq "true"', "'active eq' with a string value"),
    ("User", "active eq null", "'active eq' with a null value"),
    ("User", "userName eq true", "'userName eq' with a boolean value"),
    ("User", "userName eq 42", "'userName eq' with a number value"),
    ("User", "email eq null", "'email eq' with a null value"),
    # Attributes of the other resource type.
    ("Group", 'userName eq "x"', "'an attribute eq' on Group"),
    ("User", 'displayName eq "x"', "'displayName eq' on User"),
    ("Group", 'members.value eq "x"', "'members.value eq'"),
]


@pytest.mark.parametrize(("resource_type", "text", "offending"), REJECTED)
def test_default_policy_rejects_the_rest(resource_type: str, text: str, offending: str) -> None:
    with pytest.raises(InvalidFilter) as caught:
        DEFAULT_POLICY.check(parse_filter(text), resource_type)
    detail = caught.value.detail
    assert f"Unsupported filter: {offending}" in detail
    forms = USER_FORMS if resource_type == "User" else "displayName eq"
    assert detail.endswith(f"the supported forms are: {forms}.")
    assert caught.value.to_body() == {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"],
        "status": "400",
        "scimType": "invalidFilter",
        "detail": detail,
    }


def test_unknown_resource_type() -> None:
    with pytest.raises(InvalidFilter, match="Filtering Foo resources is not supported"):
        DEFAULT_POLICY.check(parse_filter("a pr"), "Foo")


def test_allowed_lists_forms() -> None:
    assert DEFAULT_POLICY.allowed("User") == USER_FORMS.split(", ")
    assert DEFAULT_POLICY.allowed("group") == ["displayName eq"]
    assert DEFAULT_POLICY.allowed("Foo") == []


WIDER = FilterPolicy(
    forms=frozenset(
        {
            ("User", "userName", "eq"),
            ("User", "userName", "sw"),
            ("User", "title", "pr"),
            ("User", "emails.type", "eq"),
            ("User", "emails.value", "co"),
            ("User", f"{ENTERPRISE}:employeeNumber", "eq"),
            ("User", "age", "gt"),
        }
    ),
    value_types={("user", "AGE", "gt"): (int, float)},
    logical=frozenset({"and", "or", "not"}),
    value_filters=True,
)


@pytest.mark.parametrize(
    "text",
    [
        'userName sw "J" and not (title pr)',
        'title pr or userName eq "x" and userName sw "y"',
        'emails[type eq "work" and value co "@example.com"]',
        'emails[not (type eq "work")]',
        f'{ENTERPRISE}:employeeNumber eq "701984"',
        f'{ENTERPRISE.upper()}:EMPLOYEENUMBER eq "701984"',
        "age gt 30 and age gt 2.5",
    ],
)
def test_wider_policy(text: str) -> None:
    WIDER.check(parse_filter(text), "User")


@pytest.mark.parametrize(
    ("text", "offending"),
    [
        ('emails[type eq "work" and value eq "x"]', "'emails[value eq]'"),
        ("emails[display pr]", "'emails[an attribute pr]'"),
        ('age gt "30"', "'age gt' with a string value"),
        ('userName sw "J" and title co "x"', "'title co'"),
    ],
)
def test_wider_policy_rejects(text: str, offending: str) -> None:
    with pytest.raises(InvalidFilter) as caught:
        WIDER.check(parse_filter(text), "User")
    assert f"Unsupported filter: {offending}" in caught.value.detail
    assert "age gt integer|decimal" in caught.value.detail
    assert caught.value.detail.endswith(", and, not, or.")


def test_long_chains_are_checked_without_recursion() -> None:
    text = " or ".join(['userName eq "x"'] * 500)
    WIDER.check(parse_filter(text, max_length=20_000), "User")


def test_allowed_lists_forms_as_declared_sorted_in_any_case() -> None:
    policy = FilterPolicy(
        forms=frozenset(
            {("User", "UserName", "eq"), ("User", "active", "eq"), ("User", "active", "pr")}
        ),
        # Types listed for every form of an attribute: a presence test takes no value.
        value_types={("User", "active", "eq"): (bool, bytes), ("User", "active", "pr"): (bool,)},
    )
    assert policy.allowed("User") == ["active eq true|false|bytes", "active pr", "UserName eq"]


def test_a_value_filter_on_an_extension_attribute_names_its_sub_attributes_there() -> None:
    manager = f"{ENTERPRISE}:manager"
    policy = FilterPolicy(forms=frozenset({("User", f"{manager}.value", "eq")}), value_filters=True)
    policy.check(parse_filter(f'{manager}[value eq "m1"]'), "User")
    with pytest.raises(InvalidFilter, match=r"'manager\[value eq\]'"):
        policy.check(parse_filter('manager[value eq "m1"]'), "User")
