"""An index page from a sorted snapshot taken before the list changed.

Why (measured on OpenLDAP 2.5): slapo-sssvlv keeps one sorted snapshot per VLV context, the
entries that matched when it was sorted, by the DN and sort key they had then. A window read
later reads each of its entries again by that DN:
- an entry deleted, moved or renamed since is left out without a trace, but still takes its
  place in the window's count;
- a modified entry comes as it is now, even when it no longer matches the filter.

A VLV target by value finds where any key falls in the snapshot: ``targetPosition`` - 1
entries of the snapshot have a smaller key. This holds for the key of an entry removed since,
whose place the snapshot keeps. Sorted on a key that never changes (the entry's id), the list
today is the snapshot without the entries that left it (their places known) and with the
entries that joined it, each at the place of its key. Which ones left and joined comes from
the directory.

This module maps a page of today's list to one window of the snapshot and to the joined
entries that fall in the page. It is pure: no LDAP. The caller reads the window, drops what it
returns of the entries that left (by key), adds the joined entries of the page and sorts the
lot by key.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TypeVar

__all__ = ["Edits", "PagePlan", "page_of", "plan_page"]

Entry = TypeVar("Entry")


@dataclass(frozen=True)
class Edits:
    """How a snapshot's list changed since it was sorted.

    :ivar size: how many entries the snapshot holds.
    :ivar gone: the places (1-based) of the snapshot's entries no longer in the list (deleted,
        moved out, renamed, no longer matching), ascending, each once.
    :ivar joined: for each entry in the list that the snapshot cannot give (created, moved in,
        renamed, matching now), in key order: how many of the snapshot's entries have a
        smaller key.

    :raises ValueError: for places outside the snapshot, or out of order.
    """

    size: int
    gone: tuple[int, ...] = ()
    joined: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.size < 0:
            raise ValueError("a snapshot's size is not negative")
        if any(not 1 <= place <= self.size for place in self.gone) or any(
            later <= earlier for earlier, later in pairwise(self.gone)
        ):
            raise ValueError("gone places must be ascending places of the snapshot")
        if any(not 0 <= rank <= self.size for rank in self.joined) or any(
            later < earlier for earlier, later in pairwise(self.joined)
        ):
            raise ValueError("joined ranks must be in key order, within the snapshot")

    @property
    def total(self) -> int:
        """How many entries the list holds today."""
        return self.size - len(self.gone) + len(self.joined)


@dataclass(frozen=True)
class PagePlan:
    """What to read for a page of today's list.

    :ivar window_start: the snapshot's first place to read (1-based; with nothing to read,
        where the page would start in it, ``size + 1`` past its end).
    :ivar window_count: how many of its places to read from there (0: none); the entries that
        left among them must be dropped by key (the server leaves some out and gives others).
    :ivar joined: the indexes into :attr:`Edits.joined` of the joined entries in the page.
    """

    window_start: int
    window_count: int
    joined: range


def plan_page(edits: Edits, start: int, count: int) -> PagePlan:
    """The window of the snapshot and the joined entries that make up today's entries
    ``start`` .. ``start + count - 1`` (1-based), in key order once merged.

    :raises ValueError: for a ``start`` below 1 or a negative ``count``.
    """
    if start < 1 or count < 0:
        raise ValueError("a page starts at 1 or later and holds no fewer than 0 entries")
    end = start + count  # today's places start .. end - 1
    joined_places = [_joined_place(edits, index) for index in range(len(edits.joined))]
    joined = range(bisect_left(joined_places, start), bisect_left(joined_places, end))
    first = _first_place(edits, lambda place: _place_today(edits, place) >= start)
    last = _first_place(edits, lambda place: _place_today(edits, place) >= end) - 1
    first = _stayed_from(edits, first, +1)
    last = _stayed_from(edits, last, -1)
    if count == 0 or first > last:
        return PagePlan(first, 0, joined)
    return PagePlan(first, last - first + 1, joined)


def page_of(
    edits: Edits,
    plan: PagePlan,
    start: int,
    count: int,
    window: Sequence[Entry],
    joined: Sequence[Entry],
) -> list[Entry]:
    """Today's entries ``start`` .. ``start + count - 1``: the entries the plan's window gave
    that stayed (in the server's order, those that left dropped) with the page's joined
    entries put in their places (``joined``: every joined entry, in key order). No key is
    compared here: the server's order stands as it gave it.
    """
    places = {_joined_place(edits, index) - start: joined[index] for index in plan.joined}
    stayed = iter(window)
    page: list[Entry] = []
    for slot in range(count):
        if slot in places:
            page.append(places[slot])
        else:
            entry = next(stayed, None)
            if entry is None:
                break
            page.append(entry)
    return page


def _place_today(edits: Edits, place: int) -> int:
    """Where the snapshot's entry at ``place`` is in today's list, had it stayed: after the
    snapshot's entries before it that stayed and the joined entries with a smaller key.
    Non-decreasing in ``place``."""
    stayed_before = place - 1 - bisect_left(edits.gone, place)
    return stayed_before + bisect_right(edits.joined, place - 1) + 1


def _joined_place(edits: Edits, index: int) -> int:
    """Where the joined entry ``index`` (in key order) is in today's list: after the
    snapshot's entries with a smaller key that stayed and the joined entries before it."""
    rank = edits.joined[index]
    return rank - bisect_right(edits.gone, rank) + index + 1


def _first_place(edits: Edits, reached: Callable[[int], bool]) -> int:
    """The smallest place 1 .. size for which ``reached`` holds (it holds from some place
    on), ``size + 1`` when it holds nowhere."""
    low, high = 1, edits.size + 1
    while low < high:
        middle = (low + high) // 2
        if reached(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _stayed_from(edits: Edits, place: int, step: int) -> int:
    """``place``, or the nearest place from it in the direction of ``step`` whose entry
    stayed (places 0 and size + 1 stand for before the first and after the last)."""
    while 1 <= place <= edits.size and _is_gone(edits, place):
        place += step
    return place


def _is_gone(edits: Edits, place: int) -> bool:
    index = bisect_left(edits.gone, place)
    return index < len(edits.gone) and edits.gone[index] == place
