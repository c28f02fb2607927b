"""Beyond the contract: the data survives a restart, passwords are hashed, stale writes fail."""

import sqlite3

import pytest
from scim_sqlite import SqliteBackend

from scim_core import Query, Secret, VersionConflict, parse_filter

USER = {
    "userName": "bjensen",
    "name": {"givenName": "Barbara", "familyName": "Jensen"},
    "emails": [{"value": "BJensen@Example.com", "primary": True}],
}


def test_data_survives_reopening(tmp_path):
    path = str(tmp_path / "scim.sqlite3")
    first = SqliteBackend(path)
    created = first.create_user(dict(USER), Secret("Pa55word!"))
    first.close()
    second = SqliteBackend(path)
    assert second.get_user(created["id"]) == created
    page = second.find_users(Query(filter=parse_filter('emails.value eq "bjensen@example.COM"')))
    assert [u["id"] for u in page.resources] == [created["id"]]
    assert second.check_password(created["id"], "Pa55word!")
    assert not second.check_password(created["id"], "wrong")


def test_passwords_are_stored_hashed(tmp_path):
    path = str(tmp_path / "scim.sqlite3")
    backend = SqliteBackend(path)
    backend.create_user(dict(USER), Secret("Pa55word!"))
    backend.close()
    dump = "\n".join(sqlite3.connect(path).iterdump())
    assert "Pa55word!" not in dump and "pbkdf2_sha256$" in dump


def test_a_write_based_on_a_stale_read_is_refused(tmp_path):
    backend = SqliteBackend(str(tmp_path / "scim.sqlite3"))
    created = backend.create_user(dict(USER), None)
    changed = backend.update_user(created["id"], created, {**created, "title": "CTO"}, None)
    assert changed["meta"]["version"] != created["meta"]["version"]
    with pytest.raises(VersionConflict):
        backend.update_user(created["id"], created, {**created, "title": "CEO"}, None)
    assert backend.get_user(created["id"])["title"] == "CTO"
    unchanged = backend.update_user(created["id"], changed, dict(changed), None)
    assert unchanged["meta"]["version"] == changed["meta"]["version"]
    backend.close()
