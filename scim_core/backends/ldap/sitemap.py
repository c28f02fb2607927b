"""Attribute mapping files (TOML): which LDAP attribute holds which SCIM User attribute.

Each directory profile's own mapping is such a file in this package (``mappings/<profile>.toml``,
read by :func:`default_mapping`); a site's file (``SCIM_MAPPING_FILE``) is read the same way and
extends it: more attributes, or one of the profile's held elsewhere.

One ``[[user]]`` table per attribute::

    [[user]]
    scim = "preferredLanguage"             # an RFC 7643 attribute: core User ...
    ldap = "preferredLanguage"

    [[user]]
    scim = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department"
    ldap = "departmentNumber"              # ... or enterprise User

    [[user]]
    scim = 'phoneNumbers[type eq "work"].value'   # one element of a multi-valued attribute
    ldap = "telephoneNumber"               # (phoneNumbers, addresses), by type

    [[user]]
    scim = "title"
    ldap = "none"                          # the profile maps it: here it is not kept

    [[user]]
    scim = "urn:example:params:scim:schemas:extension:acme:2.0:User:badgeNumber"
    ldap = "employeeType"                  # ... or the site's own extension schema
    type = "string"                        # string (default), boolean, integer, dateTime,
                                           # binary, reference (another user: id <-> DN)
    syntax = "directoryString"             # the LDAP attribute's, if narrower (syntaxes.py)
    multi_valued = false                   # a list: every value of the LDAP attribute
    filter = true                          # `eq` allowed in filters
    object_class = "acmePerson"            # added to an entry that gets a value
    mutability = "readWrite"               # readWrite (default), readOnly, immutable, writeOnly
    returned = "default"                   # default, always, never, request
    description = "The badge printed on the employee's card."

    [schema."urn:example:params:scim:schemas:extension:acme:2.0:User"]
    name = "AcmeUser"                      # how /Schemas names the extension
    description = "Acme's own attributes"

A file that is not valid stops start-up with one line naming the file, the line and the
problem (:class:`~scim_core.config.ConfigError`).
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Final, get_args

from scim_core.backends.ldap.mapped import MappedAttribute, SiteMapping
from scim_core.backends.ldap.syntaxes import SYNTAXES
from scim_core.config import ConfigError
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

__all__ = ["MAPPED_TYPES", "default_mapping", "load_mapping"]

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
#: What no file may take away (``ldap = "none"``): a user always has them.
_REQUIRED: Final = frozenset(
    {(USER_URN.lower(), "name.givenname"), (USER_URN.lower(), "name.familyname")}
)
_HEADER = re.compile(r"^\s*\[\[\s*(user|group)\s*\]\]")
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


class _Problem(Exception):
    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@functools.cache
def default_mapping(profile: str) -> SiteMapping:
    """The mapping a directory profile ships (``mappings/<profile>.toml`` in this package)."""
    text = resources.files(__package__).joinpath("mappings", f"{profile}.toml").read_text("utf-8")
    try:
        return _checked(tomllib.loads(text), _header_lines(text), None)
    except (tomllib.TOMLDecodeError, _Problem) as problem:  # a packaging defect, not a site's
        raise RuntimeError(f"mappings/{profile}.toml: {problem}") from None


def load_mapping(path: str | Path, base: SiteMapping | None = None) -> SiteMapping:
    """Read and check a site's mapping file.

    :param path: the TOML file.
    :param base: the profile's mapping it extends: an LDAP attribute that already holds
        another SCIM attribute there is refused too.
    :raises ConfigError: one line naming the file, the line and the problem.
    """
    where = f"SCIM_MAPPING_FILE {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{where}: cannot be read ({error.strerror}).") from None
    try:
        document = tomllib.loads(text)
        return _checked(document, _header_lines(text), base)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where}: not valid TOML: {error}.") from None
    except _Problem as problem:
        at = f", line {problem.line}" if problem.line else ""
        raise ConfigError(f"{where}{at}: {problem}") from None


def _header_lines(text: str) -> dict[str, list[int]]:
    """Table kind (``user``, ``group``) -> the line of each of its ``[[...]]`` headers."""
    lines: dict[str, list[int]] = {"user": [], "group": []}
    for number, line in enumerate(text.splitlines(), 1):
        if found := _HEADER.match(line):
            lines[found[1]].append(number)
    return lines


def _checked(
    document: Mapping[str, Any], lines: dict[str, list[int]], base: SiteMapping | None
) -> SiteMapping:
    unknown = set(document) - {"user", "group", "schema"}
    if unknown:
        raise _Problem(
            f"unknown table {sorted(unknown)[0]!r}; expected [[user]], [[group]] or [schema.…]."
        )
    for kind in ("user", "group"):
        if not isinstance(document.get(kind, []), list):
            raise _Problem(f"'{kind}' must be written as [[{kind}]] tables, one per attribute.")
    entries = document.get("user", [])
    lines_of_users = lines["user"]
    users: list[MappedAttribute] = []
    seen_scim: set[tuple[str, ...]] = set()
    seen_ldap: set[str] = set()
    unmapped: list[MappedAttribute] = []
    for index, entry in enumerate(entries):
        line = lines_of_users[index] if index < len(lines_of_users) else None
        try:
            attribute = _attribute(entry)
        except _Problem as problem:
            raise _Problem(str(problem), line) from None
        if attribute.key in seen_scim:
            raise _Problem(f"{attribute.filter_name} is mapped twice.", line)
        if attribute.ldap.lower() == "none":
            if attribute.key in _REQUIRED:
                raise _Problem(f"{attribute.filter_name} is required: it stays mapped.", line)
            seen_scim.add(attribute.key)
            unmapped.append(attribute)
            continue
        if attribute.ldap.lower() in seen_ldap:
            raise _Problem(f"the LDAP attribute {attribute.ldap} holds two attributes.", line)
        seen_scim.add(attribute.key)
        seen_ldap.add(attribute.ldap.lower())
        users.append(attribute)
    groups = _groups(document.get("group", []), lines["group"])
    mapping = SiteMapping(
        tuple(users), _schema_names(document.get("schema", {})), tuple(unmapped), groups
    )
    if base is not None:
        merged = base.extended_by(mapping)
        for index, attribute in enumerate(mapping.users):
            holders = [m for m in merged.users if m.ldap.lower() == attribute.ldap.lower()]
            if len(holders) > 1:
                other = next(m for m in holders if m is not attribute)
                raise _Problem(
                    f"the LDAP attribute {attribute.ldap} holds {other.filter_name} already "
                    "(the profile's mapping); map that one elsewhere too.",
                    lines_of_users[index] if index < len(lines_of_users) else None,
                )
    return mapping


def _groups(entries: list[Any], lines: list[int]) -> tuple[MappedAttribute, ...]:
    """``[[group]]`` entries: attributes of a site's Group extension, each its own LDAP
    attribute of the group entry."""
    groups: list[MappedAttribute] = []
    for index, entry in enumerate(entries):
        line = lines[index] if index < len(lines) else None
        try:
            attribute = _attribute(entry, "Group")
        except _Problem as problem:
            raise _Problem(str(problem), line) from None
        if any(m.key == attribute.key for m in groups):
            raise _Problem(f"{attribute.filter_name} is mapped twice.", line)
        if any(m.ldap.lower() == attribute.ldap.lower() for m in groups):
            raise _Problem(f"the LDAP attribute {attribute.ldap} holds two attributes.", line)
        groups.append(attribute)
    return tuple(groups)


def _attribute(entry: Any, resource_type: str = "User") -> MappedAttribute:
    if not isinstance(entry, dict):
        raise _Problem(f"a [[{resource_type.lower()}]] entry must be a table.")
    unknown = set(entry) - _KEYS
    if unknown:
        raise _Problem(f"unknown key {sorted(unknown)[0]!r}; expected {', '.join(sorted(_KEYS))}.")
    scim, ldap = entry.get("scim"), entry.get("ldap")
    if not isinstance(scim, str) or not scim.strip():
        raise _Problem("'scim' (the SCIM attribute) is missing or not a string.")
    if not isinstance(ldap, str) or not _LDAP_NAME.match(ldap):
        raise _Problem("'ldap' must name an LDAP attribute (letters, digits, '-').")
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
        raise _Problem(f"{scim!r} does not name one attribute (sub-attributes are not mapped).")
    standard = {a.name.lower(): a for a in STANDARD_USER_ATTRIBUTES.get(schema, ())}
    given_type = entry.get("type")
    if schema in (USER_URN, ENTERPRISE_URN):
        definition = standard.get(name.lower())
        if definition is None and (schema.lower(), name.lower()) not in _PROFILE_STRINGS:
            if schema == USER_URN and name.lower() in _OWN:
                raise _Problem(f"{name} is mapped by the service itself; it cannot be re-mapped.")
            raise _Problem(f"{scim!r} is not an RFC 7643 attribute this file can map.")
        name = definition.name if definition is not None else name
        kind = definition.type if definition is not None else "string"
        if given_type is not None and given_type != kind:
            raise _Problem(f"{name} has the type {kind} (RFC 7643); leave 'type' out.")
        description = definition.description if definition is not None else ""
    elif schema == GROUP_URN or not schema.lower().startswith("urn:"):
        raise _Problem(f"{schema!r} is not a User extension schema URN.")
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
        raise _Problem("only an attribute of a site's extension schema may be multi_valued.")
    if wanted and entry.get("syntax") == "postalAddress":
        raise _Problem("a postalAddress cannot be multi_valued here.")
    return wanted


def _extension_type(entry: Mapping[str, Any]) -> AttrType:
    """The ``type`` of an attribute of a site's extension schema, checked."""
    kind = entry.get("type", "string")
    if kind not in MAPPED_TYPES:
        raise _Problem(f"'type' must be one of {', '.join(MAPPED_TYPES)}.")
    if kind in ("binary", "reference") and entry.get("filter"):
        raise _Problem(f"a {kind} attribute cannot be filtered.")
    return kind  # type: ignore[no-any-return]


def _group_attribute(entry: Mapping[str, Any], scim: str) -> MappedAttribute:
    """A ``[[group]]`` entry: an attribute of the site's Group extension (the core Group's
    own attributes, displayName, members and externalId, are the service's)."""
    schema, _, name = scim.rpartition(":")
    known = {u.lower() for u in (USER_URN, ENTERPRISE_URN, GROUP_URN)}
    if not schema.lower().startswith("urn:") or schema.lower() in known:
        raise _Problem(f"{scim!r} is not an attribute of a Group extension schema URN.")
    if not _ATTRIBUTE_NAME.match(name):
        raise _Problem(f"{scim!r} does not name one attribute.")
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
        raise _Problem(f"name.{subs[sub.lower()]} is a string and cannot be filtered here.")
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
        raise _Problem(
            f"only {' and '.join(STANDARD_USER_ELEMENTS)} are mapped element by element."
        )
    subs = {a.name.lower(): a.name for a in STANDARD_USER_ELEMENTS[name]}
    sub = subs.get(match["sub"].lower())
    if sub is None:
        raise _Problem(f"{name} elements map {', '.join(subs.values())}, not {match['sub']!r}.")
    if entry.get("filter") or entry.get("type", "string") != "string":
        raise _Problem(f"an element of {name} is a string and cannot be filtered.")
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
        raise _Problem(f"'syntax' must be one of {', '.join(SYNTAXES)}.")
    if syntax != "directoryString" and kind != "string":
        raise _Problem(f"'syntax' applies to strings; a {kind} has its own LDAP form.")
    if syntax == "postalAddress" and entry.get("filter"):
        raise _Problem("a postalAddress cannot be filtered here.")
    return str(syntax)


def _canonical(schema: str) -> str:
    for known in (USER_URN, ENTERPRISE_URN, GROUP_URN):
        if schema.lower() == known.lower():
            return known
    return schema


def _boolean(entry: Mapping[str, Any], key: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise _Problem(f"{key!r} must be true or false.")
    return value


def _optional_name(entry: Mapping[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not _LDAP_NAME.match(value)):
        raise _Problem(f"{key!r} must name an LDAP object class.")
    return value


def _choice(entry: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str) -> Any:
    value = entry.get(key, default)
    if value not in allowed:
        raise _Problem(f"{key!r} must be one of {', '.join(allowed)}.")
    return value


def _schema_names(tables: Any) -> dict[str, tuple[str, str]]:
    if not isinstance(tables, dict):
        raise _Problem("'schema' must be written as [schema.\"<URN>\"] tables.")
    names = {}
    for urn, table in tables.items():
        if not isinstance(table, dict) or set(table) - {"name", "description"}:
            raise _Problem(f"[schema.{urn!r}] takes only 'name' and 'description'.")
        names[urn] = (str(table.get("name", "")), str(table.get("description", "")))
    return names
