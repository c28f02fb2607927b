"""The answers of the LDAP fast path decoded from BER (RFC 4511 §4.1, §4.5.2, §4.6): each
element's tag and extent checked, anything malformed a
:class:`~scim_core.backends.ldap.encoding.ProtocolError` (see
:mod:`~scim_core.backends.ldap.wire`)."""

from __future__ import annotations

from typing import Any

from ldap3.core.results import RESULT_CODES
from ldap3.strategy.base import BaseStrategy
from ldap3.utils.asn1 import decode_message_fast

from scim_core.backends.ldap.controls import POST_READ_OID
from scim_core.backends.ldap.encoding import (
    BOOLEAN,
    CONTROLS,
    ENUMERATED,
    INTEGER,
    MAX_MESSAGE_SIZE,
    OCTET_STRING,
    REFERRAL,
    RESPONSE_NAME,
    SEARCH_ENTRY,
    SEQUENCE,
    SET,
    TYPE_NAMES,
    ProtocolError,
    RangedAnswer,
)
from scim_core.backends.ldap.values import lower_keyed

__all__ = [
    "Entry",
    "message_frame",
    "message_head",
    "operation_extent",
    "parse_entry",
    "parse_final",
    "parse_message",
    "parse_result",
]

Entry = dict[str, Any]

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
        end = start + int.from_bytes(data[pos + 2 : start])
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
        return raw.decode()
    except UnicodeDecodeError:
        # What ldap3 falls back to for DNs and messages.
        return raw.decode("latin-1")  # pragma: no mutate - codec names ignore case


def message_head(data: bytes | bytearray, pos: int = 0) -> tuple[int, int, int] | None:
    """(end, messageID, protocolOp tag) of the LDAPMessage starting at ``data[pos]``, as soon as
    its first bytes tell them (at most 13); ``None`` while they have not all arrived.

    This is what lets the receiver refuse an answer it will not take before its body arrives.

    :raises ProtocolError: for bytes that cannot start an LDAPMessage: another tag, an
        indefinite or over-long length, a length above :data:`MAX_MESSAGE_SIZE`, a message id
        that is no INTEGER of 1..4 octets or is negative.
    """
    head = message_frame(data, pos)
    return None if head is None else head[:3]


def message_frame(data: bytes | bytearray, pos: int = 0) -> tuple[int, int, int, int] | None:
    """:func:`message_head` and the position of the protocolOp."""
    available = len(data) - pos
    if available < 2:
        return None
    if data[pos] != SEQUENCE:
        raise ProtocolError(f"an answer starting with 0x{data[pos]:02x}, not an LDAPMessage")
    size = data[pos + 1]
    if size < 0x80:
        length, head = size, 2
    else:
        count = size & 0x7F
        if not 0 < count <= 4:
            raise ProtocolError(f"an LDAPMessage with length form 0x{size:02x}")
        # No mutant of this line can differ: a length short of its octets reads smaller,
        # never above the limit, and the head + 2 check below waits for them as well.
        if available < 2 + count:  # pragma: no mutate
            return None
        length, head = int.from_bytes(data[pos + 2 : pos + 2 + count]), 2 + count
    if length + head > MAX_MESSAGE_SIZE:
        raise ProtocolError(f"an LDAPMessage of {length} bytes (limit {MAX_MESSAGE_SIZE})")
    if available < head + 2:
        return None
    id_tag, id_size = data[pos + head], data[pos + head + 1]
    if id_tag != INTEGER or not 0 < id_size <= 4:
        raise ProtocolError(f"an LDAPMessage without a message id (0x{id_tag:02x} {id_size})")
    op = head + 2 + id_size  # the protocolOp's tag, then at least its length
    if op + 2 > head + length:
        raise ProtocolError("an LDAPMessage too short for its operation")
    if available <= op:
        return None
    message_id = int.from_bytes(data[pos + head + 2 : pos + op], signed=True)
    if message_id < 0:
        raise ProtocolError(f"a negative message id ({message_id})")
    return pos + head + length, message_id, data[pos + op], pos + op


def parse_message(data: bytes) -> tuple[int, int, int, int]:
    """(messageID, protocolOp tag, content start, content end) of one whole LDAPMessage.

    :raises ProtocolError: for anything but one complete LDAPMessage, optionally with
        controls, filling ``data`` exactly.
    """
    head = message_frame(data)
    if head is None or head[0] != len(data):
        raise ProtocolError("an incomplete LDAPMessage, or more than one")
    start, end = operation_extent(data, head[3])
    return head[1], head[2], start, end


def operation_extent(data: bytes, op: int) -> tuple[int, int]:
    """(content start, end) of the protocolOp at ``op`` of a whole LDAPMessage, after which
    only its controls may come (RFC 4511 §4.1.1)."""
    try:
        _, start, end = _header(data, op)
        if end < len(data) and _expect(data, end, CONTROLS)[1] != len(data):
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
    :raises RangedAnswer: for an AD ranged attribute (the caller lets ldap3 handle those).
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
    dn_start, dn_end = _expect(data, start, OCTET_STRING)
    pos, stop = _expect(data, dn_end, SEQUENCE)
    if stop != end:
        raise ProtocolError("a SearchResultEntry with more than a DN and attributes")
    attributes: dict[str, Any] = {}
    while pos < stop:
        if data[pos] != SEQUENCE:
            raise ProtocolError(f"tag 0x{data[pos]:02x} where an attribute belongs")
        size = data[pos + 1]
        if size < 0x80:
            attribute_start, attribute_end = pos + 2, pos + 2 + size
        else:
            _, attribute_start, attribute_end = _header(data, pos)
        if data[attribute_start] != OCTET_STRING:
            raise ProtocolError("an attribute without a name")
        size = data[attribute_start + 1]
        if size < 0x80:
            name_start, name_end = attribute_start + 2, attribute_start + 2 + size
        else:
            _, name_start, name_end = _header(data, attribute_start)
        if data[name_end] != SET:
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
            if data[value_pos] != OCTET_STRING:
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
        name = data[name_start:name_end].decode()
        if ";" in name and ";range=" in name.lower():
            raise RangedAnswer(name)
        values: list[Any] = raw
        if name.lower() not in binary:
            try:
                values = [v.decode() for v in raw]
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
    code_start, code_end = _expect(data, start, ENUMERATED)
    code = int.from_bytes(data[code_start:code_end], signed=True)
    dn_start, dn_end = _expect(data, code_end, OCTET_STRING)
    message_start, message_end = _expect(data, dn_end, OCTET_STRING)
    result: dict[str, Any] = {
        "result": code,
        "description": RESULT_CODES.get(code, "unknown"),
        "dn": _text(data[dn_start:dn_end]),
        "message": _text(data[message_start:message_end]),
        "referrals": None,
        "type": TYPE_NAMES.get(tag, hex(tag)),
    }
    pos = message_end
    while pos < end:
        element, element_start, element_end = _header(data, pos)
        if element == REFERRAL:
            referrals = []
            inner = element_start
            while inner < element_end:
                uri_start, uri_end = _expect(data, inner, OCTET_STRING)
                referrals.append(_text(data[uri_start:uri_end]))
                inner = uri_end
            if inner != element_end:
                raise ProtocolError("a referral running past its list")
            result["referrals"] = referrals
        elif element == RESPONSE_NAME:
            name = data[element_start:element_end]
            result["responseName"] = name.decode("ascii", "replace")  # pragma: no mutate - case
        pos = element_end
    if pos != end or message_end > end:
        raise ProtocolError("an LDAPResult whose parts do not fill it exactly")
    return result


def parse_final(
    data: bytes, start: int, end: int, tag: int, binary: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The operation's final LDAPResult, with the response controls that follow it in the
    message (RFC 4511 §4.1.11) in ``result["controls"]`` as ldap3 gives them.

    :param binary: lower-case names whose values stay octets in a post-read entry.
    :raises ProtocolError: for a malformed result or controls.
    """
    result = parse_result(data, start, end, tag)
    if end < len(data):
        result["controls"] = _response_controls(data, end, binary)
    return result


def _response_controls(data: bytes, pos: int, binary: frozenset[str]) -> dict[str, Any]:
    """The controls of one message, from ``pos`` (its ``[0] Controls``). A post-read entry
    (RFC 4527, after every change of a user) is decoded here as a search's entries are; other
    controls (the sort and VLV answers of a list page) by ldap3, in its form."""
    controls: dict[str, Any] = {}
    others = False  # pragma: no mutate - None is as false as False
    try:
        pos, stop = _expect(data, pos, CONTROLS)
        if stop != len(data):
            raise ProtocolError("an LDAPMessage with more than an operation and controls")
        while pos < stop:
            start, end = _expect(data, pos, SEQUENCE)
            oid_start, oid_end = _expect(data, start, OCTET_STRING)
            oid = data[oid_start:oid_end].decode("ascii")  # pragma: no mutate - names ignore case
            at, critical, value = oid_end, False, None
            if at < end and data[at] == BOOLEAN:
                flag_start, at = _expect(data, at, BOOLEAN)
                if at - flag_start != 1:
                    raise ProtocolError("a criticality that is not one octet")
                critical = data[flag_start] != 0
            if at < end:
                value = _expect(data, at, OCTET_STRING)
                at = value[1]
            if at != end:
                raise ProtocolError("a Control with more than a type, criticality and value")
            if oid == POST_READ_OID and value is not None:
                entry_start, entry_end = _expect(data, value[0], SEARCH_ENTRY)
                if entry_end != value[1]:
                    raise ProtocolError("a post-read value with more than an entry")
                entry = parse_entry(data, entry_start, entry_end, {}, binary)
                controls[oid] = {
                    "description": "post-read",
                    "criticality": critical,
                    "value": {"result": lower_keyed(entry["attributes"]), "dn": entry["dn"]},
                }
            else:
                others = True
            pos = end
    except (IndexError, UnicodeDecodeError):
        raise ProtocolError("malformed response controls") from None
    # ldap3 only for the other controls: it would decode a post-read alike, only slower.
    return {**_ldap3_controls(data), **controls} if others else controls  # pragma: no mutate


def _ldap3_controls(data: bytes) -> dict[str, Any]:
    """The controls of one message decoded by ldap3 (once per list page: not hot)."""
    try:
        return dict(
            BaseStrategy.decode_control_fast(control[3])
            for control in decode_message_fast(data)["controls"] or ()
        )
    except Exception as error:  # ldap3's decoder on hostile bytes: any error, even recursion
        raise ProtocolError(f"undecodable response controls ({type(error).__name__})") from None
