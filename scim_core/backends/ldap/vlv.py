"""One sorted search: a window of the server-side sorted list (RFC 2891 + VLV), and its total.

A window is asked by offset or by value (the first entry whose sort key is not below a
value), from a snapshot the server keeps when the request echoes its context id, or from a
fresh sort. The answer's VLV control gives the list's size, where the window starts and the
context id to echo next time.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ldap3 import Connection
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

__all__ = ["BUSY", "SortedQuery", "SortedSearch", "SortedWindow"]

#: The result code of a request the server is still working on (a kept snapshot in use).
BUSY = 51
#: Pauses (seconds) before a window of a kept snapshot refused as busy is asked again.
_CONTINUATION_PAUSES = (0.001, 0.005, 0.02)
_VLV_ERROR = 76
_MAX_INT = 2**31 - 1  # VLV offsets are LDAP INTEGERs (0 .. maxInt, RFC 4511 §4.1.1)


class SortedQuery(NamedTuple):
    """What a sorted list is of: a kept snapshot serves only the same four."""

    base: str
    scope: str
    search_filter: str
    sort_attribute: str


@dataclass(frozen=True)
class SortedWindow:
    """Entries ``start`` .. ``start + count - 1`` of the sorted result, and its size.

    From a snapshot reused after changes (``SortedPager.window(..., changes=True)``),
    ``entries`` are the window's entries unchanged since the snapshot, ``changed`` every entry
    that matches the search and changed since (created, modified, renamed; as it is now, in no
    order), and ``total`` the snapshot's size. Otherwise ``changed`` is empty.

    :ivar reaches_end: the window reaches the end of the sorted list.
    :ivar last_seen: the window's last entry as the snapshot gave it, changed or not (``None``
        when it gave none).
    :ivar position: the list position (1-based) the window starts at; ``total + 1`` when a
        target by value is past every entry.
    """

    total: int
    entries: list[dict[str, Any]]
    changed: list[dict[str, Any]] = field(default_factory=list)
    reaches_end: bool = True
    last_seen: dict[str, Any] | None = None
    position: int = 1


@dataclass(frozen=True)
class SortedSearch:
    """Sends sorted searches on one connection role.

    :ivar ordering_rule: the ordering rule named in sort requests (``None``: the attribute's
        own).
    :ivar binary: lower-case attribute names whose values are octets, never decoded as text.
    """

    connections: ConnectionFactory
    role: str
    ordering_rule: str | None
    binary: frozenset[str]

    def window(
        self,
        query: SortedQuery,
        start: int,
        count: int,
        attributes: Sequence[str],
        context: bytes | None,
        value: str | None = None,
    ) -> tuple[SortedWindow, bytes | None]:
        """The window of ``count`` entries at ``start`` (or at ``value``), and the context id
        the server gave for the snapshot it read it from (``None``: it keeps none).

        :raises ldap3.core.exceptions.LDAPOperationResult: a refusal the caller translates.
        """
        after = min(max(count - 1, 0), _MAX_INT)
        controls = [
            sort_control(query.sort_attribute, self.ordering_rule),
            vlv_control(min(start, _MAX_INT), after, context)
            if value is None
            else vlv_value_control(value, after, context),
        ]
        request = Search(
            query.base,
            query.search_filter,
            query.scope,
            list(attributes) if count else ["1.1"],
            controls,
            self.binary,
        )

        def operation(connection: Connection) -> tuple[list[dict[str, Any]], dict[str, Any]]:
            for pause in (*_CONTINUATION_PAUSES, None):
                try:
                    operations.search(connection, request)
                except LDAPOperationResult as error:
                    if error.result == BUSY and context is not None and pause is not None:
                        # slapo-sssvlv answers a window before it marks the request done, so
                        # the next window of the same snapshot, sent at once, can find it
                        # still busy: a moment later it is not (a new connection would
                        # lose every snapshot and sort again).
                        time.sleep(pause)
                        continue
                    # VLV range error: the window starts past the end; the response control
                    # still carries the total.
                    if error.result != _VLV_ERROR:
                        raise
                break
            entries = [r for r in connection.response or () if r.get("type") == "searchResEntry"]
            return entries, dict(connection.result or {})

        entries, result = self.connections.run(operation, role=self.role)
        vlv = parse_vlv_response(result.get("controls"))
        total = vlv.content_count if vlv else len(entries)
        received = vlv.context_id if vlv else None
        first_place = vlv.target_position if vlv else start
        if count == 0 or (value is None and start > total):
            return SortedWindow(total, [], position=first_place), received
        kept = entries[:count]
        reaches_end = first_place + count - 1 >= total
        last = kept[-1] if kept else None
        return SortedWindow(total, kept, [], reaches_end, last, first_place), received
