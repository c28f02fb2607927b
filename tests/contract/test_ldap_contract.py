"""The contract suite against the LDAP plugin on each real directory: OpenLDAP, 389-DS and a
Samba AD domain controller, each in its own profile."""

import pytest

from scim_core.testing.contract import BackendContract


class TestLdapBackend(BackendContract):
    @pytest.fixture
    def backend(self, directory_backend):
        return directory_backend
