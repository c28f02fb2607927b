"""Cursor walks over the directory: keyset pages by a key each entry keeps for life.

A cursor page starts after the key of the previous page's last entry, never at an offset: an
entry created or deleted before the cursor's place shifts no later entry into or out of the
walk. The key is the entry's stable id for users (OpenLDAP's ``entryUUID``, 389-DS's
``nsUniqueId``) and its ``cn`` (the group's id) for groups, never the userName: a user
renamed during a walk keeps its place
instead of jumping over the cursor (listed twice) or back behind it (never listed). So every
entry that exists from a walk's first page to its last is listed exactly once; one created or
deleted meanwhile is listed at most once.

How one page is read (measured on OpenLDAP 2.5, see ``bench/results/cursors.md``): one search
with the server-side sort control on the key and the virtual list view control targeted *by
value* (the first entry whose key is not below the previous page's last key, RFC 2891 and
draft-ietf-ldapext-ldapv3-vlv §2, ``greaterThanOrEqual``), asking ``count + 1`` entries after
it. The VLV answer carries the total. A range filter (``entryUUID>=...``) does not help:
slapd 2.5 answers it by testing every entry (no ordered index for these attributes) and
returns entries in its own storage order, which only a sort puts in key order anyway. The
sort is what costs: slapo-sssvlv sorts every match, so a page costs what one sort of the
matches costs, unless the sorted snapshot is reused, which :class:`SortedPager` does, after
writes too: the entries changed since the snapshot are read with one more search and merged
in here by key (``changes=True``), so each page is exactly the entries after the cursor as
they are now. A walk thus costs one sort for its first page and a cheap window for each page
after. On OpenLDAP a user walk goes part by part (:mod:`.parts`): a window's place in a
snapshot costs the server a walk along its sorted tree, so one big snapshot would make a page
in the middle of a million users cost three times one at either end. The RFC 2696
paged-results cookie would cost nothing per page but is bound to the connection that started
the search (slapd keeps the paging state on it), so no other worker or instance could continue
the walk: it is not used.

Directories without sort and VLV have every match read and sorted here (the cost of a page
then grows with the number of matches, as it does for index pages there). Several bases are
walked together: each gives its next window by value, and they are merged here.

Of the backend it uses what an index page uses: its settings, profile, pagers, filter
mappings and scopes, and its helpers that read entries into resources (``_user_attributes``,
``_to_users``, ``_group_attributes``, ``_members_of``, ``_group_named_ids``, ``_to_group``,
``_search_in`` with its places, ``_capabilities``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backend import Page, Query
from scim_core.backends.ldap.filter import list_filter, to_ldap
from scim_core.backends.ldap.markers import MarkerRead
from scim_core.backends.ldap.paging import SortedPager
from scim_core.backends.ldap.parts import (
    CREATED,
    PART_SIZE,
    TO_THE_END,
    TO_THE_END_AND_UNDATED,
    WalkPosition,
    part_filter,
    second_of,
)
from scim_core.backends.ldap.results import scim_error
from scim_core.backends.ldap.values import case_ignored, first
from scim_core.backends.ldap.vlv import SortedWindow

if TYPE_CHECKING:
    from scim_core.backends.ldap.directory import Directory, Place
    from scim_core.backends.ldap.groups import Groups
    from scim_core.backends.ldap.users import Users

__all__ = ["KEYSET_DIALECTS", "PARTED_DIALECTS", "find_groups", "find_users", "keyset_pager"]

#: The directory profiles cursor walks are offered on, with the key users are walked by (the
#: profile's id attribute) and its ordering rule (``None``: the attribute's own). Tested on
#: these only. Active Directory is not among them: its id, objectGUID, is binary, and the
#: order of a sort on it is not one this module can reproduce to merge or check pages; it
#: pages by index alone (its ServiceProviderConfig says ``cursor: false``).
KEYSET_DIALECTS: dict[str, tuple[str, str | None]] = {
    "openldap": ("entryUUID", None),
    "389ds": ("nsUniqueId", None),
}

#: The directory profiles whose user walks go part by part (:mod:`.parts`): their creation
#: time is kept in an ordered index.
PARTED_DIALECTS = frozenset({"openldap"})

_GROUP_KEY = "cn"
_ROLE = "keyset"
_PARTS_ROLE = "parts"
#: Empty parts a page moves past before it answers (empty, with a cursor to go on from).
_PARTS_PER_PAGE = 64


def _own_pager(backend: Directory, slot: str, ordering_rule: str | None, role: str) -> SortedPager:
    """The backend's pager kept in ``slot``, made on first use, on a connection role of its
    own (its sorted snapshots are of another key than the index pages')."""
    pager: SortedPager | None = getattr(backend, slot)
    if pager is None:
        pager = SortedPager(
            backend.connections,
            backend.settings.vlv_per_connection,
            ordering_rule,
            backend.binary,
            role=role,
        )
        setattr(backend, slot, pager)
    return pager


def keyset_pager(backend: Directory) -> SortedPager:
    """The backend's pager for user walks, by the id's own ordering rule."""
    rule = KEYSET_DIALECTS[backend.settings.dialect][1]
    return _own_pager(backend, "keyset_pager", rule, _ROLE)


def _window(pager: SortedPager, *args: Any, **options: Any) -> SortedWindow:
    """:meth:`SortedPager.window`, a refusal translated."""
    try:
        return pager.window(*args, **options)
    except LDAPOperationResult as error:
        raise scim_error(error, "the search") from None


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _page(
    backend: Directory,
    pager: SortedPager,
    place: Place,
    search_filter: str,
    key: str,
    order: Callable[[str], str],
    query: Query,
    attributes: list[str],
    marker_read: MarkerRead | None = None,
) -> tuple[int, list[dict[str, Any]], str | None]:
    """(total, the page's entries, the key to continue after when more may follow).

    Each base's window covers the keys up to its last entry (or every key, when it reaches
    the end of that base's list); the page is the first ``count`` entries after the cursor
    within what every base covered, entries changed since a reused snapshot merged in by key.
    """
    wanted = (
        [*attributes, key] if key.lower() not in {a.lower() for a in attributes} else attributes
    )
    after = query.after
    # One more than the page (to know whether more follow), and one more again for the entry
    # the previous page ended with, which a target by value includes when it still exists.
    size = query.count + 2 if query.count else 0
    total = 0
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    covered: tuple[str, str] | None = None  # (order, text) of the lowest base's last key
    if backend._capabilities().sorted_windows:
        for base in place.bases:
            window = _window(
                pager,
                base,
                search_filter,
                key,
                1,
                size,
                wanted,
                place.scope,
                value=after,
                changes=True,
                marker_read=marker_read,
            )
            total += window.total + len(window.changed)
            # A changed entry is read after the window: where both hold it, its newer self.
            for entry in [*window.entries, *window.changed]:
                text = _text(first(entry["attributes"], key) or "")
                found[order(text)] = (text, entry)
            if not window.reaches_end and window.last_seen is not None:
                text = _text(first(window.last_seen["attributes"], key) or "")
                if covered is None or order(text) < covered[0]:
                    covered = (order(text), text)
    else:
        entries, _ = backend._search_in(place, search_filter, wanted)
        total = len(entries)
        for entry in entries:
            text = _text(first(entry["attributes"], key) or "")
            found[order(text)] = (text, entry)
    low = order(after) if after is not None else None
    keys = sorted(
        k for k in found if (low is None or k > low) and (covered is None or k <= covered[0])
    )
    page = keys[: query.count] if query.count else []
    if not query.count:
        last = None
    elif len(keys) > len(page):
        last = found[page[-1]][0]
    else:
        # Every key this page could see is on it: the walk goes on past what the windows
        # covered, if any base has more.
        last = covered[1] if covered is not None else None
    return total, [found[k][1] for k in page], last


def _parts_pager(backend: Directory) -> SortedPager:
    """The backend's pager for the list by creation time, which places a walk's parts and
    counts its total."""
    return _own_pager(backend, "parts_pager", None, _PARTS_ROLE)


def _by_creation(
    backend: Directory,
    place: Place,
    search_filter: str,
    start: int,
    value: str | None,
    marker_read: MarkerRead,
    count: int = 1,
) -> SortedWindow:
    """A window of the list by creation time (one entry, at ``start`` or at ``value``; or,
    with ``count`` 0, its total alone)."""
    return _window(
        _parts_pager(backend),
        place.bases[0],
        search_filter,
        CREATED,
        start,
        count,
        [CREATED],
        place.scope,
        value=value,
        changes=True,
        marker_read=marker_read,
    )


def _created(window: SortedWindow) -> Any:
    return first(window.last_seen["attributes"], CREATED) if window.last_seen else None


def _part_end(
    backend: Directory, place: Place, search_filter: str, low: str, marker_read: MarkerRead
) -> str:
    """The last second of the part that starts at ``low``: the creation time of the user
    :data:`PART_SIZE` places after the part's first, in the list by creation time; or the
    last part's bound (users without a creation time sort last: the list's last entry tells
    whether there are any)."""
    start = _by_creation(backend, place, search_filter, 1, low or None, marker_read)
    end = start.position + PART_SIZE
    if end <= start.total:
        created = _created(_by_creation(backend, place, search_filter, end, None, marker_read))
        if created is not None:
            return max(second_of(created), low)
    last = _by_creation(backend, place, search_filter, max(start.total, 1), None, marker_read)
    undated = last.last_seen is not None and _created(last) is None
    return TO_THE_END_AND_UNDATED if undated else TO_THE_END


def _total(backend: Directory, place: Place, search_filter: str, marker_read: MarkerRead) -> int:
    window = _by_creation(backend, place, search_filter, 1, None, marker_read, count=0)
    return window.total + len(window.changed)


def _parted_users(backend: Users, query: Query, search_filter: str) -> Page:
    """A cursor page of users on a directory whose walks go part by part (:mod:`.parts`): a
    page holds users of one part, walked by id; when a part ends, the next page starts the
    next part. The total is the whole list's, from the list by creation time."""
    place = backend._user_place
    # One change marker for every window of the page: each would read it again otherwise.
    marker_read = _parts_pager(backend).read_marker(place.bases[0])
    total = _total(backend, place, search_filter, marker_read)
    if not query.count:
        return Page(total)
    key, _ = KEYSET_DIALECTS[backend.settings.dialect]
    attributes = backend._user_attributes(query.attributes)
    position = WalkPosition.read(query.after)
    entries: list[dict[str, Any]] = []
    following: WalkPosition | None = position
    for _ in range(_PARTS_PER_PAGE):
        if position.high is None:
            high = _part_end(backend, place, search_filter, position.low, marker_read)
            position = replace(position, high=high)
        _, entries, last = _page(
            backend,
            keyset_pager(backend),
            place,
            part_filter(search_filter, position),
            key,
            str.lower,
            replace(query, after=position.after or None),
            attributes,
            marker_read,
        )
        if last is not None:
            following = replace(position, after=last)
            break
        following = None if position.last_part else position.next_part()
        if entries or following is None:
            break
        position = following
    return Page(total, backend._to_users(entries), following.text() if following else None)


def find_users(backend: Users, query: Query) -> Page:
    """A cursor page of users, walked by their id (part by part where the directory keeps
    creation times in order and the users live under one base)."""
    condition = to_ldap(query.filter, backend.user_filters) if query.filter else ""
    search_filter = list_filter(backend.profile.user_filter, condition)
    place = backend._user_place
    if backend.settings.dialect in PARTED_DIALECTS and len(place.bases) == 1:
        return _parted_users(backend, query, search_filter)
    key, _ = KEYSET_DIALECTS[backend.settings.dialect]
    total, entries, last = _page(
        backend,
        keyset_pager(backend),
        place,
        search_filter,
        key,
        str.lower,  # the id's ordering rule compares the UUID's octets: its hex, lower case
        query,
        backend._user_attributes(query.attributes),
    )
    return Page(total, backend._to_users(entries), last)


def find_groups(backend: Groups, query: Query) -> Page:
    """A cursor page of groups, walked by their cn (the group's id), in the index pages'
    order and with their pager."""
    condition = to_ldap(query.filter, backend.group_filters) if query.filter else ""
    total, entries, last = _page(
        backend,
        backend.pager,
        backend._group_place,
        list_filter(backend.profile.group_filter, condition),
        _GROUP_KEY,
        case_ignored,
        query,
        backend._group_attributes(),
    )
    with_members = query.attributes is None or "members" in query.attributes
    members = backend._members_of([e["dn"] for e in entries]) if with_members else {}
    ids = backend._group_named_ids(entries)
    groups = [
        backend._to_group(e, members.get(e["dn"].lower()) if with_members else None, ids)
        for e in entries
    ]
    return Page(total, groups, last)
