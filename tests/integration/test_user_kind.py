"""A user whose classes the service may search but not read is still a user (OpenLDAP).

A lookup by id names the entry alone and takes it as a user when its objectClass values name
the users' class; otherwise the directory is asked with the users' filter on the entry's DN.
``test_directories.py`` holds the other answer on each directory: an entry of another kind
is no user.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ldap3 import BASE, NONE, Connection, Server
from scim_http import INTEGRATION_TOKEN, Http, make_app, settings_for

from scim_core.backends.ldap import LdapBackend
from scim_core.testing.slapd import SlapdInstance

pytestmark = pytest.mark.slapd

CLASSLESS = "classless"


def entry_uuid(admin: Connection, dn: str) -> str:
    assert admin.search(dn, "(objectClass=*)", BASE, attributes=["entryUUID"]), admin.result
    return str(admin.entries[0].entryUUID)


class _ClassesHidden(SlapdInstance):
    """The throwaway slapd where the service account may search one user's objectClass
    values but not read them."""

    def _render_config(self) -> str:
        hidden = [
            f'access to dn.base="uid={CLASSLESS},{self.users_base}" attrs=objectClass',
            f'  by dn.exact="{self.service_dn}" search',
            "  by * break",
        ]
        lines = super()._render_config().splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("access to dn.subtree="))
        return "\n".join([*lines[:at], *hidden, *lines[at:]]) + "\n"


@pytest.fixture(scope="module")
def hidden() -> Iterator[SlapdInstance]:
    instance = _ClassesHidden()
    instance.start()
    try:
        yield instance
    finally:
        instance.close()


def test_a_user_whose_classes_the_service_cannot_read_is_asked_about(
    hidden: SlapdInstance,
) -> None:
    admin = Connection(
        Server(hidden.url, get_info=NONE), hidden.admin_dn, hidden.admin_password, auto_bind=True
    )
    dn = f"uid={CLASSLESS},{hidden.users_base}"
    try:
        attributes = {"uid": CLASSLESS, "cn": "Class Less", "sn": "Less", "title": "Hidden"}
        assert admin.add(dn, ["inetOrgPerson"], attributes), admin.result
        ident = entry_uuid(admin, dn)
        backend = LdapBackend(settings_for(hidden))
        try:
            service = Connection(
                Server(hidden.url, get_info=NONE),
                hidden.service_dn,
                hidden.service_password,
                auto_bind=True,
            )
            service.search(dn, "(objectClass=*)", BASE, attributes=["objectClass", "uid"])
            seen = service.response[0]["attributes"]
            service.unbind()
            assert not seen.get("objectClass") and seen["uid"] == [CLASSLESS]

            http = Http(make_app(backend, INTEGRATION_TOKEN).test_client(), INTEGRATION_TOKEN)
            read = http("GET", f"/Users/{ident}")
            assert read.status_code == 200, read.get_json(force=True)
            assert read.get_json()["userName"] == CLASSLESS
            assert read.get_json()["title"] == "Hidden"
            group = {"displayName": "seen", "members": [{"value": ident}]}
            made = http("POST", "/Groups", json=group)
            assert made.status_code == 201, made.get_json(force=True)
            assert [m["value"] for m in made.get_json()["members"]] == [ident]
        finally:
            backend.close()
    finally:
        admin.unbind()
