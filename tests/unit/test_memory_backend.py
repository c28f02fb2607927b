"""The in-process reference backend through its own methods (the backend interface): what it
stores, returns, refuses and stamps."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from scim_core.backend import Query
from scim_core.backends.memory import MemoryBackend, create_backend
from scim_core.errors import InvalidValue, Uniqueness, VersionConflict
from scim_core.filter import parse_filter
from scim_core.secret import Secret
from scim_core.urns import ENTERPRISE_URN

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def user(name: str, **extra: Any) -> dict[str, Any]:
    return {"userName": name, "name": {"givenName": name.title()}, **extra}


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()


def test_create_backend_takes_no_settings():
    made = create_backend({"ignored": "yes"})
    assert isinstance(made, MemoryBackend) and made.find_users(Query()).total_results == 0
    assert isinstance(create_backend(), MemoryBackend)
    made.check_ready()
    made.close()


def test_a_new_user_gets_an_id_active_and_stamps(backend):
    before = datetime.now(UTC).replace(microsecond=0)
    created = backend.create_user(user("ann"), Secret("pw-ann"))
    meta = created["meta"]
    assert TIMESTAMP.fullmatch(meta["created"]) and meta["lastModified"] == meta["created"]
    stamped = datetime.strptime(meta["created"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= stamped <= datetime.now(UTC)
    assert meta["version"] == 'W/"1"'
    assert created["active"] is True and len(created["id"]) == 36
    assert backend.get_user(created["id"]) == created
    disabled = backend.create_user(user("bea", active=False), None)
    assert disabled["active"] is False and disabled["meta"]["version"] == 'W/"2"'
    assert created["id"] != disabled["id"]


def test_what_the_backend_returns_is_a_copy(backend):
    created = backend.create_user(user("copy"), None)
    created["name"]["givenName"] = "changed"
    fetched = backend.get_user(created["id"])
    assert fetched is not None and fetched["name"]["givenName"] == "Copy"
    fetched["name"]["givenName"] = "changed"
    (listed,) = backend.find_users(Query()).resources
    assert listed["name"]["givenName"] == "Copy"
    listed["name"]["givenName"] = "changed"
    (walked,) = backend.find_users(Query(keyset=True)).resources
    assert walked["name"]["givenName"] == "Copy"
    walked["name"]["givenName"] = "changed"
    assert backend.get_user(created["id"])["name"]["givenName"] == "Copy"  # type: ignore[index]
    desired = user("copy", title="T")
    updated = backend.update_user(created["id"], fetched, desired, None)
    updated["name"]["givenName"] = "changed"
    updated["meta"]["version"] = "changed"
    desired["name"]["givenName"] = "changed"
    again = backend.get_user(created["id"])
    assert again is not None and again["name"]["givenName"] == "Copy"
    assert again["meta"]["version"] == 'W/"2"' and again["title"] == "T"
    sent = user("sent")
    made = backend.create_user(sent, None)
    sent["name"]["givenName"] = "changed"
    assert backend.get_user(made["id"])["name"]["givenName"] == "Sent"  # type: ignore[index]


def test_user_names_are_unique_in_any_case(backend):
    first = backend.create_user(user("Carl"), None)
    other = backend.create_user(user("dora"), None)
    with pytest.raises(Uniqueness):
        backend.create_user(user("CARL"), None)
    with pytest.raises(Uniqueness):
        backend.update_user(other["id"], other, user("carl"), None)
    renamed = backend.update_user(first["id"], first, user("CARL"), None)
    assert renamed["userName"] == "CARL"


def test_an_update_keeps_id_and_created_and_moves_the_version(backend):
    created = backend.create_user(user("eve"), Secret("old-pw"))
    updated = backend.update_user(created["id"], created, user("eve", title="T"), None)
    assert updated["id"] == created["id"] and updated["title"] == "T"
    assert updated["meta"]["created"] == created["meta"]["created"]
    assert TIMESTAMP.fullmatch(updated["meta"]["lastModified"])
    assert updated["meta"]["version"] == 'W/"2"'
    assert backend.check_password(created["id"], "old-pw")
    with pytest.raises(VersionConflict):
        backend.update_user(created["id"], created, user("eve", title="U"), None)
    backend.update_user(created["id"], updated, user("eve"), Secret("new-pw"))
    assert backend.check_password(created["id"], "new-pw")
    assert not backend.check_password(created["id"], "old-pw")


def test_check_password_needs_the_password_and_an_active_user(backend):
    active = backend.create_user(user("fay"), Secret("fay-pw"))
    inactive = backend.create_user(user("gus", active=False), Secret("gus-pw"))
    without = backend.create_user(user("hal"), None)
    assert backend.check_password(active["id"], "fay-pw")
    assert not backend.check_password(active["id"], "FAY-PW")
    assert not backend.check_password(inactive["id"], "gus-pw")
    assert not backend.check_password(without["id"], "")
    assert not backend.check_password("nobody", "fay-pw")
    assert backend.delete_user(active["id"])
    assert not backend.check_password(active["id"], "fay-pw")
    again = backend.create_user(user("fay"), None)
    assert not backend.check_password(again["id"], "fay-pw")


def test_a_manager_must_be_a_known_user(backend):
    boss = backend.create_user(user("boss"), None)
    staff = backend.create_user(
        user("staff", **{ENTERPRISE_URN: {"manager": {"value": boss["id"]}}}), None
    )
    assert staff[ENTERPRISE_URN]["manager"]["value"] == boss["id"]
    with pytest.raises(InvalidValue):
        backend.create_user(
            user("lost", **{ENTERPRISE_URN: {"manager": {"value": "nobody"}}}), None
        )
    with pytest.raises(InvalidValue):
        backend.update_user(
            staff["id"], staff, user("staff", **{ENTERPRISE_URN: {"manager": {"value": "x"}}}), None
        )
    assert backend.create_user(user("free", **{ENTERPRISE_URN: {"manager": {}}}), None)
    assert backend.create_user(user("none", **{ENTERPRISE_URN: {"department": "D"}}), None)


def test_index_pages_are_ordered_by_name_in_any_case(backend):
    for name in ("bob", "Alice", "carol", "dave"):
        backend.create_user(user(name), None)
    page = backend.find_users(Query(start_index=2, count=2))
    assert page.total_results == 4 and page.next_position is None
    assert [u["userName"] for u in page.resources] == ["bob", "carol"]
    assert backend.find_users(Query(count=0)).resources == []
    assert backend.find_users(Query(count=0)).total_results == 4
    found = backend.find_users(Query(filter=parse_filter('userName eq "CAROL"')))
    assert [u["userName"] for u in found.resources] == ["carol"] and found.total_results == 1


def test_keyset_pages_walk_by_id_after_a_position(backend):
    ids = sorted(backend.create_user(user(f"k{i}"), None)["id"] for i in range(3))
    first = backend.find_users(Query(keyset=True, count=2))
    assert [u["id"] for u in first.resources] == ids[:2] and first.next_position == ids[1]
    rest = backend.find_users(Query(keyset=True, count=2, after=first.next_position))
    assert [u["id"] for u in rest.resources] == ids[2:] and rest.next_position is None
    assert rest.total_results == 3
    empty = backend.find_users(Query(keyset=True, count=0))
    assert (empty.resources, empty.next_position, empty.total_results) == ([], None, 3)
    whole = backend.find_users(Query(keyset=True, count=3))
    assert [u["id"] for u in whole.resources] == ids and whole.next_position is None
    filtered = backend.find_users(Query(keyset=True, filter=parse_filter('userName eq "k1"')))
    assert [u["userName"] for u in filtered.resources] == ["k1"] and filtered.total_results == 1


def test_a_deleted_user_leaves_its_groups_and_only_those_move(backend):
    gone = backend.create_user(user("gone"), Secret("pw"))
    kept = backend.create_user(user("kept"), None)
    backend.create_group(
        {"displayName": "with", "members": [{"value": gone["id"]}, {"value": kept["id"]}]}
    )
    backend.create_group({"displayName": "without", "members": [{"value": kept["id"]}]})
    versions = {name: backend.get_group(name)["meta"]["version"] for name in ("with", "without")}  # type: ignore[index]
    assert backend.delete_user(gone["id"]) is True
    assert backend.get_user(gone["id"]) is None
    assert backend.delete_user(gone["id"]) is False
    with_group, without_group = backend.get_group("with"), backend.get_group("without")
    assert with_group is not None and without_group is not None
    assert [m["value"] for m in with_group["members"]] == [kept["id"]]
    assert with_group["meta"]["version"] != versions["with"]
    assert without_group["meta"]["version"] == versions["without"]


def test_groups_read_their_members_with_display_names(backend):
    ann = backend.create_user(user("ann"), None)
    created = backend.create_group(
        {"displayName": "Team", "members": [{"value": ann["id"]}, {"value": ann["id"]}]}
    )
    assert created["id"] == "Team" and created["displayName"] == "Team"
    assert created["members"] == [{"value": ann["id"], "display": "ann", "type": "User"}]
    assert TIMESTAMP.fullmatch(created["meta"]["created"])
    assert backend.get_group("team") == created
    assert "members" not in backend.get_group("TEAM", members=False)  # type: ignore[operator]
    assert backend.get_group("nothing") is None
    listed = backend.find_groups(Query(attributes=frozenset({"displayname"})))
    assert [set(g) for g in listed.resources] == [{"id", "displayName", "meta"}]
    listed = backend.find_groups(Query(attributes=frozenset({"members"})))
    assert listed.resources[0]["members"] == created["members"]
    assert backend.find_groups(Query()).resources[0]["members"] == created["members"]


def test_groups_are_listed_by_name(backend):
    for name in ("beta", "Alpha", "gamma"):
        backend.create_group({"displayName": name})
    page = backend.find_groups(Query(start_index=1, count=2))
    assert [g["displayName"] for g in page.resources] == ["Alpha", "beta"]
    assert page.total_results == 3


def test_a_group_name_is_unique_as_id_and_as_shown_name(backend):
    backend.create_group({"displayName": "one"})
    with pytest.raises(Uniqueness):
        backend.create_group({"displayName": "ONE"})
    assert backend.update_group("one", {"displayName": "Shown"})
    with pytest.raises(Uniqueness):
        backend.create_group({"displayName": "shown"})
    with pytest.raises(InvalidValue):
        backend.create_group({"displayName": "two", "members": [{"value": "nobody"}]})
    assert backend.get_group("two") is None


def test_a_rename_keeps_id_and_members(backend):
    ann = backend.create_user(user("ann"), None)
    created = backend.create_group({"displayName": "old", "members": [{"value": ann["id"]}]})
    backend.create_group({"displayName": "other"})
    assert backend.update_group("OLD", {"displayName": "new"}) is True
    renamed = backend.get_group("old")
    assert renamed is not None
    assert (renamed["id"], renamed["displayName"]) == ("old", "new")
    assert renamed["members"] == created["members"]
    assert renamed["meta"]["version"] != created["meta"]["version"]
    assert renamed["meta"]["created"] == created["meta"]["created"]
    assert backend.update_group("old", {"displayName": "NEW"}) is True  # its own name, in case
    with pytest.raises(Uniqueness):
        backend.update_group("old", {"displayName": "OTHER"})
    version = backend.get_group("old")["meta"]["version"]  # type: ignore[index]
    assert backend.update_group("old", {"externalId": "x"}) is True
    assert backend.get_group("old")["meta"]["version"] == version  # type: ignore[index]
    assert backend.update_group("missing", {"displayName": "x"}) is False


def test_members_change_one_value_at_a_time(backend):
    a, b, c = (backend.create_user(user(n), None)["id"] for n in ("a", "b", "c"))
    backend.create_group({"displayName": "g", "members": [{"value": a}, {"value": b}]})
    version = backend.get_group("g")["meta"]["version"]  # type: ignore[index]
    assert backend.change_members("G", add=[a], remove=["nobody"]) is True
    assert backend.get_group("g")["meta"]["version"] == version  # type: ignore[index]
    assert backend.change_members("g", add=[c, c], remove=[a]) is True
    group = backend.get_group("g")
    assert group is not None and group["meta"]["version"] != version
    assert sorted(m["value"] for m in group["members"]) == sorted([b, c])
    assert len(group["members"]) == 2
    with pytest.raises(InvalidValue):
        backend.change_members("g", add=["nobody"])
    assert backend.change_members("missing", add=[a]) is False
    assert backend.change_members("g") is True
