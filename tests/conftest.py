"""Shared fixtures: one throwaway slapd for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from scim_http import settings_for

from scim_core.backends.ldap import LdapBackend, LdapSettings
from scim_core.testing.slapd import SlapdInstance, SlapdNotFoundError


@pytest.fixture(scope="session")
def slapd() -> Iterator[SlapdInstance]:
    """Yield a started, seeded :class:`SlapdInstance` (fails, never skips, without OpenLDAP)."""
    instance = SlapdInstance()
    try:
        instance.start()
    except SlapdNotFoundError as error:
        instance.close()
        pytest.fail(f"the LDAP tests need a real slapd: {error}", pytrace=False)
    except BaseException:
        instance.close()
        raise
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture(scope="session")
def ldap_settings(slapd: SlapdInstance) -> LdapSettings:
    """Settings for the LDAP plugin on the session's slapd, as the service account."""
    return settings_for(slapd)


@pytest.fixture(scope="session")
def ldap_backend(ldap_settings: LdapSettings) -> Iterator[LdapBackend]:
    """One LDAP backend for the session (its connections are per thread)."""
    backend = LdapBackend(ldap_settings)
    yield backend
    backend.close()
