"""The LDAP backend plugin (entry point ``scim_core.backends: ldap``); the only ldap3 user.

It needs the ``ldap`` extra (``pip install 'scim-ldap[ldap]'``); the core does not.
"""

from __future__ import annotations

from collections.abc import Mapping

try:  # first, so that a core installed alone says what to install, not a deep traceback
    import ldap3  # noqa: F401
except ModuleNotFoundError as error:
    raise ModuleNotFoundError(
        "the LDAP backend needs ldap3: pip install 'scim-ldap[ldap]'", name=error.name
    ) from error

from scim_core.backends.ldap.backend import LdapBackend
from scim_core.backends.ldap.settings import LDAP_SETTINGS, LdapSettings

__all__ = ["LDAP_SETTINGS", "LdapBackend", "LdapSettings", "create_backend"]


def create_backend(settings: Mapping[str, str]) -> LdapBackend:
    """Build the backend from ``SCIM_LDAP_*`` settings (an environment-like mapping).

    :raises scim_core.config.ConfigError: naming a missing or malformed setting.
    """
    return LdapBackend(LdapSettings.from_environ(settings))
