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
from collections.abc import Callable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Final

from scim_core.backends.ldap.mapped import MappedAttribute, SiteMapping
from scim_core.backends.ldap.sitemap_entries import MAPPED_TYPES, MappingProblem, mapped_attribute
from scim_core.config import ConfigError
from scim_core.schemas.attributes import USER_URN

__all__ = ["MAPPED_TYPES", "default_mapping", "load_mapping"]

#: What no file may take away (``ldap = "none"``): a user always has them.
_REQUIRED: Final = frozenset(
    {(USER_URN.lower(), "name.givenname"), (USER_URN.lower(), "name.familyname")}
)
_HEADER = re.compile(r"^\s*\[\[\s*(user|group)\s*\]\]")


@functools.cache
def default_mapping(profile: str) -> SiteMapping:
    """The mapping a directory profile ships (``mappings/<profile>.toml`` in this package)."""
    text = resources.files(__package__).joinpath("mappings", f"{profile}.toml").read_text("utf-8")
    try:
        return _checked(tomllib.loads(text), _header_lines(text), None)
    except (tomllib.TOMLDecodeError, MappingProblem) as problem:  # a packaging defect
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
        text = Path(path).read_bytes().decode()
    except OSError as error:
        raise ConfigError(f"{where}: cannot be read ({error.strerror}).") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text.") from None
    try:
        document = tomllib.loads(text)
        return _checked(document, _header_lines(text), base)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where}: not valid TOML: {error}.") from None
    except MappingProblem as problem:
        at = f", line {problem.line}" if problem.line else ""
        raise ConfigError(f"{where}{at}: {problem}") from None


def _header_lines(text: str) -> dict[str, list[int]]:
    """Table kind (``user``, ``group``) -> the line of each of its ``[[...]]`` headers."""
    lines: dict[str, list[int]] = {"user": [], "group": []}
    for number, line in enumerate(text.splitlines(), 1):
        if found := _HEADER.match(line):
            lines[found[1]].append(number)
    return lines


def _read(
    entries: list[Any], lines: list[int], read: Callable[[Any], MappedAttribute]
) -> Iterator[tuple[MappedAttribute, int | None]]:
    """Each entry read, with the line of its header (a problem in it names that line)."""
    for index, entry in enumerate(entries):
        line = lines[index] if index < len(lines) else None
        try:
            yield read(entry), line
        except MappingProblem as problem:
            raise MappingProblem(str(problem), line) from None


def _checked(
    document: Mapping[str, Any], lines: dict[str, list[int]], base: SiteMapping | None
) -> SiteMapping:
    unknown = set(document) - {"user", "group", "schema"}
    if unknown:
        raise MappingProblem(
            f"unknown table {sorted(unknown)[0]!r}; expected [[user]], [[group]] or [schema.…]."
        )
    for kind in ("user", "group"):
        if not isinstance(document.get(kind, []), list):
            raise MappingProblem(
                f"'{kind}' must be written as [[{kind}]] tables, one per attribute."
            )
    users: list[MappedAttribute] = []
    unmapped: list[MappedAttribute] = []
    user_lines: list[int | None] = []
    for attribute, line in _read(document.get("user", []), lines["user"], mapped_attribute):
        _refuse_twice(attribute, users + unmapped, line)
        if attribute.ldap.lower() == "none":
            if attribute.key in _REQUIRED:
                raise MappingProblem(f"{attribute.filter_name} is required: it stays mapped.", line)
            unmapped.append(attribute)
        else:
            users.append(attribute)
            user_lines.append(line)
    groups: list[MappedAttribute] = []
    read_group = functools.partial(mapped_attribute, resource_type="Group")
    for attribute, line in _read(document.get("group", []), lines["group"], read_group):
        _refuse_twice(attribute, groups, line)
        groups.append(attribute)
    mapping = SiteMapping(
        tuple(users), _schema_names(document.get("schema", {})), tuple(unmapped), tuple(groups)
    )
    if base is not None:
        merged = base.extended_by(mapping)
        # pragma below: the two lists grow together, so strict cannot change anything
        for attribute, line in zip(mapping.users, user_lines, strict=True):  # pragma: no mutate
            holders = [m for m in merged.users if m.ldap.lower() == attribute.ldap.lower()]
            if len(holders) > 1:
                other = next(m for m in holders if m is not attribute)
                raise MappingProblem(
                    f"the LDAP attribute {attribute.ldap} holds {other.filter_name} already "
                    "(the profile's mapping); map that one elsewhere too.",
                    line,
                )
    return mapping


def _refuse_twice(
    attribute: MappedAttribute, earlier: list[MappedAttribute], line: int | None
) -> None:
    """Refuse a SCIM attribute mapped twice, or an LDAP attribute holding two."""
    if any(m.key == attribute.key for m in earlier):
        raise MappingProblem(f"{attribute.filter_name} is mapped twice.", line)
    ldap = attribute.ldap.lower()
    if ldap != "none" and any(m.ldap.lower() == ldap for m in earlier):
        raise MappingProblem(f"the LDAP attribute {attribute.ldap} holds two attributes.", line)


def _schema_names(tables: Any) -> dict[str, tuple[str, str]]:
    if not isinstance(tables, dict):
        raise MappingProblem("'schema' must be written as [schema.\"<URN>\"] tables.")
    names = {}
    for urn, table in tables.items():
        if not isinstance(table, dict) or set(table) - {"name", "description"}:
            raise MappingProblem(f"[schema.{urn!r}] takes only 'name' and 'description'.")
        names[urn] = (str(table.get("name", "")), str(table.get("description", "")))
    return names
