"""``attributes`` and ``excludedAttributes`` (RFC 7644 §3.4.2.5) on an outgoing resource."""

import pytest

from scim_core import InvalidValue
from scim_core.projection import MAX_PROJECTED_NAMES, Projection, parse_projection

CORE = "urn:ietf:params:scim:schemas:core:2.0:User"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
USER = {
    "id": "1",
    "schemas": [CORE],
    "meta": {"version": 'W/"1"'},
    "userName": "alice",
    "name": {"givenName": "Alice", "familyName": "Liddell"},
    "emails": [
        {"value": "a@example.org", "type": "work", "primary": True},
        {"value": "b@example.org", "type": "home"},
        "not an object",
    ],
    ENTERPRISE: {"employeeNumber": "7", "manager": {"value": "2", "displayName": "Bob"}},
}


def project(**query):
    return parse_projection(query, CORE).apply(USER)


def test_names_are_trimmed_folded_and_stripped_of_the_core_urn():
    projection = parse_projection(
        {"attributes": f" userName , {CORE}:Name.givenName,,{ENTERPRISE}:employeeNumber"}, CORE
    )
    assert projection.include == {
        "username",
        "name.givenname",
        f"{ENTERPRISE}:employeenumber".lower(),
    }
    assert parse_projection({}, CORE) == Projection()
    assert parse_projection({"attributes": ""}, CORE).include == frozenset()


def test_too_many_or_too_long_names_are_refused():
    parse_projection({"attributes": ",".join(["a"] * MAX_PROJECTED_NAMES)}, CORE)  # the limit
    with pytest.raises(InvalidValue, match="at most"):
        parse_projection({"attributes": ",".join(["a"] * (MAX_PROJECTED_NAMES + 1))}, CORE)
    parse_projection({"excludedAttributes": "x" * 256}, CORE)
    with pytest.raises(InvalidValue, match="longer than 256"):
        parse_projection({"excludedAttributes": "x" * 257}, CORE)


def test_attributes_keep_what_they_name_and_always_id_schemas_meta():
    assert project(attributes="userName") == {
        "id": "1",
        "schemas": [CORE],
        "meta": {"version": 'W/"1"'},
        "userName": "alice",
    }


def test_a_sub_attribute_keeps_only_it_in_objects_and_in_each_element():
    shown = project(attributes="name.givenName,emails.value")
    assert shown["name"] == {"givenName": "Alice"}
    assert shown["emails"] == [{"value": "a@example.org"}, {"value": "b@example.org"}]
    whole = project(attributes="name,name.givenName")
    assert whole["name"] == USER["name"]  # the whole attribute asked for wins


def test_an_extension_attribute_keeps_only_it_and_the_urn_keeps_all():
    shown = project(attributes=f"{ENTERPRISE}:employeeNumber")
    assert shown[ENTERPRISE] == {"employeeNumber": "7"} and "userName" not in shown
    assert project(attributes=ENTERPRISE)[ENTERPRISE] == USER[ENTERPRISE]
    assert project(attributes=f"{ENTERPRISE}:manager.value")[ENTERPRISE] == {
        "manager": USER[ENTERPRISE]["manager"]
    }


def test_excluded_attributes_drop_them_but_never_id_schemas_meta():
    shown = project(excludedAttributes="emails,id,meta,schemas")
    assert "emails" not in shown
    assert {"id", "schemas", "meta", "userName", "name", ENTERPRISE} <= set(shown)
    assert project(excludedAttributes=ENTERPRISE).keys() == USER.keys() - {ENTERPRISE}


def test_wants_answers_for_top_level_names():
    projection = Projection(include=frozenset({"name.givenname", f"{ENTERPRISE}:manager".lower()}))
    assert projection.wants("name") and projection.wants("ID")
    assert projection.wants(ENTERPRISE) and not projection.wants("emails")
    assert not Projection(exclude=frozenset({"emails"})).wants("Emails")
    assert Projection().wants("anything")


def test_top_level_is_what_a_backend_must_read():
    assert Projection().top_level() is None
    projection = Projection(
        include=frozenset({"name.givenname", f"{ENTERPRISE}:manager.value".lower()})
    )
    assert projection.top_level() == {
        "id",
        "schemas",
        "meta",
        "name",
        f"{ENTERPRISE}:manager".lower(),
        ENTERPRISE.lower(),
    }


@pytest.mark.parametrize(
    ("attributes", "key", "shown"),
    [
        # The whole attribute asked for wins over its parts, in objects and in lists.
        (f"{ENTERPRISE},{ENTERPRISE}:employeeNumber", ENTERPRISE, USER[ENTERPRISE]),
        ("emails,emails.value", "emails", USER["emails"]),
        # Parts past a sub-attribute select nothing more than the sub-attribute.
        (f"{ENTERPRISE}:manager.value.x", ENTERPRISE, {"manager": USER[ENTERPRISE]["manager"]}),
        ("name.givenName.x", "name", {"givenName": "Alice"}),
    ],
)
def test_what_a_list_of_names_keeps(attributes, key, shown):
    assert project(attributes=attributes)[key] == shown


def test_top_level_of_names_past_a_sub_attribute():
    projection = Projection(
        include=frozenset({"name.givenname.x", f"{ENTERPRISE}:manager.value.x".lower()})
    )
    assert projection.top_level() == {
        "id",
        "schemas",
        "meta",
        "name",
        f"{ENTERPRISE}:manager".lower(),
        ENTERPRISE.lower(),
    }


def test_nothing_asked_is_every_attribute_in_a_copy():
    shown = project()
    assert shown == USER and shown is not USER
    shown["userName"] = "changed"
    assert USER["userName"] == "alice"
