"""One ``[[user]]`` or ``[[group]]`` table of a mapping file, checked: a :class:`MappedAttribute`.

What a table may say is described in :mod:`~scim_core.backends.ldap.sitemap`, which reads the
file, finds each table's line and checks the tables against one another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, get_args

from scim_core.backends.ldap.mapped import MappedAttribute
from scim_core.backends.ldap.syntaxes import SYNTAXES
from scim_core.schemas.attributes import (
    ENTERPRISE_URN,
    GROUP_URN,
    STANDARD_USER_ATTRIBUTES,
    STANDARD_USER_ELEMENTS,
    USER_URN,
    AttrType,
    MutabilityKind,
    ReturnedKind,
)

__all__ = ["MAPPED_TYPES", "MappingProblem", "mapped_attribute"]

#: Value types a mapped attribute may have (with their LDAP form, see ``values.py``).
MAPPED_TYPES: Final = ("string", "boolean", "integer", "dateTime", "binary", "reference")
_KEYS: Final = frozenset(
    {
        "scim",
        "ldap",
        "type",
        "syntax",
        "multi_valued",
        "filter",
        "object_class",
        "mutability",
        "returned",
        "description",
    }
)
_LDAP_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]*$")
_ATTRIBUTE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")  # RFC 7643 §2.1 ATTRNAME
_ELEMENT = re.compile(
    r'^(?P<name>[A-Za-z]+)\[\s*type\s+eq\s+"(?P<type>[^"]+)"\s*\]\.(?P<sub>[A-Za-z]+)$',
    re.IGNORECASE,
)
#: Attributes the service maps itself: no file maps them.
_OWN = frozenset({"id", "externalid", "username", "name", "emails", "active", "password", "meta"})
#: The plain strings of RFC 7643 a profile's file maps (and a site's may map elsewhere).
_PROFILE_STRINGS: Final = frozenset(
    {
        (USER_URN.lower(), "name", "givenname"),
        (USER_URN.lower(), "name", "familyname"),
        (USER_URN.lower(), "name", "formatted"),
        (USER_URN.lower(), "displayname"),
        (USER_URN.lower(), "title"),
        (ENTERPRISE_URN.lower(), "employeenumber"),
    }
)


class MappingProblem(Exception):
    """What is wrong with a mapping file, at ``line`` when it is known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def mapped_attribute(entry: Any, resource_type: str = "User") -> MappedAttribute:
    """One ``[[user]]`` (or, with ``resource_type="Group"``, ``[[group]]``) table, checked.

    :raises MappingProblem: what is wrong with it (the caller adds the line).
    """
    if not isinstance(entry, dict):
        raise MappingProblem(f"a [[{resource_type.lower()}]] entry must be a table.")
    unknown = set(entry) - _KEYS
    if unknown:
        raise MappingProblem(
            f"unknown key {sorted(unknown)[0]!r}; expected {', '.join(sorted(_KEYS))}."
        )
    scim, ldap = entry.get("scim"), entry.get("ldap")
    if not isinstance(scim, str) or not scim.strip():
        raise MappingProblem("'scim' (the SCIM attribute) is missing or not a string.")
    if not isinstance(ldap, str) or not _LDAP_NAME.match(ldap):
        raise MappingProblem("'ldap' must name an LDAP attribute (letters, digits, '-').")
    if resource_type == "Group":
        return _group_attribute(entry, scim.strip())
    element = _ELEMENT.match(scim.strip())
    if element is not None:
        return _element(entry, element)
    schema, _, name = scim.strip().rpartition(":")
    schema = _canonical(schema or USER_URN)
    top, dot, sub = name.partition(".")
    if dot and (schema.lower(), top.lower(), sub.lower()) in _PROFILE_STRINGS:
        return _profile_string(entry, sub)
    if not _ATTRIBUTE_NAME.match(name):
        raise MappingProblem(
            f"{scim!r} does not name one attribute (sub-attributes are not mapped)."
        )
    standard = {a.name.lower(): a for a in STANDARD_USER_ATTRIBUTES.get(schema, ())}
    given_type = entry.get("type")
    if schema in (USER_URN, ENTERPRISE_URN):
        definition = standard.get(name.lower())
        if definition is None and (schema.lower(), name.lower()) not in _PROFILE_STRINGS:
            if schema == USER_URN and name.lower() in _OWN:
                raise MappingProblem(
                    f"{name} is mapped by the service itself; it cannot be re-mapped."
                )
            raise MappingProblem(f"{scim!r} is not an RFC 7643 attribute this file can map.")
        name = definition.name if definition is not None else name
        kind = definition.type if definition is not None else "string"
        if given_type is not None and given_type != kind:
            raise MappingProblem(f"{name} has the type {kind} (RFC 7643); leave 'type' out.")
        description = definition.description if definition is not None else ""
    elif schema == GROUP_URN or not schema.lower().startswith("urn:"):
        raise MappingProblem(f"{schema!r} is not a User extension schema URN.")
    else:
        kind = _extension_type(entry)
        description = ""
    points_to = None
    if kind == "reference" and schema not in (USER_URN, ENTERPRISE_URN):
        # Another user, as the manager is: its id in SCIM, its DN in LDAP.
        kind, points_to = "complex", "User"
    standard_schema = schema in (USER_URN, ENTERPRISE_URN)
    return _mapped(
        entry,
        schema,
        name,
        kind,
        description,
        points_to=points_to,
        multi_valued=_multi_valued(entry, standard_schema or points_to is not None),
    )


def _mapped(
    entry: Mapping[str, Any],
    schema: str,
    name: str,
    kind: AttrType,
    description: str,
    **more: Any,
) -> MappedAttribute:
    """An entry of a User or Group attribute, its common keys read and checked."""
    return MappedAttribute(
        schema=schema,
        name=name,
        ldap=str(entry["ldap"]),
        type=kind,
        filterable=_boolean(entry, "filter"),
        object_class=_optional_name(entry, "object_class"),
        mutability=_choice(entry, "mutability", get_args(MutabilityKind), "readWrite"),
        returned=_choice(entry, "returned", get_args(ReturnedKind), "default"),
        description=str(entry.get("description", description)),
        syntax=_syntax(entry, kind),
        **more,
    )


def _multi_valued(entry: Mapping[str, Any], fixed: bool) -> bool:
    """``multi_valued``: only an attribute of a site's extension chooses (RFC 7643 fixes the
    others), and a reference or a postal address stays single."""
    wanted = _boolean(entry, "multi_valued")
    if wanted and fixed:
        raise MappingProblem("only an attribute of a site's extension schema may be multi_valued.")
    if wanted and entry.get("syntax") == "postalAddress":
        raise MappingProblem("a postalAddress cannot be multi_valued here.")
    return wanted


def _extension_type(entry: Mapping[str, Any]) -> AttrType:
    """The ``type`` of an attribute of a site's extension schema, checked."""
    kind = entry.get("type", "string")
    if kind not in MAPPED_TYPES:
        raise MappingProblem(f"'type' must be one of {', '.join(MAPPED_TYPES)}.")
    if kind in ("binary", "reference") and entry.get("filter"):
        raise MappingProblem(f"a {kind} attribute cannot be filtered.")
    return kind  # type: ignore[no-any-return]


def _group_attribute(entry: Mapping[str, Any], scim: str) -> MappedAttribute:
    """A ``[[group]]`` entry: an attribute of the site's Group extension (the core Group's
    own attributes, displayName, members and externalId, are the service's)."""
    schema, _, name = scim.rpartition(":")
    known = {u.lower() for u in (USER_URN, ENTERPRISE_URN, GROUP_URN)}
    if not schema.lower().startswith("urn:") or schema.lower() in known:
        raise MappingProblem(f"{scim!r} is not an attribute of a Group extension schema URN.")
    if not _ATTRIBUTE_NAME.match(name):
        raise MappingProblem(f"{scim!r} does not name one attribute.")
    kind = _extension_type(entry)
    points_to = None
    if kind == "reference":  # a user (an owner, say): its id in SCIM, its DN in LDAP
        kind, points_to = "complex", "User"
    return _mapped(
        entry,
        schema,
        name,
        kind,
        "",
        resource_type="Group",
        points_to=points_to,
        multi_valued=_multi_valued(entry, points_to is not None),
    )


def _profile_string(entry: Mapping[str, Any], sub: str) -> MappedAttribute:
    """``name.givenName`` and its siblings: strings of the core schema's ``name``."""
    subs = {"givenname": "givenName", "familyname": "familyName", "formatted": "formatted"}
    if entry.get("filter") or entry.get("type", "string") != "string":
        raise MappingProblem(f"name.{subs[sub.lower()]} is a string and cannot be filtered here.")
    _multi_valued(entry, True)
    return MappedAttribute(
        schema=USER_URN,
        name="name",
        ldap=str(entry["ldap"]),
        object_class=_optional_name(entry, "object_class"),
        syntax=_syntax(entry, "string"),
        sub=subs[sub.lower()],
    )


def _element(entry: Mapping[str, Any], match: re.Match[str]) -> MappedAttribute:
    """``phoneNumbers[type eq "work"].value``: one LDAP attribute per type and sub-attribute."""
    names = {n.lower(): n for n in STANDARD_USER_ELEMENTS}
    name = names.get(match["name"].lower())
    if name is None:
        raise MappingProblem(
            f"only {' and '.join(STANDARD_USER_ELEMENTS)} are mapped element by element."
        )
    subs = {a.name.lower(): a.name for a in STANDARD_USER_ELEMENTS[name]}
    sub = subs.get(match["sub"].lower())
    if sub is None:
        raise MappingProblem(
            f"{name} elements map {', '.join(subs.values())}, not {match['sub']!r}."
        )
    if entry.get("filter") or entry.get("type", "string") != "string":
        raise MappingProblem(f"an element of {name} is a string and cannot be filtered.")
    _multi_valued(entry, True)
    return MappedAttribute(
        schema=USER_URN,
        name=name,
        ldap=str(entry["ldap"]),
        object_class=_optional_name(entry, "object_class"),
        syntax=_syntax(entry, "string"),
        element_type=match["type"],
        sub=sub,
    )


def _syntax(entry: Mapping[str, Any], kind: str) -> str:
    syntax = entry.get("syntax", "directoryString")
    if syntax not in SYNTAXES:
        raise MappingProblem(f"'syntax' must be one of {', '.join(SYNTAXES)}.")
    if syntax != "directoryString" and kind != "string":
        raise MappingProblem(f"'syntax' applies to strings; a {kind} has its own LDAP form.")
    if syntax == "postalAddress" and entry.get("filter"):
        raise MappingProblem("a postalAddress cannot be filtered here.")
    return str(syntax)


def _canonical(schema: str) -> str:
    for known in (USER_URN, ENTERPRISE_URN, GROUP_URN):
        if schema.lower() == known.lower():
            return known
    return schema


def _boolean(entry: Mapping[str, Any], key: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise MappingProblem(f"{key!r} must be true or false.")
    return value


def _optional_name(entry: Mapping[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not _LDAP_NAME.match(value)):
        raise MappingProblem(f"{key!r} must name an LDAP object class.")
    return value


def _choice(entry: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str) -> Any:
    value = entry.get(key, default)
    if value not in allowed:
        raise MappingProblem(f"{key!r} must be one of {', '.join(allowed)}.")
    return value
