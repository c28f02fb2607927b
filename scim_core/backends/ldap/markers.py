"""A naming context's change marker, and the entries changed after one.

OpenLDAP's slapo-syncprov keeps ``contextCSN`` on the naming context's entry: one value per
server that writes, moved by every write under it. Read before a sorted search and kept with
its snapshot, it tells whether the snapshot still shows the directory as it is, and, if not,
which entries changed since (their ``entryCSN`` is past their server's value). A directory
without it (389-DS, AD) has no marker: each sorted search sorts afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ldap3 import BASE, Connection

from scim_core.backends.ldap import operations
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.operations import Search
from scim_core.backends.ldap.values import all_values, first

__all__ = ["CHANGE_MARK", "ChangeMarkers", "Marker", "MarkerRead", "Since", "delta_limit"]

#: A naming context's contextCSN values, sorted.
Marker = tuple[str, ...]

#: The attribute that says when an entry last changed.
CHANGE_MARK = "entryCSN"
#: Where slapo-accesslog puts the DN of its log on the naming context it logs.
_AUDIT_CONTEXT = "auditContext"


def delta_limit(total: int) -> int:
    """How many changed entries a reused snapshot is merged with before the list is sorted
    afresh: a hundredth of the list, at least 100 and at most 1,000 (reading them costs a
    page's worth of searching; the snapshot's positions drift by at most that many)."""
    return max(100, min(1000, total // 100))


def _csn_parts(csn: str) -> tuple[str, str]:
    """(the CSN, its server id): ``20261128133906.123456Z#000000#000#000000``."""
    fields = csn.split("#")
    return csn, fields[2] if len(fields) > 2 else ""


class Since:
    """The changes after a snapshot's ``contextCSN``: one value per server that wrote."""

    def __init__(self, marker: Marker) -> None:
        self.floor = min(marker)
        self.by_server = dict(_csn_parts(csn)[::-1] for csn in marker)

    def changed(self, entry: dict[str, Any]) -> bool:
        """Whether the entry changed after the snapshot (its CSN is past its server's
        contextCSN value then). An entry without ``entryCSN`` counts as unchanged."""
        csn = first(entry["attributes"], CHANGE_MARK)
        if csn is None:
            return False
        value, server = _csn_parts(str(csn))
        return value >= self.floor and value > self.by_server.get(server, "")

    def search_filter(self, search_filter: str) -> str:
        """``search_filter`` narrowed to the entries changed at or after the earliest value
        (slapd reads them from its ordered ``entryCSN`` index)."""
        return f"(&{search_filter}({CHANGE_MARK}>={filter_value(self.floor)}))"


@dataclass(frozen=True)
class MarkerRead:
    """A naming context's change marker (its contextCSN values; ``None``: it has none), as
    read at one moment."""

    value: Marker | None


class ChangeMarkers:
    """Reads the change marker of the naming context a base is under.

    :param connections: the backend's connection factory.
    """

    def __init__(self, connections: ConnectionFactory) -> None:
        self._connections = connections
        self._naming_contexts: tuple[str, ...] | None = None
        #: Naming contexts seen without a contextCSN (no slapo-syncprov: 389-DS, AD), not
        #: asked again: their lists sort afresh each time.
        self._unmarked: set[str] = set()
        self._change_logs: dict[str, str | None] = {}

    def read(self, base: str) -> Marker | None:
        """The contextCSN values of ``base``'s naming context now (``None``: it has none)."""
        suffix = self._suffix_of(base)
        if suffix is None or suffix in self._unmarked:
            return None
        marker = tuple(sorted(self._values(suffix, "contextCSN"))) or None
        if marker is None:
            self._unmarked.add(suffix)
        return marker

    def change_log(self, base: str) -> str | None:
        """Where slapo-accesslog logs the writes under ``base``'s naming context: the
        ``auditContext`` the overlay puts on the naming context's entry (``None``: no such
        log). Read once per naming context."""
        suffix = self._suffix_of(base)
        if suffix is None:
            return None
        if suffix not in self._change_logs:
            logs = self._values(suffix, _AUDIT_CONTEXT)
            self._change_logs[suffix] = logs[0] if logs else None
        return self._change_logs[suffix]

    def _suffix_of(self, base: str) -> str | None:
        if self._naming_contexts is None:
            self._naming_contexts = self._values("", "namingContexts")
        lowered = base.lower()
        matches = [n for n in self._naming_contexts if lowered.endswith(n.lower())]
        return max(matches, key=len) if matches else None

    def _values(self, dn: str, attribute: str) -> tuple[str, ...]:
        """The values of ``attribute`` on the entry at ``dn`` (``""``: the root DSE), as text."""

        def read(connection: Connection) -> tuple[str, ...]:
            entries, _ = operations.search(
                connection, Search(dn, "(objectClass=*)", BASE, [attribute])
            )
            found = all_values(entries[0]["attributes"], attribute) if entries else []
            return tuple(str(value) for value in found)

        return self._connections.run(read)
