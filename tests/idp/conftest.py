"""Identity-provider replays: the Flask app on the session's real slapd, and the directory.

The fixtures mirror ``tests/integration/conftest.py`` (conftest files are not importable when
the suite runs from an installed wheel); the token here is the one the replays send.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ldap3 import Connection, Server
from ldap3.utils.conv import escape_filter_chars
from replay import TOKEN
from scim_http import Http, make_app


@pytest.fixture(scope="session")
def app(ldap_backend):
    return make_app(ldap_backend, TOKEN, log_level="WARNING")


@pytest.fixture
def http(app):
    return Http(app.test_client(), TOKEN)


class Directory:
    """Reads entries as the rootdn, so the tests see what the service really wrote."""

    def __init__(self, connection: Connection, slapd: Any) -> None:
        self.connection = connection
        self.slapd = slapd

    def _one(self, base: str, ldap_filter: str, attributes: list[str]) -> dict[str, Any] | None:
        self.connection.search(base, ldap_filter, attributes=attributes)
        entries = [r for r in self.connection.response if r["type"] == "searchResEntry"]
        assert len(entries) <= 1, entries
        if not entries:
            return None
        # Raw values: what the directory holds, before ldap3 parses dates or numbers.
        raw = entries[0]["raw_attributes"]
        found: dict[str, Any] = {k: [v.decode() for v in vs] for k, vs in raw.items() if vs}
        found["dn"] = entries[0]["dn"]
        return found

    def user(self, user_id: str, *attributes: str) -> dict[str, Any] | None:
        """The user entry whose entryUUID is ``user_id`` (its SCIM id), with ``attributes``."""
        value = escape_filter_chars(user_id)
        return self._one(self.slapd.users_base, f"(entryUUID={value})", list(attributes))

    def group(self, name: str, *attributes: str) -> dict[str, Any] | None:
        """The group entry whose cn is ``name``, with ``attributes``."""
        value = escape_filter_chars(name)
        return self._one(self.slapd.groups_base, f"(cn={value})", list(attributes))

    def members(self, name: str) -> set[str]:
        """The group's member DNs, lower-cased, without the empty-group placeholder."""
        entry = self.group(name, "member")
        assert entry is not None, name
        placeholder = self.slapd.placeholder_dn.lower()
        return {m.lower() for m in entry["member"]} - {placeholder}

    def can_bind(self, user_id: str, password: str) -> bool:
        """Whether a simple bind as the user with ``password`` succeeds."""
        connection = Connection(Server(self.slapd.url), self.dn(user_id), password)
        try:
            return bool(connection.bind())
        finally:
            connection.unbind()

    def dn(self, user_id: str) -> str:
        """The DN of a user, lower-cased, as a group's member value holds it."""
        entry = self.user(user_id)
        assert entry is not None, user_id
        return str(entry["dn"]).lower()


@pytest.fixture
def directory(slapd) -> Iterator[Directory]:
    connection = Connection(Server(slapd.url), slapd.admin_dn, slapd.admin_password, auto_bind=True)
    yield Directory(connection, slapd)
    connection.unbind()


@pytest.fixture
def run_id() -> str:
    """A short unique suffix: the session's slapd is shared, names must not collide."""
    return uuid.uuid4().hex[:8]
