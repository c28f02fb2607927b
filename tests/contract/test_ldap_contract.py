"""The contract suite against the LDAP plugin on the session's real slapd."""

import pytest

from scim_core.testing.contract import BackendContract


class TestLdapBackend(BackendContract):
    @pytest.fixture
    def backend(self, ldap_backend):
        return ldap_backend
