"""scim_flask: the thin Flask adapter serving :mod:`scim_core` under ``/scim/v2``."""

from scim_flask.app import SCIM_PREFIX, ScimExtension, create_app
from scim_flask.settings import AppSettings

__all__ = ["SCIM_PREFIX", "AppSettings", "ScimExtension", "create_app"]
