"""Every LDAP operation the plugin sends, in one place.

Each is reported to the directory observers (:mod:`scim_core.observe`: kind, outcome, time),
and each write goes to the connection's dry-run :class:`~scim_core.backends.ldap.dryrun.Planner`
instead of the directory when the plugin plans rather than writes. Searches and modifies take
the pyasn1-free path of :mod:`~scim_core.backends.ldap.wire` (the dry run's reads too), which
hands them to ldap3's own ``Connection.search``/``modify``, with the same controls, on a
connection opened with ``SCIM_LDAP_FAST_PATH=off``; the rest are ldap3's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ldap3 import BASE, Connection
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap import wire
from scim_core.backends.ldap.dryrun import Planner
from scim_core.observe import directory_operation

__all__ = [
    "Search",
    "add",
    "delete",
    "modify",
    "planner",
    "refresh",
    "rename",
    "search",
    "set_password",
]

Control = wire.Control
Search = wire.Search


def _outcome(error: BaseException) -> str:
    """The result name of a refusal (a bounded set, RFC 4511 §4.1.9), else unavailable."""
    if isinstance(error, LDAPOperationResult):
        return str(error.description or error.result)
    return "unavailable"


def planner(connection: Connection) -> Planner | None:
    """The dry-run planner of ``connection``'s factory, if the plugin plans its writes."""
    plan: Planner | None = getattr(connection, "scim_planner", None)
    return plan


def search(connection: Connection, request: wire.Search) -> wire.Response:
    """:func:`wire.search`, observed. In a dry run an entry this request planned answers as
    planned: a base search for its DN gets it, another search that finds it gets it as
    planned, and an entry it deleted answers nothing."""
    plan = planner(connection)
    keep, attributes = request.keep, request.attributes
    if plan is not None and request.scope == BASE:
        known, entry = plan.planned(request.base)
        if known:
            if entry is None:
                return [], {"result": 0, "description": "success"}
            shown = _shown(entry, attributes)
            found = {"type": "searchResEntry", "dn": request.base, "attributes": shown}
            return [keep(found) if keep else found], {"result": 0}
    with directory_operation("search", _outcome):
        # A plan needs each entry's DN: it keeps what it needs after planning.
        entries, result = wire.search(
            connection, request if plan is None else replace(request, keep=None)
        )
    if plan is not None:
        answered = []
        for found in entries:
            known, entry = plan.planned(found["dn"])
            if not known:
                answered.append(found)
            elif entry is not None:
                answered.append({**found, "attributes": _shown(entry, attributes)})
        entries = [keep(e) for e in answered] if keep else answered
    return entries, result


def refresh(connection: Connection, request: wire.Search) -> tuple[wire.Response, list[Any]]:
    """:func:`wire.refresh_search`, observed: what changed in a search's result since the
    state its content synchronization control names (never planned: it only reads)."""
    with directory_operation("search", _outcome):
        return wire.refresh_search(connection, request)


def _shown(entry: Mapping[str, Any], attributes: Sequence[str]) -> dict[str, Any]:
    """The planned entry's attributes asked for, keyed as the request spelled them (as
    :func:`wire.search` keys an answer)."""
    wanted = {a.lower(): a for a in attributes}
    every = "*" in wanted
    return {wanted.get(k.lower(), k): v for k, v in entry.items() if every or k.lower() in wanted}


def modify(
    connection: Connection,
    dn: str,
    changes: Mapping[str, Sequence[tuple[str, Sequence[Any]]]],
    controls: Sequence[Control] | None = None,
    binary: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One modify (:func:`wire.modify`): the result, its ``controls`` decoded (``binary``:
    the names whose values stay octets in a post-read entry)."""
    plan = planner(connection)
    with directory_operation("modify", _outcome):
        if plan is not None:
            return plan.modify(connection, dn, changes, controls)
        return wire.modify(connection, dn, changes, controls, binary)


def add(
    connection: Connection,
    dn: str,
    attributes: Mapping[str, Any],
    controls: Sequence[Control] | None = None,
    binary: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One add (:func:`wire.add`): the result, its ``controls`` decoded (a post-read entry;
    ``binary``: the names whose values stay octets there)."""
    plan = planner(connection)
    with directory_operation("add", _outcome):
        if plan is not None:
            return plan.add(connection, dn, attributes, controls)
        return wire.add(connection, dn, attributes, controls, binary)


def delete(connection: Connection, dn: str, controls: Sequence[Control] | None = None) -> None:
    """One delete."""
    plan = planner(connection)
    with directory_operation("delete", _outcome):
        if plan is not None:
            plan.delete(connection, dn)
        else:
            connection.delete(dn, controls=list(controls or ()) or None)


def rename(connection: Connection, dn: str, new_rdn: str) -> None:
    """One modrdn to ``new_rdn`` under the same parent, the old RDN value deleted."""
    plan = planner(connection)
    with directory_operation("rename", _outcome):
        if plan is not None:
            plan.rename(connection, dn, new_rdn)
        else:
            connection.modify_dn(dn, new_rdn, delete_old_dn=True)


def set_password(connection: Connection, dn: str, password: str) -> None:
    """The RFC 3062 password modify operation."""
    plan = planner(connection)
    with directory_operation("password", _outcome):
        if plan is not None:
            plan.password(dn)
        else:
            connection.extend.standard.modify_password(user=dn, new_password=password)
