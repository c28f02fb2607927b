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

import contextlib
import functools
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ldap3 import (
    BASE,
    DEREF_ALWAYS,
    LEVEL,
    MODIFY_ADD,
    MODIFY_DELETE,
    MODIFY_INCREMENT,
    MODIFY_REPLACE,
    SUBTREE,
    Connection,
)
from ldap3.core.exceptions import (
    LDAPOperationResult,
    LDAPSessionTerminatedByServerError,
    LDAPSocketReceiveError,
    LDAPSocketSendError,
    communication_exception_factory,
)
from ldap3.core.results import DO_NOT_RAISE_EXCEPTIONS, RESULT_CODES
from ldap3.strategy.base import BaseStrategy
from ldap3.strategy.sync import SyncStrategy
from ldap3.utils.asn1 import decode_message_fast
from ldap3.utils.log import PROTOCOL, log, log_enabled

__all__ = [
    "MAX_MESSAGE_SIZE",
    "MODIFY_OPERATIONS",
    "FilterError",
    "ProtocolError",
    "Response",
    "encode_attribute_list",
    "encode_filter",
    "encode_modify_request",
    "encode_search_request",
    "message_head",
    "modify",
    "parse_entry",
    "parse_final",
    "parse_message",
    "parse_result",
    "search",
]

_log = logging.getLogger("scim.ldap")

Entry = dict[str, Any]
Control = tuple[str, bool, bytes | None]
Response = tuple[list[Entry], dict[str, Any]]
"""(entries, result): the searchResEntry dicts and the searchResDone result dict."""

_SCOPES = {BASE: 0, LEVEL: 1, SUBTREE: 2}
_DEREF_ALWAYS = 3  # what ldap3's Connection.search sends by default; kept for the same answers
_NO_ATTRIBUTES = "1.1"  # RFC 4511 §4.5.1.8: no attributes at all

# BER identifiers (RFC 4511 §5.1: definite lengths, one-byte tags).
_SEQUENCE = 0x30
_OCTET_STRING = 0x04
_INTEGER = 0x02
_ENUMERATED = 0x0A
_BOOLEAN = 0x01
_SEARCH_REQUEST = 0x63  # [APPLICATION 3], constructed
_CONTROLS = 0xA0  # [0] in LDAPMessage
_SEARCH_ENTRY = 0x64  # [APPLICATION 4]
_MODIFY_REQUEST = 0x66  # [APPLICATION 6]
_MODIFY_RESPONSE = 0x67  # [APPLICATION 7]
_SET = 0x31
_SEARCH_DONE = 0x65  # [APPLICATION 5]
_SEARCH_REFERENCE = 0x73  # [APPLICATION 19]
_EXTENDED_RESPONSE = 0x78  # [APPLICATION 24]
_INTERMEDIATE_RESPONSE = 0x79  # [APPLICATION 25]
_RESPONSE_NAME = 0x8A  # [10] in ExtendedResponse
_REFERRAL = 0xA3  # [3] in LDAPResult
_FILTER_AND, _FILTER_OR, _FILTER_NOT = 0xA0, 0xA1, 0xA2
_FILTER_EQUAL, _FILTER_SUBSTRINGS, _FILTER_GE, _FILTER_LE = 0xA3, 0xA4, 0xA5, 0xA6
_FILTER_PRESENT, _FILTER_APPROX, _FILTER_EXTENSIBLE = 0x87, 0xA8, 0xA9
_SUB_INITIAL, _SUB_ANY, _SUB_FINAL = 0x80, 0x81, 0x82
_EXT_RULE, _EXT_TYPE, _EXT_VALUE, _EXT_DN = 0x81, 0x82, 0x83, 0x84
_NOTICE_OF_DISCONNECTION = "1.3.6.1.4.1.1466.20036"  # RFC 4511 §4.4.1
_HEX = frozenset(b"0123456789abcdefABCDEF")
MAX_MESSAGE_SIZE = 64 * 1024 * 1024
"""The largest answer accepted (a 100,000-member group is about 6 MB): a length field
claiming more fails at once instead of holding memory and the worker for the data."""
#: A modification's operation, as ldap3 takes it, -> its number (RFC 4511 §4.6, RFC 4525).
MODIFY_OPERATIONS: dict[object, int] = {MODIFY_ADD: 0, MODIFY_DELETE: 1, MODIFY_REPLACE: 2}
MODIFY_OPERATIONS.update({MODIFY_INCREMENT: 3, 0: 0, 1: 1, 2: 2, 3: 3})  # ldap3 takes both
_TYPE_NAMES = {
    _SEARCH_ENTRY: "searchResEntry",
    _SEARCH_DONE: "searchResDone",
    _MODIFY_RESPONSE: "modifyResponse",
    _SEARCH_REFERENCE: "searchResRef",
    _EXTENDED_RESPONSE: "extendedResp",
    _INTERMEDIATE_RESPONSE: "intermediateResponse",
}


class FilterError(ValueError):
    """A filter string this encoder cannot read (malformed RFC 4515)."""


class ProtocolError(LDAPSocketReceiveError):  # type: ignore[misc]  # ldap3 is untyped
    """An answer that is not well-formed LDAP (RFC 4511 §5.1) or not one to the request made.

    A communication error (ldap3's :class:`~ldap3.core.exceptions.LDAPSocketReceiveError`):
    the stream is in an unknown state, so the connection is closed and the failure counts as
    the directory being unavailable.
    """


class _NotOurs(Exception):
    """A modify in a shape ldap3 accepts but this encoder leaves to it (values not text)."""


class _RangedAnswer(Exception):
    """An entry holds ``attr;range=a-b`` (AD's incremental retrieval of long value lists)."""


# ================================================================ encoding


def _length(size: int) -> bytes:
    if size < 0x80:
        return bytes((size,))
    octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes((0x80 | len(octets),)) + octets


def _tlv(tag: int, content: bytes) -> bytes:
    return bytes((tag,)) + _length(len(content)) + content


def _integer(tag: int, value: int) -> bytes:
    # Two's complement, shortest form; the extra bit keeps a leading 1 from reading negative.
    return _tlv(tag, value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True))


def _value(text: str) -> bytes:
    """An RFC 4515 assertion value as the octets it stands for (``\\XX`` escapes undone)."""
    raw = text.encode("utf-8")
    if b"\\" not in raw:
        return raw
    head, *escaped = raw.split(b"\\")
    parts = [head]
    for part in escaped:
        if len(part) < 2 or not _HEX.issuperset(part[:2]):
            raise FilterError(f"malformed escape in {text!r}")
        parts.append(bytes((int(part[:2], 16),)) + part[2:])
    return b"".join(parts)


def _attribute(text: str, item: str) -> bytes:
    if not text or any(c in text for c in "()*\\= \x00"):
        raise FilterError(f"malformed attribute description in ({item})")
    return text.encode("utf-8")


def _item(item: str) -> bytes:
    """One ``attr<op>value`` item (RFC 4515 ``item``) as its Filter CHOICE."""
    attribute, equals, value = item.partition("=")
    if not equals:
        raise FilterError(f"no '=' in ({item})")
    last = attribute[-1:]
    if last in ("~", ">", "<"):
        tag = {"~": _FILTER_APPROX, ">": _FILTER_GE, "<": _FILTER_LE}[last]
        content = _tlv(_OCTET_STRING, _attribute(attribute[:-1], item))
        return _tlv(tag, content + _tlv(_OCTET_STRING, _value(value)))
    if last == ":":
        return _extensible(attribute[:-1], value, item)
    if value == "*":
        return _tlv(_FILTER_PRESENT, _attribute(attribute, item))
    if "*" in value:
        initial, *middle, final = value.split("*")
        parts = [_tlv(_SUB_INITIAL, _value(initial))] if initial else []
        parts += [_tlv(_SUB_ANY, _value(m)) for m in middle if m]
        if final:
            parts.append(_tlv(_SUB_FINAL, _value(final)))
        if not parts:
            raise FilterError(f"empty substring filter ({item})")
        content = _tlv(_OCTET_STRING, _attribute(attribute, item))
        return _tlv(_FILTER_SUBSTRINGS, content + _tlv(_SEQUENCE, b"".join(parts)))
    content = _tlv(_OCTET_STRING, _attribute(attribute, item))
    return _tlv(_FILTER_EQUAL, content + _tlv(_OCTET_STRING, _value(value)))


def _extensible(left: str, value: str, item: str) -> bytes:
    """``attr[:dn][:rule]:=value`` or ``[:dn]:rule:=value`` (RFC 4515 ``extensible``)."""
    fields = left.split(":")
    attribute, options = fields[0], fields[1:]
    dn = bool(options) and options[0].lower() == "dn"
    if dn:
        options = options[1:]
    if len(options) > 1 or (options and not options[0]) or (not attribute and not options):
        raise FilterError(f"malformed extensible match ({item})")
    content = _tlv(_EXT_RULE, options[0].encode("utf-8")) if options else b""
    if attribute:
        content += _tlv(_EXT_TYPE, _attribute(attribute, item))
    content += _tlv(_EXT_VALUE, _value(value))
    if dn:
        content += _tlv(_EXT_DN, b"\xff")
    return _tlv(_FILTER_EXTENSIBLE, content)


def _filter(text: str, pos: int) -> tuple[bytes, int]:
    """The filter starting at ``text[pos]`` (an opening parenthesis) and the position after it."""
    if text[pos : pos + 1] != "(":
        raise FilterError(f"expected '(' at {pos} in {text!r}")
    kind = text[pos + 1 : pos + 2]
    if kind in ("&", "|", "!"):
        parts: list[bytes] = []
        pos += 2
        while text[pos : pos + 1] == "(":
            part, pos = _filter(text, pos)
            parts.append(part)
        if text[pos : pos + 1] != ")":
            raise FilterError(f"expected ')' at {pos} in {text!r}")
        if kind == "!":
            if len(parts) != 1:
                raise FilterError(f"'!' takes exactly one filter in {text!r}")
            return _tlv(_FILTER_NOT, parts[0]), pos + 1
        # An empty & or | is RFC 4526's absolute true or false.
        return _tlv(_FILTER_AND if kind == "&" else _FILTER_OR, b"".join(parts)), pos + 1
    # Values are escaped (RFC 4515 §3): the first ')' ends the item, and no '(' is in it.
    end = text.find(")", pos + 1)
    if end < 0 or "(" in text[pos + 1 : end]:
        raise FilterError(f"unbalanced parentheses in {text!r}")
    return _item(text[pos + 1 : end]), end + 1


@functools.lru_cache(maxsize=256)
def encode_filter(text: str) -> bytes:
    """The BER of an RFC 4515 filter string, byte for byte what ldap3 sends for it.

    Unlike ldap3 it keeps spaces around assertion values (RFC 4515 has no insignificant
    spaces) and refuses, rather than guesses at, a malformed filter.

    :raises FilterError: for a string that is not one complete filter.
    """
    encoded, end = _filter(text, 0)
    if end != len(text):
        raise FilterError(f"text after the filter in {text!r}")
    return encoded


@functools.lru_cache(maxsize=64)
def encode_attribute_list(attributes: tuple[str, ...]) -> bytes:
    """An AttributeSelection (``SEQUENCE OF`` attribute names); none at all is ``1.1``."""
    names = attributes or (_NO_ATTRIBUTES,)
    return _tlv(_SEQUENCE, b"".join(_tlv(_OCTET_STRING, n.encode("utf-8")) for n in names))


def encode_search_request(
    message_id: int,
    base: str,
    scope: int,
    search_filter: str,
    attributes: Sequence[str],
    *,
    controls: Sequence[Control] | None = None,
    deref: int = _DEREF_ALWAYS,
    size_limit: int = 0,
    time_limit: int = 0,
    types_only: bool = False,
) -> bytes:
    """A complete LDAPMessage holding a SearchRequest (RFC 4511 §4.5.1) and its controls.

    :param scope: 0 base, 1 one level, 2 subtree.
    :param controls: (OID, criticality, BER value or ``None``) each, as ldap3 takes them.
    :raises FilterError: for a filter :func:`encode_filter` cannot read.
    """
    request = b"".join(
        (
            _tlv(_OCTET_STRING, base.encode("utf-8")),
            _integer(_ENUMERATED, scope),
            _integer(_ENUMERATED, deref),
            _integer(_INTEGER, size_limit),
            _integer(_INTEGER, time_limit),
            _tlv(_BOOLEAN, b"\xff" if types_only else b"\x00"),
            encode_filter(search_filter),
            encode_attribute_list(tuple(attributes)),
        )
    )
    return _message(message_id, _tlv(_SEARCH_REQUEST, request), controls)


def _octets(value: object) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    raise _NotOurs(type(value).__name__)


def encode_modify_request(
    message_id: int,
    dn: str,
    changes: Mapping[str, Sequence[tuple[str, Sequence[Any]]]],
    *,
    controls: Sequence[Control] | None = None,
) -> bytes:
    """A complete LDAPMessage holding a ModifyRequest (RFC 4511 §4.6), byte for byte ldap3's.

    :param changes: attribute -> [(MODIFY_ADD/DELETE/REPLACE/INCREMENT, [values])], the ldap3
        form; values are ``str`` (sent as UTF-8) or ``bytes``.
    """
    items = []
    for attribute, operations in changes.items():
        for operation, values in operations:
            if isinstance(values, str | bytes):
                raise _NotOurs("a single value")
            modification = _tlv(_OCTET_STRING, attribute.encode("utf-8")) + _tlv(
                _SET, b"".join(_tlv(_OCTET_STRING, _octets(v)) for v in values)
            )
            items.append(
                _tlv(
                    _SEQUENCE,
                    _integer(_ENUMERATED, MODIFY_OPERATIONS[operation])
                    + _tlv(_SEQUENCE, modification),
                )
            )
    request = _tlv(_OCTET_STRING, dn.encode("utf-8")) + _tlv(_SEQUENCE, b"".join(items))
    return _message(message_id, _tlv(_MODIFY_REQUEST, request), controls)


def _message(message_id: int, operation: bytes, controls: Sequence[Control] | None) -> bytes:
    message = _integer(_INTEGER, message_id) + operation
    if controls:
        message += _tlv(_CONTROLS, b"".join(_control(*control) for control in controls))
    return _tlv(_SEQUENCE, message)


def _control(oid: str, critical: bool, value: bytes | None) -> bytes:
    # criticality is BOOLEAN DEFAULT FALSE: left out when false, as DER and ldap3 do.
    content = _tlv(_OCTET_STRING, oid.encode("ascii"))
    if critical:
        content += _tlv(_BOOLEAN, b"\xff")
    if value is not None:
        content += _tlv(_OCTET_STRING, value)
    return _tlv(_SEQUENCE, content)


# ================================================================ decoding


def _header(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start, end) of the BER element at ``pos``: its identifier and its content.

    :raises ProtocolError: for an indefinite length (RFC 4511 §5.1 forbids it), a length of
        more than four octets, or content running past the end of ``data``.
    """
    size = data[pos + 1]
    if size < 0x80:
        end = pos + 2 + size
        start = pos + 2
    else:
        count = size & 0x7F
        if not 0 < count <= 4:
            raise ProtocolError(f"BER length form 0x{size:02x} at {pos}")
        start = pos + 2 + count
        end = start + int.from_bytes(data[pos + 2 : start], "big")
    if end > len(data):
        raise ProtocolError(f"element at {pos} runs past the end of the message")
    return data[pos], start, end


def _expect(data: bytes, pos: int, tag: int) -> tuple[int, int]:
    """(start, end) of the element at ``pos``, which must have identifier ``tag``."""
    found, start, end = _header(data, pos)
    if found != tag:
        raise ProtocolError(f"tag 0x{found:02x} at {pos} where 0x{tag:02x} belongs")
    return start, end


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # what ldap3 falls back to for DNs and messages


def message_head(data: bytes | bytearray, pos: int = 0) -> tuple[int, int, int] | None:
    """(end, messageID, protocolOp tag) of the LDAPMessage starting at ``data[pos]``, as soon as
    its first bytes tell them (at most 13); ``None`` while they have not all arrived.

    This is what lets the receiver refuse an answer it will not take before its body arrives.

    :raises ProtocolError: for bytes that cannot start an LDAPMessage: another tag, an
        indefinite or over-long length, a length above :data:`MAX_MESSAGE_SIZE`, a message id
        that is no INTEGER of 1..4 octets or is negative.
    """
    head = _head(data, pos)
    return None if head is None else head[:3]


def _head(data: bytes | bytearray, pos: int = 0) -> tuple[int, int, int, int] | None:
    """:func:`message_head` and the position of the protocolOp."""
    available = len(data) - pos
    if available < 2:
        return None
    if data[pos] != _SEQUENCE:
        raise ProtocolError(f"an answer starting with 0x{data[pos]:02x}, not an LDAPMessage")
    size = data[pos + 1]
    if size < 0x80:
        length, head = size, 2
    else:
        count = size & 0x7F
        if not 0 < count <= 4:
            raise ProtocolError(f"an LDAPMessage with length form 0x{size:02x}")
        if available < 2 + count:
            return None
        length, head = int.from_bytes(data[pos + 2 : pos + 2 + count], "big"), 2 + count
    if length + head > MAX_MESSAGE_SIZE:
        raise ProtocolError(f"an LDAPMessage of {length} bytes (limit {MAX_MESSAGE_SIZE})")
    if available < head + 2:
        return None
    id_tag, id_size = data[pos + head], data[pos + head + 1]
    if id_tag != _INTEGER or not 0 < id_size <= 4:
        raise ProtocolError(f"an LDAPMessage without a message id (0x{id_tag:02x} {id_size})")
    op = head + 2 + id_size  # the protocolOp's tag, then at least its length
    if op + 2 > head + length:
        raise ProtocolError("an LDAPMessage too short for its operation")
    if available <= op:
        return None
    message_id = int.from_bytes(data[pos + head + 2 : pos + op], "big", signed=True)
    if message_id < 0:
        raise ProtocolError(f"a negative message id ({message_id})")
    return pos + head + length, message_id, data[pos + op], pos + op


def parse_message(data: bytes) -> tuple[int, int, int, int]:
    """(messageID, protocolOp tag, content start, content end) of one whole LDAPMessage.

    :raises ProtocolError: for anything but one complete LDAPMessage, optionally with
        controls, filling ``data`` exactly.
    """
    head = _head(data)
    if head is None or head[0] != len(data):
        raise ProtocolError("an incomplete LDAPMessage, or more than one")
    start, end = _operation(data, head[3])
    return head[1], head[2], start, end


def _operation(data: bytes, op: int) -> tuple[int, int]:
    """(content start, end) of the protocolOp at ``op`` of a whole LDAPMessage, after which
    only its controls may come (RFC 4511 §4.1.1)."""
    try:
        _, start, end = _header(data, op)
        if end < len(data) and _expect(data, end, _CONTROLS)[1] != len(data):
            raise ProtocolError("an LDAPMessage with more than an operation and controls")
    except IndexError:
        raise ProtocolError("a truncated LDAPMessage") from None
    return start, end


def parse_entry(
    data: bytes, start: int, end: int, names: dict[str, str], binary: frozenset[str] = frozenset()
) -> Entry:
    """A SearchResultEntry's content as ``{"type", "dn", "attributes"}``.

    :param names: lower-case name -> the spelling to key the attribute by (the request's).
    :param binary: lower-case names whose values stay octets even when they look like UTF-8.
    :raises _RangedAnswer: for an AD ranged attribute (the caller lets ldap3 handle those).
    :raises ProtocolError: for content that is no SearchResultEntry (RFC 4511 §4.5.2).
    """
    try:
        return _entry(data, start, end, names, binary)
    except (IndexError, ValueError):  # ValueError: a name that is not UTF-8
        raise ProtocolError("a malformed SearchResultEntry") from None


def _entry(
    data: bytes, start: int, end: int, names: dict[str, str], binary: frozenset[str]
) -> Entry:
    # The hot loop of a big member list: short lengths (under 128, nearly every element) are
    # read inline, long ones through _header. Every element must end exactly where its parent
    # does and carry its own tag: a length or tag out of place raises rather than misreads.
    dn_start, dn_end = _expect(data, start, _OCTET_STRING)
    pos, stop = _expect(data, dn_end, _SEQUENCE)
    if stop != end:
        raise ProtocolError("a SearchResultEntry with more than a DN and attributes")
    attributes: dict[str, Any] = {}
    while pos < stop:
        if data[pos] != _SEQUENCE:
            raise ProtocolError(f"tag 0x{data[pos]:02x} where an attribute belongs")
        size = data[pos + 1]
        if size < 0x80:
            attribute_start, attribute_end = pos + 2, pos + 2 + size
        else:
            _, attribute_start, attribute_end = _header(data, pos)
        if data[attribute_start] != _OCTET_STRING:
            raise ProtocolError("an attribute without a name")
        size = data[attribute_start + 1]
        if size < 0x80:
            name_start, name_end = attribute_start + 2, attribute_start + 2 + size
        else:
            _, name_start, name_end = _header(data, attribute_start)
        if data[name_end] != _SET:
            raise ProtocolError("an attribute without its SET of values")
        size = data[name_end + 1]
        if size < 0x80:
            value_pos, values_end = name_end + 2, name_end + 2 + size
        else:
            _, value_pos, values_end = _header(data, name_end)
        if values_end != attribute_end or attribute_end > stop:
            raise ProtocolError("an attribute whose parts do not fill it exactly")
        raw: list[bytes] = []
        while value_pos < values_end:
            if data[value_pos] != _OCTET_STRING:
                raise ProtocolError(f"tag 0x{data[value_pos]:02x} where a value belongs")
            size = data[value_pos + 1]
            if size < 0x80:
                value_pos += 2 + size
                raw.append(data[value_pos - size : value_pos])
            else:
                _, value_start, value_pos = _header(data, value_pos)
                raw.append(data[value_start:value_pos])
        if value_pos != values_end:
            raise ProtocolError("a value running past its attribute")
        name = data[name_start:name_end].decode("utf-8")
        if ";" in name and ";range=" in name.lower():
            raise _RangedAnswer(name)
        values: list[Any] = raw
        if name.lower() not in binary:
            try:
                values = [v.decode("utf-8") for v in raw]
            except UnicodeDecodeError:
                values = raw  # binary (a photo): the octets as they are
        attributes[names.get(name.lower(), name)] = values
        pos = attribute_end
    return {"type": "searchResEntry", "dn": _text(data[dn_start:dn_end]), "attributes": attributes}


def parse_result(data: bytes, start: int, end: int, tag: int) -> dict[str, Any]:
    """An LDAPResult (searchResDone, an extended response) as ldap3's result dict.

    :raises ProtocolError: for content that is no LDAPResult (RFC 4511 §4.1.9).
    """
    try:
        return _result(data, start, end, tag)
    except IndexError:
        raise ProtocolError("a truncated LDAPResult") from None


def _result(data: bytes, start: int, end: int, tag: int) -> dict[str, Any]:
    code_start, code_end = _expect(data, start, _ENUMERATED)
    code = int.from_bytes(data[code_start:code_end], "big", signed=True)
    dn_start, dn_end = _expect(data, code_end, _OCTET_STRING)
    message_start, message_end = _expect(data, dn_end, _OCTET_STRING)
    result: dict[str, Any] = {
        "result": code,
        "description": RESULT_CODES.get(code, "unknown"),
        "dn": _text(data[dn_start:dn_end]),
        "message": _text(data[message_start:message_end]),
        "referrals": None,
        "type": _TYPE_NAMES.get(tag, hex(tag)),
    }
    pos = message_end
    while pos < end:
        element, element_start, element_end = _header(data, pos)
        if element == _REFERRAL:
            referrals = []
            inner = element_start
            while inner < element_end:
                uri_start, uri_end = _expect(data, inner, _OCTET_STRING)
                referrals.append(_text(data[uri_start:uri_end]))
                inner = uri_end
            if inner != element_end:
                raise ProtocolError("a referral running past its list")
            result["referrals"] = referrals
        elif element == _RESPONSE_NAME:
            result["responseName"] = data[element_start:element_end].decode("ascii", "replace")
        pos = element_end
    if pos != end or message_end > end:
        raise ProtocolError("an LDAPResult whose parts do not fill it exactly")
    return result


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


def _ldap3_search(
    connection: Connection,
    base: str,
    search_filter: str,
    scope: str,
    attributes: Sequence[str],
    controls: Sequence[Control] | None,
    binary: frozenset[str] = frozenset(),
) -> Response:
    connection.search(
        base,
        search_filter,
        search_scope=scope,
        dereference_aliases=DEREF_ALWAYS,
        attributes=list(attributes),
        controls=list(controls) if controls else None,
    )
    entries = [r for r in connection.response or () if r.get("type") == "searchResEntry"]
    for entry in entries if binary else ():
        for name, values in (entry.get("raw_attributes") or {}).items():
            if name.lower() in binary:
                entry["attributes"][name] = list(values)
    return entries, dict(connection.result or {})


def _terminated(connection: Connection, why: str) -> LDAPSessionTerminatedByServerError:
    with contextlib.suppress(Exception):  # as ldap3 does: the server has gone already
        connection.strategy.close()
    connection.last_error = why
    return LDAPSessionTerminatedByServerError(why)


def search(
    connection: Connection,
    base: str,
    search_filter: str,
    scope: str,
    attributes: Sequence[str],
    controls: Sequence[Control] | None = None,
    binary: frozenset[str] = frozenset(),
) -> Response:
    """One search: entries and the searchResDone result (with its ``controls``, if any).

    Same contract as ``Connection.search`` with ``raise_exceptions=True`` (an error result
    raises :class:`~ldap3.core.exceptions.LDAPOperationResult`, sizeLimitExceeded and referral
    results do not), and the same ``connection.result`` / ``connection.response`` afterwards,
    set before an error result is raised. Search result references are left out.

    :param controls: request controls as ldap3 takes them, (OID, criticality, value) each;
        the response controls are decoded by ldap3 (``result["controls"]``).
    :param binary: lower-case attribute names whose values are octets (AD's objectGUID).
    """
    if not _eligible(connection):
        return _ldap3_search(connection, base, search_filter, scope, attributes, controls, binary)
    names = {a.lower(): a for a in attributes}
    entries: list[Entry] = []
    result: dict[str, Any] | None = None
    ranged = False
    with connection.connection_lock:
        message_id = connection.server.next_message_id()
        try:
            payload = encode_search_request(
                message_id, base, _SCOPES[scope], search_filter, attributes, controls=controls
            )
        except FilterError:
            payload = b""
        if payload:
            request = {
                "type": "searchRequest",
                "base": base,
                "filter": search_filter,
                "attributes": list(attributes),
                "controls": controls,
            }
            # Each answer is decoded as it arrives: a malformed one fails the search at once.
            try:
                for tag, data, start, end in _exchange(connection, message_id, payload, request):
                    if tag == _SEARCH_ENTRY and not ranged:
                        try:
                            entries.append(parse_entry(data, start, end, names, binary))
                        except _RangedAnswer:
                            ranged = True  # the rest is read (the stream stays in step)
                    elif tag == _SEARCH_DONE:
                        result = parse_final(data, start, end, tag)
            except ProtocolError as error:
                raise _dropped(connection, error) from None
    if result is None or ranged:
        # A filter this encoder cannot read is not ours to judge: ldap3 parses what it can
        # (or raises its own error). Active Directory's part of a long value list (ranged):
        # ldap3 fetches the rest.
        return _ldap3_search(connection, base, search_filter, scope, attributes, controls, binary)
    connection.response = entries
    _conclude(connection, result)
    return entries, result


def _conclude(connection: Connection, result: dict[str, Any]) -> None:
    """Record the result on the connection and raise for an error, as ldap3 does."""
    connection.result = result
    if log_enabled(PROTOCOL):
        log(PROTOCOL, "fast %s <%s> via <%s>", result["type"], result, connection)
    if connection.raise_exceptions and result["result"] not in DO_NOT_RAISE_EXCEPTIONS:
        raise LDAPOperationResult(
            result=result["result"],
            description=result["description"],
            dn=result["dn"],
            message=result["message"],
            response_type=result["type"],
        )


def modify(
    connection: Connection,
    dn: str,
    changes: Mapping[str, Sequence[tuple[str, Sequence[Any]]]],
    controls: Sequence[Control] | None = None,
) -> dict[str, Any]:
    """One modify: the result dict (its ``controls`` decoded by ldap3, e.g. a post-read).

    Same contract as ``Connection.modify`` with ``raise_exceptions=True``; ``changes`` in
    ldap3's list form, ``{attribute: [(operation, [values])]}``.
    """
    if _eligible(connection) and not connection.read_only:
        result: dict[str, Any] | None = None
        with connection.connection_lock:
            message_id = connection.server.next_message_id()
            try:
                payload = encode_modify_request(message_id, dn, changes, controls=controls)
            except _NotOurs:
                payload = b""
            # Attribute names only: the values are no business of a log.
            request = {"type": "modifyRequest", "entry": dn, "changes": list(changes)}
            done = _MODIFY_RESPONSE
            try:
                for tag, data, start, end in _exchange(
                    connection, message_id, payload, request, done
                ):
                    if tag == done:
                        result = parse_final(data, start, end, tag)
            except ProtocolError as error:
                raise _dropped(connection, error) from None
        if result is not None:
            connection.response = None
            _conclude(connection, result)
            return result
    connection.modify(dn, dict(changes), controls=list(controls) if controls else None)
    return dict(connection.result or {})


def parse_final(data: bytes, start: int, end: int, tag: int) -> dict[str, Any]:
    """The operation's final LDAPResult, with the response controls that follow it in the
    message (RFC 4511 §4.1.11), decoded by ldap3 (``result["controls"]``).

    :raises ProtocolError: for a malformed result or controls ldap3 cannot decode.
    """
    result = parse_result(data, start, end, tag)
    if end < len(data):
        result["controls"] = _response_controls(data)
    return result


def _response_controls(data: bytes) -> dict[str, Any]:
    """The controls of one message, decoded by ldap3 itself (once per search: not hot)."""
    try:
        return dict(
            BaseStrategy.decode_control_fast(control[3])
            for control in decode_message_fast(data)["controls"] or ()
        )
    except Exception as error:  # ldap3's decoder on hostile bytes: any error, even recursion
        raise ProtocolError(f"undecodable response controls ({type(error).__name__})") from None


# The answers that may come before an operation's final one (RFC 4511 §4.5.2, §4.13).
_PARTIAL = {
    _SEARCH_DONE: frozenset({_SEARCH_ENTRY, _SEARCH_REFERENCE, _INTERMEDIATE_RESPONSE}),
    _MODIFY_RESPONSE: frozenset({_INTERMEDIATE_RESPONSE}),
}


def _dropped(connection: Connection, error: ProtocolError) -> ProtocolError:
    """A :class:`ProtocolError` closes the connection: its stream cannot be trusted."""
    if not connection.closed:
        _broken(connection, str(error))
    return error


def _broken(connection: Connection, why: str, error: type[Exception] = ProtocolError) -> Exception:
    """Close a connection whose stream can no longer be trusted; the error to raise."""
    connection.last_error = why
    with contextlib.suppress(Exception):
        connection.strategy.close()
    return error(why)


def _unexpected(connection: Connection, request: dict[str, Any], tag: int, data: bytes) -> None:
    """An answer to our request of a type that cannot answer it: fail now, never wait.

    Samba answers an operation carrying a critical control it does not support with an
    ExtendedResponse (resultCode 12) instead of the operation's own response type; waiting for
    the expected type would only end at the receive timeout. An LDAPResult-shaped answer is the
    server's verdict on the operation and raises as a result; anything else leaves the stream
    in an unknown state, so the connection is closed and the failure counts as unavailable.
    ``data`` is the whole message for an ExtendedResponse, else only what has arrived of it.
    """
    kind = _TYPE_NAMES.get(tag, hex(tag))
    if tag == _EXTENDED_RESPONSE:
        _, _, start, end = parse_message(data)
        result = parse_result(data, start, end, tag)
        _log.error(
            "directory answered a %s with an %s (result %s, %s)",
            request["type"],
            kind,
            result["result"],
            result["description"],
        )
        if result["result"] not in DO_NOT_RAISE_EXCEPTIONS:
            _conclude(connection, result)
    raise _broken(connection, f"unexpected {kind} in answer to a {request['type']}")


_TIMEOUT_SLACK = 0.25  # seconds


def _receive(
    connection: Connection, sock: Any, buffer: bytearray, wanted: int, deadline: float | None
) -> None:
    """Append what the socket has (at least one byte) to ``buffer``, by the deadline.

    ldap3's ``SyncStrategy.receiving`` would wait ``receive_timeout`` per read (a server
    trickling a byte at a time holds the worker for ever) and keeps every byte a length field
    promises; here the operation as a whole has ``receive_timeout``, and ``wanted`` is never
    more than the rest of a message :func:`message_head` has accepted.
    """
    try:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("timed out")
            # Shrunk only once it matters (settimeout is a system call): most operations end
            # in milliseconds, and the deadline is kept to within _TIMEOUT_SLACK.
            current = sock.gettimeout()
            if current is None or remaining < current - _TIMEOUT_SLACK:
                sock.settimeout(remaining)
        chunk = sock.recv(min(max(wanted, 65536), 1 << 20))
    except OSError as error:  # as ldap3's receiving: closed, and a communication error
        why = f"error receiving data: {error}"
        _broken(connection, why)
        raise communication_exception_factory(LDAPSocketReceiveError, type(error)(str(error)))(
            why
        ) from None
    if not chunk:
        raise _terminated(connection, "session terminated by server")
    buffer += chunk


def _exchange(
    connection: Connection,
    message_id: int,
    payload: bytes,
    request: dict[str, Any],
    done: int = _SEARCH_DONE,
) -> Iterator[tuple[int, bytes, int, int]]:
    """Send the request (none for an empty ``payload``) and yield the answers as they arrive, up
    to the final one (tag ``done``): (tag, message, start, end) each. Runs under the connection
    lock, the caller closing the connection on a :class:`ProtocolError` (:func:`_dropped`);
    ``request`` is for ldap3's log and usage counters.

    Each answer is judged by its first bytes (:func:`message_head`): another message id, an
    unsolicited message other than an ExtendedResponse, or a type that cannot answer the
    request fails at once, without waiting for the rest of it or for the timeout.
    """
    if not payload:
        return
    connection.request = request
    if log_enabled(PROTOCOL):
        log(PROTOCOL, "fast %s <%s> sent via <%s>", request["type"], request, connection)
    sock = connection.socket
    try:
        sock.sendall(payload)
    except OSError as error:
        connection.last_error = f"socket sending error {error}"
        raise communication_exception_factory(LDAPSocketSendError, type(error)(str(error)))(
            connection.last_error
        ) from None
    usage = connection._usage if connection.usage else None
    if usage is not None:
        usage.update_transmitted_message(request, len(payload))
    timeout = connection.receive_timeout
    deadline = None if timeout is None else time.monotonic() + timeout
    partial = _PARTIAL.get(done, frozenset())
    buffer = bytearray()
    try:
        while True:
            head = _head(buffer) if buffer else None
            while head is None:
                _receive(connection, sock, buffer, 16, deadline)
                head = _head(buffer)
            end, received_id, tag, op = head
            if received_id == message_id:
                if tag != done and tag not in partial and tag != _EXTENDED_RESPONSE:
                    _unexpected(connection, request, tag, bytes(buffer))
            elif received_id != 0:
                raise _broken(connection, "invalid messageId received")
            elif tag != _EXTENDED_RESPONSE:
                raise _broken(connection, "unsolicited message that is no notification")
            while len(buffer) < end:
                _receive(connection, sock, buffer, end - len(buffer), deadline)
            data = bytes(buffer[:end])
            del buffer[:end]
            if usage is not None:
                usage.update_received_message(len(data))
            start, stop = _operation(data, op)
            if received_id == 0:
                notice = parse_result(data, start, stop, tag)
                if notice.get("responseName") == _NOTICE_OF_DISCONNECTION:
                    raise _terminated(connection, "session terminated by server")
                raise _broken(connection, "unknown unsolicited notification from server")
            if tag == _EXTENDED_RESPONSE:
                _unexpected(connection, request, tag, data)
            yield tag, data, start, stop
            if tag == done:
                return
    finally:
        if deadline is not None and sock.gettimeout() != timeout:
            with contextlib.suppress(OSError):
                sock.settimeout(timeout)
