"""Attribute definitions (RFC 7643 §7) and the name resolution shared by request bodies and PATCH.

This module owns three things:

* the schemas the service advertises, as frozen :class:`Attribute` / :class:`Schema` records
  holding exactly the attributes it stores and returns faithfully;
* :func:`resolve`, turning any spelling a client may use for an attribute (plain, dotted,
  URN-prefixed, any case, or a flat alias the specification allows) into one canonical
  :class:`AttrRef`;
* :func:`coerce`, bringing a client value into the canonical shape of a definition
  (``"True"``/``"False"`` strings to booleans, a bare id to ``{"value": id}``...).

Nothing here knows about HTTP, LDAP or PATCH operations.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from scim_core.errors import InvalidValue
from scim_core.urns import ENTERPRISE_URN, GROUP_URN, SCHEMA_URN, USER_URN

__all__ = [
    "DEFAULT_SCHEMAS",
    "ENTERPRISE_URN",
    "ENTERPRISE_USER_SCHEMA",
    "GROUP_DISPLAY_NAME",
    "GROUP_EXTERNAL_ID",
    "GROUP_SCHEMA",
    "GROUP_URN",
    "SCHEMAS_BY_RESOURCE_TYPE",
    "SCHEMA_URN",
    "STANDARD_USER_ATTRIBUTES",
    "STANDARD_USER_ELEMENTS",
    "USER_SCHEMA",
    "USER_URN",
    "AttrRef",
    "AttrType",
    "Attribute",
    "MutabilityKind",
    "ReturnedKind",
    "Schema",
    "SchemaSet",
    "UniquenessKind",
    "Unreturned",
    "coerce",
    "resolve",
    "to_schema_json",
    "typed_elements",
]


AttrType = Literal["string", "boolean", "complex", "reference", "dateTime", "integer", "binary"]
MutabilityKind = Literal["readWrite", "readOnly", "writeOnly", "immutable"]
ReturnedKind = Literal["default", "always", "never", "request"]
UniquenessKind = Literal["none", "server"]


@dataclass(frozen=True)
class Attribute:
    """One attribute definition with the RFC 7643 §7 characteristics.

    Names are stored in their canonical case; lookups are case-insensitive (RFC 7643 §2.1).
    """

    name: str
    type: AttrType
    multi_valued: bool = False
    required: bool = False
    case_exact: bool = False
    mutability: MutabilityKind = "readWrite"
    returned: ReturnedKind = "default"
    uniqueness: UniquenessKind = "none"
    sub_attributes: tuple[Attribute, ...] = ()
    canonical_values: tuple[str, ...] = ()
    reference_types: tuple[str, ...] = ()
    description: str = ""

    def sub(self, name: str) -> Attribute | None:
        """The sub-attribute called ``name`` (any case), or ``None``."""
        return _find(self.sub_attributes, name)


@dataclass(frozen=True)
class Schema:
    """A schema (RFC 7643 §7): its URN, name, description and attribute definitions."""

    id: str
    name: str
    description: str
    attributes: tuple[Attribute, ...]

    def attribute(self, name: str) -> Attribute | None:
        """The top-level attribute called ``name`` (any case), or ``None``."""
        return _find(self.attributes, name)


@dataclass(frozen=True)
class AttrRef:
    """The canonical location an attribute name resolves to.

    :ivar schema: the extension URN holding the attribute, ``None`` for the core schema.
    :ivar attribute: the canonical top-level attribute name (``"name"``, ``"manager"``).
    :ivar sub_attribute: the canonical sub-attribute name, or ``None``.
    :ivar definition: the definition of what is named: the sub-attribute's when there is one.
    :ivar parent: the top-level attribute's definition (the same as ``definition`` without a
        sub-attribute).
    :ivar primary: the name targets the *primary* element of a multi-valued attribute (the flat
        ``email`` alias: the primary email's value, created as a primary work email if absent).
    """

    schema: str | None
    attribute: str
    sub_attribute: str | None
    definition: Attribute
    parent: Attribute
    primary: bool = False


def _find(attributes: tuple[Attribute, ...], name: str) -> Attribute | None:
    folded = name.lower()
    return next((a for a in attributes if a.name.lower() == folded), None)


# --------------------------------------------------------------------------- definitions

_ID = Attribute(
    "id",
    "string",
    case_exact=True,
    mutability="readOnly",
    returned="always",
    uniqueness="server",
    description="Unique identifier of the resource, assigned by the service provider.",
)

USER_SCHEMA = Schema(
    id=USER_URN,
    name="User",
    description="User Account",
    attributes=(
        _ID,
        Attribute(
            "externalId",
            "string",
            case_exact=True,
            description="Identifier of the resource as defined by the provisioning client.",
        ),
        Attribute(
            "userName",
            "string",
            required=True,
            uniqueness="server",
            description="Unique identifier for the User, kept as written and matched in any case.",
        ),
        Attribute(
            "name",
            "complex",
            required=True,
            description="The components of the user's real name.",
            sub_attributes=(
                Attribute("formatted", "string", description="The full name, for display."),
                Attribute(
                    "givenName", "string", required=True, description="The given (first) name."
                ),
                Attribute(
                    "familyName", "string", required=True, description="The family (last) name."
                ),
            ),
        ),
        Attribute("displayName", "string", description="The name of the User, for display."),
        Attribute("title", "string", description="The user's title, such as 'Vice President'."),
        Attribute(
            "emails",
            "complex",
            multi_valued=True,
            required=True,
            description="Email addresses for the user; at least one is required.",
            sub_attributes=(
                Attribute(
                    "value", "string", required=True, description="Email address for the user."
                ),
                Attribute(
                    "type",
                    "string",
                    canonical_values=("work",),
                    description="A label indicating the attribute's function.",
                ),
                Attribute(
                    "primary",
                    "boolean",
                    description="Whether this is the preferred address; true at most once.",
                ),
            ),
        ),
        Attribute(
            "active",
            "boolean",
            required=True,
            description=(
                "The user's administrative status; false is an enforced disable. Always set:"
                " true when a create omits it; a PUT without it (or with null) keeps it; it"
                " cannot be removed or nulled by PATCH, only replaced with true or false."
            ),
        ),
        Attribute(
            "password",
            "string",
            mutability="writeOnly",
            returned="never",
            description="The user's cleartext password, set only; never returned.",
        ),
    ),
)

ENTERPRISE_USER_SCHEMA = Schema(
    id=ENTERPRISE_URN,
    name="EnterpriseUser",
    description="Enterprise User",
    attributes=(
        Attribute(
            "employeeNumber",
            "string",
            description="Numeric or alphanumeric identifier assigned to a person.",
        ),
        Attribute(
            "manager",
            "complex",
            description="The user's manager.",
            sub_attributes=(
                Attribute("value", "string", description="The id of the manager's User."),
                Attribute(
                    "$ref",
                    "reference",
                    reference_types=("User",),
                    description="The URI of the manager's User resource.",
                ),
                Attribute(
                    "displayName",
                    "string",
                    mutability="readOnly",
                    description="The displayName of the manager.",
                ),
            ),
        ),
    ),
)

GROUP_SCHEMA = Schema(
    id=GROUP_URN,
    name="Group",
    description="Group",
    attributes=(
        _ID,
        Attribute(
            "externalId",
            "string",
            case_exact=True,
            mutability="readOnly",
            returned="never",
            description="Not kept for groups: ignored on input, never returned.",
        ),
        Attribute(
            "displayName",
            "string",
            required=True,
            mutability="immutable",
            description="The group's name, which is also its id (the cn): set on create only.",
        ),
        Attribute(
            "members",
            "complex",
            multi_valued=True,
            description="A list of members of the Group.",
            sub_attributes=(
                Attribute(
                    "value",
                    "string",
                    mutability="immutable",
                    description="Identifier of the member of this Group.",
                ),
                Attribute(
                    "$ref",
                    "reference",
                    mutability="immutable",
                    reference_types=("User",),
                    description="The URI of the member resource.",
                ),
                Attribute(
                    "display",
                    "string",
                    mutability="readOnly",
                    returned="request",
                    description=(
                        "The member's userName; derived, so returned only when asked for"
                        " (attributes=members.display)."
                    ),
                ),
                Attribute(
                    "type",
                    "string",
                    mutability="immutable",
                    canonical_values=("User",),
                    description="The type of the member.",
                ),
            ),
        ),
    ),
)

#: A group's displayName where a backend can rename a group (its id stays).
GROUP_DISPLAY_NAME = Attribute(
    "displayName",
    "string",
    required=True,
    description="The group's name; a rename changes it, never the group's id.",
)
#: A group's externalId where a backend keeps one.
GROUP_EXTERNAL_ID = Attribute(
    "externalId",
    "string",
    case_exact=True,
    description="Identifier of the resource as defined by the provisioning client.",
)

#: Core schema first, then its extensions (RFC 7643 §3.3), per resource type.
SCHEMAS_BY_RESOURCE_TYPE: Mapping[str, tuple[Schema, ...]] = {
    "User": (USER_SCHEMA, ENTERPRISE_USER_SCHEMA),
    "Group": (GROUP_SCHEMA,),
}


@dataclass(frozen=True)
class Unreturned:
    """An attribute a response leaves out (RFC 7643 §7 ``returned``): always when ``never``,
    when ``request`` unless the request's ``attributes`` names it.

    :param schema: the extension URN holding it, ``None`` for the core schema.
    :param name: the top-level attribute.
    :param sub: the sub-attribute, or ``None`` for the attribute as a whole.
    :param on_request: ``returned: "request"`` (else ``never``).
    """

    schema: str | None
    name: str
    sub: str | None
    on_request: bool

    @property
    def asked_as(self) -> frozenset[str]:
        """The lower-case names in ``attributes`` that ask for it."""
        dotted = f"{self.name}.{self.sub}" if self.sub else self.name
        names = {f"{self.schema}:{dotted}".lower()} if self.schema else {dotted.lower()}
        return frozenset(names)


def _unreturned(schemas: tuple[Schema, ...]) -> tuple[Unreturned, ...]:
    found = []
    for index, schema in enumerate(schemas):
        urn = None if index == 0 else schema.id
        for top in schema.attributes:
            if top.returned in ("never", "request"):
                found.append(Unreturned(urn, top.name, None, top.returned == "request"))
            found += [
                Unreturned(urn, top.name, sub.name, sub.returned == "request")
                for sub in top.sub_attributes
                if sub.returned in ("never", "request")
            ]
    return tuple(found)


def _string(name: str, description: str, kind: AttrType = "string") -> Attribute:
    return Attribute(name, kind, description=description)


#: Singular attributes of RFC 7643 (§4.1.1, §4.3) the service stores only where a mapping maps
#: them: schema URN -> definitions.
STANDARD_USER_ATTRIBUTES: Mapping[str, tuple[Attribute, ...]] = {
    USER_URN: (
        _string("nickName", "The casual way to address the user."),
        _string("profileUrl", "A URI of the user's online profile.", "reference"),
        _string("userType", "The relationship between the organization and the user."),
        _string("preferredLanguage", "The user's preferred written or spoken language."),
        _string("locale", "The user's default location, for localizing."),
        _string("timezone", "The user's time zone, in the IANA database format."),
    ),
    ENTERPRISE_URN: (
        _string("costCenter", "The name of a cost center."),
        _string("organization", "The name of an organization."),
        _string("division", "The name of a division."),
        _string("department", "The name of a department."),
    ),
}


def _sub(name: str, description: str) -> Attribute:
    return Attribute(name, "string", description=description)


#: Multi-valued attributes of RFC 7643 §4.1.2 a mapping may store element by element (one LDAP
#: attribute per ``type`` and sub-attribute): name -> the sub-attributes a mapping may use.
STANDARD_USER_ELEMENTS: Mapping[str, tuple[Attribute, ...]] = {
    "phoneNumbers": (_sub("value", "The phone number, in RFC 3966 form where possible."),),
    "addresses": (
        _sub("formatted", "The full mailing address, for display or mailing labels."),
        _sub("streetAddress", "The street address, house number and street name."),
        _sub("locality", "The city or locality."),
        _sub("region", "The state or region."),
        _sub("postalCode", "The zip code or postal code."),
        _sub("country", "The country name, in ISO 3166-1 alpha-2 code form."),
    ),
}


def typed_elements(name: str, subs: tuple[str, ...], types: tuple[str, ...]) -> Attribute:
    """The definition of a multi-valued attribute stored element by element: the mapped
    sub-attributes and ``type`` (whose canonical values are the mapped types); nothing else,
    since nothing else is kept."""
    known = {a.name: a for a in STANDARD_USER_ELEMENTS[name]}
    return Attribute(
        name,
        "complex",
        multi_valued=True,
        description=f"The user's {name}, one per type.",
        sub_attributes=(
            *(known[s] for s in subs),
            Attribute(
                "type",
                "string",
                canonical_values=types,
                # Prose for people (any text serves): not mutated.
                description="A label indicating the attribute's function.",  # pragma: no mutate
            ),
        ),
    )


@dataclass(frozen=True, eq=False)
class SchemaSet:
    """The schemas a service advertises and understands, per resource type: the core schema
    first, then its extensions (RFC 7643 §3.3). Built once (from a backend's mapping);
    compared and hashed by identity.

    :param by_resource_type: resource type -> its schemas.
    """

    by_resource_type: Mapping[str, tuple[Schema, ...]]

    def get(self, resource_type: str) -> tuple[Schema, ...]:
        """The schemas of ``resource_type`` (core first), or ``()``."""
        return tuple(self.by_resource_type.get(resource_type, ()))

    @functools.cached_property
    def unreturned(self) -> Mapping[str, tuple[Unreturned, ...]]:
        """What a response leaves out, per resource type (``returned`` never or request)."""
        return {kind: _unreturned(schemas) for kind, schemas in self.by_resource_type.items()}

    def with_attributes(
        self,
        resource_type: str,
        schema_id: str,
        attributes: tuple[Attribute, ...],
        *,
        name: str = "",
        description: str = "",
    ) -> SchemaSet:
        """A new set where ``schema_id`` of ``resource_type`` also holds ``attributes`` (a
        same-named attribute is replaced in its place); an unknown ``schema_id`` becomes an
        extension."""
        schemas = list(self.get(resource_type))
        index = next((i for i, s in enumerate(schemas) if s.id.lower() == schema_id.lower()), None)
        if index is None:
            schemas.append(Schema(schema_id, name or schema_id, description, attributes))
        else:
            current = schemas[index]
            given = {a.name.lower(): a for a in attributes}
            kept = tuple(given.pop(a.name.lower(), a) for a in current.attributes)
            schemas[index] = replace(current, attributes=kept + tuple(given.values()))
        return SchemaSet({**self.by_resource_type, resource_type: tuple(schemas)})

    def without_attribute(
        self, resource_type: str, schema_id: str, name: str, sub: str | None = None
    ) -> SchemaSet:
        """A new set where ``schema_id`` of ``resource_type`` lacks the attribute ``name`` or,
        with ``sub``, that sub-attribute of it (``name``, ``formatted``)."""
        schemas = list(self.get(resource_type))
        for index, schema in enumerate(schemas):
            if schema.id.lower() != schema_id.lower():
                continue
            kept = []
            for attribute in schema.attributes:
                if attribute.name.lower() == name.lower():
                    if sub is None:
                        continue
                    subs = tuple(
                        s for s in attribute.sub_attributes if s.name.lower() != sub.lower()
                    )
                    attribute = replace(attribute, sub_attributes=subs)
                kept.append(attribute)
            schemas[index] = replace(schema, attributes=tuple(kept))
        return SchemaSet({**self.by_resource_type, resource_type: tuple(schemas)})


#: The schemas of the service without a mapping that adds any.
DEFAULT_SCHEMAS = SchemaSet(SCHEMAS_BY_RESOURCE_TYPE)

#: Flat names the specification allows on input: alias -> (attribute, sub-attribute, primary).
_ALIASES: Mapping[str, Mapping[str, tuple[str, str, bool]]] = {
    "User": {
        "givenname": ("name", "givenName", False),
        "familyname": ("name", "familyName", False),
        "email": ("emails", "value", True),
    },
    "Group": {},
}


# --------------------------------------------------------------------------- resolution


def _split_urn(name: str, schemas: tuple[Schema, ...]) -> tuple[Schema | None, str]:
    """Strip a known schema URN prefix (RFC 7644 §3.10); ``(None, name)`` without one."""
    folded = name.lower()
    for schema in schemas:
        if folded.startswith(schema.id.lower() + ":"):
            return schema, name[len(schema.id) + 1 :]
    return None, name


def resolve(
    name: str, resource_type: str = "User", schemas: SchemaSet | None = None
) -> AttrRef | None:
    """Resolve an attribute name as a client may write it to its canonical location.

    Accepted forms (RFC 7644 §3.10, RFC 7643 §2.1 case-insensitivity): plain (``userName``),
    dotted (``name.givenName``), URN-prefixed
    (``urn:ietf:params:scim:schemas:core:2.0:User:name.givenName``,
    ``urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value``) and the flat
    aliases of the specification (``givenName``, ``familyName``, ``email``). An unprefixed name
    not in the core schema is looked up in the extension schemas, which makes ``manager`` and
    ``employeeNumber`` work without the URN.

    :param name: the attribute name from a request body or PATCH path.
    :param resource_type: ``"User"`` or ``"Group"``.
    :param schemas: the schemas names resolve in (default: :data:`DEFAULT_SCHEMAS`).
    :returns: the location, or ``None`` for a name the service does not store (callers ignore
        unknown attributes).
    """
    schemas_of_type = (schemas or DEFAULT_SCHEMAS).get(resource_type)
    return _resolve(name, resource_type, schemas_of_type)


def _resolve(name: str, resource_type: str, schemas: tuple[Schema, ...]) -> AttrRef | None:
    schema, rest = _split_urn(name, schemas)
    alias = _ALIASES.get(resource_type, {}).get(rest.lower()) if schema is None else None
    if alias is not None:
        top_name, sub_name, primary = alias
    else:
        top_name, _, sub_name = rest.partition(".")
        primary = False
    for candidate in (schema,) if schema is not None else schemas:
        top = candidate.attribute(top_name)
        if top is None:
            continue
        sub = top.sub(sub_name)  # None for "" too: no attribute has an empty name
        if sub_name and sub is None:
            return None
        return AttrRef(
            schema=None if candidate is schemas[0] else candidate.id,
            attribute=top.name,
            sub_attribute=sub.name if sub is not None else None,
            definition=sub if sub is not None else top,
            parent=top,
            primary=primary,
        )
    return None


# --------------------------------------------------------------------------- coercion

_BOOLEANS: Mapping[str, bool] = {"true": True, "false": False}


def _boolean(attribute: Attribute, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _BOOLEANS:
        return _BOOLEANS[value.strip().lower()]
    raise _mismatch(attribute, "a boolean", value)


def _text(attribute: Attribute, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # identity providers send employeeNumber as a JSON number
    raise _mismatch(attribute, "a string", value)


def _binary(attribute: Attribute, value: Any) -> str:
    """RFC 7643 §2.3.6: base64 (RFC 4648 §4) text, kept as sent."""
    if isinstance(value, str):
        try:
            base64.b64decode(value, validate=True)
        except binascii.Error:
            raise InvalidValue(
                f"Attribute '{attribute.name}' expects base64 (RFC 4648) text."
            ) from None
        return value
    raise _mismatch(attribute, "base64 text", value)


def _integer(attribute: Attribute, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _mismatch(attribute, "an integer", value)


def _complex(attribute: Attribute, value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        shaped: dict[str, Any] = {}
        for key, item in value.items():
            sub = attribute.sub(str(key))
            if sub is not None and sub.mutability != "readOnly":  # server-computed: dropped
                shaped[sub.name] = coerce(sub, item)
        return shaped
    value_sub = attribute.sub("value")  # pragma: no mutate (names match in any case)
    if value_sub is not None and not isinstance(value, list):
        return {value_sub.name: coerce(value_sub, value)}  # a bare id: {"value": id}
    raise _mismatch(attribute, "an object", value)


_SCALARS = {
    "boolean": _boolean,
    "string": _text,
    "reference": _text,
    "dateTime": _text,
    "integer": _integer,
    "binary": _binary,
    "complex": _complex,
}


def _mismatch(attribute: Attribute, expected: str, value: Any) -> InvalidValue:
    # Never echo the value itself: it may be password material.
    return InvalidValue(
        f"Attribute '{attribute.name}' expects {expected}, not a {type(value).__name__}."
    )


def coerce(attribute: Attribute, value: Any) -> Any:
    """Bring a client value into the canonical shape of ``attribute`` (RFC 7643 §2.3).

    * booleans also arrive as ``"True"``/``"False"`` strings in any case (Entra ID sends them);
    * strings also arrive as JSON integers (employee numbers);
    * a complex attribute with a ``value`` sub-attribute accepts a bare value (``"id"`` becomes
      ``{"value": "id"}``); its keys are canonicalized, unknown and read-only sub-attributes
      dropped (read-only ones are computed by the service);
    * a multi-valued attribute yields a list; a single element is wrapped;
    * ``None`` (JSON null, "unassigned" in RFC 7643 §2.5) passes through, and ``[]`` for a
      single-valued attribute is ``None`` (unassigned too).

    Canonical values are not enforced (RFC 7643 §2.3.1 allows others).

    :param attribute: the definition the value is for.
    :param value: the value as decoded from JSON.
    :returns: a new value; containers are never shared with the input.
    :raises InvalidValue: the value's type does not fit the attribute's (the value is not
        echoed).
    """
    if value is None or (value == [] and not attribute.multi_valued):
        return None
    convert = _SCALARS[attribute.type]
    if attribute.multi_valued:
        items = value if isinstance(value, list) else [value]
        return [convert(attribute, item) for item in items if item is not None]
    return convert(attribute, value)


# --------------------------------------------------------------------------- discovery


def _attribute_json(attribute: Attribute) -> dict[str, Any]:
    rendered: dict[str, Any] = {
        "name": attribute.name,
        "type": attribute.type,
        "multiValued": attribute.multi_valued,
        "description": attribute.description,
        "required": attribute.required,
    }
    if attribute.type in ("string", "reference"):
        rendered["caseExact"] = attribute.case_exact
    if attribute.canonical_values:
        rendered["canonicalValues"] = list(attribute.canonical_values)
    if attribute.reference_types:
        rendered["referenceTypes"] = list(attribute.reference_types)
    if attribute.sub_attributes:
        rendered["subAttributes"] = [_attribute_json(a) for a in attribute.sub_attributes]
    rendered["mutability"] = attribute.mutability
    rendered["returned"] = attribute.returned
    if attribute.type != "boolean":
        rendered["uniqueness"] = attribute.uniqueness
    return rendered


def to_schema_json(schema: Schema) -> dict[str, Any]:
    """Render ``schema`` as the RFC 7643 §7 representation served under ``/Schemas``.

    Characteristics follow the RFC 7643 §8.7.1 listing: ``caseExact`` on string and reference
    attributes, ``uniqueness`` on all but booleans. ``meta`` carries the resource type only; the
    caller adds ``location`` (it knows the base URL).

    :param schema: one of :data:`USER_SCHEMA`, :data:`ENTERPRISE_USER_SCHEMA`,
        :data:`GROUP_SCHEMA`.
    :returns: a new JSON-ready dictionary.
    """
    return {
        "schemas": [SCHEMA_URN],
        "id": schema.id,
        "name": schema.name,
        "description": schema.description,
        "attributes": [_attribute_json(a) for a in schema.attributes],
        "meta": {"resourceType": "Schema"},
    }
