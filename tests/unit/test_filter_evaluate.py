"""Filters as predicates over RFC 7643 JSON resources (the memory backend's query engine)."""

from __future__ import annotations

from typing import Any

import pytest

from scim_core.filter import evaluate, parse_filter

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

# After RFC 7643 §8.2 (full user representation), abridged, plus a few values to compare.
BJENSEN: dict[str, Any] = {
    "schemas": [USER, ENTERPRISE],
    "id": "2819c223-7f76-453a-919d-413861904646",
    "externalId": "701984",
    "userName": "bjensen@example.com",
    "name": {
        "formatted": "Ms. Barbara J Jensen, III",
        "familyName": "Jensen",
        "givenName": "Barbara",
        "middleName": "Jane",
    },
    "displayName": "Babs Jensen",
    "nickName": "",
    "title": "Tour Guide",
    "userType": "Employee",
    "active": True,
    "emails": [
        {"value": "bjensen@example.com", "type": "work", "primary": True},
        {"value": "babs@jensen.org", "type": "home"},
    ],
    "ims": [{"value": "someaimhandle", "type": "aim"}],
    "groups": [],
    "x509Certificates": [{}],
    "loginCount": 42,
    "rating": 4.5,
    "meta": {
        "resourceType": "User",
        "created": "2010-01-23T04:56:22Z",
        "lastModified": "2011-05-13T04:42:34Z",
        "version": 'W/"a330bc54f0671c9"',
    },
    ENTERPRISE: {"employeeNumber": "701984", "manager": {"value": "26118915-6090-4610-87e4"}},
}

CASES = [
    # RFC 7644 §3.4.2.2 examples.
    ('userName eq "bjensen@example.com"', True),
    ('name.familyName co "O\'Malley"', False),
    ('name.familyName co "ENS"', True),
    ('userName sw "J"', False),
    ('userName sw "BJ"', True),
    (f'{USER}:userName sw "b"', True),
    ("title pr", True),
    ('meta.lastModified gt "2011-05-13T04:42:34Z"', False),
    ('meta.lastModified ge "2011-05-13T04:42:34Z"', True),
    ('meta.lastModified lt "2011-05-13T04:42:34Z"', False),
    ('meta.lastModified le "2011-05-13T04:42:34Z"', True),
    ('meta.lastModified gt "2011-05-13T04:42:34.000+01:00"', True),  # instants, not text
    ('meta.lastModified eq "2011-05-13T04:42:34.000Z"', True),
    ('title pr and userType eq "Employee"', True),
    ('title pr or userType eq "Intern"', True),
    (f'schemas eq "{ENTERPRISE}"', True),
    ('userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")', True),
    (
        'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
        False,
    ),
    ('userType eq "Employee" and (emails.type eq "work")', True),
    ('userType eq "Employee" and emails[type eq "work" and value co "@example.com"]', True),
    (
        'emails[type eq "work" and value co "@example.com"] or '
        'ims[type eq "xmpp" and value co "@foo.com"]',
        True,
    ),
    # Attribute names are case-insensitive; string values too unless caseExact.
    ('USERNAME EQ "BJENSEN@EXAMPLE.COM"', True),
    ('Name.GivenName eq "barbara"', True),
    ('userType eq "employee"', True),
    ('id eq "2819C223-7F76-453A-919D-413861904646"', False),  # caseExact
    ('id eq "2819c223-7f76-453a-919d-413861904646"', True),
    ('externalId eq "701984"', True),
    # Multi-valued: any value matches; value filters need one value to match every condition.
    ('emails.value eq "babs@jensen.org"', True),
    ('email eq "BABS@jensen.org"', True),  # the contract's flat alias
    ('emails.type eq "home"', True),
    ('emails[type eq "home" and value co "example.com"]', False),
    ('emails[type eq "home" or primary eq true]', True),
    ('emails[not (type eq "work")]', True),
    ("emails[primary eq true]", True),
    ("emails[primary eq false]", False),  # absent is not false (the home address has none)
    ("emails[primary ne true]", True),
    ('emails[primary eq "true"]', False),  # a string is not a boolean
    ('emails ne "babs@jensen.org"', False),  # ne: no value equals (as in LDAP)
    ('emails ne "nobody@example.com"', True),
    ('emails sw "babs"', True),
    ('emails ew ".ORG"', True),
    ('schemas[value eq "urn:ietf:params:scim:schemas:core:2.0:user"]', True),
    # Booleans and numbers.
    ("active eq true", True),
    ("active eq false", False),
    ("active ne false", True),
    ('active eq "true"', False),
    ("active gt false", False),
    ("loginCount eq 42", True),
    ("loginCount gt 41.5", True),
    ("loginCount le 41", False),
    ('loginCount eq "42"', False),
    ("rating ge 4.5", True),
    ("loginCount co 4", False),
    ("active eq 1", False),  # true is not the number 1
    # Presence and null (RFC 7643 §2.5: unassigned, null and [] are one state).
    ("nickName pr", False),  # empty string
    ("groups pr", False),  # empty array
    ("x509Certificates pr", False),  # only an empty complex value
    ("name pr", True),
    ("name.middleName pr", True),
    ("name.honorificPrefix pr", False),
    ("nickName eq null", True),
    ("groups eq null", True),
    ("title eq null", False),
    ("title ne null", True),
    ("locale ne null", False),
    ('locale eq "x"', False),
    ('locale ne "x"', True),
    ("title gt null", False),
    # Schema-qualified paths: extension object, or the core schema at top level.
    (f'{ENTERPRISE}:employeeNumber eq "701984"', True),
    (f'{ENTERPRISE.upper()}:EmployeeNumber eq "701984"', True),
    (f'{ENTERPRISE}:manager.value sw "26118915"', True),
    (f'{ENTERPRISE}:manager eq "26118915-6090-4610-87e4"', True),
    (f"{ENTERPRISE}:userName pr", False),
    ('urn:example:other:1.0:userName eq "bjensen@example.com"', False),
    # Complex without sub-attribute compares its "value".
    (f'{ENTERPRISE}:manager co "6090"', True),
    ('name eq "Barbara"', False),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_evaluate(text: str, expected: bool) -> None:
    assert evaluate(parse_filter(text), BJENSEN) is expected


def test_case_exact_set_and_predicate() -> None:
    upper = parse_filter('emails.value eq "BJENSEN@EXAMPLE.COM"')
    assert evaluate(upper, BJENSEN)
    assert not evaluate(upper, BJENSEN, case_exact=frozenset({"emails.value"}))
    assert not evaluate(upper, BJENSEN, case_exact=frozenset({"Emails.Value"}))
    assert not evaluate(upper, BJENSEN, case_exact=lambda key: key.startswith("emails"))
    in_brackets = parse_filter('emails[value eq "BJENSEN@EXAMPLE.COM"]')
    assert evaluate(in_brackets, BJENSEN)
    assert not evaluate(in_brackets, BJENSEN, case_exact=frozenset({"emails.value"}))
    whole = parse_filter('emails eq "BJENSEN@EXAMPLE.COM"')
    assert not evaluate(whole, BJENSEN, case_exact=frozenset({"emails.value"}))
    assert evaluate(
        parse_filter('id eq "2819C223-7F76-453A-919D-413861904646"'),
        BJENSEN,
        case_exact=frozenset(),
    )


def test_resource_without_schemas_takes_core_prefix() -> None:
    assert evaluate(parse_filter(f'{USER}:userName eq "x"'), {"userName": "X"})


def test_value_filter_on_one_element() -> None:
    # What the PATCH engine does: a value filter's condition over one element.
    work = parse_filter('type eq "work" and value ew "@example.com"')
    assert evaluate(work, BJENSEN["emails"][0])
    assert not evaluate(work, BJENSEN["emails"][1])


def test_group() -> None:
    group = {
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "id": "e9e30dba",
        "displayName": "Tour Guides",
        "members": [{"value": "2819c223", "display": "Babs Jensen"}],
    }
    assert evaluate(parse_filter('displayName eq "tour guides"'), group)
    assert evaluate(parse_filter('members[value eq "2819c223"]'), group)
    assert evaluate(parse_filter('members eq "2819c223"'), group)
    assert not evaluate(parse_filter('displayName eq "Admins"'), group)


def test_long_chains() -> None:
    node = parse_filter(
        " or ".join(['userName eq "nobody"'] * 999 + ["title pr"]), max_length=40_000
    )
    assert evaluate(node, BJENSEN)
    node = parse_filter(" and ".join(["title pr"] * 1000), max_length=40_000)
    assert evaluate(node, BJENSEN)


# `not`, `and`, `or` over three conditions whose truth is known: T, F and another T/F.
_T, _F = 'userType eq "Employee"', 'userType eq "Intern"'
_T2, _F2 = "title pr", "locale pr"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"not ({_T})", False),
        (f"not ({_F})", True),
        (f"not (not ({_F}))", False),
        (f"not ({_T} and {_F})", True),
        (f"not ({_T} or {_F})", False),
        (f"not ({_F}) and {_T}", True),
        (f"not ({_T}) or {_F}", False),
        (f"{_T} and not ({_F2})", True),
        # and binds tighter than or (RFC 7644 §3.4.2.2, Table 5).
        (f"{_T} or {_F} and {_F2}", True),
        (f"{_F} and {_F2} or {_T}", True),
        (f"{_F} or {_T} and {_F2}", False),
        (f"({_F} or {_T}) and {_T2}", True),
        (f"{_F} or {_F2} or {_T}", True),
        (f"{_T} and {_T2} and {_F}", False),
        (f"{_T} and {_T2} and {_T}", True),
        (f"{_F} or {_F2}", False),
        # not inside a value filter: per element.
        ('emails[not (type eq "home")]', True),
        ('emails[not (type eq "home") and type eq "home"]', False),
        ('emails[not (value co "@")]', False),
        ('ims[not (type eq "aim")]', False),
        ('emails[not (primary eq true) and type eq "work"]', False),
        ('emails[not (primary eq true) and type eq "home"]', True),
    ],
)
def test_not_and_or(text: str, expected: bool) -> None:
    assert evaluate(parse_filter(text), BJENSEN) is expected


def test_not_on_one_element_picks_the_others() -> None:
    # What a PATCH value path does with each element: emails[not (type eq "work")].
    node = parse_filter('not (type eq "work")')
    assert [evaluate(node, e) for e in BJENSEN["emails"]] == [False, True]


# Values the cases above leave out: a code kept as text, a case-exact id differing in case only,
# a complex value holding a list, a day and a non-RFC 3339 date.
ODD: dict[str, Any] = {
    "schemas": [USER],
    "externalId": "AbC-1",
    "code": "5",
    "emails": [{"value": "odd@example.com", "type": "work"}],
    "tags": {"labels": ["blue"], "notes": ""},
    "blank": {"labels": [""]},
    "day": "2024-01-01",
    "week": "2024-W01-1",
    "seen": "2011-05-13T04:42:34Z",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("emails[type pr]", True),  # pr inside a value filter reads the element
        ("emails[display pr]", False),
        ('externalId ne "abc-1"', True),  # caseExact: only the case differs, still not equal
        ('externalId eq "abc-1"', False),
        ("code eq 5", False),  # a number never equals text
        ("code gt 4", False),  # nor orders against it
        ("tags pr", True),  # a complex value whose only content is in a list
        ("blank pr", False),
        ('day eq "2024-01-01T00:00:00"', True),  # a full date is an instant (midnight)
        ('day lt "2024-01-01T00:00:01"', True),
        ('week lt "2024-01-02"', False),  # an ISO week date is not RFC 3339: compared as text
        ('seen eq "2011-05-13T04:42:34z"', True),  # one side no instant: the text, any case
    ],
)
def test_evaluate_odd_values(text: str, expected: bool) -> None:
    assert evaluate(parse_filter(text), ODD) is expected
