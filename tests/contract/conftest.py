"""Fixtures for the contract suite's LDAP run."""

import pytest

from scim_core.backends.ldap import LdapBackend, LdapSettings


@pytest.fixture(scope="session")
def ldap_settings(slapd):
    return LdapSettings(
        urls=(slapd.url,),
        bind_dn=slapd.service_dn,
        bind_password=slapd.service_password,
        users_base=slapd.users_base,
        groups_base=slapd.groups_base,
        placeholder_dn=slapd.placeholder_dn,
    )


@pytest.fixture(scope="session")
def ldap_backend(ldap_settings):
    backend = LdapBackend(ldap_settings)
    yield backend
    backend.close()
