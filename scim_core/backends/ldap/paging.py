"""Sorted list windows: server-side sort + VLV, reusing a sorted snapshot, with what changed.

Why this module exists (measured on OpenLDAP 2.5 with 100,000 users): slapo-sssvlv sorts the
whole result set for every VLV request that brings no context id (about 100 ms; about 1.7 s
at 1,000,000 users), but answers in about 10 ms when the request echoes the context id of an
earlier one on the same connection. The snapshot behind a context is frozen: it lists the
entries that matched when it was sorted, by the DN they had then, and the server reads each
window entry again by that DN (a deleted or renamed entry is silently left out, a modified one
comes as it is now; the server even reuses a snapshot for a different filter). So a context is
echoed only for the same base, filter and sort key, and the naming context's ``contextCSN``
(kept by slapo-syncprov, changed by every write) tells whether anything changed since the
snapshot was taken.

When it did, a caller that can merge asks for the changes (``changes=True``): the window is
read from the old snapshot all the same, and what changed since is merged in
(:mod:`.window_changes`). The window is read before the changes, so an entry changed in between
is in both (the caller keeps the newer); never in neither. Callers that cannot merge get a
fresh sort after any change. Where there is no ``contextCSN`` (:mod:`.markers`) every request
sorts afresh: slower, never wrong.

An index page cannot merge by key: it is a window at an offset, and an entry deleted or
renamed since the snapshot moves every later offset without a trace. Where slapo-syncprov
keeps a session log (``joins=True``, from ``SCIM_LDAP_SESSION_LOG``), the directory says what
changed since the snapshot, and when users were only created or modified the snapshot still
serves, with the users created since put in their places (:mod:`.joined`); where
slapo-accesslog logs deletes and renames (``change_log``, from ``SCIM_LDAP_CHANGE_LOG``), after
those too: the log gives the DN, hence the key and the place, each such entry had.

OpenLDAP keeps every VLV session until its connection closes and refuses more than
``sssvlv-maxperconn`` per connection, so sorted searches run on a connection of their own,
renewed before it runs out of sessions.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ldap3 import LEVEL, Connection
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.index_refresh import index_page_since
from scim_core.backends.ldap.markers import CHANGE_MARK, ChangeMarkers, Marker, MarkerRead, Since
from scim_core.backends.ldap.settings import DEFAULT
from scim_core.backends.ldap.vlv import BUSY, SortedQuery, SortedSearch, SortedWindow
from scim_core.backends.ldap.window_changes import with_changes

__all__ = ["SortedPager"]

log = logging.getLogger("scim.ldap")

_ROLE = "sorted"
_REUSE_FROM = 1000  # smaller sets sort in well under a millisecond: not worth a session
_REMEMBERED = 8  # sorted snapshots remembered per thread (one per base/filter/sort key)
_SMALL_REMEMBERED = 64  # searches known to have small results, per thread
#: Reading the changes since a snapshot may cost this share of what sorting it cost, and at
#: least _MERGE_FLOOR seconds, before the list is sorted afresh instead.
_MERGE_SHARE = 0.25
_MERGE_FLOOR = 0.005


Key = tuple[str, str, str, str]


@dataclass(frozen=True)
class _Snapshot:
    """A sorted snapshot the server keeps on the connection for us."""

    context: bytes
    marker: Marker  # the change marker when it was sorted
    total: int
    sort_seconds: float  # what sorting it cost (the search that made it)


@dataclass
class _Sessions:
    """This thread's sorted connection and what the server keeps on it for us."""

    connection: Connection | None = None
    opened: int = 0
    contexts: OrderedDict[Key, _Snapshot] = field(default_factory=OrderedDict)
    small: OrderedDict[Key, None] = field(default_factory=OrderedDict)

    def reset(self, connection: Connection | None) -> None:
        self.connection, self.opened = connection, 0
        self.contexts.clear()


class SortedPager:
    """Runs sorted VLV windows for one backend.

    :param connections: the backend's connection factory.
    :param sessions_per_connection: at most the server's ``sssvlv-maxperconn``.
    :param ordering_rule: the ordering rule named in sort requests (``None``: the
        attribute's own).
    :param binary: lower-case attribute names whose values are octets (AD's objectGUID),
        never decoded as text even when they happen to be valid UTF-8.
    :param role: the connection role its sorted searches run on (a pager of its own, such as
        the cursor walks', keeps its sessions on a connection of its own).
    :param change_log: the suffix of slapo-accesslog's database, where the deletes and renames
        are logged (:mod:`.changelog`): index pages after them keep their snapshot too;
        ``DEFAULT``: the log the naming context names (``auditContext``), if any.
    """

    def __init__(
        self,
        connections: ConnectionFactory,
        sessions_per_connection: int,
        ordering_rule: str | None = None,
        binary: frozenset[str] = frozenset(),
        role: str = _ROLE,
        change_log: str | None = None,
    ) -> None:
        self._role = role
        self._change_log = change_log
        self._connections = connections
        self._binary = binary
        self._sorted = SortedSearch(connections, role, ordering_rule, binary)
        self._limit = max(1, sessions_per_connection)
        self._local = threading.local()
        self._markers = ChangeMarkers(connections)

    def _state(self) -> _Sessions:
        state: _Sessions | None = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = _Sessions()
        return state

    def read_marker(self, base: str) -> MarkerRead:
        """The change marker of ``base``'s naming context now, for several windows of one
        answer to share (each would read it again otherwise)."""
        return MarkerRead(self._marker(base))

    def _marker(self, base: str) -> Marker | None:
        return self._markers.read(base)

    # ----------------------------------------------------------------- windows

    def window(
        self,
        base: str,
        search_filter: str,
        sort_attribute: str,
        start: int,
        count: int,
        attributes: Sequence[str],
        scope: str = LEVEL,
        value: str | None = None,
        changes: bool = False,
        marker_read: MarkerRead | None = None,
        joins: bool = False,
    ) -> SortedWindow:
        """The sorted window, its total from the VLV response, in one sorted search.

        :param scope: ``LEVEL`` (entries right under ``base``) or ``SUBTREE``.
        :param value: start the window at the first entry whose sort key is not below this
            value (the VLV target by value) instead of at ``start``.
        :param changes: the caller merges changed entries (:class:`SortedWindow`): a snapshot
            is reused after writes, with one more search for what changed since.
        :param marker_read: the change marker as read for this answer (:meth:`read_marker`);
            ``None``: read it here.
        :param joins: a window at an offset (``start``) may come from a snapshot taken before
            entries were created or modified, with the entries created since put in their
            places (:meth:`_joined_window`); anything else since sorts afresh.

        :raises ldap3.core.exceptions.LDAPOperationResult: a refusal the caller translates.
        """
        query = SortedQuery(base, scope, search_filter, sort_attribute)
        key: Key = (base.lower(), scope, search_filter, sort_attribute)
        state = self._state()
        # The change marker is read before the search unless the result is known to be small:
        # the first search's snapshot can then serve the next (no second sort on a new worker
        # or for a walk's second page), and a small result pays the read only once.
        if marker_read is not None:
            marker = marker_read.value
        else:
            marker = None if key in state.small else self._marker(base)
        if joins and marker is not None and value is None:
            joined = self._joined_window(state, key, marker, query, start, count, attributes)
            if joined is not None:
                return joined
        fresh = False  # set when the changes since the snapshot are too many to merge
        busy = False
        # Each pass either returns, raises, or renews the connection / gives up the snapshot
        # once: a renewal, a busy retry and a fresh sort, each at most once.
        for _ in range(4):
            connection = self._connections.current(self._role)
            if state.connection is not connection:
                state.reset(connection)
            cached = state.contexts.get(key)
            context: bytes | None = None
            taken: Marker | None = marker  # the marker the snapshot served will be kept with
            since: Since | None = None
            if cached and marker is not None and not fresh:
                if cached.marker == marker:
                    context = cached.context
                elif changes:
                    context, taken, since = cached.context, cached.marker, Since(cached.marker)
            if context is None and state.opened >= self._limit:
                self._connections.discard(self._role)
                continue
            wanted = list(attributes)
            if since is not None:
                wanted += [sort_attribute, CHANGE_MARK]
            if count == 0 and cached is not None and context is not None:
                # Only the total: the snapshot's is known, and what changed since is one
                # search of its own (none when nothing changed).
                window = SortedWindow(cached.total, [])
            else:
                began = time.perf_counter()
                try:
                    window, received = self._sorted.window(
                        query, start, count, wanted, context, value
                    )
                except LDAPOperationResult as error:
                    if error.result != BUSY or busy:
                        raise
                    busy = True
                    log.warning("sorted search refused as busy; renewing its connection")
                    self._connections.discard(self._role)
                    continue
                sort_seconds = (
                    time.perf_counter() - began
                    if cached is None or context is None
                    else cached.sort_seconds
                )
                self._remember(state, key, taken, window.total, context, received, sort_seconds)
            if since is not None and cached is not None:
                began = time.perf_counter()
                merged = with_changes(
                    self._connections, query, wanted, since, window, value is not None, self._binary
                )
                if merged is None:
                    fresh = True
                    continue
                if time.perf_counter() - began > max(
                    _MERGE_FLOOR, cached.sort_seconds * _MERGE_SHARE
                ):
                    # Reading the changes cost more than a good share of a sort (they are
                    # found by the second they were made in, and that second holds many
                    # entries, as after a bulk load): the next window sorts afresh.
                    state.contexts.pop(key, None)
                window = merged
            return window
        raise AssertionError("unreachable: every pass but the last returns or raises")

    def _joined_window(
        self,
        state: _Sessions,
        key: Key,
        marker: Marker,
        query: SortedQuery,
        start: int,
        count: int,
        attributes: Sequence[str],
    ) -> SortedWindow | None:
        """The window from the snapshot taken before the writes since, with what changed
        since accounted for (:mod:`.index_refresh`); ``None`` when that cannot be exact or
        there is no such snapshot on this connection. The snapshot is kept for the next window
        unless this cost more than a share of its sort."""
        cached = state.contexts.get(key)
        if (
            cached is None
            or state.connection is not self._connections.current(self._role)
            or cached.marker == marker
            or len(cached.marker) != 1  # one server's changes: a second's order is its own
            or len(marker) != 1
        ):
            return None
        began = time.perf_counter()
        context = cached.context

        def window(
            place: int, places: int, wanted: Sequence[str], value: str | None
        ) -> tuple[int, list[dict[str, Any]]] | None:
            found, received = self._sorted.window(query, place, places, wanted, context, value)
            return (found.position, found.entries) if received == context else None

        def change_log() -> str | None:
            if self._change_log == DEFAULT:
                return self._markers.change_log(query.base)
            return self._change_log

        page = index_page_since(
            self._connections,
            window,
            query,
            (cached.marker, cached.total),
            change_log,
            self._binary,
            (start, count, attributes),
        )
        if page is None or time.perf_counter() - began > max(
            _MERGE_FLOOR, cached.sort_seconds * _MERGE_SHARE
        ):
            state.contexts.pop(key, None)
        if page is None:
            return None
        total, entries = page
        return SortedWindow(total, entries, position=start)

    def _remember(
        self,
        state: _Sessions,
        key: Key,
        marker: Marker | None,
        total: int,
        sent: bytes | None,
        received: bytes | None,
        sort_seconds: float,
    ) -> None:
        if sent is None and total > 0:
            state.opened += 1  # an empty result frees its session at once
        if total < _REUSE_FROM:
            state.small[key] = None
            state.small.move_to_end(key)
            while len(state.small) > _SMALL_REMEMBERED:
                state.small.popitem(last=False)
            return
        state.small.pop(key, None)
        if marker is not None and received is not None:
            state.contexts[key] = _Snapshot(received, marker, total, sort_seconds)
            state.contexts.move_to_end(key)
            while len(state.contexts) > _REMEMBERED:
                state.contexts.popitem(last=False)
