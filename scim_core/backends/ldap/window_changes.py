"""A window of a kept snapshot, with the entries changed since it was sorted read again.

A cursor walk merges by key, so a snapshot taken before writes still serves it: the window's
entries changed since (``entryCSN`` past the snapshot's ``contextCSN``) are taken out of it,
and one more search, ``(&(filter)(entryCSN>=...))``, reads every matching entry changed since,
as it is now. That search is answered from the ``entryCSN`` equality index (an ordered index in
OpenLDAP: its keys are the change times), so its cost grows with the changes, not the
directory. Past :func:`~.markers.delta_limit` changes the list is sorted afresh.
"""

from __future__ import annotations

from typing import Any

from ldap3 import Connection

from scim_core.backends.ldap import operations
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.markers import Since, delta_limit
from scim_core.backends.ldap.operations import Search
from scim_core.backends.ldap.vlv import SortedQuery, SortedWindow

__all__ = ["with_changes"]


def with_changes(
    connections: ConnectionFactory,
    query: SortedQuery,
    attributes: list[str],
    since: Since,
    window: SortedWindow,
    by_value: bool,
    binary: frozenset[str] = frozenset(),
) -> SortedWindow | None:
    """The window with the entries changed since its snapshot taken out of it and read again,
    as they are now (:attr:`SortedWindow.changed`); ``None`` when they are too many to merge.

    :param attributes: what to read of them, the sort attribute and ``entryCSN`` among them.
    :param by_value: the window was targeted at a value (its first entry is that target's).
    """
    # A window that is not the list's end must show where it ends, past the entry it was
    # targeted at by value, or a walk would not move on (a window of entries all deleted or
    # renamed since): then the list is sorted again.
    if not window.reaches_end and len(window.entries) < (2 if by_value else 1):
        return None
    limit = delta_limit(window.total)

    def read(connection: Connection) -> list[dict[str, Any]]:
        entries, _ = operations.search(
            connection,
            Search(
                query.base,
                since.search_filter(query.search_filter),
                query.scope,
                attributes,
                binary=binary,
                size_limit=limit + 1,
            ),
        )
        return entries

    changed = [e for e in connections.run(read) if since.changed(e)]
    if len(changed) > limit:
        return None
    return SortedWindow(
        window.total,
        [e for e in window.entries if not since.changed(e)],
        changed,
        window.reaches_end,
        window.last_seen,
        window.position,
    )
