"""Attribute definitions (RFC 7643 §7) and marshmallow validation of canonical resources."""

from scim_core.schemas.attributes import (
    ENTERPRISE_URN,
    GROUP_URN,
    USER_URN,
    Attribute,
    Schema,
    resolve,
)
from scim_core.schemas.resources import validate_group, validate_user

__all__ = [
    "ENTERPRISE_URN",
    "GROUP_URN",
    "USER_URN",
    "Attribute",
    "Schema",
    "resolve",
    "validate_group",
    "validate_user",
]
