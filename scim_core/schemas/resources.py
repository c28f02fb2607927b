"""marshmallow schemas validating canonical User and Group resources (RFC 7643 §4).

Request bodies are first folded into canonical form by the patch engine's key resolution
(aliases, dotted and URN-prefixed names, ``"True"``/``"False"`` strings); these schemas then
check types and bounds. Unknown keys are dropped, never echoed.
"""

from __future__ import annotations

from typing import Any

from marshmallow import EXCLUDE, Schema, ValidationError, fields, validate

from scim_core.errors import InvalidValue
from scim_core.schemas.attributes import ENTERPRISE_URN, GROUP_URN, USER_URN

__all__ = ["ENTERPRISE_URN", "GROUP_URN", "USER_URN", "validate_group", "validate_user"]


_TEXT = validate.Length(min=1, max=1024)


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
    user_name = fields.String(data_key="userName", validate=validate.Length(min=1, max=256))
    name = fields.Nested(_Name)
    display_name = fields.String(data_key="displayName", validate=_TEXT)
    title = fields.String(validate=_TEXT)
    emails = fields.List(fields.Nested(_Email))
    active = fields.Boolean()
    password = fields.String(validate=validate.Length(min=1, max=1024))
    enterprise = fields.Nested(_Enterprise, data_key=ENTERPRISE_URN)


class _Group(_Strict):
    id = fields.String()
    display_name = fields.String(data_key="displayName", validate=validate.Length(min=1, max=256))
    members = fields.List(fields.Nested(_Reference))


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
    messages = errors if isinstance(errors, list) else [errors]
    return [f"{prefix}: {message}" for message in messages if isinstance(message, str)]


def _load(schema: Schema, resource: dict[str, Any], kind: str) -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = schema.load(resource)
    except ValidationError as exc:
        raise InvalidValue(f"Invalid {kind}: " + "; ".join(_describe(exc.messages))) from None
    return schema.dump(loaded)  # type: ignore[no-any-return]


def validate_user(resource: dict[str, Any], *, complete: bool = True) -> dict[str, Any]:
    """Check a canonical User's types; with ``complete``, every required attribute too.

    Required (the specification, §2): userName, name.givenName, name.familyName and one email.

    :raises InvalidValue: naming every missing or malformed attribute at once.
    """
    checked = _load(_USER, resource, "User")
    if complete:
        missing = [name for name, path in _REQUIRED_USER if not _present(checked, path)]
        if missing:
            raise InvalidValue("Missing required attributes: " + ", ".join(missing) + ".")
    return checked


def validate_group(resource: dict[str, Any]) -> dict[str, Any]:
    """Check a canonical Group; ``displayName`` is required.

    :raises InvalidValue: naming what is missing or malformed.
    """
    checked = _load(_GROUP, resource, "Group")
    if not checked.get("displayName"):
        raise InvalidValue("Missing required attribute: displayName.")
    return checked
