"""Index pages after writes: a kept sorted snapshot, the entries that left taken out of it, and
the entries created or renamed since put in their places.

Why (measured on OpenLDAP 2.5 at 1,000,000 users): after any write, the next index page
sorted every user again, about 1.6 s. slapo-syncprov can say what changed in a search's
result since a contextCSN: a refreshOnly content synchronization (RFC 4533), answered from
its session log (``syncprov-sessionlog``): 0.3 ms when nothing changed, 0.4 to 27 ms for a few
changes at 1,000,000 users (measured, 2.5.13). It names the entries modified or created since
(as they are now) and, by entryUUID only, the entries that left the result (deleted, moved
out, no longer matching).

That is enough for an exact page where each change can be placed:
- a changed entry that the snapshot holds under the same key (a window by value at its key
  gives it back) is in its place, and a window gives it as it is now;
- a changed entry that the snapshot does not hold, created after the snapshot's second, goes
  in at its key's place (the window by value says how many of the snapshot's entries come
  before it);
- an entry that left, or one renamed or moved since, had a place in the snapshot under the
  key it had then. The change log (:mod:`.changelog`, slapo-accesslog) gives the DN it had;
  where that DN is named by the sort key, a window by value at that key finds the place,
  and a place whose entry the server no longer gives is taken out of the list.
Anything else (no log names it, its name is not its key, it matches the filter now, it was
created in the snapshot's own second, which whole-second creation times cannot tell apart)
sorts afresh.

Where the directory cannot tell (no session log, a log that does not reach back, more changes
than the caller allows) the answer is ``None`` and the caller sorts afresh. The page itself is
put together by :mod:`~scim_core.backends.ldap.snapshot_edits`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any, NamedTuple

from scim_core.backends.ldap.encoding import ProtocolError
from scim_core.backends.ldap.snapshot_edits import Edits, page_of, plan_page
from scim_core.backends.ldap.syncrefresh import (
    SYNC_DONE_OID,
    SYNC_INFO_OID,
    SYNC_STATE_OID,
    parse_sync_done,
    parse_sync_info,
    parse_sync_state,
)
from scim_core.backends.ldap.values import all_values, case_ignored, dn_key, first, first_rdn

__all__ = [
    "CREATED",
    "ENTRY_UUID",
    "Changes",
    "Earlier",
    "Lookup",
    "Read",
    "changes_since",
    "joined_page",
]

#: The attribute a changed entry's creation second is read from.
CREATED = "createTimestamp"
#: The attribute a changed entry's id is read from (what the content synchronization names
#: the entries that left by).
ENTRY_UUID = "entryUUID"

Lookup = Callable[[str], "tuple[int, dict[str, Any] | None] | None"]
"""A window by value of one entry on the snapshot: (the snapshot's place of the first entry
whose key is not below the value, that entry as the server gave it or ``None``), or ``None``
when the snapshot is gone."""

Read = Callable[[int, int], "list[dict[str, Any]] | None"]
"""The snapshot's entries at places ``start`` .. ``start + count - 1``, or ``None`` when the
snapshot is gone."""

Earlier = Callable[[], "Mapping[str, str] | None"]
"""For each entry deleted or renamed since the snapshot, by entryUUID (lower-case), the DN it
had when the snapshot was taken (:mod:`.changelog`); ``None`` where no log says."""


class Changes(NamedTuple):
    """What a refreshOnly content synchronization said changed since a snapshot's state.

    :ivar entries: the entries created or modified since, as they are now.
    :ivar left: the entryUUIDs (lower-case text) of the entries that left the result since:
        deleted, moved out of the base, or no longer matching the filter.
    """

    entries: list[dict[str, Any]]
    left: frozenset[str] = frozenset()


def changes_since(
    entries: Sequence[dict[str, Any]],
    result: dict[str, Any],
    answers: Sequence[dict[str, Any]],
    limit: int,
) -> Changes | None:
    """What changed since the state a refreshOnly content synchronization named, from its
    answer (its entries, its result, its intermediate responses), when the search asked at
    most ``limit`` + 1.

    ``None`` when the directory answered from anything but its session log (no log, a log
    that does not reach back: it lists every entry, or says in its Sync Done control that
    the entries it did not name are gone), or more than ``limit`` changed, or the search did
    not succeed.
    """
    if result.get("result") != 0 or len(entries) > limit:
        return None
    left: set[str] = set()
    changed: list[dict[str, Any]] = []
    try:
        done = (result.get("controls") or {}).get(SYNC_DONE_OID)
        if done is None or not parse_sync_done(done["value"]).refresh_deletes:
            return None  # a present phase: every entry not named left, even with none named
        for answer in answers:
            value = answer.get("responseValue")
            if answer.get("responseName") != SYNC_INFO_OID or not value:
                return None
            info = parse_sync_info(value)
            if info.kind == "refreshPresent" or (
                info.kind == "syncIdSet" and not info.refresh_deletes
            ):
                return None  # a present phase: the entries still there, not the changes
            left.update(info.uuids)
        for entry in entries:
            control = (entry.get("controls") or {}).get(SYNC_STATE_OID)
            if control is None:
                return None
            sync_state = parse_sync_state(control["value"])
            if sync_state.state == "present":
                return None
            if sync_state.state == "delete":
                left.add(sync_state.entry_uuid)
            else:
                changed.append(entry)
    except ProtocolError:
        return None
    if len(changed) + len(left) > limit:
        return None
    return Changes(changed, frozenset(u.lower() for u in left))


def joined_page(
    changes: Changes,
    second: str,
    sort_attribute: str,
    size: int,
    lookup: Lookup,
    read: Read,
    start: int,
    count: int,
    earlier: Earlier = lambda: None,
) -> tuple[int, list[dict[str, Any]]] | None:
    """(today's total, today's entries ``start`` .. ``start + count - 1``) from a snapshot of
    ``size`` entries taken in ``second`` (``YYYYmmddHHMMSS``) and the ``changes`` since;
    ``None`` where that cannot be exact (see the module's docstring). ``earlier`` is asked
    at most once, and only when an entry left or moved.
    """
    places = _Places(changes, sort_attribute, size, lookup, earlier)
    joined: list[tuple[int, str, dict[str, Any]]] = []
    in_place: list[dict[str, Any]] = []
    for left in changes.left:
        if not places.vacate(places.named_before(left)):
            return None  # no longer matching (no log names it), or its key is unknown
    for entry in changes.entries:
        values = all_values(entry["attributes"], sort_attribute)
        created = first(entry["attributes"], CREATED)
        if len(values) != 1 or created is None:
            return None  # a list sorts by one value: which of several is the server's choice
        value = str(values[0])
        probe = lookup(value)
        if probe is None:
            return None
        position, head = probe
        if head is not None and dn_key(str(head["dn"])) == dn_key(str(entry["dn"])):
            in_place.append(entry)  # the window gives it as it is now
            continue
        if str(created)[:14] <= second and not places.vacate(
            places.named_before(first(entry["attributes"], ENTRY_UUID))
        ):
            return None  # in the snapshot under another key, or moved in: no log says where
        head_key = first(head["attributes"], sort_attribute) if head is not None else None
        if head_key is not None and case_ignored(str(head_key)) == case_ignored(value):
            return None  # an equal key: which of the two comes first is the server's
        joined.append((position - 1, case_ignored(value), entry))
    if not places.renamed_into_held_names(in_place):
        return None
    joined.sort(key=lambda item: (item[0], item[1]))
    for (rank, key, _), (next_rank, next_key, _) in pairwise(joined):
        if rank == next_rank and (key == next_key or not (key.isascii() and next_key.isascii())):
            # Between the same two of the snapshot: ordered here as the directory's rule
            # orders them (as a list merged from several bases is), trusted for distinct
            # ASCII keys only.
            return None
    gone = tuple(sorted(places.gone))
    edits = Edits(size, gone, tuple(rank for rank, _, _ in joined))
    plan = plan_page(edits, start, count)
    window = read(plan.window_start, plan.window_count) if plan.window_count else []
    end = plan.window_start + plan.window_count
    expected = plan.window_count - (bisect_left(gone, end) - bisect_left(gone, plan.window_start))
    if window is None or len(window) != expected:
        return None  # an entry left or came back since the changes were read
    entries = [entry for _, _, entry in joined]
    return edits.total, page_of(edits, plan, start, count, window, entries)


class _Places:
    """The snapshot's places of the entries that left the list or moved in it since."""

    def __init__(
        self, changes: Changes, sort_attribute: str, size: int, lookup: Lookup, earlier: Earlier
    ) -> None:
        self._sort_attribute = sort_attribute
        self._size = size
        self._lookup = lookup
        self._earlier = earlier
        self._names: Mapping[str, str] | None = None
        self._changed = {dn_key(str(e["dn"])) for e in changes.entries}
        #: The snapshot's places whose entries are gone from them (deleted, renamed, moved).
        self.gone: set[int] = set()

    def named_before(self, entry_uuid: object) -> str | None:
        """The DN the change log names the entry whose entryUUID is ``entry_uuid`` by, as it
        was at the snapshot (``None``: no log, no id, or the log names no delete or rename of
        it since)."""
        if self._names is None:
            self._names = self._earlier() or {}
        return self._names.get(str(entry_uuid).lower())  # no id ("None") names nothing

    def renamed_into_held_names(self, in_place: Sequence[dict[str, Any]]) -> bool:
        """Take out the old places of the entries in place under a name the snapshot held for
        another entry (renamed into it after that one was deleted or renamed away); ``False``
        when one cannot be told.

        Only where the log was read: a name the snapshot held is free for another entry only
        once its holder left the list or was renamed, and either one reads the log."""
        if self._names is None:
            return True
        for entry in in_place:
            before = self.named_before(first(entry["attributes"], ENTRY_UUID))
            if (
                before is not None
                and dn_key(before) != dn_key(str(entry["dn"]))
                and not self.vacate(before)
            ):
                return False
        return True

    def vacate(self, dn: str | None) -> bool:
        """Take the place of the entry the snapshot held at ``dn``, if it held one, out of the
        list; ``False`` when that place cannot be told."""
        if dn is None:
            return False
        named = first_rdn(dn)
        if named is None or named[0].lower() != self._sort_attribute.lower():
            return False  # the key is not in the name: where it was is unknown
        probe = self._lookup(named[1])
        if probe is None:
            return False  # the snapshot is gone
        position, head = probe
        if head is None:
            if position <= self._size:
                self.gone.add(position)  # the place of this entry, or of another one gone
            return True
        if dn_key(str(head["dn"])) == dn_key(dn):
            # The name holds an entry again: the window gives it, so it must be in the list.
            return dn_key(dn) in self._changed
        return True  # that place holds another entry: this one was not in the snapshot
