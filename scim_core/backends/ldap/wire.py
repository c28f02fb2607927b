"""Searches and modifies on the wire: our own BER for request and answer, on ldap3's socket.

Why this module exists: ldap3 builds every search request as a tree of pyasn1 objects (after
parsing the filter string into a tree of its own), encodes it with pyasn1, decodes it back to a
dict for ``connection.request``, and turns every returned attribute into two dicts of values
through ``to_unicode`` and its configuration lookups. Per lookup that was about half the CPU of
the worker; for the 10,000 members of a group, nearly all of a 0.8 s request.

A search request is simple BER (RFC 4511 §4.5.1), so :func:`search` encodes it here from the
filter string (RFC 4515) and the controls' ready-made values, sends it on the ldap3
connection's own socket (TLS included), frames the answers and decodes entries and the result
itself; the few response controls (VLV, post-read) are decoded by ldap3.
Result codes raise ldap3's own :class:`~ldap3.core.exceptions.LDAPOperationResult` exactly as
``raise_exceptions=True`` does, and failures of the connection raise ldap3's communication
errors, so :class:`~scim_core.backends.ldap.connection.ConnectionFactory` reconnects and fails
over as before. Anything this path does not cover (other strategies, SASL, schema checks,
lazy connections, empty-attribute filling, AD's ranged values, a filter it cannot encode) goes
through ``Connection.search`` unchanged. :func:`modify` does the same for a ModifyRequest
(the service's user and membership writes); its answer is one LDAPResult with the controls
(a post-read entry) decoded by ldap3.

Answers are framed here, not by ldap3's ``SyncStrategy.receiving`` (which waits the receive
timeout per read, so a server trickling bytes holds the worker for ever, and keeps whatever a
length field promises): a message is judged on its first bytes (:func:`message_head`: a length
of at most :data:`MAX_MESSAGE_SIZE`, its message id and type), every element's tag and extent
is checked as it is decoded, and the operation as a whole has the connection's receive
timeout. Whatever is malformed raises :class:`ProtocolError` and closes the connection at once;
nothing waits for a timeout on an answer it could never take.

Why the filter stays RFC 4515 text, parsed back here, rather than a tree the translator hands
over: every client value reaches the text only through
:func:`~scim_core.backends.ldap.escape.filter_value`, whose escapes :func:`encode_filter` turns
back into exactly the value's octets (tests/unit/test_ldap_wire.py checks the round trip for
any value), so the text keeps the values as apart as a tree would. The parse costs about 10 us
for an uncached userName lookup, under 1% of that request's CPU (bench/results/fast-path.md).
A tree would save part of that but needs every filter the plugin builds in a new form (the
searches in backend.py; the profile's and the mapping file's filters, which are configuration
text and need this parser anyway; the assertion control), and a renderer besides for plain
ldap3 and logs.

``SCIM_LDAP_FAST_PATH=off`` (:class:`~scim_core.backends.ldap.connection.ConnectionFactory`
marks its connections) sends every search and modify through ldap3 instead.

Entries come back as ``{"type", "dn", "attributes"}`` like ldap3's, with two differences:
``attributes`` is a plain dict keyed by the attribute names as the request spelled them (the
server may answer in another case), and a value that is not UTF-8 stays ``bytes`` (ldap3 would
decode it as latin-1). No ``raw_dn``/``raw_attributes``; search result references are left out.

This relies on ldap3 2.9 internals: ``Connection.connection_lock``, ``.socket``,
``.listening``, ``.receive_timeout``, ``._usage``, ``Server.next_message_id``,
``SyncStrategy.close``, ``BaseStrategy.decode_control_fast`` (see the pin in setup.cfg;
tests/integration/test_wire.py runs the path against slapd).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any

from ldap3 import (
    DEREF_ALWAYS,
    DEREF_NEVER,
    Connection,
)
from ldap3.strategy.sync import SyncStrategy

from scim_core.backends.ldap.decoding import (
    Entry,
    parse_entry,
    parse_final,
)
from scim_core.backends.ldap.encoding import (
    ADD_RESPONSE,
    MODIFY_RESPONSE,
    SCOPES,
    SEARCH_DONE,
    SEARCH_ENTRY,
    Control,
    FilterError,
    NotOurs,
    ProtocolError,
    RangedAnswer,
    encode_add_request,
    encode_modify_request,
    encode_search_request,
)
from scim_core.backends.ldap.exchange import conclude, dropped, exchange

__all__ = [
    "Control",
    "Entry",
    "Keep",
    "Response",
    "Search",
    "add",
    "modify",
    "refresh_search",
    "search",
]


Response = tuple[list[Any], dict[str, Any]]
"""(entries, result): the searchResEntry dicts (or what ``keep`` made of each) and the
searchResDone result dict."""

Keep = Callable[[Entry], Any]
"""What a search keeps of each entry it decodes."""


@dataclass(frozen=True, slots=True)
class Search:
    """One search request (RFC 4511 §4.5.1) and how its answer is read.

    :ivar scope: ldap3's scope name (``BASE``, ``LEVEL``, ``SUBTREE``).
    :ivar controls: request controls as ldap3 takes them, (OID, criticality, value) each;
        the response controls are decoded by ldap3 (``result["controls"]``).
    :ivar binary: lower-case attribute names whose values are octets (AD's objectGUID).
    :ivar size_limit: at most this many entries (RFC 4511 §4.5.1.4; 0: the server's limit);
        more end the search with sizeLimitExceeded, which does not raise.
    :ivar keep: what to keep of each entry, called as each arrives (the entry's dict is
        dropped at once): a big answer is held in the caller's compact form, never whole;
        ``connection.response`` is then left ``None`` (the caller holds what was kept).
    """

    base: str
    search_filter: str
    scope: str
    attributes: Sequence[str]
    controls: Sequence[Control] | None = None
    binary: frozenset[str] = frozenset()
    size_limit: int = 0
    keep: Keep | None = None


# ================================================================ the operation


def _eligible(connection: Connection) -> bool:
    """Whether :func:`search` may bypass ``Connection.search`` on this connection (never when
    its opener set ``scim_fast_path`` false: ``SCIM_LDAP_FAST_PATH=off``)."""
    return (
        getattr(connection, "scim_fast_path", True)
        and type(connection.strategy) is SyncStrategy
        and connection.listening
        and connection.socket is not None
        and not connection.lazy
        and not connection.check_names
        and not connection.sasl_in_progress
        and connection.sasl_mechanism is None
        and not connection.empty_attributes
    )


def _ldap3_search(connection: Connection, request: Search, aliases: str = DEREF_ALWAYS) -> Response:
    controls, binary, keep = request.controls, request.binary, request.keep
    connection.search(
        request.base,
        request.search_filter,
        search_scope=request.scope,
        dereference_aliases=aliases,
        attributes=list(request.attributes),
        controls=list(controls) if controls else None,
        size_limit=request.size_limit,
    )
    entries = [r for r in connection.response or () if r.get("type") == "searchResEntry"]
    for entry in entries if binary else ():
        for name, values in (entry.get("raw_attributes") or {}).items():
            if name.lower() in binary:
                entry["attributes"][name] = list(values)
    if keep is not None:
        # ldap3 has built its whole response already: kept smaller, not read smaller (and
        # not left on the connection until its next operation).
        entries = [keep(e) for e in entries]
        connection.response = None
    return entries, dict(connection.result or {})


def refresh_search(connection: Connection, request: Search) -> tuple[Response, list[Any]]:
    """A content synchronization search (RFC 4533, its control in ``request.controls``): the
    entries (each with its ``controls``), the result, and the intermediate responses that
    came between them. Through ldap3, which reads intermediate responses, with aliases never
    dereferenced (slapd refuses any other setting for this operation).
    """
    entries, result = _ldap3_search(connection, replace(request, keep=None), DEREF_NEVER)
    answers = connection.response or ()
    return (entries, result), [a for a in answers if a.get("type") == "intermediateResponse"]


def search(connection: Connection, request: Search) -> Response:
    """One search: entries and the searchResDone result (with its ``controls``, if any).

    Same contract as ``Connection.search`` with ``raise_exceptions=True`` (an error result
    raises :class:`~ldap3.core.exceptions.LDAPOperationResult`, sizeLimitExceeded and referral
    results do not), and the same ``connection.result`` / ``connection.response`` afterwards,
    set before an error result is raised. Search result references are left out.
    """
    if not _eligible(connection):
        return _ldap3_search(connection, request)
    attributes, binary, keep = request.attributes, request.binary, request.keep
    names = {a.lower(): a for a in attributes}
    entries: list[Any] = []
    add = entries.append if keep is None else lambda entry: entries.append(keep(entry))
    result: dict[str, Any] | None = None
    ranged = False
    with connection.connection_lock:
        message_id = connection.server.next_message_id()
        try:
            payload = encode_search_request(
                message_id,
                request.base,
                SCOPES[request.scope],
                request.search_filter,
                attributes,
                controls=request.controls,
                size_limit=request.size_limit,
            )
        except FilterError:
            payload = b""
        if payload:
            logged = {
                "type": "searchRequest",
                "base": request.base,
                "filter": request.search_filter,
                "attributes": list(attributes),
                "controls": request.controls,
            }
            # Each answer is decoded as it arrives: a malformed one fails the search at once.
            try:
                for tag, data, start, end in exchange(connection, message_id, payload, logged):
                    if tag == SEARCH_ENTRY and not ranged:
                        try:
                            add(parse_entry(data, start, end, names, binary))
                        except RangedAnswer:
                            ranged = True  # the rest is read (the stream stays in step)
                    elif tag == SEARCH_DONE:
                        result = parse_final(data, start, end, tag)
            except ProtocolError as error:
                raise dropped(connection, error) from None
    if result is None or ranged:
        # A filter this encoder cannot read is not ours to judge: ldap3 parses what it can
        # (or raises its own error). Active Directory's part of a long value list (ranged):
        # ldap3 fetches the rest.
        return _ldap3_search(connection, request)
    connection.response = entries if keep is None else None
    conclude(connection, result)
    return entries, result


def modify(
    connection: Connection,
    dn: str,
    changes: Mapping[str, Sequence[tuple[str, Sequence[Any]]]],
    controls: Sequence[Control] | None = None,
    binary: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One modify: the result dict (its ``controls`` decoded, e.g. a post-read entry).

    Same contract as ``Connection.modify`` with ``raise_exceptions=True``; ``changes`` in
    ldap3's list form, ``{attribute: [(operation, [values])]}``.

    :param binary: lower-case names whose values stay octets in a post-read entry.
    """
    return _write(
        connection,
        # Attribute names only: the values are no business of a log.
        {"type": "modifyRequest", "entry": dn, "changes": list(changes)},
        MODIFY_RESPONSE,
        binary,
        lambda message_id: encode_modify_request(message_id, dn, changes, controls=controls),
        lambda: connection.modify(dn, dict(changes), controls=list(controls or ()) or None),
    )


def add(
    connection: Connection,
    dn: str,
    attributes: Mapping[str, Sequence[Any]],
    controls: Sequence[Control] | None = None,
    binary: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """One add: the result dict (its ``controls`` decoded, e.g. a post-read entry).

    Same contract as ``Connection.add`` with ``raise_exceptions=True``; ``attributes`` maps
    each attribute (objectClass included) to its values.

    :param binary: lower-case names whose values stay octets in a post-read entry.
    """
    return _write(
        connection,
        # Attribute names only: the values (a password among them) are no business of a log.
        {"type": "addRequest", "entry": dn, "attributes": list(attributes)},
        ADD_RESPONSE,
        binary,
        lambda message_id: encode_add_request(message_id, dn, attributes, controls=controls),
        lambda: connection.add(
            dn, attributes=dict(attributes), controls=list(controls or ()) or None
        ),
    )


def _write(
    connection: Connection,
    request: dict[str, Any],
    done: int,
    binary: frozenset[str],
    encode: Callable[[int], bytes],
    by_ldap3: Callable[[], object],
) -> dict[str, Any]:
    """Send the request ``encode`` makes for a message id and read its final answer; where
    this path does not apply (nothing sent), ``by_ldap3`` sends it through ldap3."""
    payload = b""
    result: dict[str, Any] | None = None
    if _eligible(connection) and not connection.read_only:
        with connection.connection_lock:
            message_id = connection.server.next_message_id()
            with suppress(NotOurs):
                payload = encode(message_id)
            try:
                for tag, data, start, end in exchange(
                    connection, message_id, payload, request, done
                ):
                    if tag == done:
                        result = parse_final(data, start, end, tag, binary)
            except ProtocolError as error:
                raise dropped(connection, error) from None
    if not payload:
        by_ldap3()
        return dict(connection.result or {})
    if result is None:  # a request went out: never send it again through ldap3
        raise dropped(connection, ProtocolError("the exchange ended without its final answer"))
    connection.response = None
    conclude(connection, result)
    return result
