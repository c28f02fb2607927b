"""SCIM <-> LDAP values of mapped attributes and an entry's attribute map: pure functions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from types import MappingProxyType

import pytest

from scim_core.backends.ldap.mapped import MappedAttribute
from scim_core.backends.ldap.values import (
    all_values,
    case_ignored,
    dn_key,
    element_of,
    entry_meta,
    extension_resource,
    first,
    generalized_to_iso,
    is_true,
    ldap_values,
    lower_keyed,
    reference_id,
    scim_value,
    value_at,
)
from scim_core.errors import InvalidValue

SITE = "urn:example:site:2.0:User"


def attribute(type_="string", **options):
    return MappedAttribute(
        SITE, options.pop("name", type_), options.pop("ldap", type_), type_, **options
    )


@pytest.mark.parametrize(
    ("type_", "value", "ldap"),
    [
        ("boolean", True, ["TRUE"]),
        ("boolean", False, ["FALSE"]),
        ("integer", 42, ["42"]),
        ("dateTime", "2026-11-21T21:45:00Z", ["20261121214500Z"]),
        ("dateTime", "2026-11-21T23:45:00+02:00", ["20261121214500Z"]),
        ("dateTime", "2026-11-21T21:45:00", ["20261121214500Z"]),  # no offset: UTC
        ("binary", "AP8=", [b"\x00\xff"]),
        ("string", "", []),
        ("string", None, []),
    ],
)
def test_a_scim_value_in_its_ldap_syntax(type_, value, ldap, far_from_utc):
    assert ldap_values(attribute(type_), value) == ldap


@pytest.mark.parametrize(
    ("type_", "value", "message"),
    [
        ("dateTime", "21 November 2026", "needs an xsd:dateTime value"),
        ("dateTime", "2026-11-21T21:45:00z", "needs an xsd:dateTime value"),
        ("binary", "AP8", "needs a base64 value"),
        ("binary", "AP8=!", "needs a base64 value"),  # not skipped over: refused
    ],
)
def test_a_value_its_syntax_cannot_hold_is_invalid(type_, value, message):
    with pytest.raises(InvalidValue, match=message):
        ldap_values(attribute(type_), value)


def test_a_multi_valued_attribute_gets_each_value_once():
    tags = attribute(multi_valued=True)
    assert ldap_values(tags, ["a", None, "", "b", "a"]) == ["a", "b"]
    assert ldap_values(tags, "abc") == ["abc"]  # one value, not a list of characters


@pytest.mark.parametrize(
    ("type_", "raw", "value"),
    [
        ("boolean", "TRUE", True),
        ("boolean", b" true ", True),
        ("boolean", b"\xff", False),  # not UTF-8: not TRUE
        ("boolean", "FALSE", False),
        ("integer", "42", 42),
        ("integer", "forty-two", None),
        ("dateTime", "20261121214500Z", "2026-11-21T21:45:00Z"),
        ("binary", b"\x00\xff", "AP8="),
        ("binary", "hi", "aGk="),
        ("string", None, None),
    ],
)
def test_an_ldap_value_as_scim_reads_it(type_, raw, value):
    assert scim_value(attribute(type_), raw) == value


def test_is_true_takes_the_schema_aware_form():
    assert is_true(True) and not is_true(False) and not is_true(None) and not is_true(1)


@pytest.mark.parametrize(
    ("value", "iso"),
    [
        ("20261121214500Z", "2026-11-21T21:45:00Z"),
        ("20261121214500.0Z", "2026-11-21T21:45:00Z"),  # Active Directory's form
        ("20261121214500,25Z", "2026-11-21T21:45:00Z"),
        ("20261121214500", "2026-11-21T21:45:00Z"),  # no zone: taken as UTC
        ("20261121214500+0200", "2026-11-21T19:45:00Z"),
        ("20261121214500-0130", "2026-11-21T23:15:00Z"),
        ("2026112121+02", "2026-11-21T19:00:00Z"),
        ("202611212145Z", "2026-11-21T21:45:00Z"),  # minutes and seconds are optional
        ("2026112121Z", "2026-11-21T21:00:00Z"),
        ("2026112121", "2026-11-21T21:00:00Z"),
        ("20261121214500+02:00", None),
        ("20261121214500+2400", None),  # an offset of a day
        ("20261121214560Z", None),  # a leap second
        ("20261131214500Z", None),  # a 31 November
        ("20261321214500Z", None),
        ("20261121214500\u0396", None),  # a letter that is not Z
        ("\uff12\uff10\uff12\uff161121214500Z", "2026-11-21T21:45:00Z"),  # other digits
        ("00001121214500Z", None),  # no year 0
        ("2026112121450Z", None),
        ("x20261121214500Z", None),
        ("20261121214500Zx", None),
        ("2026", None),
        (datetime(2026, 11, 21, 21, 45, tzinfo=UTC), "2026-11-21T21:45:00Z"),
        (
            datetime(2026, 11, 21, 23, 45, tzinfo=timezone(timedelta(hours=2))),
            "2026-11-21T21:45:00Z",
        ),
        (datetime(2026, 11, 21, 21, 45), "2026-11-21T21:45:00Z"),
        (None, None),
    ],
)
def test_generalized_time_as_iso(value, iso, far_from_utc):
    assert generalized_to_iso(value) == iso


def test_entry_meta():
    entry = {"createTimestamp": ["20261121214500Z"], "modifyTimestamp": ["20261122000000Z"]}
    assert entry_meta({**entry, "entryCSN": ["x1"]}, "entryCSN") == {
        "created": "2026-11-21T21:45:00Z",
        "lastModified": "2026-11-22T00:00:00Z",
        "version": 'W/"x1"',
    }
    assert entry_meta({}, "entryCSN") == {}


@pytest.mark.parametrize(
    "attributes", [{"Mail": ["a@x", "b@x"]}, lower_keyed({"MAIL": ["a@x", "b@x"]})]
)
def test_any_spelling_finds_an_attribute(attributes):
    assert first(attributes, "mail") == "a@x" and first(attributes, "MAIL") == "a@x"
    assert all_values(attributes, "mAil") == ["a@x", "b@x"]
    assert first(attributes, "cn") is None and all_values(attributes, "cn") == []


def test_a_single_value_map_and_an_empty_list():
    assert all_values({"cn": "Ada"}, "CN") == ["Ada"] and first({"cn": "Ada"}, "CN") == "Ada"
    assert first({"cn": []}, "cn") is None


def test_a_lower_keyed_map_behaves_as_a_map_in_any_case():
    folded = lower_keyed({"Mail": ["a@x"]})
    assert lower_keyed(folded) is folded
    assert folded["MAIL"] == ["a@x"] and folded.get("mAIL") == ["a@x"]
    assert "MAIL" in folded and "cn" not in folded and None not in folded
    assert folded.get("cn", ["none"]) == ["none"]
    with pytest.raises(KeyError, match="'cn'"):
        folded["CN"]


def test_dn_key_is_one_form_of_every_spelling():
    assert dn_key("CN=Ada,DC=Example") == "cn=ada,dc=example"
    assert dn_key("CN=Ada ,DC=x") == dn_key("cn=ada\\ ,dc=x")  # the space escaped or not
    assert dn_key("NOT A DN") == "not a dn"


def test_element_of_finds_the_element_of_its_type():
    phone = attribute(name="phoneNumbers", element_type="work", sub="value")
    home, work = {"type": "home"}, {"type": "Work", "value": "1"}
    elements = ["odd", {"value": "no type"}, {"type": None}, home, work, {"type": "work"}]
    assert element_of(elements, phone, create=False) is work
    assert element_of([home], phone, create=False) is None
    made = [home]
    assert element_of(made, phone, create=True) == {"type": "work"}
    assert made == [home, {"type": "work"}]


def test_reference_id():
    manager = attribute("complex", name="manager", ldap="manager", points_to="User")
    assert reference_id({SITE: {"manager": {"value": "u1"}}}, manager) == "u1"
    assert reference_id({SITE: {"manager": "u2"}}, manager) == "u2"
    assert reference_id({SITE: {"manager": {"value": ""}}}, manager) is None
    assert reference_id({}, manager) is None


def test_extension_resource_sets_what_the_entry_holds():
    mapped = [
        attribute("complex", name="manager", ldap="manager", points_to="User"),
        attribute("complex", name="gone", ldap="gone", points_to="User"),
        attribute(name="tags", ldap="tag", multi_valued=True),
        attribute(name="empty", ldap="none", multi_valued=True),
        attribute("integer", name="level", ldap="level"),
        attribute(name="missing", ldap="missing"),
    ]
    entry = {
        "manager": ["CN=Boss,DC=x"],
        "gone": ["cn=old,dc=x"],
        "tag": ["a", "b"],
        "level": ["3"],
    }
    resource: dict = {"id": "u1"}
    extension_resource(mapped, entry, resource, {"cn=boss,dc=x": "u0"})
    assert resource == {
        "id": "u1",
        SITE: {"manager": {"value": "u0"}, "tags": ["a", "b"], "level": 3},
    }
    nobody: dict = {}
    extension_resource(mapped[:1], {}, nobody)
    assert nobody == {}


def test_extension_resource_takes_a_single_value_as_ldap3_gives_it():
    """ldap3 gives a single-valued attribute's value bare, not in a list (with the server's
    schema loaded); names in any case find their attribute."""
    mapped = [
        attribute(name="blank", ldap="blank"),
        attribute("integer", name="level", ldap="level"),
        attribute(name="tags", ldap="tag", multi_valued=True),
        attribute("complex", name="manager", ldap="manager", points_to="User"),
        attribute(name="missing", ldap="missing"),
    ]
    entry = {
        "blank": [],  # held with no value: nothing, and the next ones still read
        "Level": "4",
        "TAG": "only",
        "manager": "cn=boss,dc=x",
        "missing": None,
    }
    resource: dict = {}
    extension_resource(mapped, entry, resource, {"cn=boss,dc=x": "u0"})
    assert resource == {SITE: {"level": 4, "tags": ["only"], "manager": {"value": "u0"}}}


def test_an_offset_datetime_is_written_in_utc():
    moment = datetime(2026, 11, 21, 23, 45, tzinfo=timezone(timedelta(hours=2)))
    assert ldap_values(attribute("dateTime"), moment.isoformat()) == ["20261121214500Z"]


@pytest.mark.parametrize(
    ("text", "compared"),
    [
        ("Sales", "sales"),
        (" lead", "lead"),
        ("trail ", "trail"),
        ("two  spaces", "two spaces"),
        ("tab\there", "tab here"),
        ("  ", ""),
        ("Straße", "strasse"),
    ],
)
def test_case_ignored_is_the_directory_s_comparison(text, compared):
    assert case_ignored(text) == compared


def test_case_ignored_orders_as_the_directory_sorts():
    names = ["Zed", " lead", "alpha", "#hash", "Lead2", "back\\slash"]
    assert sorted(names, key=case_ignored) == [
        "#hash",
        "alpha",
        "back\\slash",
        " lead",
        "Lead2",
        "Zed",
    ]


def test_value_at_walks_any_mapping_and_stops_at_anything_else():
    nested = MappingProxyType({"name": MappingProxyType({"givenName": "Ada"})})
    assert value_at(nested, ("name", "givenName")) == "Ada"
    assert value_at({"name": {"givenName": "Ada"}}, ("name", "givenName")) == "Ada"
    assert value_at({"name": "Ada"}, ("name", "givenName")) is None
    assert value_at({"name": ["Ada"]}, ("name", "givenName")) is None
    assert value_at({}, ("name", "givenName")) is None
