"""The controls ldap3 does not ship, encoded with pyasn1.

- RFC 2891 server-side sort (1.2.840.113556.1.4.473) and draft-ietf-ldapext-ldapv3-vlv-09
  virtual list view (2.16.840.1.113730.3.4.9/10): sorted, windowed list pages.
- RFC 4528 assertion (1.3.6.1.1.12): a write that runs only if the entry is as it was read.
- RFC 3876 ValuesReturnFilter (1.2.826.0.1.3344810.2.3): only the values of an attribute that
  match, e.g. whether given DNs are members of a group, without reading its member list.
- RFC 4527 post-read (1.3.6.1.1.13.2): the entry as a write left it, in the write's answer,
  instead of a search after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ldap3.protocol.rfc4511 import EqualityMatch
from pyasn1.codec.ber import decoder, encoder
from pyasn1.error import PyAsn1Error
from pyasn1.type import namedtype, tag, univ

from scim_core.backends.ldap.encoding import encode_attribute_list, encode_filter
from scim_core.errors import DirectoryRefused

__all__ = [
    "ASSERTION_OID",
    "POST_READ_OID",
    "SORT_OID",
    "VALUES_RETURN_FILTER_OID",
    "VLV_REQUEST_OID",
    "VLV_RESPONSE_OID",
    "VlvResult",
    "assertion",
    "parse_post_read",
    "parse_vlv_response",
    "post_read",
    "sort_control",
    "values_return_filter",
    "vlv_control",
    "vlv_value_control",
]

SORT_OID = "1.2.840.113556.1.4.473"
VLV_REQUEST_OID = "2.16.840.1.113730.3.4.9"
VLV_RESPONSE_OID = "2.16.840.1.113730.3.4.10"
VALUES_RETURN_FILTER_OID = "1.2.826.0.1.3344810.2.3"
ASSERTION_OID = "1.3.6.1.1.12"
POST_READ_OID = "1.3.6.1.1.13.2"

Control = tuple[str, bool, bytes | None]


class _SortKey(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("attributeType", univ.OctetString()),
        namedtype.OptionalNamedType(
            "orderingRule",
            univ.OctetString().subtype(implicitTag=tag.Tag(tag.tagClassContext, 0, 0)),
        ),
    )


class _SortKeyList(univ.SequenceOf):
    componentType = _SortKey()


class _ByOffset(univ.Sequence):
    tagSet = univ.Sequence.tagSet.tagImplicitly(
        tag.Tag(tag.tagClassContext, tag.tagFormatConstructed, 0)
    )
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("offset", univ.Integer()),
        namedtype.NamedType("contentCount", univ.Integer()),
    )


class _VlvRequest(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("beforeCount", univ.Integer()),
        namedtype.NamedType("afterCount", univ.Integer()),
        namedtype.NamedType("byOffset", _ByOffset()),
        namedtype.OptionalNamedType("contextID", univ.OctetString()),
    )


class _VlvResponse(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("targetPosition", univ.Integer()),
        namedtype.NamedType("contentCount", univ.Integer()),
        namedtype.NamedType("virtualListViewResult", univ.Enumerated()),
        namedtype.OptionalNamedType("contextID", univ.OctetString()),
    )


def sort_control(attribute: str, ordering_rule: str | None = None) -> Control:
    """A critical RFC 2891 sort request on one attribute."""
    key = _SortKey()
    key["attributeType"] = attribute
    if ordering_rule:
        key["orderingRule"] = ordering_rule
    keys = _SortKeyList()
    keys.append(key)
    return (SORT_OID, True, encoder.encode(keys))


def vlv_control(offset: int, after: int, context_id: bytes | None = None) -> Control:
    """A VLV request for entries ``offset`` .. ``offset + after`` (1-based) of the sorted set.

    ``contentCount`` 0 tells the server to take ``offset`` as an absolute position.
    """
    request = _VlvRequest()
    request["beforeCount"] = 0
    request["afterCount"] = after
    target = request["byOffset"]
    target["offset"] = offset
    target["contentCount"] = 0
    if context_id:
        request["contextID"] = context_id
    return (VLV_REQUEST_OID, True, encoder.encode(request))


class _VlvValueRequest(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("beforeCount", univ.Integer()),
        namedtype.NamedType("afterCount", univ.Integer()),
        namedtype.NamedType(
            "greaterThanOrEqual",
            univ.OctetString().subtype(implicitTag=tag.Tag(tag.tagClassContext, 0, 1)),
        ),
        namedtype.OptionalNamedType("contextID", univ.OctetString()),
    )


def vlv_value_control(value: str, after: int, context_id: bytes | None = None) -> Control:
    """A VLV request for the first entry whose sort key is not below ``value`` and the
    ``after`` entries that follow it (the target by value, not by offset)."""
    request = _VlvValueRequest()
    request["beforeCount"] = 0
    request["afterCount"] = after
    request["greaterThanOrEqual"] = value.encode()
    if context_id:
        request["contextID"] = context_id
    return (VLV_REQUEST_OID, True, encoder.encode(request))


class _ValuesReturnFilter(univ.SequenceOf):
    componentType = EqualityMatch()


def values_return_filter(attribute: str, values: list[str]) -> Control:
    """An RFC 3876 control returning only the values of ``attribute`` equal to ``values``.

    Values travel as BER octet strings (never as filter text), so they need no escaping.
    """
    items = _ValuesReturnFilter()
    for index, value in enumerate(values):
        item = EqualityMatch()
        item["attributeDesc"] = attribute
        item["assertionValue"] = value.encode()
        items.setComponentByPosition(index, item)
    return (VALUES_RETURN_FILTER_OID, True, encoder.encode(items))


@dataclass(frozen=True)
class VlvResult:
    """What the server said about the window: the total count, result code and context, and
    the list position (1-based) of the window's target entry."""

    content_count: int
    result: int
    context_id: bytes | None
    target_position: int


def parse_vlv_response(controls: dict[str, Any] | None) -> VlvResult | None:
    """Decode the VLV response control from an ldap3 result's ``controls``, if present.

    :raises DirectoryRefused: for a control value that is not a well-formed VLV response.
    """
    if not controls or VLV_RESPONSE_OID not in controls:
        return None
    raw = controls[VLV_RESPONSE_OID].get("value")
    if not isinstance(raw, bytes):
        return None
    try:
        decoded, _ = decoder.decode(raw, asn1Spec=_VlvResponse())
        context = decoded["contextID"]
        return VlvResult(
            content_count=int(decoded["contentCount"]),
            result=int(decoded["virtualListViewResult"]),
            context_id=bytes(context) if context.isValue else None,
            target_position=int(decoded["targetPosition"]),
        )
    except PyAsn1Error:
        # Never a count guessed from the entries returned: the page's total would be wrong.
        raise DirectoryRefused(
            "The directory answered a list page with a malformed virtual list view control."
        ) from None


def assertion(ldap_filter: str) -> Control:
    """An RFC 4528 assertion: the operation runs only if the entry matches ``ldap_filter``.

    Used as an optimistic lock: ``(entryCSN=<the version read>)`` makes a write fail with
    assertionFailed (122) when someone else changed the entry in between. The filter must be
    built from escaped values (:func:`scim_core.backends.ldap.escape.filter_value`).
    """
    # The control value is the filter's BER (RFC 4528 §3), as a search request carries it.
    return (ASSERTION_OID, True, encode_filter(ldap_filter))


def post_read(attributes: list[str]) -> Control:
    """An RFC 4527 post-read request for ``attributes`` of the entry the write leaves behind.

    Not critical: a directory without the control still makes the write, and the caller reads
    the entry afterwards when :func:`parse_post_read` finds nothing.
    """
    return (POST_READ_OID, False, encode_attribute_list(tuple(attributes)))


def parse_post_read(controls: dict[str, Any] | None) -> Mapping[str, Any] | None:
    """The attributes of a post-read response control in an ldap3 result's ``controls``.

    ldap3 decodes the control's SearchResultEntry itself (``value["result"]``: attribute ->
    values, case-insensitive keys); ``None`` when the server sent no such control.
    """
    control = (controls or {}).get(POST_READ_OID)
    value = control.get("value") if isinstance(control, dict) else None
    attributes = value.get("result") if isinstance(value, dict) else None
    return attributes if isinstance(attributes, Mapping) else None
