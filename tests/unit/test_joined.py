"""An index page from a kept snapshot and the entries changed since, against a model that
sorts today's list in full (the snapshot and the directory's answers are in-memory stand-ins:
the function is pure given them)."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scim_core.backends.ldap.joined import joined_page
from scim_core.backends.ldap.values import case_ignored

SECOND = "20261128120000"
BEFORE, AFTER = "20261128115959Z", "20261128120001Z"


def entry(uid: str, created: str = BEFORE, **more: Any) -> dict[str, Any]:
    return {
        "dn": f"uid={uid},ou=people,dc=example,dc=org",
        "attributes": {"uid": [uid], "createTimestamp": [created], **more},
    }


def sorted_by(values: list[str]) -> dict[str, Any]:
    """A new entry whose sort attribute holds ``values``."""
    made = entry("u5a", AFTER)
    made["attributes"]["uid"] = values
    return made


class Snapshot:
    """A sorted snapshot as slapo-sssvlv keeps it: windows by value and by place."""

    def __init__(self, uids: list[str]) -> None:
        # caseIgnoreOrderingMatch, as slapd sorts uid for the service
        self.entries = [entry(uid) for uid in sorted(uids, key=case_ignored)]
        self.keys = [case_ignored(uid) for uid in sorted(uids, key=case_ignored)]
        self.lookups: list[str] = []

    def lookup(self, value: str) -> tuple[int, dict[str, Any] | None]:
        self.lookups.append(value)
        place = bisect_left(self.keys, case_ignored(value)) + 1
        return place, self.entries[place - 1] if place <= len(self.entries) else None

    def read(self, start: int, count: int) -> list[dict[str, Any]]:
        return self.entries[start - 1 : start - 1 + count]


def page(snapshot: Snapshot, changed: list[dict[str, Any]], start: int, count: int) -> Any:
    return joined_page(
        changed, SECOND, "uid", len(snapshot.entries), snapshot.lookup, snapshot.read, start, count
    )


def uids(entries: list[dict[str, Any]]) -> list[str]:
    return [e["attributes"]["uid"][0] for e in entries]


@settings(max_examples=300, deadline=None)
@given(
    st.sets(st.integers(0, 500), min_size=0, max_size=80),
    st.sets(st.integers(0, 500), max_size=20),
    st.data(),
)
def test_a_page_is_todays_page_with_the_users_created_since(
    kept: set[int], created: set[int], data: st.DataObject
) -> None:
    snapshot = Snapshot([f"u{n:04d}" for n in kept])
    new = [f"u{n:04d}x" for n in created]  # never a key the snapshot holds
    modified = (
        data.draw(st.lists(st.sampled_from(uids(snapshot.entries)), unique=True)) if kept else []
    )
    changed = [entry(uid, AFTER) for uid in new] + [entry(uid, title=["t"]) for uid in modified]
    start = data.draw(st.integers(1, len(kept) + len(new) + 2))
    count = data.draw(st.integers(0, 40))
    today = sorted(uids(snapshot.entries) + new)
    total, entries = page(snapshot, changed, start, count)
    assert total == len(today)
    assert uids(entries) == today[start - 1 : start - 1 + count]
    assert len(snapshot.lookups) == len(changed)  # one window by value per changed entry


def test_nothing_changed_is_the_snapshots_window() -> None:
    snapshot = Snapshot([f"u{n}" for n in range(10)])
    assert page(snapshot, [], 3, 4) == (10, snapshot.entries[2:6])
    assert snapshot.lookups == []


@pytest.mark.parametrize(
    ("changed", "why"),
    [
        ([entry("u5a")], "created before the snapshot's second, not in it: renamed or moved in"),
        ([entry("u5a", SECOND + "Z")], "created in the snapshot's own second"),
        ([entry("u5", AFTER, cn=["other"]) | {"dn": "uid=u5,ou=else"}], "another entry's key"),
        ([{"dn": "uid=u5a", "attributes": {"uid": ["u5a"]}}], "no creation time"),
        ([sorted_by(["u5a", "u0"])], "two sort values"),
        ([sorted_by([])], "no sort value"),
        ([entry("é1", AFTER), entry("é2", AFTER)], "non-ASCII keys between the same two"),
    ],
)
def test_what_cannot_be_placed_is_none(changed: list[dict[str, Any]], why: str) -> None:
    snapshot = Snapshot(["u0", "u5", "u9"])
    assert page(snapshot, changed, 1, 10) is None, why


def test_two_ascii_keys_between_the_same_two_go_in_in_case_ignored_order() -> None:
    snapshot = Snapshot(["a", "z"])
    changed = [entry("Mb", AFTER), entry("ma", AFTER)]
    assert uids(page(snapshot, changed, 1, 10)[1]) == ["a", "ma", "Mb", "z"]


def test_a_lost_snapshot_or_a_short_window_is_none() -> None:
    snapshot = Snapshot(["u0", "u5", "u9"])
    lost = joined_page(
        [entry("u5", title=["t"])], SECOND, "uid", 3, lambda v: None, snapshot.read, 1, 3
    )
    assert lost is None
    short = joined_page(
        [], SECOND, "uid", 3, snapshot.lookup, lambda s, c: snapshot.read(s, c)[:-1], 1, 3
    )
    assert short is None
    gone = joined_page([], SECOND, "uid", 3, snapshot.lookup, lambda s, c: None, 1, 3)
    assert gone is None
