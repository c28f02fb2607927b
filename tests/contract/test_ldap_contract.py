"""The contract suite against the LDAP plugin on each real directory: OpenLDAP, 389-DS and a
Samba AD domain controller, each in its own profile."""

import dataclasses
import uuid

import pytest

from scim_core.backends.ldap import LdapBackend, operations
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


@pytest.fixture(scope="module")
def two_bases_each(directory_backend):
    """Two sibling OUs below the users base and two below the groups base (users, users,
    groups, groups), removed afterwards with whatever the tests left in them."""
    settings = directory_backend.settings
    suffix = uuid.uuid4().hex[:6]
    ous = [
        f"ou={name}{suffix},{parent}"
        for parent in (settings.users_base, settings.groups_base)
        for name in ("one", "two")
    ]
    run = directory_backend.connections.run
    for ou in ous:
        run(lambda c, ou=ou: operations.add(c, ou, {"objectClass": ["top", "organizationalUnit"]}))
    yield ous
    for ou in ous:
        left, _ = directory_backend._search(ou, "(objectClass=*)", ["1.1"], scope="LEVEL")
        for entry in left:
            run(lambda c, dn=entry["dn"]: operations.delete(c, dn))
        run(lambda c, ou=ou: operations.delete(c, ou))


class TestLdapBackendUnderTwoBases(TestLdapBackend):
    """The same contract with users and groups under two bases each, creates going to the
    second: every list, lookup and membership spans both."""

    @pytest.fixture
    def backend(self, directory_backend, two_bases_each):
        users, more_users, groups, more_groups = two_bases_each
        backend = LdapBackend(
            dataclasses.replace(
                directory_backend.settings,
                users_base=users,
                users_bases=(users, more_users),
                groups_base=groups,
                groups_bases=(groups, more_groups),
                new_users_base=more_users,
                new_groups_base=more_groups,
            )
        )
        yield backend
        backend.close()
