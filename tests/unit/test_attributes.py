"""Attribute definitions, name resolution and value coercion (RFC 7643 §2, §7; RFC 7644 §3.10)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from scim_core.errors import InvalidValue
from scim_core.schemas.attributes import (
    DEFAULT_SCHEMAS,
    ENTERPRISE_URN,
    ENTERPRISE_USER_SCHEMA,
    GROUP_DISPLAY_NAME,
    GROUP_SCHEMA,
    GROUP_URN,
    SCHEMA_URN,
    STANDARD_USER_ATTRIBUTES,
    STANDARD_USER_ELEMENTS,
    USER_SCHEMA,
    USER_URN,
    Attribute,
    SchemaSet,
    Unreturned,
    coerce,
    resolve,
    to_schema_json,
    typed_elements,
)

# --------------------------------------------------------------------------- definitions


def test_user_schema_holds_exactly_the_stored_attributes() -> None:
    names = [a.name for a in USER_SCHEMA.attributes]
    assert names == [
        "id",
        "externalId",
        "userName",
        "name",
        "displayName",
        "title",
        "emails",
        "active",
        "password",
    ]
    assert [a.name for a in ENTERPRISE_USER_SCHEMA.attributes] == ["employeeNumber", "manager"]
    assert [a.name for a in GROUP_SCHEMA.attributes] == [
        "id",
        "externalId",
        "displayName",
        "members",
    ]
    # Groups keep no externalId (it is not taken, never returned); displayName is the cn.
    group_external_id = GROUP_SCHEMA.attribute("externalId")
    assert group_external_id is not None
    assert (group_external_id.mutability, group_external_id.returned) == ("readOnly", "never")
    assert GROUP_SCHEMA.attribute("displayName").mutability == "immutable"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("schema", "name", "characteristics"),
    [
        (USER_SCHEMA, "id", {"mutability": "readOnly", "returned": "always", "case_exact": True}),
        (USER_SCHEMA, "externalId", {"case_exact": True, "mutability": "readWrite"}),
        (USER_SCHEMA, "userName", {"required": True, "uniqueness": "server"}),
        (USER_SCHEMA, "emails", {"multi_valued": True, "type": "complex", "required": True}),
        # What the service requires on create, or always holds, is advertised as required.
        (USER_SCHEMA, "name", {"required": True}),
        (USER_SCHEMA, "active", {"type": "boolean", "required": True}),
        (USER_SCHEMA, "password", {"mutability": "writeOnly", "returned": "never"}),
        (GROUP_SCHEMA, "displayName", {"required": True, "mutability": "immutable"}),
        (GROUP_SCHEMA, "members", {"multi_valued": True, "type": "complex"}),
    ],
)
def test_characteristics(schema: Any, name: str, characteristics: dict[str, Any]) -> None:
    attribute = schema.attribute(name)
    assert attribute is not None
    for key, expected in characteristics.items():
        assert getattr(attribute, key) == expected


def test_sub_attribute_characteristics() -> None:
    emails = USER_SCHEMA.attribute("emails")
    manager = ENTERPRISE_USER_SCHEMA.attribute("manager")
    members = GROUP_SCHEMA.attribute("members")
    assert emails is not None and manager is not None and members is not None
    assert [s.name for s in emails.sub_attributes] == ["value", "type", "primary"]
    email_type = emails.sub("TYPE")
    assert email_type is not None and email_type.canonical_values == ("work",)
    assert [s.name for s in manager.sub_attributes] == ["value", "$ref", "displayName"]
    assert manager.sub("displayName").mutability == "readOnly"  # type: ignore[union-attr]
    assert members.sub("value").mutability == "immutable"  # type: ignore[union-attr]
    assert members.sub("display").mutability == "readOnly"  # type: ignore[union-attr]
    assert [s.name for s in members.sub_attributes] == ["value", "$ref", "display", "type"]


def test_definitions_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        USER_SCHEMA.attributes[0].name = "other"  # type: ignore[misc]


# --------------------------------------------------------------------------- resolution

# name -> (schema, attribute, sub_attribute, primary)
USER_NAMES: dict[str, tuple[str | None, str, str | None, bool]] = {
    "userName": (None, "userName", None, False),
    "USERNAME": (None, "userName", None, False),
    "name.givenName": (None, "name", "givenName", False),
    "Name.GIVENNAME": (None, "name", "givenName", False),
    "givenName": (None, "name", "givenName", False),
    "familyname": (None, "name", "familyName", False),
    "email": (None, "emails", "value", True),
    "emails": (None, "emails", None, False),
    "emails.value": (None, "emails", "value", False),
    "active": (None, "active", None, False),
    "password": (None, "password", None, False),
    f"{USER_URN}:userName": (None, "userName", None, False),
    f"{USER_URN}:name.givenName": (None, "name", "givenName", False),
    f"{USER_URN.upper()}:name.givenName": (None, "name", "givenName", False),
    f"{ENTERPRISE_URN}:manager": (ENTERPRISE_URN, "manager", None, False),
    f"{ENTERPRISE_URN}:manager.value": (ENTERPRISE_URN, "manager", "value", False),
    f"{ENTERPRISE_URN}:employeeNumber": (ENTERPRISE_URN, "employeeNumber", None, False),
    "manager": (ENTERPRISE_URN, "manager", None, False),
    "manager.value": (ENTERPRISE_URN, "manager", "value", False),
    "employeeNumber": (ENTERPRISE_URN, "employeeNumber", None, False),
}


@pytest.mark.parametrize(("name", "expected"), USER_NAMES.items())
def test_resolve_user_names(name: str, expected: tuple[str | None, str, str | None, bool]) -> None:
    ref = resolve(name, "User")
    assert ref is not None
    assert (ref.schema, ref.attribute, ref.sub_attribute, ref.primary) == expected
    leaf = ref.parent.sub(ref.sub_attribute) if ref.sub_attribute else ref.parent
    assert ref.definition is leaf


@pytest.mark.parametrize(
    "name",
    [
        "nickName",
        "addresses",
        "name.middleName",
        "userName.value",
        "meta",
        "schemas",
        f"{ENTERPRISE_URN}:costCenter",
        f"{ENTERPRISE_URN}:givenName",  # aliases are for unprefixed names only
        f"{USER_URN}:givenName",
        f"{USER_URN}:email",
        f"{USER_URN}:manager",  # an extension attribute is not in the core schema
        ENTERPRISE_URN,
        "urn:example:other:2.0:User:userName",
        "",
    ],
)
def test_resolve_unknown_user_names(name: str) -> None:
    assert resolve(name, "User") is None


def test_resolve_group_names() -> None:
    members = resolve(f"{GROUP_URN}:members.value", "Group")
    assert members is not None
    assert (members.schema, members.attribute, members.sub_attribute) == (None, "members", "value")
    assert members.definition.mutability == "immutable"
    display_name = resolve("DISPLAYNAME", "Group")
    assert display_name is not None and display_name.definition.required
    assert resolve("userName", "Group") is None
    assert resolve("email", "Group") is None
    assert resolve("manager", "Group") is None
    assert resolve("userName", "Nothing") is None


# --------------------------------------------------------------------------- coercion


def _attr(name: str, resource_type: str = "User") -> Attribute:
    ref = resolve(name, resource_type)
    assert ref is not None
    return ref.definition


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("True", True),
        ("False", False),
        ("true", True),
        ("FALSE", False),
        (" false ", False),
    ],
)
def test_coerce_booleans(value: Any, expected: bool) -> None:
    assert coerce(_attr("active"), value) is expected


def test_an_empty_list_for_a_single_value_is_unassigned() -> None:
    assert coerce(_attr("active"), []) is None
    assert coerce(_attr("title"), []) is None


@pytest.mark.parametrize("value", ["yes", "1", "", 1, 0, 1.5, {}, ["True"]])
def test_coerce_rejects_non_booleans(value: Any) -> None:
    with pytest.raises(InvalidValue) as caught:
        coerce(_attr("active"), value)
    assert caught.value.scim_type == "invalidValue"
    assert "active" in caught.value.detail


def test_coerce_never_echoes_the_value() -> None:
    with pytest.raises(InvalidValue) as caught:
        coerce(_attr("password"), {"secret": "hunter2"})
    assert "hunter2" not in caught.value.detail
    assert "secret" not in caught.value.detail


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("userName", "bjensen", "bjensen"),
        ("employeeNumber", 701984, "701984"),
        ("active", None, None),
        ("manager", "26118915", {"value": "26118915"}),
        (
            "manager",
            {"VALUE": "m1", "displayName": "Boss", "$ref": "../Users/m1"},
            {"value": "m1", "$ref": "../Users/m1"},
        ),
        ("name", {"GivenName": "Barbara", "middleName": "Jane"}, {"givenName": "Barbara"}),
        ("emails", {"value": "a@x", "primary": "True"}, [{"value": "a@x", "primary": True}]),
        (
            "emails",
            [{"value": "a@x"}, None, {"type": "work"}],
            [{"value": "a@x"}, {"type": "work"}],
        ),
        ("emails", ["a@x"], [{"value": "a@x"}]),  # bare values of a complex attribute
        # read-only sub-attributes are computed by the service: dropped on input
        ("members", [{"value": "u1", "display": "U"}], [{"value": "u1"}]),
    ],
)
def test_coerce_shapes(name: str, value: Any, expected: Any) -> None:
    resource_type = "Group" if name == "members" else "User"
    assert coerce(_attr(name, resource_type), value) == expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("userName", True),
        ("userName", 1.5),
        ("userName", ["a"]),
        ("name", "Barbara"),
        ("name", ["Barbara"]),
        ("manager", ["m1"]),
        ("emails", [["a@x"]]),
    ],
)
def test_coerce_rejects_mismatched_types(name: str, value: Any) -> None:
    with pytest.raises(InvalidValue):
        coerce(_attr(name), value)


def test_coerce_does_not_share_containers() -> None:
    value = {"givenName": "A"}
    coerced = coerce(_attr("name"), value)
    coerced["givenName"] = "B"
    assert value == {"givenName": "A"}


# --------------------------------------------------------------------------- discovery


def test_schema_json_user() -> None:
    rendered = to_schema_json(USER_SCHEMA)
    assert rendered["schemas"] == [SCHEMA_URN]
    assert rendered["id"] == USER_URN
    assert rendered["name"] == "User"
    assert rendered["meta"] == {"resourceType": "Schema"}
    by_name = {a["name"]: a for a in rendered["attributes"]}
    assert by_name["userName"] == {
        "name": "userName",
        "type": "string",
        "multiValued": False,
        "description": by_name["userName"]["description"],
        "required": True,
        "caseExact": False,
        "mutability": "readWrite",
        "returned": "default",
        "uniqueness": "server",
    }
    assert "caseExact" not in by_name["active"] and "uniqueness" not in by_name["active"]
    assert by_name["password"]["returned"] == "never"
    emails = by_name["emails"]
    assert emails["multiValued"] is True
    assert [s["name"] for s in emails["subAttributes"]] == ["value", "type", "primary"]
    assert emails["subAttributes"][1]["canonicalValues"] == ["work"]
    json.dumps(rendered)  # JSON-ready


def test_schema_json_references_and_extension() -> None:
    rendered = to_schema_json(ENTERPRISE_USER_SCHEMA)
    assert rendered["id"] == ENTERPRISE_URN
    manager = next(a for a in rendered["attributes"] if a["name"] == "manager")
    ref = next(s for s in manager["subAttributes"] if s["name"] == "$ref")
    assert ref["type"] == "reference" and ref["referenceTypes"] == ["User"]
    group = to_schema_json(GROUP_SCHEMA)
    members = next(a for a in group["attributes"] if a["name"] == "members")
    assert {s["name"]: s["mutability"] for s in members["subAttributes"]} == {
        "value": "immutable",
        "$ref": "immutable",
        "display": "readOnly",
        "type": "immutable",
    }


def test_every_attribute_renders_all_required_characteristics() -> None:
    def walk(attributes: list[dict[str, Any]]) -> None:
        for attribute in attributes:
            assert {"name", "type", "multiValued", "required", "mutability", "returned"} <= set(
                attribute
            )
            walk(attribute.get("subAttributes", []))

    for schema in (USER_SCHEMA, ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA):
        walk(to_schema_json(schema)["attributes"])


def test_coerce_binary_keeps_base64_text_and_refuses_the_rest() -> None:
    photo = Attribute("photo", "binary", case_exact=True)
    assert coerce(photo, "AP8Q") == "AP8Q"
    for wrong in ("not base64!", "AP8", 12):
        with pytest.raises(InvalidValue) as refused:
            coerce(photo, wrong)
        assert "not base64" not in refused.value.detail


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("active", "yes", "Attribute 'active' expects a boolean, not a str."),
        ("active", 1, "Attribute 'active' expects a boolean, not a int."),
        ("userName", 1.5, "Attribute 'userName' expects a string, not a float."),
        ("name", ["x"], "Attribute 'name' expects an object, not a list."),
    ],
)
def test_a_mismatch_says_what_was_expected_and_the_kind_sent(
    name: str, value: Any, expected: str
) -> None:
    with pytest.raises(InvalidValue) as refused:
        coerce(_attr(name), value)
    assert refused.value.detail == expected


def test_integers_and_binaries_say_what_they_expect() -> None:
    with pytest.raises(InvalidValue) as refused:
        coerce(Attribute("level", "integer"), "7")
    assert refused.value.detail == "Attribute 'level' expects an integer, not a str."
    with pytest.raises(InvalidValue) as refused:
        coerce(Attribute("level", "integer"), True)
    assert refused.value.detail == "Attribute 'level' expects an integer, not a bool."
    with pytest.raises(InvalidValue) as refused:
        coerce(Attribute("photo", "binary"), 12)
    assert refused.value.detail == "Attribute 'photo' expects base64 text, not a int."


@pytest.mark.parametrize("wrong", ["AP8Q$", "AP 8Q", "AP8Q\n", "-_8Q"])
def test_binary_text_outside_the_base64_alphabet_is_refused(wrong: str) -> None:
    with pytest.raises(InvalidValue):
        coerce(Attribute("photo", "binary"), wrong)


def test_reference_attributes_render_their_case_exactness() -> None:
    rendered = to_schema_json(ENTERPRISE_USER_SCHEMA)
    assert rendered["description"] == ENTERPRISE_USER_SCHEMA.description
    manager = next(a for a in rendered["attributes"] if a["name"] == "manager")
    ref = next(s for s in manager["subAttributes"] if s["name"] == "$ref")
    assert ref["caseExact"] is False
    kinds = {a["name"]: a for a in to_schema_json(USER_SCHEMA)["attributes"]}
    assert kinds["id"]["caseExact"] is True


def test_the_standard_attributes_a_mapping_may_add_render_in_full() -> None:
    for urn, definitions in STANDARD_USER_ATTRIBUTES.items():
        extended = DEFAULT_SCHEMAS.with_attributes("User", urn, definitions)
        (schema,) = (s for s in extended.get("User") if s.id == urn)
        rendered = {a["name"]: a for a in to_schema_json(schema)["attributes"]}
        for definition in definitions:
            shown = rendered[definition.name]
            assert shown["description"] and isinstance(shown["description"], str)
            assert shown["multiValued"] is False and shown["mutability"] == "readWrite"
    types = {a.name: a.type for a in STANDARD_USER_ATTRIBUTES[USER_URN]}
    assert types["profileUrl"] == "reference"
    assert {t for n, t in types.items() if n != "profileUrl"} == {"string"}
    assert {a.type for a in STANDARD_USER_ATTRIBUTES[ENTERPRISE_URN]} == {"string"}
    assert resolve("nickName", schemas=DEFAULT_SCHEMAS) is None  # only where mapped
    mapped = DEFAULT_SCHEMAS.with_attributes("User", USER_URN, STANDARD_USER_ATTRIBUTES[USER_URN])
    ref = resolve("NICKNAME", schemas=mapped)
    assert ref is not None and ref.attribute == "nickName" and ref.schema is None


def test_an_attribute_stored_element_by_element_renders_its_types() -> None:
    phones = typed_elements("phoneNumbers", ("value",), ("work", "mobile"))
    rendered = to_schema_json(
        DEFAULT_SCHEMAS.with_attributes("User", USER_URN, (phones,)).get("User")[0]
    )
    shown = next(a for a in rendered["attributes"] if a["name"] == "phoneNumbers")
    assert shown["type"] == "complex" and shown["multiValued"] is True
    assert shown["description"] and isinstance(shown["description"], str)
    assert [s["name"] for s in shown["subAttributes"]] == ["value", "type"]
    value, kind = shown["subAttributes"]
    assert value["type"] == "string" and value["description"]
    assert kind["type"] == "string" and kind["canonicalValues"] == ["work", "mobile"]
    assert kind["description"] and isinstance(kind["description"], str)
    addresses = typed_elements("addresses", ("locality", "country"), ("home",))
    assert [s.name for s in addresses.sub_attributes] == ["locality", "country", "type"]
    assert all(s.description for s in STANDARD_USER_ELEMENTS["addresses"])
    assert coerce(addresses, {"Locality": "Paris", "type": "home"}) == [
        {"locality": "Paris", "type": "home"}
    ]


def test_with_attributes_replaces_a_same_named_attribute_in_its_place() -> None:
    renamed = DEFAULT_SCHEMAS.with_attributes("Group", GROUP_URN, (GROUP_DISPLAY_NAME,))
    (group,) = renamed.get("Group")
    assert [a.name for a in group.attributes] == ["id", "externalId", "displayName", "members"]
    assert group.attribute("displayName") is GROUP_DISPLAY_NAME
    shouted = Attribute("TITLE", "string", description="Upper-cased.")
    (user, _) = DEFAULT_SCHEMAS.with_attributes("User", USER_URN, (shouted,)).get("User")
    assert [a.name.lower() for a in user.attributes] == [
        a.name.lower() for a in USER_SCHEMA.attributes
    ]
    assert user.attributes[5] is shouted
    assert DEFAULT_SCHEMAS.get("Group") == (GROUP_SCHEMA,)  # the original set is unchanged


def test_with_attributes_of_an_unknown_schema_makes_an_extension() -> None:
    urn = "urn:example:params:scim:schemas:extension:acme:2.0:User"
    badge = Attribute("badge", "string")
    plain = DEFAULT_SCHEMAS.with_attributes("User", urn, (badge,))
    extension = plain.get("User")[-1]
    assert (extension.id, extension.name, extension.description) == (urn, urn, "")
    named = DEFAULT_SCHEMAS.with_attributes(
        "User", urn, (badge,), name="Acme", description="Acme's own"
    )
    assert (named.get("User")[-1].name, named.get("User")[-1].description) == (
        "Acme",
        "Acme's own",
    )
    assert resolve("badge", schemas=plain) is not None


def test_without_attribute_drops_only_what_it_names() -> None:
    no_title = DEFAULT_SCHEMAS.without_attribute("User", USER_URN.upper(), "TITLE")
    assert [a.name for a in no_title.get("User")[0].attributes] == [
        a.name for a in USER_SCHEMA.attributes if a.name != "title"
    ]
    no_manager = DEFAULT_SCHEMAS.without_attribute("User", ENTERPRISE_URN, "manager")
    assert [a.name for a in no_manager.get("User")[1].attributes] == ["employeeNumber"]
    assert no_manager.get("User")[0] == USER_SCHEMA
    no_formatted = DEFAULT_SCHEMAS.without_attribute("User", USER_URN, "name", "Formatted")
    name = no_formatted.get("User")[0].attribute("name")
    assert name is not None
    assert [s.name for s in name.sub_attributes] == ["givenName", "familyName"]
    assert resolve("name.formatted", schemas=no_formatted) is None
    assert resolve("name.givenName", schemas=no_formatted) is not None


def test_unreturned_names_every_level_of_every_schema() -> None:
    urn = "urn:example:params:scim:schemas:extension:acme:2.0:User"
    card = Attribute(
        "card",
        "complex",
        returned="request",
        sub_attributes=(
            Attribute("number", "string"),
            Attribute("pin", "string", returned="never"),
            Attribute("holder", "string", returned="request"),
            Attribute("issuer", "string", returned="always"),
        ),
    )
    schemas = DEFAULT_SCHEMAS.with_attributes("User", urn, (card,))
    assert schemas.unreturned["User"] == (
        Unreturned(None, "password", None, False),
        Unreturned(urn, "card", None, True),
        Unreturned(urn, "card", "pin", False),
        Unreturned(urn, "card", "holder", True),
    )
    assert DEFAULT_SCHEMAS.unreturned["Group"] == (
        Unreturned(None, "externalId", None, False),
        Unreturned(None, "members", "display", True),
    )
    assert SchemaSet({}).unreturned == {}
