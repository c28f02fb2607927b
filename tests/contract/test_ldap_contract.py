"""The contract suite against the LDAP plugin on each real directory: OpenLDAP, 389-DS and a
Samba AD domain controller, each in its own profile."""

import pytest

from scim_core.testing.contract import BackendContract, unique, user_body


class TestLdapBackend(BackendContract):
    @pytest.fixture
    def backend(self, directory_backend):
        return directory_backend

    def test_primary_email_is_stored_as_written(self, client, directory):
        """On AD the documented limit instead: ``mail`` holds one address and there is no
        place for "none is primary", so a lone address reads back primary and a second one
        is 400; elsewhere the contract as it stands."""
        if directory.dialect != "ad":
            super().test_primary_email_is_stored_as_written(client)
            return
        name = unique()
        lone = [{"value": f"{name}@example.com", "type": "work", "primary": False}]
        created = client.ok("POST", "/Users", user_body(name, emails=lone))
        assert created["emails"] == [{**lone[0], "primary": True}]
        other = {"value": f"{name}.2@example.com", "type": "work", "primary": True}
        path = "/Users/" + created["id"]
        refused = client.patch(path, {"op": "add", "path": "emails", "value": [other]})
        assert refused.status == 400
        assert client.ok("GET", path)["emails"] == created["emails"]
