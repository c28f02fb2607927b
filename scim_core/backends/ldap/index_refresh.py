"""An index page from a kept sorted snapshot after writes, from what the directory says
changed since it was sorted.

The directory is asked with a refreshOnly content synchronization (RFC 4533) that
slapo-syncprov answers from its session log, first with a filter no entry matches: from a log
it answers as deletions, without one it names nothing and says so, where the list's own filter
would have it name every entry of the list (0.9 s at 1,000,000 users). The names deleted and
renamed entries had come from slapo-accesslog's log (:mod:`.changelog`), asked only when an
entry left or moved. :mod:`.joined` puts the page together, or says it cannot be exact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap import operations
from scim_core.backends.ldap.changelog import read_earlier_names
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.joined import CREATED, ENTRY_UUID, changes_since, joined_page
from scim_core.backends.ldap.markers import Marker, delta_limit
from scim_core.backends.ldap.operations import Search
from scim_core.backends.ldap.syncrefresh import cookie_for, sync_request
from scim_core.backends.ldap.vlv import SortedQuery

__all__ = ["NO_ENTRY", "SnapshotWindow", "index_page_since"]

#: A filter no entry matches, answered from the entryUUID index.
NO_ENTRY = "(entryUUID=00000000-0000-0000-0000-000000000000)"

SnapshotWindow = Callable[
    [int, int, Sequence[str], "str | None"], "tuple[int, list[dict[str, Any]]] | None"
]
"""A window of the kept snapshot, ``(start, count, attributes, value)``: (the snapshot's place
of its first entry, its entries), targeted at ``value`` when given; ``None`` when the snapshot
is gone."""


def index_page_since(
    connections: ConnectionFactory,
    window: SnapshotWindow,
    query: SortedQuery,
    snapshot: tuple[Marker, int],
    change_log: Callable[[], str | None],
    binary: frozenset[str],
    page: tuple[int, int, Sequence[str]],
) -> tuple[int, list[dict[str, Any]]] | None:
    """(today's total, today's entries of the ``page``: start, count, attributes) of the list
    ``query`` names, from the kept snapshot read through ``window`` (its change marker and
    size) and what changed since; ``None`` where there is no session log, it does not reach
    back, the directory refuses, or :func:`.joined_page` cannot make the page exact.
    ``change_log``: where slapo-accesslog logs (``None``: no log).
    """
    base, scope, search_filter, sort_attribute = query
    marker, size = snapshot
    start, count, attributes = page
    limit = delta_limit(size)
    cookie = [sync_request(cookie_for(marker))]
    probe = Search(base, NO_ENTRY, scope, ["1.1"], cookie, size_limit=limit + 1)
    request = Search(
        base,
        search_filter,
        scope,
        list(dict.fromkeys([*attributes, sort_attribute, CREATED, ENTRY_UUID])),
        cookie,
        binary,
        size_limit=limit + 1,
    )
    try:
        (entries, result), answers = connections.run(
            lambda connection: operations.refresh(connection, probe)
        )
        if changes_since(entries, result, answers, limit) is None:
            return None  # no log, or one that does not reach back
        (entries, result), answers = connections.run(
            lambda connection: operations.refresh(connection, request)
        )
        changes = changes_since(entries, result, answers, limit)
        if changes is None:
            return None

        def lookup(value: str) -> tuple[int, dict[str, Any] | None] | None:
            found = window(1, 1, [sort_attribute], value)
            if found is None:
                return None
            position, head = found
            return position, head[0] if head else None

        def read(place: int, places: int) -> list[dict[str, Any]] | None:
            found = window(place, places, attributes, None)
            return None if found is None else found[1]

        def earlier() -> dict[str, str] | None:
            log_base = change_log()
            if log_base is None:
                return None
            return read_earlier_names(connections, log_base, marker[0], limit)

        second = marker[0][:14]  # the snapshot's contextCSN, to the second
        return joined_page(
            changes, second, sort_attribute, size, lookup, read, start, count, earlier
        )
    except LDAPOperationResult:
        return None  # no content synchronization here, or refused: sort afresh
