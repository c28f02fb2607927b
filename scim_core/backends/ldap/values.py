"""An entry's attribute values as SCIM reads them, and a mapped attribute's SCIM value as
LDAP values and back (RFC 4517 syntaxes): pure functions the backend's parts share.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from ldap3.core.exceptions import LDAPInvalidDnError
from ldap3.utils.dn import parse_dn, safe_dn

from scim_core.backends.ldap.mapped import MappedAttribute
from scim_core.backends.ldap.syntaxes import from_ldap, to_ldap
from scim_core.errors import InvalidValue

__all__ = [
    "TEXT_TYPES",
    "Attributes",
    "all_values",
    "case_ignored",
    "dn_key",
    "element_of",
    "entry_meta",
    "extension_resource",
    "extension_values",
    "first",
    "first_rdn",
    "generalized_to_iso",
    "is_true",
    "ldap_values",
    "lower_keyed",
    "rdn_value",
    "reference_id",
    "scim_value",
    "value_at",
]

Attributes = Mapping[str, Sequence[Any]]

# RFC 4514 §2.4: a backslash before a special character, or before two hex digits (one octet
# of the value's UTF-8).
_DN_ESCAPE = re.compile(rb"\\(?:([0-9A-Fa-f]{2})|(.))", re.DOTALL)


class _Folded(dict[str, Any]):
    """An entry's attributes keyed in lower case: a lookup is one dictionary access, also for
    the many mapped attributes an entry does not have. Any spelling finds its attribute, as
    in ldap3's own entries."""

    def __missing__(self, name: str) -> Any:
        lowered = name.lower()
        if lowered == name:
            raise KeyError(name)
        return self[lowered]

    def get(self, name: str, default: Any = None) -> Any:
        return dict.get(self, name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name.lower() if isinstance(name, str) else name)


def case_ignored(text: str) -> str:
    """``text`` as caseIgnoreMatch and caseIgnoreOrderingMatch compare it (RFC 4518 §2):
    case folded, spaces at either end dropped and every run of spaces counted as one, so a
    list merged or checked here is in the order the directory sorts it in."""
    return " ".join(text.casefold().split())


def lower_keyed(attributes: Attributes) -> _Folded:
    """``attributes`` keyed by lower-case names (LDAP names are case-insensitive)."""
    if isinstance(attributes, _Folded):
        return attributes
    return _Folded((name.lower(), values) for name, values in attributes.items())


def _values_of(attributes: Attributes, name: str) -> Any:
    if isinstance(attributes, _Folded):
        return dict.get(attributes, name.lower())
    # The name as given first (ldap3's own maps find any case): the scan is the slow path.
    values = attributes.get(name)  # pragma: no mutate - without it the scan finds the same
    if values is None:
        lowered = name.lower()
        values = next((v for k, v in attributes.items() if k.lower() == lowered), None)
    return values


def first(attributes: Attributes, name: str) -> Any:
    """The first value of ``name`` in a case-insensitively keyed attribute map, or ``None``."""
    # The folded map inline: a read asks this for every mapped attribute.
    if isinstance(attributes, _Folded):
        values = dict.get(attributes, name.lower())
    else:
        values = _values_of(attributes, name)
    if isinstance(values, (list, tuple)):
        return values[0] if values else None
    return values


def is_true(value: Any) -> bool:
    """An RFC 4517 Boolean value, as ldap3 returns it (``True`` with schema info, else text)."""
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return value is True or (isinstance(value, str) and value.strip().upper() == "TRUE")


def all_values(attributes: Attributes, name: str) -> list[Any]:
    """Every value of ``name`` in a case-insensitively keyed attribute map (``[]`` if none)."""
    values = _values_of(attributes, name)
    if values is None:
        return []
    return list(values) if isinstance(values, (list, tuple)) else [values]


def dn_key(dn: str) -> str:
    """A comparable form of a DN (case and spacing folded, RFC 4514 escapes kept)."""
    try:
        return str(safe_dn(dn)).lower()
    except Exception:
        return dn.lower()


def first_rdn(dn: str) -> tuple[str, str] | None:
    """The attribute and value of ``dn``'s first RDN, the value's RFC 4514 escapes undone;
    ``None`` for a multi-valued RDN, escapes that are not UTF-8, or text that is not a DN
    (ldap3 refuses a value in ``#`` hex form as one)."""
    try:
        parts = parse_dn(dn)
    except LDAPInvalidDnError:
        return None
    if not parts or parts[0][2] == "+":
        return None
    attribute, escaped, _ = parts[0]
    try:
        return attribute, rdn_value(escaped)
    except UnicodeDecodeError:
        return None


def rdn_value(escaped: str) -> str:
    """An RDN's value as the entry holds it, its RFC 4514 escapes undone: ``jane\\+doe``
    holds ``jane+doe``, ``caf\\c3\\a9`` holds ``café``.

    :raises UnicodeDecodeError: for escaped octets that are not UTF-8.
    """
    return _DN_ESCAPE.sub(_unescaped, escaped.encode()).decode()


def _unescaped(escape: re.Match[bytes]) -> bytes:
    hex_pair, character = escape.groups()
    return bytes.fromhex(hex_pair.decode()) if hex_pair else bytes(character)


def generalized_to_iso(value: Any) -> str | None:
    """``20261121214500Z`` (RFC 4517 GeneralizedTime, or ldap3's datetime of one) ->
    ``2026-11-21T21:45:00Z``, in UTC; ``None`` for a value that is no such time."""
    if value is None:
        return None
    # The fast path gives what the general one below does, only sooner: a mutant of its
    # guard sends a value one way instead of the other, with the same answer.
    if (
        type(value) is str  # pragma: no mutate - the same answer either way
        and len(value) == 15  # pragma: no mutate - the same answer either way
        and value[14] == "Z"  # pragma: no mutate - the same answer either way
        and value.isascii()
        and value[:14].isdigit()  # pragma: no mutate - the same answer either way
    ):
        # The form directories write (whole seconds, UTC): checked as a date, then written
        # from its own digits (a read shows two of these; strftime cost more than the rest).
        if _generalized(value) is None:
            return None
        return f"{value[:4]}-{value[4:6]}-{value[6:8]}T{value[8:10]}:{value[10:12]}:{value[12:14]}Z"
    moment = value if isinstance(value, datetime) else _generalized(str(value))
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: RFC 4517 §3.3.13: the date and hour, the minutes and seconds if given, a fraction (dropped:
#: SCIM shows whole seconds) and the zone (``Z``, ``+hh`` or ``+hhmm``; none is taken as UTC).
_GENERALIZED = re.compile(
    r"(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)?(\d\d)?(?:[.,]\d+)?(?:Z|([+-])(\d\d)(\d\d)?)?"
)


def _generalized(text: str) -> datetime | None:
    # Every read shows two of these: built from the digits, not strptime (which cost 5% of
    # a PATCH's CPU).
    match = _GENERALIZED.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, sign, zone_hours, zone_minutes = match.groups()
    try:
        zone = UTC  # pragma: no mutate - generalized_to_iso takes a naive time as UTC
        if sign:
            offset = timedelta(hours=int(zone_hours), minutes=int(zone_minutes or 0))
            zone = timezone(-offset if sign == "-" else offset)
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute or 0),
            int(second or 0),
            tzinfo=zone,
        )
    except ValueError:  # a month 13, a 31 November, a leap second, an offset of a day or more
        return None


def entry_meta(attributes: Mapping[str, Any], version_attribute: str) -> dict[str, Any]:
    """A resource's ``meta`` from its entry: created, lastModified and a weak ETag of the
    entry's version (what the directory changes on every write)."""
    meta: dict[str, Any] = {}
    # Any case of a name finds its attribute: a name's case mutated changes nothing.
    created = generalized_to_iso(first(attributes, "createTimestamp"))  # pragma: no mutate
    modified = generalized_to_iso(first(attributes, "modifyTimestamp"))  # pragma: no mutate
    version = first(attributes, version_attribute)
    if created:
        meta["created"] = created
    if modified:
        meta["lastModified"] = modified
    if version is not None:
        meta["version"] = f'W/"{version}"'
    return meta


def _boolean_text(value: Any) -> str:
    return "TRUE" if value is True else "FALSE"


def _iso_to_generalized(value: Any) -> str:
    """``2026-11-21T21:45:00Z`` (or with an offset) -> ``20261121214500Z`` (RFC 4517)."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise InvalidValue("A dateTime attribute needs an xsd:dateTime value.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y%m%d%H%M%SZ")


def _base64_octets(value: Any) -> bytes:
    """Base64 text -> the octets LDAP holds."""
    try:
        return base64.b64decode(str(value), validate=True)
    except ValueError:  # binascii.Error
        raise InvalidValue("A binary attribute needs a base64 value.") from None


def _base64_text(raw: Any) -> str:
    octets = raw if isinstance(raw, bytes) else str(raw).encode()
    return base64.b64encode(octets).decode()


def _integer_of(raw: Any) -> int | None:
    try:
        return int(str(raw))
    except ValueError:
        return None  # not ours to interpret: left out of the resource


#: SCIM types whose values an LDAP string holds as they are (a reference is a URI).
TEXT_TYPES = frozenset({"string", "reference"})

#: A mapped attribute's value in its LDAP form (RFC 4517 syntaxes), and back.
_TO_LDAP: Mapping[str, Callable[[Any], str | bytes]] = {
    "boolean": _boolean_text,
    "integer": str,
    "dateTime": _iso_to_generalized,
    "binary": _base64_octets,
}
_FROM_LDAP: Mapping[str, Callable[[Any], Any]] = {
    "boolean": is_true,
    "integer": _integer_of,
    "dateTime": generalized_to_iso,
    "binary": _base64_text,
}


def element_of(
    elements: list[dict[str, Any]], mapped: MappedAttribute, *, create: bool
) -> dict[str, Any] | None:
    """The element of ``mapped``'s type (case aside; the first one if a client sent several),
    made when ``create`` and there is none."""
    wanted = str(mapped.element_type).casefold()
    for element in elements:
        kind = element.get("type") if isinstance(element, dict) else None
        if isinstance(kind, str) and kind.casefold() == wanted:
            return element
    if not create:
        return None
    element = {"type": mapped.element_type}
    elements.append(element)
    return element


def ldap_values(mapped: MappedAttribute, value: Any) -> list[Any]:
    """The LDAP values of a mapped attribute's SCIM value: none for an unassigned one, a
    string in its LDAP syntax, another type converted (RFC 4517).

    :raises InvalidValue: a value the attribute's LDAP syntax cannot hold.
    """
    items = value if isinstance(value, list) and mapped.multi_valued else [value]
    found: list[Any] = []
    for item in items:
        if item is None or item == "":
            continue
        converted: str | bytes
        if mapped.type in TEXT_TYPES:
            converted = to_ldap(mapped.syntax, mapped.filter_name, str(item))
        else:
            converted = _TO_LDAP[mapped.type](item)
        if converted not in found:  # an LDAP attribute holds a value once
            found.append(converted)
    return found


def scim_value(mapped: MappedAttribute, raw: Any) -> Any:
    """A mapped attribute's SCIM value from one LDAP value (``None``: not usable)."""
    if raw is None:
        return None
    if mapped.type in TEXT_TYPES:
        return from_ldap(mapped.syntax, str(raw))
    return _FROM_LDAP[mapped.type](raw)


def reference_id(resource: Mapping[str, Any], mapped: MappedAttribute) -> str | None:
    """The user id a resource's reference ``mapped`` names (``{"value": id}``), if any."""
    value = value_at(resource, mapped.path)
    named = value.get("value") if isinstance(value, Mapping) else value
    return str(named) if named else None


def extension_values(
    mapped: Sequence[MappedAttribute], resource: Mapping[str, Any]
) -> dict[str, list[Any]]:
    """LDAP attribute -> values, for the attributes of a site's extensions ``resource`` has."""
    return {m.ldap: ldap_values(m, value_at(resource, m.path)) for m in mapped}


def extension_resource(
    mapped: Sequence[MappedAttribute],
    attributes: Attributes,
    resource: dict[str, Any],
    ids: Mapping[str, str] | None = None,
) -> None:
    """Set in ``resource`` the value of each attribute of ``mapped`` the entry holds.

    :param ids: DN (lower case) -> user id, for the users its references name; a DN that
        names nobody (a user since deleted) is left out.
    """
    folded = lower_keyed(attributes)
    for attribute in mapped:
        held = dict.get(folded, attribute.ldap_key)
        if held is None:
            continue  # most mapped attributes are absent from an entry: nothing to convert
        if not isinstance(held, (list, tuple)):
            held = [held]  # a single value as ldap3 gives it with the schema loaded
        elif not held:
            continue
        if attribute.points_to is not None:
            named = (ids or {}).get(str(held[0]).lower())  # no DN is "none"
            if named is not None:
                _set(resource, attribute.path, {"value": named})
            continue
        if attribute.multi_valued:
            values = [scim_value(attribute, v) for v in held]
            values = [v for v in values if v is not None]
            if values:
                _set(resource, attribute.path, values)
            continue
        value = scim_value(attribute, held[0])
        if value is not None:
            _set(resource, attribute.path, value)


def value_at(resource: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at ``path`` in ``resource``, ``None`` where any step is missing."""
    current: Any = resource
    for key in path:
        # type() first: most holders are plain dicts, and an ABC check costs far more.
        if type(current) is not dict and not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current


def _set(resource: dict[str, Any], path: Sequence[str], value: Any) -> None:
    *parents, last = path
    current = resource
    for key in parents:
        current = current.setdefault(key, {})
    current[last] = value
