"""What a mapping is: the SCIM attributes a site maps to LDAP attributes, and the schemas
they define (read from mapping files by :mod:`~scim_core.backends.ldap.sitemap`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from scim_core.schemas.attributes import (
    USER_URN,
    Attribute,
    AttrType,
    MutabilityKind,
    ReturnedKind,
    SchemaSet,
    typed_elements,
)

__all__ = ["MappedAttribute", "SiteMapping"]


@dataclass(frozen=True)
class MappedAttribute:
    """One User attribute the site maps (its derived names are worked out once: every read
    and write of a user asks for them).

    :param schema: the URN of the schema holding it (core User, enterprise, or an extension).
    :param name: its name in that schema.
    :param ldap: the LDAP attribute holding its value.
    :param type: its SCIM type (string, boolean, integer, dateTime, binary; complex for a
        reference).
    :param filterable: whether ``eq`` may compare it in a filter.
    :param object_class: an auxiliary class an entry needs for ``ldap`` (added with a value).
    :param mutability: RFC 7643 §7 mutability.
    :param returned: RFC 7643 §7 returned.
    :param description: shown in ``/Schemas``.
    :param syntax: the LDAP syntax of ``ldap`` where it is narrower than a Directory String
        (``telephoneNumber``, ``postalAddress``, ...: see ``syntaxes.py``); values are checked,
        and converted, before any write.
    :param points_to: for a reference to another resource (``User``): the attribute is
        ``{"value": id, "$ref": URI}`` in SCIM, as the manager is, and the DN in LDAP.
    :param element_type: for one element of a multi-valued attribute (``phoneNumbers``,
        ``addresses``): the ``type`` it has (``work``), with ``sub`` the sub-attribute held.
    :param sub: that sub-attribute (``value``, ``streetAddress``).
    :param resource_type: ``User``, or ``Group`` for a ``[[group]]`` entry (an attribute of a
        site's Group extension).
    :param multi_valued: an attribute of a site's extension holding a list of values, every
        value of the LDAP attribute (in no particular order).
    """

    schema: str
    name: str
    ldap: str
    type: AttrType = "string"
    filterable: bool = False
    object_class: str | None = None
    mutability: MutabilityKind = "readWrite"
    returned: ReturnedKind = "default"
    description: str = ""
    syntax: str = "directoryString"
    points_to: str | None = None
    element_type: str | None = None
    resource_type: str = "User"
    multi_valued: bool = False
    sub: str | None = None

    @functools.cached_property
    def path(self) -> tuple[str, ...]:
        """Where the value sits in a canonical User: ``(name,)`` in the core (``(name, sub)``
        for a sub-attribute such as ``name.givenName``), else ``(schema, name)``."""
        if self.schema != USER_URN:
            return (self.schema, self.name)
        if self.sub is not None and self.element_type is None:
            return (self.name, self.sub)
        return (self.name,)

    @functools.cached_property
    def ldap_key(self) -> str:
        """The LDAP attribute's name in lower case, as an entry's folded attributes key it."""
        return self.ldap.lower()

    @functools.cached_property
    def key(self) -> tuple[str, ...]:
        """What two entries that map the same SCIM attribute share (case aside)."""
        return (self.schema.lower(), self.filter_name.rsplit(":", 1)[-1].lower())

    @functools.cached_property
    def filter_name(self) -> str:
        """The name a filter or a PATCH path gives it (core: plain; an extension:
        URN-qualified; an element: ``phoneNumbers[type eq "work"].value``)."""
        if self.element_type is not None:
            return f'{self.name}[type eq "{self.element_type}"].{self.sub}'
        if self.sub is not None:
            return f"{self.name}.{self.sub}"
        return self.name if self.schema == USER_URN else f"{self.schema}:{self.name}"

    def definition(self) -> Attribute:
        """Its RFC 7643 §7 definition, as ``/Schemas`` shows it."""
        if self.points_to is not None:
            return Attribute(
                self.name,
                "complex",
                mutability=self.mutability,
                returned=self.returned,
                description=self.description,
                sub_attributes=(
                    Attribute("value", "string", description=f"The id of the {self.points_to}."),
                    Attribute(
                        "$ref",
                        "reference",
                        reference_types=(self.points_to,),
                        description=f"The URI of the {self.points_to} resource.",
                    ),
                ),
            )
        return Attribute(
            self.name,
            self.type,
            multi_valued=self.multi_valued,
            case_exact=self.type == "binary",
            mutability=self.mutability,
            returned=self.returned,
            description=self.description,
        )


@dataclass(frozen=True)
class SiteMapping:
    """A site's mapping file, read and checked.

    :param users: the mapped User attributes, in file order.
    :param groups: the mapped Group attributes (of a site's Group extension), in file order.
    :param schema_names: extension URN -> (name, description) for ``/Schemas``.
    """

    users: tuple[MappedAttribute, ...] = ()
    schema_names: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    unmapped: tuple[MappedAttribute, ...] = ()
    groups: tuple[MappedAttribute, ...] = ()

    def extended_by(self, site: SiteMapping) -> SiteMapping:
        """This mapping with ``site``'s: its entries added, or replacing the one that maps the
        same SCIM attribute, and its ``ldap = "none"`` entries taking the profile's away."""
        replaced = {m.key for m in (*site.users, *site.unmapped)}
        kept = tuple(m for m in self.users if m.key not in replaced)
        return SiteMapping(
            kept + site.users,
            {**self.schema_names, **site.schema_names},
            self.unmapped + site.unmapped,
            self.groups + site.groups,
        )

    def schema_set(self, base: SchemaSet) -> SchemaSet:
        """``base`` with every mapped attribute it lacks in its schema (a new extension where
        needed); what ``base`` defines already (the profile's strings) stays as it is."""
        result = base
        elements: dict[str, tuple[list[str], list[str]]] = {}
        schemas = {s.id.lower(): s for s in base.get("User")}
        for attribute in self.users:
            if attribute.sub is not None and attribute.element_type is None:
                continue  # a sub-attribute of name, defined by the core schema
            known = schemas.get(attribute.schema.lower())
            if attribute.element_type is None and known and known.attribute(attribute.name):
                continue
            if attribute.element_type is not None:
                subs, types = elements.setdefault(attribute.name, ([], []))
                subs.append(str(attribute.sub))
                types.append(attribute.element_type)
                continue
            name, description = self.schema_names.get(attribute.schema, ("", ""))
            if not name:
                name = _default_schema_name(attribute.schema)
            result = result.with_attributes(
                "User",
                attribute.schema,
                (attribute.definition(),),
                name=name,
                description=description,
            )
        for attribute in self.groups:
            name, description = self.schema_names.get(attribute.schema, ("", ""))
            result = result.with_attributes(
                "Group",
                attribute.schema,
                (attribute.definition(),),
                name=name or _default_schema_name(attribute.schema),
                description=description,
            )
        for name, (subs, types) in elements.items():
            definition = typed_elements(
                name, tuple(dict.fromkeys(subs)), tuple(dict.fromkeys(types))
            )
            result = result.with_attributes("User", USER_URN, (definition,))
        for attribute in self.unmapped:
            if attribute.element_type is None:  # elements: defined by those still mapped
                result = result.without_attribute(
                    "User", attribute.schema, attribute.name, attribute.sub
                )
        return result


def _default_schema_name(urn: str) -> str:
    """``urn:example:...:acme:2.0:User`` -> ``acme User``: the parts an admin chose."""
    parts = urn.split(":")
    return " ".join(p for p in parts[-3:] if not re.fullmatch(r"[\d.]+", p)) or urn
