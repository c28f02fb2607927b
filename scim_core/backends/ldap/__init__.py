"""The LDAP backend plugin (entry point ``scim_core.backends: ldap``); the only ldap3 user."""

from __future__ import annotations

from collections.abc import Mapping

from scim_core.backends.ldap.backend import LdapBackend
from scim_core.backends.ldap.settings import LDAP_SETTINGS, LdapSettings

__all__ = ["LDAP_SETTINGS", "LdapBackend", "LdapSettings", "create_backend"]


def create_backend(settings: Mapping[str, str]) -> LdapBackend:
    """Build the backend from ``SCIM_LDAP_*`` settings (an environment-like mapping).

    :raises scim_core.config.ConfigError: naming a missing or malformed setting.
    """
    return LdapBackend(LdapSettings.from_environ(settings))
