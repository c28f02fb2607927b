"""marshmallow schemas validating canonical User and Group resources (RFC 7643 §4).

Request bodies are first folded into canonical form by the patch engine's key resolution
(aliases, dotted and URN-prefixed names, ``"True"``/``"False"`` strings); these schemas then
check types and bounds. Unknown keys are dropped, never echoed.
"""

from __future__ import annotations

import functools
import stringprep
import unicodedata
from collections.abc import Collection
from typing import Any

from marshmallow import EXCLUDE, Schema, ValidationError, fields, validate

from scim_core.errors import InvalidValue
from scim_core.schemas.attributes import (
    DEFAULT_SCHEMAS,
    ENTERPRISE_URN,
    GROUP_URN,
    USER_URN,
    Attribute,
    SchemaSet,
)

__all__ = [
    "ENTERPRISE_URN",
    "GROUP_URN",
    "USER_URN",
    "EmailSchema",
    "GroupSchema",
    "UserNameField",
    "UserSchema",
    "group_name_problem",
    "mapped_attributes",
    "validate_group",
    "validate_user",
]


_TEXT = validate.Length(min=1, max=1024)
_SASLPREP_PROHIBITED = (
    stringprep.in_table_c12,
    stringprep.in_table_c21,
    stringprep.in_table_c22,
    stringprep.in_table_c3,
    stringprep.in_table_c4,
    stringprep.in_table_c5,
    stringprep.in_table_c6,
    stringprep.in_table_c7,
    stringprep.in_table_c8,
    stringprep.in_table_c9,
)


def _sasl_prepared(password: str) -> None:
    """Refuse a password that RFC 4013 (SASLprep) cannot prepare.

    LDAP passwords are prepared with SASLprep (RFC 4513 §5.1.2, RFC 3062): control characters
    (NUL included), private-use and non-character code points and mixed-direction text are
    prohibited, so such a password could never be used to bind. The message never quotes it.
    """
    mapped = "".join(
        " " if stringprep.in_table_c12(c) else c for c in password if not stringprep.in_table_b1(c)
    )
    prepared = unicodedata.ucd_3_2_0.normalize("NFKC", mapped)
    if not prepared:
        raise ValidationError("Nothing is left of it once prepared (RFC 4013).")
    if any(prohibited(c) for c in prepared for prohibited in _SASLPREP_PROHIBITED):
        raise ValidationError("It holds a character RFC 4013 (SASLprep) prohibits.")
    right_to_left = [stringprep.in_table_d1(c) for c in prepared]
    if any(right_to_left) and (
        any(stringprep.in_table_d2(c) for c in prepared)
        or not (right_to_left[0] and right_to_left[-1])
    ):
        raise ValidationError("It mixes text directions as RFC 4013 §6 prohibits.")


class UserNameField(fields.String):
    """A string whose surrounding white space is not part of the value (a userName)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        # marshmallow's String reads neither attr nor data.
        return str(super()._deserialize(value, attr, data, **kwargs)).strip()  # pragma: no mutate


class _Strict(Schema):
    class Meta:
        unknown = EXCLUDE


class _Name(_Strict):
    formatted = fields.String(validate=_TEXT)
    given_name = fields.String(data_key="givenName", validate=_TEXT)
    family_name = fields.String(data_key="familyName", validate=_TEXT)


class _Email(_Strict):
    value = fields.String(required=True, validate=validate.Length(min=3, max=256))
    type = fields.String(validate=validate.Length(max=64))
    primary = fields.Boolean()
    display = fields.String()


class _Reference(_Strict):
    value = fields.String(required=True, validate=validate.Length(min=1, max=256))
    display = fields.String()
    display_name = fields.String(data_key="displayName")
    type = fields.String()
    ref = fields.String(data_key="$ref")


class _Enterprise(_Strict):
    employee_number = fields.String(data_key="employeeNumber", validate=validate.Length(max=256))
    manager = fields.Nested(_Reference)


class _User(_Strict):
    id = fields.String()
    external_id = fields.String(data_key="externalId", validate=validate.Length(min=1, max=256))
    user_name = UserNameField(data_key="userName", validate=validate.Length(min=1, max=256))
    name = fields.Nested(_Name)
    display_name = fields.String(data_key="displayName", validate=_TEXT)
    title = fields.String(validate=_TEXT)
    emails = fields.List(fields.Nested(_Email))
    active = fields.Boolean()
    password = fields.String(validate=[validate.Length(min=1, max=1024), _sasl_prepared])
    enterprise = fields.Nested(_Enterprise, data_key=ENTERPRISE_URN)


#: A group's displayName is its cn, an RDN value: OpenLDAP's back-mdb refuses RDNs whose
#: normalized and stored forms together pass its 511-byte key size (about 242 bytes of value),
#: with the unhelpful result "other"; refuse longer names first, with a clear 400.
GROUP_NAME_MAX_BYTES = 240


#: Characters no name may hold: controls, invisible format characters (zero-width space and
#: joiners, direction overrides, the BOM), private-use, unassigned, surrogates, line separators.
_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"})
#: Cyrillic and Greek letters drawn like Latin ones: among Latin letters they make a lookalike
#: of another name ("admins" spelled with U+0430, a Cyrillic a). Other letters of those scripts
#: (omega, zhe) do not.
_LATIN_LOOKALIKES = frozenset(
    "АВЕЅІЈКМНОРСТУХаеіјорсуухѕԁԛԝһӏвкмнт"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ"  # Greek
)


def _has_latin_letter(name: str) -> bool:
    # Every letter has a name: the default is never used.
    return any(
        c.isalpha() and unicodedata.name(c, "").startswith("LATIN")  # pragma: no mutate
        for c in name
    )


def group_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a group's name (its id, in URLs too), or ``None`` if it can.

    The same rule decides a create and a lookup (by id or ``displayName eq``), so a name that
    could never be created never finds an entry through folding or lookalike characters.
    """
    if any(unicodedata.category(c) in _UNSEEN_CATEGORIES for c in name):
        return "It holds a control, invisible or unassigned character."
    if unicodedata.normalize("NFKC", name) != name:
        return "Write it in Unicode NFKC form (for example no full-width or ligature letters)."
    if any(c in _LATIN_LOOKALIKES for c in name) and _has_latin_letter(name):
        return "It mixes Latin letters with Cyrillic or Greek ones drawn like them."
    if name.lower() == ".search" or any(part in ("", ".", "..") for part in name.split("/")):
        return "It must be a URL path of its own: not '.search', no empty, '.' or '..' part."
    if len(name.encode()) > GROUP_NAME_MAX_BYTES:  # no surrogate is left to fail encoding
        return f"At most {GROUP_NAME_MAX_BYTES} bytes of UTF-8 (it is the cn)."
    return None


def _group_name(name: str) -> None:
    problem = group_name_problem(name)
    if problem is not None:
        raise ValidationError(problem)


class _Group(_Strict):
    id = fields.String()
    external_id = fields.String(data_key="externalId", validate=validate.Length(min=1, max=256))
    # No upper bound on characters: group_name_problem's byte bound is the stricter one.
    display_name = fields.String(
        data_key="displayName", validate=[validate.Length(min=1), _group_name]
    )
    members = fields.List(fields.Nested(_Reference))


#: The input schemas under public names (the OpenAPI document is generated from them).
UserSchema = _User
GroupSchema = _Group
EmailSchema = _Email

_USER = _User()
_GROUP = _Group()
_REQUIRED_USER: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("userName", ("userName",)),
    ("name.givenName", ("name", "givenName")),
    ("name.familyName", ("name", "familyName")),
    ("emails", ("emails",)),
)


def _present(resource: dict[str, Any], path: tuple[str, ...]) -> bool:
    value: Any = resource
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return bool(value)


def _describe(errors: Any, prefix: str = "") -> list[str]:
    """Flatten marshmallow's error tree to ``path: message`` lines, never echoing values."""
    if isinstance(errors, dict):
        lines: list[str] = []
        for key, value in errors.items():
            lines += _describe(value, f"{prefix}.{key}" if prefix else str(key))
        return lines
    # marshmallow's leaves are lists of messages (a ValidationError wraps a lone one).
    return [f"{prefix}: {message}" for message in errors if isinstance(message, str)]


@functools.lru_cache(maxsize=64)
def _user_schema(keys: frozenset[str]) -> Schema:
    """The User schema narrowed to the fields of the top-level ``keys``: a PATCH checks what
    it changed, and a schema's load and dump walk every field it has (no field is required
    and none depends on another, so the narrowed check of those keys is the full one's)."""
    names = [name for name, field in _USER.fields.items() if (field.data_key or name) in keys]
    return _User(only=names) if names else _NOTHING


class _Nothing(_Strict):
    """No field: what a change of attributes the User schema does not type is checked with
    (a mapping's own, carried over by :func:`_carry_mapped`)."""


_NOTHING = _Nothing()


def _load(schema: Schema, resource: dict[str, Any], kind: str) -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = schema.load(resource)
    except ValidationError as exc:
        raise InvalidValue(f"Invalid {kind}: " + "; ".join(_describe(exc.messages))) from None
    return _as_sent(schema, loaded)


def _as_sent(schema: Schema, loaded: dict[str, Any]) -> dict[str, Any]:
    """What ``schema.dump(loaded)`` gives for a value ``schema`` loaded (the same values, under
    their SCIM names), without dump's second conversion of every value: a loaded string or
    boolean is dumped as it is."""
    sent: dict[str, Any] = {}
    for name, field in schema.fields.items():
        if name not in loaded:
            continue
        value = loaded[name]
        if isinstance(field, fields.Nested) and isinstance(value, dict):
            value = _as_sent(field.schema, value)
        elif isinstance(field, fields.List) and isinstance(field.inner, fields.Nested):
            value = [_as_sent(field.inner.schema, item) for item in value]
        sent[field.data_key or name] = value
    return sent


@functools.lru_cache(maxsize=16)  # a service asks for its one set on every write
def mapped_attributes(
    schemas: SchemaSet, resource_type: str = "User"
) -> tuple[tuple[str | None, Attribute], ...]:
    """(extension URN, or ``None`` for the core schema; attribute) of every attribute of
    ``resource_type`` ``schemas`` holds beyond
    :data:`~scim_core.schemas.attributes.DEFAULT_SCHEMAS` (what a backend's mapping adds)."""
    known = {
        (schema.id.lower(), a.name.lower())
        for schema in DEFAULT_SCHEMAS.get(resource_type)
        for a in schema.attributes
    }
    added: list[tuple[str | None, Attribute]] = []
    for index, schema in enumerate(schemas.get(resource_type)):
        for attribute in schema.attributes:
            if (schema.id.lower(), attribute.name.lower()) not in known:
                added.append((None if index == 0 else schema.id, attribute))
    return tuple(added)


def _carry_mapped(
    resource: dict[str, Any],
    checked: dict[str, Any],
    schemas: SchemaSet,
    resource_type: str = "User",
) -> None:
    """Copy the attributes a mapping adds (typed by the PATCH engine already) into ``checked``,
    refusing text longer than the directory attributes commonly hold."""
    for urn, attribute in mapped_attributes(schemas, resource_type):
        holder = resource if urn is None else resource.get(urn)
        if not isinstance(holder, dict) or holder.get(attribute.name) is None:
            continue
        value = holder[attribute.name]
        if isinstance(value, str) and len(value) > 1024:
            raise InvalidValue(
                f"Invalid {resource_type}: {attribute.name}: Longer than 1024 characters."
            )
        target = checked if urn is None else checked.setdefault(urn, {})
        target[attribute.name] = value


def validate_user(
    resource: dict[str, Any],
    *,
    complete: bool = True,
    before: dict[str, Any] | None = None,
    schemas: SchemaSet | None = None,
    changed: Collection[str] | None = None,
) -> dict[str, Any]:
    """Check a canonical User's types; with ``complete``, every required attribute too.

    Required (the specification, §2): userName, name.givenName, name.familyName and one email.
    Attributes a mapping adds (``schemas``) are kept as the PATCH engine typed them.

    :param before: the stored user a PATCH starts from: a required attribute it already
        lacked (an entry another tool made, e.g. 389-DS's ``dsidm`` users have no surname)
        is not demanded; one the PATCH removes is.
    :param changed: the top-level attributes a PATCH changed from ``before``: only their
        types are checked (the others are as stored); the required ones are checked over all.
    :raises InvalidValue: naming every missing or malformed attribute at once.
    """
    subject = resource if changed is None else {k: resource[k] for k in changed if k in resource}
    # _USER is the schema narrowed to every key, built once: the narrowed schema of the whole
    # user checks the same, only slower (so a mutant choosing it cannot be told apart).
    schema = _USER if changed is None else _user_schema(frozenset(subject))  # pragma: no mutate
    checked = _load(schema, subject, "User")
    if schemas is not None and schemas is not DEFAULT_SCHEMAS:
        _carry_mapped(subject, checked, schemas)
    if changed is not None:
        kept = {k: v for k, v in resource.items() if k not in changed and k != "meta"}
        checked = {**kept, **checked}
    if complete:
        missing = [
            name
            for name, path in _REQUIRED_USER
            if not _present(checked, path) and (before is None or _present(before, path))
        ]
        if missing:
            raise InvalidValue("Missing required attributes: " + ", ".join(missing) + ".")
    return checked


def validate_group(resource: dict[str, Any], *, schemas: SchemaSet | None = None) -> dict[str, Any]:
    """Check a canonical Group; ``displayName`` is required. Attributes a mapping adds
    (``schemas``: a site's Group extension) are kept as the PATCH engine typed them.

    :raises InvalidValue: naming what is missing or malformed.
    """
    checked = _load(_GROUP, resource, "Group")
    if schemas is not None and schemas is not DEFAULT_SCHEMAS:
        _carry_mapped(resource, checked, schemas, "Group")
    if not checked.get("displayName"):
        raise InvalidValue("Missing required attribute: displayName.")
    return checked
