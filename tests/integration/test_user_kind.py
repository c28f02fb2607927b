"""Users whose classes the service may search but not read are still users (OpenLDAP).

A lookup by id names the entries alone and takes each as a user when its objectClass values
name the users' class; the others the directory settles with the users' filter, in one more
search however many they are.
``test_directories.py`` holds the other answer on each directory: an entry of another kind
is no user.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ldap3 import BASE, NONE, Connection, Server
from scim_http import INTEGRATION_TOKEN, Http, as_admin, counted_operations, make_app, settings_for

from scim_core.backends.ldap import LdapBackend
from scim_core.testing.slapd import SlapdInstance

pytestmark = pytest.mark.slapd

CLASSLESS = ("classless0", "classless1", "classless2")


def entry_uuid(admin: Connection, dn: str) -> str:
    assert admin.search(dn, "(objectClass=*)", BASE, attributes=["entryUUID"]), admin.result
    return str(admin.entries[0].entryUUID)


class _ClassesHidden(SlapdInstance):
    """The throwaway slapd where the service account may search the objectClass values of
    the users named in ``CLASSLESS`` but not read them."""

    def _render_config(self) -> str:
        hidden = [
            line
            for uid in CLASSLESS
            for line in (
                f'access to dn.base="uid={uid},{self.users_base}" attrs=objectClass',
                f'  by dn.exact="{self.service_dn}" search',
                "  by * break",
            )
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


def test_users_whose_classes_the_service_cannot_read_are_asked_about_once(
    hidden: SlapdInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    dns = [f"uid={uid},{hidden.users_base}" for uid in CLASSLESS]
    with as_admin(hidden) as admin:
        for uid, dn in zip(CLASSLESS, dns, strict=True):
            attributes = {"uid": uid, "cn": "Class Less", "sn": "Less", "title": "Hidden"}
            assert admin.add(dn, ["inetOrgPerson"], attributes), admin.result
        idents = [entry_uuid(admin, dn) for dn in dns]
    backend = LdapBackend(settings_for(hidden))
    try:
        service = Connection(
            Server(hidden.url, get_info=NONE),
            hidden.service_dn,
            hidden.service_password,
            auto_bind=True,
        )
        service.search(dns[0], "(objectClass=*)", BASE, attributes=["objectClass", "uid"])
        seen = service.response[0]["attributes"]
        service.unbind()
        assert not seen.get("objectClass") and seen["uid"] == [CLASSLESS[0]]

        http = Http(make_app(backend, INTEGRATION_TOKEN).test_client(), INTEGRATION_TOKEN)
        read = http("GET", f"/Users/{idents[0]}")
        assert read.status_code == 200, read.get_json(force=True)
        assert read.get_json()["userName"] == CLASSLESS[0]
        assert read.get_json()["title"] == "Hidden"
        group = {"displayName": "seen", "members": [{"value": i} for i in idents]}
        made = http("POST", "/Groups", json=group)
        assert made.status_code == 201, made.get_json(force=True)
        assert sorted(m["value"] for m in made.get_json()["members"]) == sorted(idents)

        # However many entries the classes leave undecided, the directory is asked once.
        sent = counted_operations(monkeypatch)
        found = backend._dns_for_ids(idents)
        assert {dn.lower() for dn in found.values()} == {dn.lower() for dn in dns}
        assert sent == ["search", "search"], sent
    finally:
        backend.close()
