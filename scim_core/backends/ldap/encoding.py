"""The requests of the LDAP fast path in BER (RFC 4511 §4.5.1, §4.6; filters from their
RFC 4515 text), and the tags and errors the answers' decoding shares (see
:mod:`~scim_core.backends.ldap.wire`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from ldap3 import (
    BASE,
    LEVEL,
    MODIFY_ADD,
    MODIFY_DELETE,
    MODIFY_INCREMENT,
    MODIFY_REPLACE,
    SUBTREE,
)
from ldap3.core.exceptions import (
    LDAPSocketReceiveError,
)

__all__ = [
    "ADD_RESPONSE",
    "BOOLEAN",
    "CONTROLS",
    "ENUMERATED",
    "EXTENDED_RESPONSE",
    "INTEGER",
    "INTERMEDIATE_RESPONSE",
    "MAX_MESSAGE_SIZE",
    "MODIFY_OPERATIONS",
    "MODIFY_RESPONSE",
    "NOTICE_OF_DISCONNECTION",
    "OCTET_STRING",
    "REFERRAL",
    "RESPONSE_NAME",
    "SCOPES",
    "SEARCH_DONE",
    "SEARCH_ENTRY",
    "SEARCH_REFERENCE",
    "SEQUENCE",
    "SET",
    "TYPE_NAMES",
    "Control",
    "FilterError",
    "NotOurs",
    "ProtocolError",
    "RangedAnswer",
    "encode_add_request",
    "encode_attribute_list",
    "encode_filter",
    "encode_modify_request",
    "encode_search_request",
]

Control = tuple[str, bool, bytes | None]

SCOPES = {BASE: 0, LEVEL: 1, SUBTREE: 2}
_DEREF_ALWAYS = 3  # what ldap3's Connection.search sends by default; kept for the same answers
_NO_ATTRIBUTES = "1.1"  # RFC 4511 §4.5.1.8: no attributes at all

# BER identifiers (RFC 4511 §5.1: definite lengths, one-byte tags).
SEQUENCE = 0x30
OCTET_STRING = 0x04
INTEGER = 0x02
ENUMERATED = 0x0A
BOOLEAN = 0x01
_SEARCH_REQUEST = 0x63  # [APPLICATION 3], constructed
CONTROLS = 0xA0  # [0] in LDAPMessage
SEARCH_ENTRY = 0x64  # [APPLICATION 4]
_MODIFY_REQUEST = 0x66  # [APPLICATION 6]
MODIFY_RESPONSE = 0x67  # [APPLICATION 7]
_ADD_REQUEST = 0x68  # [APPLICATION 8]
ADD_RESPONSE = 0x69  # [APPLICATION 9]
SET = 0x31
SEARCH_DONE = 0x65  # [APPLICATION 5]
SEARCH_REFERENCE = 0x73  # [APPLICATION 19]
EXTENDED_RESPONSE = 0x78  # [APPLICATION 24]
INTERMEDIATE_RESPONSE = 0x79  # [APPLICATION 25]
RESPONSE_NAME = 0x8A  # [10] in ExtendedResponse
REFERRAL = 0xA3  # [3] in LDAPResult
_FILTER_AND, _FILTER_OR, _FILTER_NOT = 0xA0, 0xA1, 0xA2
_FILTER_EQUAL, _FILTER_SUBSTRINGS, _FILTER_GE, _FILTER_LE = 0xA3, 0xA4, 0xA5, 0xA6
_FILTER_PRESENT, _FILTER_APPROX, _FILTER_EXTENSIBLE = 0x87, 0xA8, 0xA9
_SUB_INITIAL, _SUB_ANY, _SUB_FINAL = 0x80, 0x81, 0x82
_EXT_RULE, _EXT_TYPE, _EXT_VALUE, _EXT_DN = 0x81, 0x82, 0x83, 0x84
NOTICE_OF_DISCONNECTION = "1.3.6.1.4.1.1466.20036"  # RFC 4511 §4.4.1
_HEX = frozenset(b"0123456789abcdefABCDEF")
MAX_MESSAGE_SIZE = 64 * 1024 * 1024
"""The largest answer accepted (a 100,000-member group is about 6 MB): a length field
claiming more fails at once instead of holding memory and the worker for the data."""
#: A modification's operation, as ldap3 takes it, -> its number (RFC 4511 §4.6, RFC 4525).
MODIFY_OPERATIONS: dict[object, int] = {MODIFY_ADD: 0, MODIFY_DELETE: 1, MODIFY_REPLACE: 2}
MODIFY_OPERATIONS.update({MODIFY_INCREMENT: 3, 0: 0, 1: 1, 2: 2, 3: 3})  # ldap3 takes both
TYPE_NAMES = {
    SEARCH_ENTRY: "searchResEntry",
    SEARCH_DONE: "searchResDone",
    MODIFY_RESPONSE: "modifyResponse",
    ADD_RESPONSE: "addResponse",
    SEARCH_REFERENCE: "searchResRef",
    EXTENDED_RESPONSE: "extendedResp",
    INTERMEDIATE_RESPONSE: "intermediateResponse",
}


class FilterError(ValueError):
    """A filter string this encoder cannot read (malformed RFC 4515)."""


class ProtocolError(LDAPSocketReceiveError):  # type: ignore[misc]  # ldap3 is untyped
    """An answer that is not well-formed LDAP (RFC 4511 §5.1) or not one to the request made.

    A communication error (ldap3's :class:`~ldap3.core.exceptions.LDAPSocketReceiveError`):
    the stream is in an unknown state, so the connection is closed and the failure counts as
    the directory being unavailable.
    """


class NotOurs(Exception):
    """A modify in a shape ldap3 accepts but this encoder leaves to it (values not text)."""


class RangedAnswer(Exception):
    """An entry holds ``attr;range=a-b`` (AD's incremental retrieval of long value lists)."""


# ================================================================ encoding


def _length(size: int) -> bytes:
    if size < 0x80:
        return bytes((size,))
    octets = size.to_bytes((size.bit_length() + 7) // 8)
    return bytes((0x80 | len(octets),)) + octets


def _tlv(tag: int, content: bytes) -> bytes:
    return bytes((tag,)) + _length(len(content)) + content


def _integer(tag: int, value: int) -> bytes:
    # Shortest form of a value that is never negative; the extra bit keeps a leading 1 from
    # reading negative in two's complement.
    return _tlv(tag, value.to_bytes(value.bit_length() // 8 + 1))


def _value(text: str) -> bytes:
    """An RFC 4515 assertion value as the octets it stands for (``\\XX`` escapes undone)."""
    raw = text.encode()
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
    return text.encode()


def _item(item: str) -> bytes:
    """One ``attr<op>value`` item (RFC 4515 ``item``) as its Filter CHOICE."""
    attribute, equals, value = item.partition("=")
    if not equals:
        raise FilterError(f"no '=' in ({item})")
    last = attribute[-1:]
    if last in ("~", ">", "<"):
        tag = {"~": _FILTER_APPROX, ">": _FILTER_GE, "<": _FILTER_LE}[last]
        content = _tlv(OCTET_STRING, _attribute(attribute[:-1], item))
        return _tlv(tag, content + _tlv(OCTET_STRING, _value(value)))
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
        content = _tlv(OCTET_STRING, _attribute(attribute, item))
        return _tlv(_FILTER_SUBSTRINGS, content + _tlv(SEQUENCE, b"".join(parts)))
    content = _tlv(OCTET_STRING, _attribute(attribute, item))
    return _tlv(_FILTER_EQUAL, content + _tlv(OCTET_STRING, _value(value)))


def _extensible(left: str, value: str, item: str) -> bytes:
    """``attr[:dn][:rule]:=value`` or ``[:dn]:rule:=value`` (RFC 4515 ``extensible``)."""
    fields = left.split(":")
    attribute, options = fields[0], fields[1:]
    dn = bool(options) and options[0].lower() == "dn"
    if dn:
        options = options[1:]
    if len(options) > 1 or (options and not options[0]) or (not attribute and not options):
        raise FilterError(f"malformed extensible match ({item})")
    content = _tlv(_EXT_RULE, options[0].encode()) if options else b""
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
    item, closed, _ = text[pos + 1 :].partition(")")
    if not closed or "(" in item:
        raise FilterError(f"unbalanced parentheses in {text!r}")
    return _item(item), pos + len(item) + 2


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
    return _tlv(SEQUENCE, b"".join(_tlv(OCTET_STRING, n.encode()) for n in names))


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
            _tlv(OCTET_STRING, base.encode()),
            _integer(ENUMERATED, scope),
            _integer(ENUMERATED, deref),
            _integer(INTEGER, size_limit),
            _integer(INTEGER, time_limit),
            _tlv(BOOLEAN, b"\xff" if types_only else b"\x00"),
            encode_filter(search_filter),
            encode_attribute_list(tuple(attributes)),
        )
    )
    return _message(message_id, _tlv(_SEARCH_REQUEST, request), controls)


def _octets(value: object) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    raise NotOurs(type(value).__name__)


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
                raise NotOurs("a single value")
            modification = _tlv(OCTET_STRING, attribute.encode()) + _tlv(
                SET, b"".join(_tlv(OCTET_STRING, _octets(v)) for v in values)
            )
            items.append(
                _tlv(
                    SEQUENCE,
                    _integer(ENUMERATED, MODIFY_OPERATIONS[operation])
                    + _tlv(SEQUENCE, modification),
                )
            )
    request = _tlv(OCTET_STRING, dn.encode()) + _tlv(SEQUENCE, b"".join(items))
    return _message(message_id, _tlv(_MODIFY_REQUEST, request), controls)


def encode_add_request(
    message_id: int,
    dn: str,
    attributes: Mapping[str, Sequence[Any]],
    *,
    controls: Sequence[Control] | None = None,
) -> bytes:
    """A complete LDAPMessage holding an AddRequest (RFC 4511 §4.7), byte for byte ldap3's.

    :param attributes: attribute -> its values (``str``, sent as UTF-8, or ``bytes``), the
        object classes among them.
    """
    items = []
    for attribute, values in attributes.items():
        if isinstance(values, str | bytes):
            raise NotOurs("a single value")
        items.append(
            _tlv(
                SEQUENCE,
                _tlv(OCTET_STRING, attribute.encode())
                + _tlv(SET, b"".join(_tlv(OCTET_STRING, _octets(v)) for v in values)),
            )
        )
    request = _tlv(OCTET_STRING, dn.encode()) + _tlv(SEQUENCE, b"".join(items))
    return _message(message_id, _tlv(_ADD_REQUEST, request), controls)


def _message(message_id: int, operation: bytes, controls: Sequence[Control] | None) -> bytes:
    message = _integer(INTEGER, message_id) + operation
    if controls:
        message += _tlv(CONTROLS, b"".join(_control(*control) for control in controls))
    return _tlv(SEQUENCE, message)


def _control(oid: str, critical: bool, value: bytes | None) -> bytes:
    # criticality is BOOLEAN DEFAULT FALSE: left out when false, as DER and ldap3 do.
    content = _tlv(OCTET_STRING, oid.encode("ascii"))  # pragma: no mutate - codec names ignore case
    if critical:
        content += _tlv(BOOLEAN, b"\xff")
    if value is not None:
        content += _tlv(OCTET_STRING, value)
    return _tlv(SEQUENCE, content)
