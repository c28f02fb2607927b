"""Sorted list windows: server-side sort + VLV, reusing a sorted snapshot while it is exact.

Why this module exists (measured on OpenLDAP 2.5 with 100,000 users): slapo-sssvlv sorts the
whole result set for every VLV request that brings no context id (about 100 ms), but answers
in about 10 ms when the request echoes the context id of an earlier one on the same
connection. The snapshot behind a context is frozen: it would miss entries added later (and
the server even reuses it for a different filter). So a context is echoed only for the same
base, filter and sort key, and only while the naming context's ``contextCSN`` (kept by
slapo-syncprov, changed by every write) is what it was when the snapshot was taken. Where
there is no ``contextCSN`` every request sorts afresh: slower, never wrong.

OpenLDAP keeps every VLV session until its connection closes and refuses more than
``sssvlv-maxperconn`` per connection, so sorted searches run on a connection of their own,
renewed before it runs out of sessions.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ldap3 import BASE, LEVEL, Connection
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap import operations
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.controls import (
    parse_vlv_response,
    sort_control,
    vlv_control,
    vlv_value_control,
)
from scim_core.backends.ldap.operations import Search

__all__ = ["SortedPager", "SortedWindow"]

log = logging.getLogger("scim.ldap")

_ROLE = "sorted"
_BUSY = 51
_VLV_ERROR = 76
_MAX_INT = 2**31 - 1  # VLV offsets are LDAP INTEGERs (0 .. maxInt, RFC 4511 §4.1.1)
_REUSE_FROM = 1000  # smaller sets sort in well under a millisecond: not worth a session
_REMEMBERED = 8  # sorted snapshots remembered per thread (one per base/filter/sort key)
_SMALL_REMEMBERED = 64  # searches known to have small results, per thread


Key = tuple[str, str, str, str]
Marker = tuple[str, ...]


@dataclass(frozen=True)
class SortedWindow:
    """Entries ``start`` .. ``start + count - 1`` of the sorted result, and its size."""

    total: int
    entries: list[dict[str, Any]]


@dataclass
class _Sessions:
    """This thread's sorted connection and what the server keeps on it for us."""

    connection: Connection | None = None
    opened: int = 0
    contexts: OrderedDict[Key, tuple[bytes, Marker]] = field(default_factory=OrderedDict)
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
    """

    def __init__(
        self,
        connections: ConnectionFactory,
        sessions_per_connection: int,
        ordering_rule: str | None = None,
        binary: frozenset[str] = frozenset(),
        role: str = _ROLE,
    ) -> None:
        self._role = role
        self._connections = connections
        self._ordering_rule = ordering_rule
        self._binary = binary
        self._limit = max(1, sessions_per_connection)
        self._local = threading.local()
        self._naming_contexts: tuple[str, ...] | None = None
        #: Naming contexts seen without a contextCSN (no slapo-syncprov: 389-DS, AD), not
        #: asked again: their lists sort afresh each time.
        self._unmarked: set[str] = set()

    def _state(self) -> _Sessions:
        state: _Sessions | None = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = _Sessions()
        return state

    # ----------------------------------------------------------------- change marker

    def _suffix_of(self, base: str) -> str | None:
        if self._naming_contexts is None:

            def read(connection: Connection) -> tuple[str, ...]:
                entries, _ = operations.search(
                    connection, Search("", "(objectClass=*)", BASE, ["namingContexts"])
                )
                values = entries[0]["attributes"].get("namingContexts") if entries else ()
                return tuple(str(v) for v in values or ())

            self._naming_contexts = self._connections.run(read)
        lowered = base.lower()
        matches = [n for n in self._naming_contexts if lowered.endswith(n.lower())]
        return max(matches, key=len) if matches else None

    def _marker(self, base: str) -> Marker | None:
        """The naming context's contextCSN values: they change with every write under it."""
        suffix = self._suffix_of(base)
        if suffix is None or suffix in self._unmarked:
            return None

        def read(connection: Connection) -> Marker | None:
            entries, _ = operations.search(
                connection, Search(suffix, "(objectClass=*)", BASE, ["contextCSN"])
            )
            values = entries[0]["attributes"].get("contextCSN") if entries else ()
            return tuple(sorted(str(v) for v in values or ())) or None

        marker = self._connections.run(read)
        if marker is None:
            self._unmarked.add(suffix)
        return marker

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
    ) -> SortedWindow:
        """The sorted window, its total from the VLV response, in one sorted search.

        :param scope: ``LEVEL`` (entries right under ``base``) or ``SUBTREE``.
        :param value: start the window at the first entry whose sort key is not below this
            value (the VLV target by value) instead of at ``start``.

        :raises ldap3.core.exceptions.LDAPOperationResult: a refusal the caller translates.
        """
        key: Key = (base.lower(), scope, search_filter, sort_attribute)
        state = self._state()
        # The change marker is read before the search unless the result is known to be small:
        # the first search's snapshot can then serve the next (no second sort on a new worker
        # or for a walk's second page), and a small result pays the read only once.
        marker = None if key in state.small else self._marker(base)
        for attempt in (1, 2):
            connection = self._connections.current(self._role)
            if state.connection is not connection:
                state.reset(connection)
            cached = state.contexts.get(key)
            context = cached[0] if cached and marker is not None and cached[1] == marker else None
            if context is None and state.opened >= self._limit:
                self._connections.discard(self._role)
                continue
            try:
                total, entries, new_context = self._search(
                    base,
                    scope,
                    search_filter,
                    sort_attribute,
                    start,
                    count,
                    attributes,
                    context,
                    value,
                )
            except LDAPOperationResult as error:
                if error.result != _BUSY or attempt == 2:
                    raise
                log.warning("sorted search refused as busy; renewing its connection")
                self._connections.discard(self._role)
                continue
            self._remember(state, key, marker, total, context, new_context)
            return SortedWindow(total, entries)
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _remember(
        self,
        state: _Sessions,
        key: Key,
        marker: Marker | None,
        total: int,
        sent: bytes | None,
        received: bytes | None,
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
            state.contexts[key] = (received, marker)
            state.contexts.move_to_end(key)
            while len(state.contexts) > _REMEMBERED:
                state.contexts.popitem(last=False)

    def _search(
        self,
        base: str,
        scope: str,
        search_filter: str,
        sort_attribute: str,
        start: int,
        count: int,
        attributes: Sequence[str],
        context: bytes | None,
        value: str | None = None,
    ) -> tuple[int, list[dict[str, Any]], bytes | None]:
        after = min(max(count - 1, 0), _MAX_INT)
        controls = [
            sort_control(sort_attribute, self._ordering_rule),
            vlv_control(min(start, _MAX_INT), after, context)
            if value is None
            else vlv_value_control(value, after, context),
        ]

        def operation(connection: Connection) -> tuple[list[dict[str, Any]], dict[str, Any]]:
            try:
                operations.search(
                    connection,
                    Search(
                        base,
                        search_filter,
                        scope,
                        list(attributes) if count else ["1.1"],
                        controls,
                        self._binary,
                    ),
                )
            except LDAPOperationResult as error:
                # VLV range error: the window starts past the end; the response control still
                # carries the total.
                if error.result != _VLV_ERROR:
                    raise
            entries = [r for r in connection.response or () if r.get("type") == "searchResEntry"]
            return entries, dict(connection.result or {})

        entries, result = self._connections.run(operation, role=self._role)
        vlv = parse_vlv_response(result.get("controls"))
        total = vlv.content_count if vlv else len(entries)
        received = vlv.context_id if vlv else None
        if count == 0 or (value is None and start > total):
            return total, [], received
        return total, entries[:count], received
