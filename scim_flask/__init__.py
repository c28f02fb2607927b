"""scim_flask: the thin Flask adapter serving :mod:`scim_core` under ``/scim/v2``.

Its names load Flask when first used, so the ``scim-ldap`` command (:mod:`scim_flask.cli`)
starts, and names the extra it needs, on an install without Flask.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scim_flask.app import SCIM_PREFIX, ScimExtension, create_app
    from scim_flask.settings import AppSettings

__all__ = ["SCIM_PREFIX", "AppSettings", "ScimExtension", "create_app"]

_HOMES = {
    "SCIM_PREFIX": "scim_flask.app",
    "ScimExtension": "scim_flask.app",
    "create_app": "scim_flask.app",
    "AppSettings": "scim_flask.settings",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'scim_flask' has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
