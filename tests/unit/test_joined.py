"""An index page from a kept snapshot and the entries changed, deleted or renamed since,
against a model that sorts today's list in full (the snapshot, the directory's answers and
its change log are in-memory stand-ins: the function is pure given them)."""

from __future__ import annotations

import uuid
from bisect import bisect_left
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scim_core.backends.ldap.joined import Changes, changes_since, joined_page
from scim_core.backends.ldap.syncrefresh import (
    SYNC_DONE_OID,
    SYNC_INFO_OID,
    SYNC_STATE_OID,
    parse_sync_done,
    parse_sync_info,
    parse_sync_state,
)
from scim_core.backends.ldap.values import case_ignored

SECOND = "20261128120000"
BEFORE, AFTER = "20261128115959Z", "20261128120001Z"


def id_of(uid: str) -> str:
    """The entryUUID of the entry first made as ``uid`` (a rename keeps it)."""
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, uid))


def dn_of(uid: str) -> str:
    return f"uid={uid},ou=people,dc=example,dc=org"


def entry(
    uid: str, created: str = BEFORE, made_as: str | None = None, **more: Any
) -> dict[str, Any]:
    return {
        "dn": dn_of(uid),
        "attributes": {
            "uid": [uid],
            "createTimestamp": [created],
            "entryUUID": [id_of(made_as or uid)],
            **more,
        },
    }


def sorted_by(values: list[str]) -> dict[str, Any]:
    """A new entry whose sort attribute holds ``values``."""
    made = entry("u5a", AFTER)
    made["attributes"]["uid"] = values
    return made


class Snapshot:
    """A sorted snapshot as slapo-sssvlv keeps it: windows by value and by place, each entry
    read again by the DN it had (an entry deleted or renamed since is left out)."""

    def __init__(self, uids: list[str]) -> None:
        # caseIgnoreOrderingMatch, as slapd sorts uid for the service
        self.entries = [entry(uid) for uid in sorted(uids, key=case_ignored)]
        self.keys = [case_ignored(uid) for uid in sorted(uids, key=case_ignored)]
        self.lookups: list[str] = []
        self.gone: set[str] = set()  # the DNs no entry has any more

    def there(self, found: dict[str, Any]) -> bool:
        return found["dn"] not in self.gone

    def lookup(self, value: str) -> tuple[int, dict[str, Any] | None]:
        self.lookups.append(value)
        place = bisect_left(self.keys, case_ignored(value)) + 1
        found = self.entries[place - 1] if place <= len(self.entries) else None
        return place, found if found is not None and self.there(found) else None

    def read(self, start: int, count: int) -> list[dict[str, Any]]:
        return [e for e in self.entries[start - 1 : start - 1 + count] if self.there(e)]


class ChangeLog:
    """What slapo-accesslog says: the DN each deleted or renamed entry had, by entryUUID."""

    def __init__(self, names: dict[str, str] | None) -> None:
        self.names = names
        self.asked = 0

    def __call__(self) -> dict[str, str] | None:
        self.asked += 1
        return self.names


def page(
    snapshot: Snapshot,
    changed: list[dict[str, Any]],
    start: int,
    count: int,
    left: frozenset[str] = frozenset(),
    log: ChangeLog | None = None,
) -> Any:
    return joined_page(
        Changes(changed, left),
        SECOND,
        "uid",
        len(snapshot.entries),
        snapshot.lookup,
        snapshot.read,
        start,
        count,
        log or ChangeLog(None),
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


@settings(max_examples=400, deadline=None)
@given(
    st.sets(st.integers(0, 300), min_size=1, max_size=60),
    st.sets(st.integers(0, 300), max_size=10),
    st.sets(st.integers(0, 300), max_size=10),
    st.data(),
)
def test_a_page_is_todays_page_after_deletes_and_renames_the_log_names(
    kept: set[int], created: set[int], ghosts: set[int], data: st.DataObject
) -> None:
    """Users deleted or renamed since the snapshot (their places found from the DNs the log
    gives), created, modified, and created then deleted (a log record of an entry the
    snapshot never held): every page is today's."""
    snapshot = Snapshot([f"u{n:04d}" for n in kept])
    held = uids(snapshot.entries)
    deleted = data.draw(st.lists(st.sampled_from(held), unique=True, max_size=8))
    rest = [uid for uid in held if uid not in deleted]
    renamed = data.draw(st.lists(st.sampled_from(rest), unique=True, max_size=8)) if rest else []
    targets = data.draw(
        st.lists(st.integers(0, 300), min_size=len(renamed), max_size=len(renamed), unique=True)
    )
    new_names = {old: f"u{n:04d}r" for old, n in zip(renamed, targets, strict=True)}
    # Some renamed into the name of a user deleted: the snapshot's place of that name reads
    # the renamed user now.
    reused = (
        data.draw(st.lists(st.sampled_from(deleted), unique=True, max_size=len(renamed)))
        if deleted
        else []
    )
    new_names.update(zip(renamed, reused, strict=False))
    unmoved = [uid for uid in rest if uid not in renamed]
    modified = data.draw(st.lists(st.sampled_from(unmoved), unique=True)) if unmoved else []
    new = [f"u{n:04d}x" for n in created]
    changed = (
        [entry(uid, AFTER) for uid in new]
        + [entry(uid, title=["t"]) for uid in modified]
        + [entry(new_names[old], made_as=old) for old in renamed]
    )
    ghost_names = [f"u{n:04d}g" for n in ghosts]  # created after the snapshot, deleted since
    snapshot.gone = {dn_of(uid) for uid in deleted + renamed} - {dn_of(uid) for uid in reused}
    for place, held in enumerate(uids(snapshot.entries)):
        for old, name in zip(renamed, reused, strict=False):
            if held == name:
                snapshot.entries[place] = entry(name, made_as=old)
    log = ChangeLog({id_of(uid): dn_of(uid) for uid in deleted + renamed + ghost_names})
    left = frozenset(id_of(uid) for uid in deleted + ghost_names)
    today = sorted(unmoved + new + list(new_names.values()), key=case_ignored)
    start = data.draw(st.integers(1, len(today) + 2))
    count = data.draw(st.integers(0, 40))
    total, entries = page(snapshot, changed, start, count, left, log)
    assert total == len(today)
    assert uids(entries) == today[start - 1 : start - 1 + count]
    assert log.asked == (1 if deleted or renamed or ghost_names else 0)


def test_where_the_log_cannot_place_an_entry_that_left_or_moved_is_none() -> None:
    snapshot = Snapshot(["u0", "u5", "u9"])
    snapshot.gone = {dn_of("u5")}
    gone = frozenset({id_of("u5")})
    renamed = [entry("u7", made_as="u5")]
    cases = {
        "no log": (gone, [], ChangeLog(None)),
        "the log does not name it (it left the filter)": (gone, [], ChangeLog({})),
        "named by another attribute than the sort key": (
            gone,
            [],
            ChangeLog({id_of("u5"): "cn=u5,ou=people,dc=example,dc=org"}),
        ),
        "a multi-valued name": (gone, [], ChangeLog({id_of("u5"): "uid=u5+cn=x,ou=people"})),
        "renamed, no log": (frozenset(), renamed, ChangeLog(None)),
    }
    for why, (left, changed, log) in cases.items():
        assert page(snapshot, changed, 1, 10, left, log) is None, why


def test_a_name_that_holds_an_entry_again_must_hold_one_of_the_list() -> None:
    """Deleted, then a new entry under the same DN: the window gives the new one at the old
    place; right only when the new one is in the list (the refresh names it)."""
    snapshot = Snapshot(["u0", "u5", "u9"])
    log = ChangeLog({id_of("u5"): dn_of("u5")})
    left = frozenset({id_of("u5")})
    assert page(snapshot, [], 1, 10, left, log) is None, "not in the list, but in the window"
    again = entry("u5", AFTER) | {"attributes": {"uid": ["u5"], "createTimestamp": [AFTER]}}
    total, entries = page(snapshot, [again], 1, 10, left, log)
    assert total == 3 and uids(entries) == ["u0", "u5", "u9"]


def test_a_user_renamed_into_the_name_of_one_deleted_leaves_its_own_place() -> None:
    """u5 deleted, then u2 renamed to u5: the snapshot's place of u5 now gives u2 (as u5),
    in place by its new key; u2's old place must go, though no entry is out of place."""
    snapshot = Snapshot(["u0", "u2", "u5", "u9"])
    snapshot.gone = {dn_of("u2")}
    log = ChangeLog({id_of("u5"): dn_of("u5"), id_of("u2"): dn_of("u2")})
    renamed = entry("u5", made_as="u2")
    snapshot.entries[2] = renamed  # read again by its DN, the place of u5 gives the new one
    total, entries = page(snapshot, [renamed], 1, 10, frozenset({id_of("u5")}), log)
    assert total == 3 and uids(entries) == ["u0", "u5", "u9"]
    assert entries[1]["attributes"]["entryUUID"] == [id_of("u2")]


def test_a_log_that_cannot_place_a_user_far_from_the_page_is_none() -> None:
    """Where the window read does not cover the place that cannot be told, only the answer
    of the log and of the snapshot can say the page would be wrong."""
    snapshot = Snapshot([f"u{n}" for n in range(10)])
    snapshot.gone = {dn_of("u1")}
    gone = frozenset({id_of("u1")})
    other_key = ChangeLog({id_of("u1"): "cn=u1,ou=people,dc=example,dc=org"})
    assert page(snapshot, [], 6, 3, gone, other_key) is None, "its name is not its key"
    named = ChangeLog({id_of("u1"): dn_of("u1")})
    assert uids(page(snapshot, [], 6, 3, gone, named)[1]) == ["u6", "u7", "u8"]
    lost = joined_page(
        Changes([], gone), SECOND, "uid", 10, lambda v: None, snapshot.read, 6, 3, named
    )
    assert lost is None, "the snapshot went away while the place was looked up"


def test_renamed_into_a_name_from_one_that_is_not_its_key_is_none() -> None:
    snapshot = Snapshot([f"u{n}" for n in range(10)])
    log = ChangeLog({id_of("u5"): dn_of("u5"), id_of("x"): "cn=x,ou=people,dc=example,dc=org"})
    renamed = entry("u5", made_as="x")
    snapshot.entries[5] = renamed
    assert page(snapshot, [renamed], 8, 2, frozenset({id_of("u5")}), log) is None


def test_renamed_away_and_back_is_in_its_place_with_one_lookup() -> None:
    snapshot = Snapshot([f"u{n}" for n in range(10)])
    snapshot.gone = {dn_of("u1")}
    log = ChangeLog({id_of("u1"): dn_of("u1"), id_of("u4"): dn_of("u4")})
    back = entry("u4", title=["renamed to x and back"])
    total, entries = page(snapshot, [back], 1, 4, frozenset({id_of("u1")}), log)
    assert total == 9 and uids(entries) == ["u0", "u2", "u3", "u4"]
    assert sorted(snapshot.lookups) == ["u1", "u4"]  # not its own name a second time


def test_a_page_of_new_users_only_reads_no_window() -> None:
    snapshot = Snapshot(["a", "z"])
    reads: list[tuple[int, int]] = []

    def read(start: int, count: int) -> list[dict[str, Any]]:
        reads.append((start, count))
        return snapshot.read(start, count)

    new = [entry(uid, AFTER) for uid in ("m1", "m2", "m3")]
    found = joined_page(Changes(new), SECOND, "uid", 2, snapshot.lookup, read, 2, 3)
    assert found is not None and uids(found[1]) == ["m1", "m2", "m3"]
    assert reads == []


def test_a_place_found_empty_that_fills_again_before_the_window_is_none() -> None:
    snapshot = Snapshot(["u0", "u5", "u9"])
    snapshot.gone = {dn_of("u5")}
    log = ChangeLog({id_of("u5"): dn_of("u5")})
    left = frozenset({id_of("u5")})
    assert uids(page(snapshot, [], 1, 10, left, log)[1]) == ["u0", "u9"]
    read = snapshot.read
    snapshot.read = lambda start, count: [*read(start, count), entry("u5")]  # type: ignore[method-assign]
    assert page(snapshot, [], 1, 10, left, log) is None


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
        ([entry("u6", AFTER), entry("u6é", AFTER)], "one of them not ASCII"),
        ([entry("u6é", AFTER), entry("u7", AFTER)], "one of them not ASCII, the other way"),
        ([entry("Ma", AFTER), entry("mA", AFTER)], "two keys equal but for case"),
    ],
)
def test_what_cannot_be_placed_is_none(changed: list[dict[str, Any]], why: str) -> None:
    snapshot = Snapshot(["u0", "u5", "u9"])
    assert page(snapshot, changed, 1, 10) is None, why


def test_two_ascii_keys_between_the_same_two_go_in_in_case_ignored_order() -> None:
    snapshot = Snapshot(["a", "z"])
    changed = [entry("Mb", AFTER), entry("ma", AFTER)]
    assert uids(page(snapshot, changed, 1, 10)[1]) == ["a", "ma", "Mb", "z"]


def test_new_entries_go_in_by_the_directorys_order_not_this_ones() -> None:
    """The places come from the directory (here it sorts "b" before "a")."""
    found = {"b": (2, None), "a": (3, None)}
    snapshot = [entry("s1"), entry("s2"), entry("s3")]
    page = joined_page(
        Changes([entry("a", AFTER), entry("b", AFTER)]),
        SECOND,
        "uid",
        3,
        found.get,
        lambda start, count: snapshot[start - 1 : start - 1 + count],
        1,
        10,
    )
    assert page is not None and uids(page[1]) == ["s1", "b", "s2", "a", "s3"]


def test_an_entry_without_the_sort_attribute_where_a_new_one_goes_is_no_equal_key() -> None:
    keyless = {"dn": "uid=k,ou=people", "attributes": {"createTimestamp": [BEFORE]}}
    page = joined_page(
        Changes([entry("m", AFTER)]),
        SECOND,
        "uid",
        2,
        lambda value: (2, keyless),
        lambda s, c: [keyless, entry("z")][s - 1 : s - 1 + c],
        1,
        5,
    )
    assert page is not None and page[0] == 3


def test_a_lost_snapshot_or_a_short_window_is_none() -> None:
    snapshot = Snapshot(["u0", "u5", "u9"])
    lost = joined_page(
        Changes([entry("u5", title=["t"])]), SECOND, "uid", 3, lambda v: None, snapshot.read, 1, 3
    )
    assert lost is None
    short = joined_page(
        Changes([]), SECOND, "uid", 3, snapshot.lookup, lambda s, c: snapshot.read(s, c)[:-1], 1, 3
    )
    assert short is None
    gone = joined_page(Changes([]), SECOND, "uid", 3, snapshot.lookup, lambda s, c: None, 1, 3)
    assert gone is None


# ---------------------------------------------------------------- the directory's answer

UUID = bytes.fromhex("b56598907f961041807b515a13b2c67a")


def state(kind: int) -> dict[str, Any]:
    """An entry of a refresh with its Sync State control (RFC 4533 §2.3), as ldap3 gives it."""
    value = b"\x30\x15\x0a\x01" + bytes([kind]) + b"\x04\x10" + UUID
    return {**entry("u1"), "controls": {SYNC_STATE_OID: {"value": value}}}


def info(value: bytes) -> dict[str, Any]:
    return {"type": "intermediateResponse", "responseName": SYNC_INFO_OID, "responseValue": value}


#: A Sync Done control as slapd 2.5.13 sent it (a cookie, refreshDeletes TRUE: from its log).
DONE_VALUE = b"09\x044rid=000,csn=20261128164423.066135Z#000000#000#000000\x01\x01\xff"
DONE: dict[str, Any] = {"result": 0, "controls": {SYNC_DONE_OID: {"value": DONE_VALUE}}}
PRESENT_DONE: dict[str, Any] = {"result": 0, "controls": {SYNC_DONE_OID: {"value": b"\x30\x00"}}}
GONE = info(b"\xa3\x17\x01\x01\xff\x31\x12\x04\x10" + UUID)  # syncIdSet, refreshDeletes TRUE
PRESENT = info(b"\xa3\x14\x31\x12\x04\x10" + UUID)  # syncIdSet: the entries still there
REFRESH_PRESENT = info(b"\xa2\x00")
REFRESH_DELETE = info(b"\xa1\x00")
NEW_COOKIE = info(b"\x80\x03abc")


@pytest.mark.parametrize("kind", [1, 2])  # add, modify
def test_entries_added_or_modified_are_the_changes(kind: int) -> None:
    answer = [state(kind), state(kind)]
    assert changes_since(answer, DONE, [REFRESH_DELETE, NEW_COOKIE], 2) == Changes(answer)


@pytest.mark.parametrize(
    ("entries", "result", "answers", "why"),
    [
        ([state(1)], DONE, [PRESENT], "a present phase: the log does not reach back"),
        ([state(1)], DONE, [REFRESH_PRESENT], "a present phase"),
        ([state(0)], DONE, [], "an entry present, not changed: a present phase"),
        ([entry("u1")], DONE, [], "an entry without its state"),
        ([state(1)] * 3, DONE, [], "more than the limit"),
        ([state(1)] * 2, DONE, [GONE], "more than the limit, with the one that left"),
        ([state(1)], {"result": 4}, [], "size limit exceeded"),
        ([state(1)], {**DONE, "result": 4}, [], "size limit exceeded, with its Sync Done"),
        ([], {"result": 0}, [], "no Sync Done control: how the refresh came is unknown"),
        ([], PRESENT_DONE, [], "a present phase naming no entry: every entry left"),
        ([], {"result": 0, "controls": {SYNC_DONE_OID: {"value": b"\x30"}}}, [], "bad done"),
        ([state(1)], DONE, [{**NEW_COOKIE, "responseName": "1.2.3"}], "another message"),
        ([], {}, [], "no result"),
        ([state(1)], DONE, [info(b"\xa3\x01")], "a malformed Sync Info"),
        ([state(1)], DONE, [info(b"")], "an empty Sync Info"),
        ([{**entry("u1"), "controls": {SYNC_STATE_OID: {"value": b"\x30"}}}], DONE, [], "bad"),
    ],
)
def test_what_does_not_say_exactly_what_changed_is_none(
    entries: list[dict[str, Any]],
    result: dict[str, Any],
    answers: list[dict[str, Any]],
    why: str,
) -> None:
    assert changes_since(entries, result, answers, 2) is None, why


def test_an_intermediate_response_without_a_value_is_none() -> None:
    assert changes_since([state(1)], DONE, [info(b"") | {"responseValue": None}], 2) is None


def test_the_answers_above_are_what_they_say() -> None:
    gone, present = (parse_sync_info(a["responseValue"]) for a in (GONE, PRESENT))
    assert (gone.kind, gone.refresh_deletes, gone.uuids) == (
        "syncIdSet",
        True,
        (str(uuid.UUID(bytes=UUID)),),
    )
    assert (present.kind, present.refresh_deletes) == ("syncIdSet", False)
    assert parse_sync_info(REFRESH_PRESENT["responseValue"]).kind == "refreshPresent"
    assert parse_sync_info(REFRESH_DELETE["responseValue"]).kind == "refreshDelete"
    assert parse_sync_info(NEW_COOKIE["responseValue"]).kind == "newcookie"
    assert parse_sync_done(DONE_VALUE).refresh_deletes
    assert not parse_sync_done(PRESENT_DONE["controls"][SYNC_DONE_OID]["value"]).refresh_deletes
    assert [
        parse_sync_state(state(k)["controls"][SYNC_STATE_OID]["value"]).state for k in range(4)
    ] == [
        "present",
        "add",
        "modify",
        "delete",
    ]


def test_nothing_changed_is_no_change() -> None:
    assert changes_since([], DONE, [], 2) == Changes([])


def test_entries_that_left_are_named_by_their_id() -> None:
    """From a Sync Info message naming their ids, or an entry whose state is delete."""
    left = frozenset({str(uuid.UUID(bytes=UUID))})
    assert changes_since([state(1)], DONE, [GONE], 2) == Changes([state(1)], left)
    assert changes_since([state(3)], DONE, [], 2) == Changes([], left)
