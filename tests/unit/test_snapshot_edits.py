"""Pages of today's list from a snapshot taken before it changed, against a model that
builds today's list in full."""

from __future__ import annotations

from bisect import bisect_left

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scim_core.backends.ldap.snapshot_edits import Edits, PagePlan, page_of, plan_page


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[int], set[int], list[int], list[bool]]:
    """A snapshot's keys, the places (1-based) of those that left, the keys that joined (some
    of them the key of an entry that left: a rename in place), and for each snapshot entry
    whether the server still gives it (a modified one that left the filter) or leaves it
    out (deleted, moved, renamed)."""
    keys = sorted(draw(st.sets(st.integers(0, 400), max_size=60)))
    gone = draw(st.sets(st.integers(1, len(keys)), max_size=len(keys))) if keys else set()
    left_keys = {keys[place - 1] for place in gone}
    stayed_keys = set(keys) - left_keys
    fresh = draw(st.sets(st.integers(0, 400).filter(lambda k: k not in stayed_keys), max_size=30))
    given_back = draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)))
    return keys, gone, sorted(fresh), given_back


def _page_from_plan(
    keys: list[int], gone: set[int], joined: list[int], given_back: list[bool], plan: PagePlan
) -> list[int]:
    """What the caller does: read the window (the server leaves out some entries that left
    and gives others), drop those that left by key, add the page's joined entries, sort."""
    left_keys = {keys[place - 1] for place in gone}
    window = [
        keys[place - 1]
        for place in range(plan.window_start, plan.window_start + plan.window_count)
        if place not in gone or given_back[place - 1]
    ]
    kept = [key for key in window if key not in left_keys]
    return sorted(kept + [joined[index] for index in plan.joined])


@settings(max_examples=400, deadline=None)
@given(histories(), st.integers(1, 100), st.integers(0, 100))
def test_a_planned_page_is_todays_page(
    history: tuple[list[int], set[int], list[int], list[bool]], start: int, count: int
) -> None:
    keys, gone, joined, given_back = history
    edits = Edits(len(keys), tuple(sorted(gone)), tuple(bisect_left(keys, k) for k in joined))
    today = sorted({k for place, k in enumerate(keys, 1) if place not in gone} | set(joined))
    plan = plan_page(edits, start, count)
    page = _page_from_plan(keys, gone, joined, given_back, plan)
    assert page[:count] == today[start - 1 : start - 1 + count]
    # The same page put together without comparing keys: the window's order and the ranks.
    left_keys = {keys[place - 1] for place in gone}
    window_stayed = [
        keys[place - 1]
        for place in range(plan.window_start, plan.window_start + plan.window_count)
        if keys[place - 1] not in left_keys
    ]
    assert page_of(edits, plan, start, count, window_stayed, joined) == page[:count]
    assert edits.total == len(today)
    # The window reads no more of the snapshot's stayed entries than the page holds.
    assert len(page) == len(today[start - 1 : start - 1 + count])
    window = range(plan.window_start, plan.window_start + plan.window_count)
    assert len([place for place in window if place not in gone]) <= count
    if plan.window_count:
        # It starts and ends on an entry that stayed: no place read for nothing at either end.
        assert 1 <= window[0] <= window[-1] <= len(keys)
        assert window[0] not in gone
        assert window[-1] not in gone


def test_nothing_changed_is_the_snapshots_own_window() -> None:
    assert plan_page(Edits(1000), 101, 100) == PagePlan(101, 100, range(0, 0))
    assert plan_page(Edits(1000), 951, 100) == PagePlan(951, 50, range(0, 0))
    assert plan_page(Edits(1000), 1001, 100) == PagePlan(1001, 0, range(0, 0))
    assert plan_page(Edits(1000), 5, 0) == PagePlan(5, 0, range(0, 0))


def test_an_entry_gone_before_the_page_moves_its_window_on_by_one() -> None:
    assert plan_page(Edits(1000, gone=(5,)), 101, 100) == PagePlan(102, 100, range(0, 0))
    # Gone inside the page: one more place to read, the server leaving it out.
    assert plan_page(Edits(1000, gone=(150,)), 101, 100) == PagePlan(101, 101, range(0, 0))


def test_an_entry_joined_before_the_page_moves_its_window_back_by_one() -> None:
    # Joined with 10 smaller keys in the snapshot: it is today's 11th entry.
    assert plan_page(Edits(1000, joined=(10,)), 101, 100) == PagePlan(100, 100, range(1, 1))
    assert plan_page(Edits(1000, joined=(10,)), 1, 20) == PagePlan(1, 19, range(0, 1))
    # Joined after every snapshot entry: the list's last.
    plan = plan_page(Edits(1000, joined=(1000,)), 1001, 100)
    assert (plan.window_count, plan.joined) == (0, range(0, 1))


@pytest.mark.parametrize(
    ("size", "gone", "joined"),
    [
        (-1, (), ()),
        (10, (0,), ()),
        (10, (11,), ()),
        (10, (3, 3), ()),
        (10, (4, 2), ()),
        (10, (), (-1,)),
        (10, (), (11,)),
        (10, (), (5, 4)),
    ],
)
def test_edits_out_of_the_snapshot_or_out_of_order_are_refused(
    size: int, gone: tuple[int, ...], joined: tuple[int, ...]
) -> None:
    with pytest.raises(ValueError):
        Edits(size, gone, joined)


@pytest.mark.parametrize(("start", "count"), [(0, 10), (1, -1)])
def test_a_page_before_the_first_place_or_of_negative_size_is_refused(
    start: int, count: int
) -> None:
    with pytest.raises(ValueError):
        plan_page(Edits(10), start, count)
