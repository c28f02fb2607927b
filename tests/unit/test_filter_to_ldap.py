"""SCIM filter -> AST -> RFC 4515 string: operator table, mapping, escaping, injection."""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scim_core.errors import InvalidFilter
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
)

with warnings.catch_warnings():
    # ldap3 2.9.1 imports names that pyasn1 0.6 deprecated (tagMap, typeMap): harmless here.
    warnings.simplefilter("ignore", DeprecationWarning)
    from ldap3.operation.search import parse_filter as ldap3_parse_filter

    from scim_core.backends.ldap.escape import filter_value
    from scim_core.backends.ldap.filter import (
        FilterMapping,
        filter_key,
        kind_classes,
        list_filter,
        lookup_filter,
        to_ldap,
    )

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
ACTIVE = "(!(pwdAccountLockedTime=000001010000Z))"
INACTIVE = "(pwdAccountLockedTime=000001010000Z)"

USERS = FilterMapping(
    attributes={
        "username": "uid",
        "emails.value": "mail",
        "email": "mail",
        "displayname": "displayName",
        "id": "entryUUID",
        "name.givenname": "givenName",
        "name.familyname": "sn",
        "externalid": "scimExternalId",
        "title": "title",
        "usertype": "employeeType",
        "meta.lastmodified": "modifyTimestamp",
        "schemas": "objectClass",
        "logincount": "loginCount",
        f"{ENTERPRISE.lower()}:employeenumber": "employeeNumber",
    },
    value_transforms={"username": str.lower},
    booleans={"active": (ACTIVE, INACTIVE)},
)
GROUPS = FilterMapping(attributes={"displayname": "cn", "id": "cn", "members.value": "member"})

EMAILS = "(|(mail=*example.com*)(mail=*example.org*))"

TABLE = [
    # RFC 7644 §3.4.2.2 examples that the mapping covers.
    ('userName eq "bjensen"', "(uid=bjensen)"),
    ('name.familyName co "O\'Malley"', "(sn=*O'Malley*)"),
    ('userName sw "J"', "(uid=j*)"),  # the userName transform runs first
    (f'{USER}:userName sw "J"', "(uid=j*)"),
    ("title pr", "(title=*)"),
    (
        'meta.lastModified gt "2011-05-13T04:42:34Z"',
        "(&(modifyTimestamp>=2011-05-13T04:42:34Z)(!(modifyTimestamp=2011-05-13T04:42:34Z)))",
    ),
    ('meta.lastModified ge "2011-05-13T04:42:34Z"', "(modifyTimestamp>=2011-05-13T04:42:34Z)"),
    (
        'meta.lastModified lt "2011-05-13T04:42:34Z"',
        "(&(modifyTimestamp<=2011-05-13T04:42:34Z)(!(modifyTimestamp=2011-05-13T04:42:34Z)))",
    ),
    ('meta.lastModified le "2011-05-13T04:42:34Z"', "(modifyTimestamp<=2011-05-13T04:42:34Z)"),
    ('title pr and userType eq "Employee"', "(&(title=*)(employeeType=Employee))"),
    ('title pr or userType eq "Intern"', "(|(title=*)(employeeType=Intern))"),
    (f'schemas eq "{ENTERPRISE}"', f"(objectClass={ENTERPRISE})"),
    (
        'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
        f"(&(employeeType=Employee){EMAILS})",
    ),
    (
        'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
        f"(&(!(employeeType=Employee))(!{EMAILS}))",
    ),
    # The contract's forms.
    ('email eq "b@example.com"', "(mail=b@example.com)"),
    ('emails.value eq "b@example.com"', "(mail=b@example.com)"),
    ("active eq true", ACTIVE),
    ("active eq false", INACTIVE),
    ("active ne true", INACTIVE),
    ("active ne false", ACTIVE),
    ("active pr", "(objectClass=*)"),
    # Every operator of the table.
    ('displayName eq "x"', "(displayName=x)"),
    ('displayName ne "x"', "(!(displayName=x))"),
    ('displayName co "x"', "(displayName=*x*)"),
    ('displayName sw "x"', "(displayName=x*)"),
    ('displayName ew "x"', "(displayName=*x)"),
    ('displayName gt "x"', "(&(displayName>=x)(!(displayName=x)))"),
    ('displayName ge "x"', "(displayName>=x)"),
    ('displayName lt "x"', "(&(displayName<=x)(!(displayName=x)))"),
    ('displayName le "x"', "(displayName<=x)"),
    ("displayName pr", "(displayName=*)"),
    # Values: null, numbers, booleans, empty substrings.
    ("displayName eq null", "(!(displayName=*))"),
    ("displayName ne null", "(displayName=*)"),
    ("loginCount ge 10", "(loginCount>=10)"),
    ("loginCount eq -1.5", "(loginCount=-1.5)"),
    ("title eq true", "(title=TRUE)"),
    ("title eq false", "(title=FALSE)"),
    ("title ne false", "(!(title=FALSE))"),
    ("not (active eq false)", f"(!{INACTIVE})"),
    ("active pr", "(objectClass=*)"),
    ('title sw ""', "(title=*)"),
    ('title ew ""', "(title=*)"),
    ('title co ""', "(title=*)"),
    ('title eq ""', "(title=)"),
    # Names: case-insensitive, schema URIs, sub-attributes, aliases.
    ('USERNAME EQ "BJensen"', "(uid=bjensen)"),
    ('Name.GivenName eq "Barbara"', "(givenName=Barbara)"),
    ('externalId eq "701984"', "(scimExternalId=701984)"),
    ('id eq "2819c223"', "(entryUUID=2819c223)"),
    (f'{ENTERPRISE}:employeeNumber eq "701984"', "(employeeNumber=701984)"),
    (f'{USER.upper()}:Name.FamilyName eq "Jensen"', "(sn=Jensen)"),
    # Value filters map their paths as sub-attributes.
    ('emails[value eq "b@example.com"]', "(mail=b@example.com)"),
    ('emails[value sw "b" and not (value ew ".org")]', "(&(mail=b*)(!(mail=*.org)))"),
    # Chains are flattened; grouping keeps its meaning.
    ("title pr and title pr and title pr", "(&(title=*)(title=*)(title=*))"),
    ("title pr or title pr and userName pr", "(|(title=*)(&(title=*)(uid=*)))"),
    ("(title pr or title pr) and userName pr", "(&(|(title=*)(title=*))(uid=*))"),
    ("title pr and (userName pr and title pr)", "(&(title=*)(&(uid=*)(title=*)))"),
    ('not (not (userName eq "x"))', "(!(!(uid=x)))"),
]


@pytest.mark.parametrize(("text", "ldap"), TABLE)
def test_to_ldap(text: str, ldap: str) -> None:
    assert to_ldap(parse_filter(text), USERS) == ldap
    ldap3_parse_filter(ldap, None, False, False, None, False)  # well-formed RFC 4515


def test_groups() -> None:
    assert to_ldap(parse_filter('displayName eq "Tour Guides"'), GROUPS) == "(cn=Tour Guides)"
    assert to_ldap(parse_filter('members[value eq "x"]'), GROUPS) == "(member=x)"
    assert to_ldap(parse_filter('members eq "x"'), GROUPS) == "(member=x)"


INJECTIONS = [
    ('displayName eq "*"', "(displayName=\\2a)"),
    ('displayName eq "("', "(displayName=\\28)"),
    ('displayName eq ")"', "(displayName=\\29)"),
    ('displayName eq "\\\\"', "(displayName=\\5c)"),
    ('displayName eq "\\u0000"', "(displayName=\\00)"),
    ('displayName eq "*)(uid=*"', "(displayName=\\2a\\29\\28uid=\\2a)"),
    ('displayName eq "x)(|(objectClass=*"', "(displayName=x\\29\\28|\\28objectClass=\\2a)"),
    (
        'displayName eq "admin*)((|userPassword=*)"',
        "(displayName=admin\\2a\\29\\28\\28|userPassword=\\2a\\29)",
    ),
    ('displayName co "*"', "(displayName=*\\2a*)"),
    ('displayName sw "\\\\2a"', "(displayName=\\5c2a*)"),
    ('userName eq "*)(uid=*"', "(uid=\\2a\\29\\28uid=\\2a)"),
    ('emails[value ew "@x\\u0000("]', "(mail=*@x\\00\\28)"),
    ('displayName eq "é\\n"', "(displayName=é\n)"),
]


@pytest.mark.parametrize(("text", "ldap"), INJECTIONS)
def test_values_are_escaped(text: str, ldap: str) -> None:
    result = to_ldap(parse_filter(text), USERS)
    assert result == ldap
    ldap3_parse_filter(result, None, False, False, None, False)


def test_transform_runs_before_escaping() -> None:
    mapping = FilterMapping(
        attributes={"username": "uid"}, value_transforms={"USERNAME": lambda v: v + "*"}
    )
    assert to_ldap(parse_filter('userName eq "a"'), mapping) == "(uid=a\\2a)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('nickName eq "x"', "The attribute 'nickName' cannot be used in a filter."),
        ('emails[type eq "work"]', "The attribute 'emails.type' cannot be used"),
        ('emails.type eq "work"', "The attribute 'emails.type' cannot be used"),
        (f"{ENTERPRISE}:manager pr", f"The attribute '{ENTERPRISE}:manager' cannot"),
        ('urn:example:other:1.0:userName eq "x"', "'urn:example:other:1.0:userName'"),
        ('active eq "true"', "'active' takes only 'eq' or 'ne' with true or false."),
        ("active gt false", "'active' takes only"),
        ("title co null", "'title co null' is not a valid comparison."),
        ('emails[value.x eq "b"]', "The attribute 'emails.value.x' cannot be used"),
    ],
)
def test_untranslatable(text: str, message: str) -> None:
    with pytest.raises(InvalidFilter) as caught:
        to_ldap(parse_filter(text), USERS)
    assert message in caught.value.detail


def test_rfc_examples_map_or_name_the_attribute() -> None:
    text = 'userType eq "Employee" and emails[type eq "work" and value co "@example.com"]'
    with pytest.raises(InvalidFilter, match=r"'emails\.type'"):
        to_ldap(parse_filter(text), USERS)
    with pytest.raises(InvalidFilter, match=r"'ims\.type'"):
        to_ldap(parse_filter('title pr or ims[type eq "xmpp"]'), USERS)


SITE = "urn:example:site:2.0:User"


@pytest.mark.parametrize(
    ("path", "key", "text", "ldap"),
    [
        (("userName",), "username", 'userName eq "a"', "(uid=a)"),
        (("name", "givenName"), "name.givenname", 'name.givenName eq "a"', "(uid=a)"),
        ((SITE, "badge"), f"{SITE.lower()}:badge", f'{SITE}:badge eq "a"', "(uid=a)"),
        (
            (SITE.upper(), "Badge", "Id"),
            f"{SITE.lower()}:badge.id",
            f'{SITE}:badge.id eq "a"',
            "(uid=a)",
        ),
        # A value filter on an extension's attribute keeps its schema.
        ((SITE, "badge", "id"), f"{SITE.lower()}:badge.id", f'{SITE}:badge[id eq "a"]', "(uid=a)"),
    ],
)
def test_filter_key_is_the_key_a_filter_finds(path, key, text, ldap) -> None:
    assert filter_key(path) == key
    assert to_ldap(parse_filter(text), FilterMapping({filter_key(path): "uid"})) == ldap


def test_a_value_filter_inside_another_is_refused() -> None:
    # The grammar has none; a filter built in code may.
    inner = ValueFilter(AttrPath("ims"), Present(AttrPath("value")))
    with pytest.raises(InvalidFilter, match=r"cannot hold another one \('ims\['\)"):
        to_ldap(ValueFilter(AttrPath("emails"), inner), USERS)


def user_name(value: str) -> str:
    return f"(&(uid={filter_value(value.lower())})(cn={filter_value(value)}))"


@pytest.mark.parametrize(
    ("text", "ldap"),
    [
        ('userName eq "Ada*"', "(&(uid=ada\\2a)(cn=Ada\\2a))"),
        ('userName ne "Ada"', "(!(&(uid=ada)(cn=Ada)))"),
        ('userName sw "Ada"', "(uid=Ada*)"),  # only eq and ne take the whole filter
        ("userName eq 7", "(uid=7)"),  # and only with a string
        ("userName eq null", "(!(uid=*))"),
    ],
)
def test_an_equality_filter_takes_eq_and_ne(text: str, ldap: str) -> None:
    mapping = FilterMapping({"username": "uid"}, equalities={"userName": user_name})
    assert to_ldap(parse_filter(text), mapping) == ldap


def test_long_chain() -> None:
    node = parse_filter(" or ".join(['userName eq "x"'] * 900), max_length=40_000)
    assert to_ldap(node, USERS) == "(|" + "(uid=x)" * 900 + ")"


attributes = st.sampled_from(["userName", "title", "emails.value", "name.givenName", "email"])
leaves: st.SearchStrategy[Filter] = st.builds(
    Compare,
    st.builds(lambda name: AttrPath(*name.split(".")), attributes),
    st.sampled_from(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"]),
    st.text() | st.integers() | st.none().map(lambda _: "x"),
) | st.builds(Present, st.builds(AttrPath, attributes.filter(lambda n: "." not in n)))
trees = st.recursive(
    leaves,
    lambda inner: (
        st.builds(And, inner, inner) | st.builds(Or, inner, inner) | st.builds(Not, inner)
    ),
    max_leaves=10,
)


@given(trees)
def test_output_is_always_well_formed(ast: Filter) -> None:
    result = to_ldap(ast, USERS)
    ldap3_parse_filter(result, None, False, False, None, False)
    # Nothing a client wrote can open or close a filter component: every parenthesis and
    # asterisk in the output belongs to the templates.
    assert result.count("(") == result.count(")")


@given(st.text())
def test_any_value_is_inert(value: str) -> None:
    result = to_ldap(Compare(AttrPath("title"), "eq", value), USERS)
    assert result.startswith("(title=") and result.endswith(")")
    inner = result[len("(title=") : -1]
    assert not any(char in inner for char in "*()\x00")
    assert re.fullmatch(r"(?:[^\\]|\\(?:2a|28|29|5c|00))*", inner, re.DOTALL)


def test_a_list_filter_is_the_kind_and_the_condition_in_one_and() -> None:
    """The text 389-DS matches against its VLV indexes, with or without a condition."""
    assert list_filter("(objectClass=inetOrgPerson)") == "(&(objectClass=inetOrgPerson))"
    assert (
        list_filter("(objectClass=groupOfNames)", "(cn=a)") == "(&(objectClass=groupOfNames)(cn=a))"
    )


def test_a_lookup_names_the_entries_before_their_kind() -> None:
    """OpenLDAP intersects an AND's candidates in order: the narrow assertion goes first."""
    kind = "(&(objectClass=user)(!(objectClass=computer)))"
    assert (
        lookup_filter(kind, "(objectGUID=\\01)")
        == "(&(objectGUID=\\01)(&(objectClass=user)(!(objectClass=computer))))"
    )


@pytest.mark.parametrize(
    ("kind", "classes"),
    [
        ("(objectClass=inetOrgPerson)", {"inetorgperson"}),
        ("(objectclass=InetOrgPerson)", {"inetorgperson"}),
        ("(|(objectClass=inetOrgPerson)(objectClass=nsPerson))", {"inetorgperson", "nsperson"}),
        ("(|(objectClass=posixAccount))", {"posixaccount"}),
        ("(|(OBJECTCLASS=a-1)(objectClass=B))", {"a-1", "b"}),
    ],
)
def test_a_kind_of_one_class_or_a_choice_of_classes_is_told_by_them(kind, classes) -> None:
    assert kind_classes(kind) == frozenset(classes)


@pytest.mark.parametrize(
    "kind",
    [
        "(&(objectClass=user)(!(objectClass=computer)))",  # excludes a class
        "(|(objectClass=inetOrgPerson)(uid=service))",  # another attribute
        "(objectClass=*)",
        "(objectClass=inet*Person)",
        "(objectClass=2.16.840.1.113730.3.2.2)",  # an OID: the directory knows its name
        "(&(objectClass=inetOrgPerson))",
        "(|)",
        "(objectClass=inetOrgPerson)(objectClass=person)",
        " (objectClass=inetOrgPerson)",
        "(!(objectClass=inetOrgPerson))",
    ],
)
def test_any_other_kind_is_left_to_the_directory(kind) -> None:
    assert kind_classes(kind) is None
