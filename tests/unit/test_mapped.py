"""What a mapping defines: each mapped attribute's RFC 7643 definition and the schemas a
site's mapping adds to ``/Schemas`` (pure, no directory)."""

from __future__ import annotations

from scim_core.backends.ldap.mapped import MappedAttribute, SiteMapping
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, USER_URN, Attribute

ACME = "urn:example:params:scim:schemas:extension:acme:2.0:User"
ACME_GROUP = "urn:example:params:scim:schemas:extension:acme:2.0:Group"


def test_an_attribute_is_defined_as_the_mapping_file_says() -> None:
    hired = MappedAttribute(
        ACME,
        "hired",
        "acmeHired",
        type="dateTime",
        mutability="immutable",
        returned="always",
        description="When the user joined.",
    )
    assert hired.definition() == Attribute(
        "hired",
        "dateTime",
        mutability="immutable",
        returned="always",
        description="When the user joined.",
    )
    skills = MappedAttribute(ACME, "skills", "businessCategory", multi_valued=True)
    assert skills.definition() == Attribute("skills", "string", multi_valued=True)
    photo = MappedAttribute(ACME, "photo", "audio", type="binary").definition()
    assert (photo.type, photo.case_exact) == ("binary", True)


def test_a_reference_is_defined_as_the_manager_is() -> None:
    sponsor = MappedAttribute(
        ACME,
        "sponsor",
        "seeAlso",
        type="complex",
        points_to="User",
        mutability="readOnly",
        returned="request",
        description="Who vouches for the user.",
    )
    assert sponsor.definition() == Attribute(
        "sponsor",
        "complex",
        mutability="readOnly",
        returned="request",
        description="Who vouches for the user.",
        sub_attributes=(
            Attribute("value", "string", description="The id of the User."),
            Attribute(
                "$ref",
                "reference",
                reference_types=("User",),
                description="The URI of the User resource.",
            ),
        ),
    )


def _user_schemas(*users: MappedAttribute, **names: tuple[str, str]) -> dict:
    schemas = SiteMapping(users, schema_names=names).schema_set(DEFAULT_SCHEMAS)
    return {s.id: s for s in schemas.get("User")}


def test_an_extension_without_a_name_is_named_after_its_urn() -> None:
    badge = MappedAttribute(ACME, "badge", "carLicense")
    acme = _user_schemas(badge)[ACME]
    assert (acme.name, acme.description) == ("acme User", "")
    assert acme.attributes == (badge.definition(),)
    numbered = "urn:example:params:1:2.0:3"
    assert _user_schemas(MappedAttribute(numbered, "n", "x"))[numbered].name == numbered
    named = _user_schemas(badge, **{ACME: ("Acme", "Acme's own")})[ACME]
    assert (named.name, named.description) == ("Acme", "Acme's own")


def test_what_the_base_defines_already_stays_as_it_is() -> None:
    core = DEFAULT_SCHEMAS.get("User")[0]
    title = MappedAttribute(USER_URN, "title", "title")
    given = MappedAttribute(USER_URN, "name", "givenName", sub="givenName")
    badge = MappedAttribute(ACME, "badge", "carLicense")
    schemas = _user_schemas(given, title, badge)
    assert schemas[USER_URN] == core  # the RFC's title and name, descriptions and all
    assert ACME in schemas  # what follows a name part is still added


def test_elements_are_one_definition_with_each_sub_attribute_and_type_once() -> None:
    def phone(kind: str) -> MappedAttribute:
        return MappedAttribute(USER_URN, "phoneNumbers", kind, element_type=kind, sub="value")

    street = MappedAttribute(
        USER_URN, "addresses", "street", element_type="work", sub="streetAddress"
    )
    core = _user_schemas(phone("work"), street, phone("mobile"), phone("work"))[USER_URN]
    phones = core.attribute("phoneNumbers")
    assert phones is not None
    assert [s.name for s in phones.sub_attributes] == ["value", "type"]
    assert phones.sub_attributes[1].canonical_values == ("work", "mobile")
    addresses = core.attribute("addresses")
    assert addresses is not None
    assert [s.name for s in addresses.sub_attributes] == ["streetAddress", "type"]


def test_a_group_extension_is_named_as_a_user_s_is() -> None:
    cost = MappedAttribute(ACME_GROUP, "costCenter", "businessCategory", resource_type="Group")

    def group_extension(**names: tuple[str, str]):
        site = SiteMapping(groups=(cost,), schema_names=names)
        return site.schema_set(DEFAULT_SCHEMAS).get("Group")[-1]

    unnamed = group_extension()
    assert (unnamed.id, unnamed.name, unnamed.description) == (ACME_GROUP, "acme Group", "")
    assert unnamed.attributes == (cost.definition(),)
    named = group_extension(**{ACME_GROUP: ("AcmeGroup", "Acme's groups")})
    assert (named.name, named.description) == ("AcmeGroup", "Acme's groups")
