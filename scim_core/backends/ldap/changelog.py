"""The names entries had before they were deleted or renamed, from OpenLDAP's slapo-accesslog.

Why: a kept sorted snapshot (slapo-sssvlv) holds each entry at the place of the key it had
when it was sorted, and the content synchronization names an entry that left the list since
by its entryUUID only: where it was, hence every later offset, is unknown. slapo-accesslog
(the log delta-syncrepl replicates from) writes a record of each delete and rename with the
entry's entryUUID (``reqEntryUUID``), the DN it had (``reqDN``) and the change's CSN
(``entryCSN``, the CSN the change gave the entry). The first record of an entry since a
snapshot's contextCSN names it as the snapshot holds it; where the list is named by its sort
key (``uid=...`` for users sorted by uid), that DN gives the key, and a window by value the
place (:mod:`.joined`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ldap3 import LEVEL
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap import operations
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.operations import Search
from scim_core.backends.ldap.values import first

__all__ = ["RECORD_ATTRIBUTES", "earlier_names", "read_earlier_names", "records_since"]

#: What is read of each record: the entry's id, the DN it had, the change's CSN.
RECORD_ATTRIBUTES = ("reqEntryUUID", "reqDN", "entryCSN")
_DELETES_AND_RENAMES = "(|(objectClass=auditDelete)(objectClass=auditModRDN))"


def records_since(log_base: str, csn: str, limit: int) -> Search:
    """The search for the successful deletes and renames logged under ``log_base`` since the
    change ``csn`` (itself included), at most ``limit`` + 1 of them. slapd answers it from the
    log's ``entryCSN`` index, whose keys are in change order."""
    return Search(
        log_base,
        f"(&{_DELETES_AND_RENAMES}(reqResult=0)(entryCSN>={filter_value(csn)}))",
        LEVEL,
        list(RECORD_ATTRIBUTES),
        size_limit=limit + 1,
    )


def earlier_names(
    records: Sequence[dict[str, Any]], result: Mapping[str, Any], limit: int
) -> dict[str, str] | None:
    """For each entry the ``records`` name, by entryUUID (lower-case), the DN its earliest
    record gives; ``None`` past ``limit`` records, or when the search that found them did not
    succeed (``result``): a search cut short by a size limit might have left out an entry's
    earliest record and given a later name for it."""
    if len(records) > limit or result.get("result") != 0:
        return None
    names: dict[str, tuple[str, str]] = {}
    for record in records:
        attributes = record["attributes"]
        entry_uuid, dn, csn = (first(attributes, name) for name in RECORD_ATTRIBUTES)
        if not entry_uuid or not dn or not csn:
            continue  # not a record of an entry's delete or rename
        key = str(entry_uuid).lower()
        if key not in names or str(csn) < names[key][0]:
            names[key] = (str(csn), str(dn))
    return {key: dn for key, (_, dn) in names.items()}


def read_earlier_names(
    connections: ConnectionFactory, log_base: str, csn: str, limit: int
) -> dict[str, str] | None:
    """:func:`earlier_names` of the records logged under ``log_base`` since ``csn``, read over
    ``connections``; ``None`` past ``limit`` records or where the log cannot be read (no such
    suffix, no access): the caller then sorts afresh."""
    request = records_since(log_base, csn, limit)
    try:
        records, result = connections.run(lambda connection: operations.search(connection, request))
    except LDAPOperationResult:
        return None
    return earlier_names(records, result, limit)
