"""The request controls read back field by field, and the response controls parsed.

Each control value is read with the test's own small BER reader (tag, length, content), so a
field in the wrong place, with the wrong tag or the wrong number fails here whatever encoder
wrote it: RFC 2891 (server-side sort), draft-ietf-ldapext-ldapv3-vlv-09 (virtual list view),
RFC 3876 (ValuesReturnFilter), RFC 4528 (assertion) and RFC 4527 (post-read). The response
controls are given as ldap3 hands them over (OID -> description, criticality, value), some
of them decoded from a whole searchResDone by the fast path's own decoder.
"""

from __future__ import annotations

import pytest
from ldap3.strategy.base import BaseStrategy

from scim_core.backends.ldap.controls import (
    ASSERTION_OID,
    POST_READ_OID,
    SORT_OID,
    VALUES_RETURN_FILTER_OID,
    VLV_REQUEST_OID,
    VLV_RESPONSE_OID,
    VlvResult,
    assertion,
    parse_post_read,
    parse_vlv_response,
    post_read,
    sort_control,
    values_return_filter,
    vlv_control,
    vlv_value_control,
)
from scim_core.backends.ldap.decoding import parse_final, parse_message
from scim_core.errors import DirectoryRefused

# BER identifier octets (X.690 §8.1.2): universal, and context-specific [n].
INTEGER, OCTET_STRING, ENUMERATED, SEQUENCE = 0x02, 0x04, 0x0A, 0x30
PRIMITIVE_0, PRIMITIVE_1 = 0x80, 0x81
CONSTRUCTED_0, CONSTRUCTED_3 = 0xA0, 0xA3
PRESENT = 0x87
SEARCH_DONE = 0x65

Element = tuple[int, bytes]


# ---------------------------------------------------------------- the test's BER reader


def read(data: bytes) -> list[Element]:
    """The elements (tag, content) that ``data`` holds one after another, all of it used."""
    elements: list[Element] = []
    at = 0
    while at < len(data):
        tag, first = data[at], data[at + 1]
        at += 2
        if first & 0x80:
            octets = first & 0x7F
            size = int.from_bytes(data[at : at + octets], "big")
            at += octets
        else:
            size = first
        content = data[at : at + size]
        assert len(content) == size, "an element runs past the end"
        elements.append((tag, content))
        at += size
    return elements


def one(data: bytes) -> Element:
    """The single element ``data`` is."""
    elements = read(data)
    assert len(elements) == 1, elements
    return elements[0]


def integer(element: Element, tag: int = INTEGER) -> int:
    assert element[0] == tag
    return int.from_bytes(element[1], "big", signed=True)


def tlv(tag: int, content: bytes) -> bytes:
    """One BER element with the shortest definite length (for building answers)."""
    size = len(content)
    if size < 0x80:
        return bytes((tag, size)) + content
    octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes((tag, 0x80 | len(octets))) + octets + content


def number(tag: int, value: int) -> bytes:
    return tlv(tag, value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True))


# ---------------------------------------------------------------- RFC 2891 sort


def sort_keys(value: bytes) -> list[list[Element]]:
    """The SortKeyList: each SortKey's fields."""
    tag, keys = one(value)
    assert tag == SEQUENCE
    fields = []
    for tag, key in read(keys):
        assert tag == SEQUENCE
        fields.append(read(key))
    return fields


def test_a_sort_on_one_attribute_is_critical_and_ascending() -> None:
    oid, critical, value = sort_control("uid")
    assert (oid, critical) == ("1.2.840.113556.1.4.473", True) == (SORT_OID, True)
    assert value is not None
    # One key: attributeType only; no orderingRule [0], no reverseOrder [1] (default FALSE).
    assert sort_keys(value) == [[(OCTET_STRING, b"uid")]]
    assert value == b"\x30\x07\x30\x05\x04\x03uid"


def test_a_sort_with_an_ordering_rule() -> None:
    oid, critical, value = sort_control("cn", "caseIgnoreOrderingMatch")
    assert (oid, critical) == (SORT_OID, True)
    assert value is not None
    assert sort_keys(value) == [[(OCTET_STRING, b"cn"), (PRIMITIVE_0, b"caseIgnoreOrderingMatch")]]


@pytest.mark.parametrize("rule", [None, ""])
def test_no_ordering_rule_leaves_the_field_out(rule: str | None) -> None:
    assert sort_control("sn", rule) == sort_control("sn")
    value = sort_control("sn", rule)[2]
    assert value is not None
    assert sort_keys(value) == [[(OCTET_STRING, b"sn")]]


# ---------------------------------------------------------------- virtual list view


def vlv_fields(value: bytes | None) -> list[Element]:
    """The VirtualListViewRequest's fields."""
    assert value is not None
    tag, content = one(value)
    assert tag == SEQUENCE
    return read(content)


@pytest.mark.parametrize(
    ("offset", "after"), [(1, 0), (5, 9), (128, 127), (90_000, 99), (2**31 - 1, 2**31 - 1)]
)
def test_a_vlv_request_by_offset(offset: int, after: int) -> None:
    oid, critical, value = vlv_control(offset, after)
    assert (oid, critical) == ("2.16.840.1.113730.3.4.9", True) == (VLV_REQUEST_OID, True)
    before_count, after_count, target = vlv_fields(value)  # no contextID
    assert integer(before_count) == 0
    assert integer(after_count) == after
    # byOffset [0]: the offset, and contentCount 0 (the offset is a position, not a ratio).
    assert target[0] == CONSTRUCTED_0
    position, content_count = read(target[1])
    assert integer(position) == offset
    assert integer(content_count) == 0


def test_a_vlv_request_by_offset_exactly() -> None:
    assert vlv_control(5, 9)[2] == bytes.fromhex("300e 020100 020109 a006 020105 020100")


@pytest.mark.parametrize("context", [b"ctx", b"\x00context" * 40])
def test_a_vlv_request_by_offset_returns_the_context(context: bytes) -> None:
    fields = vlv_fields(vlv_control(3, 4, context)[2])
    assert len(fields) == 4
    assert integer(fields[0]) == 0 and integer(fields[1]) == 4
    assert fields[2][0] == CONSTRUCTED_0
    assert [integer(f) for f in read(fields[2][1])] == [3, 0]
    assert fields[3] == (OCTET_STRING, context)


@pytest.mark.parametrize("context", [None, b""])
def test_a_vlv_request_without_a_context(context: bytes | None) -> None:
    assert vlv_control(3, 4, context) == vlv_control(3, 4)
    assert len(vlv_fields(vlv_control(3, 4, context)[2])) == 3


@pytest.mark.parametrize(
    ("value", "encoded"), [("Smith", b"Smith"), ("Zoë", "Zoë".encode()), ("", b"")]
)
def test_a_vlv_request_by_value(value: str, encoded: bytes) -> None:
    oid, critical, control = vlv_value_control(value, 7)
    assert (oid, critical) == (VLV_REQUEST_OID, True)
    before_count, after_count, target = vlv_fields(control)  # no contextID
    assert integer(before_count) == 0
    assert integer(after_count) == 7
    # greaterThanOrEqual [1]: the assertion value's UTF-8, primitive.
    assert target == (PRIMITIVE_1, encoded)


def test_a_vlv_request_by_value_exactly() -> None:
    assert vlv_value_control("b", 300)[2] == bytes.fromhex("300a 020100 0202012c 810162")


def test_a_vlv_request_by_value_returns_the_context() -> None:
    fields = vlv_fields(vlv_value_control("m", 2, b"\x01\x02")[2])
    assert fields == [(INTEGER, b"\x00"), (INTEGER, b"\x02"), (PRIMITIVE_1, b"m"), (4, b"\x01\x02")]
    assert vlv_value_control("m", 2, b"") == vlv_value_control("m", 2)
    assert len(vlv_fields(vlv_value_control("m", 2, None)[2])) == 3


# ---------------------------------------------------------------- RFC 3876 ValuesReturnFilter


def test_a_values_return_filter_asks_for_each_value() -> None:
    oid, critical, value = values_return_filter("member", ["cn=a,dc=x", "uid=é,dc=x"])
    assert (oid, critical) == ("1.2.826.0.1.3344810.2.3", True) == (VALUES_RETURN_FILTER_OID, True)
    assert value is not None
    tag, content = one(value)
    assert tag == SEQUENCE
    # Each SimpleFilterItem is equalityMatch [3]: attributeDesc, then the value as UTF-8 octets.
    assert [(t, read(c)) for t, c in read(content)] == [
        (CONSTRUCTED_3, [(OCTET_STRING, b"member"), (OCTET_STRING, b"cn=a,dc=x")]),
        (CONSTRUCTED_3, [(OCTET_STRING, b"member"), (OCTET_STRING, "uid=é,dc=x".encode())]),
    ]


def test_a_values_return_filter_carries_values_as_they_are() -> None:
    # No filter text: parentheses and asterisks need no escaping and get none.
    value = values_return_filter("member", ["cn=(a*)\\"])[2]
    assert value == b"\x30\x14\xa3\x12\x04\x06member\x04\x08cn=(a*)\\"


def test_a_values_return_filter_for_no_values() -> None:
    assert values_return_filter("member", []) == (VALUES_RETURN_FILTER_OID, True, b"\x30\x00")


# ---------------------------------------------------------------- RFC 4528 assertion


def test_an_assertion_carries_its_filter() -> None:
    oid, critical, value = assertion("(entryCSN=20261122001740Z#000000#000#000000)")
    assert (oid, critical) == ("1.3.6.1.1.12", True) == (ASSERTION_OID, True)
    assert value is not None
    # equalityMatch [3] AttributeValueAssertion (RFC 4511 §4.5.1).
    tag, content = one(value)
    assert tag == CONSTRUCTED_3
    assert read(content) == [
        (OCTET_STRING, b"entryCSN"),
        (OCTET_STRING, b"20261122001740Z#000000#000#000000"),
    ]


def test_an_assertion_with_escapes_and_a_conjunction() -> None:
    value = assertion("(&(uid=a\\2a\\28)(objectClass=*))")[2]
    assert value is not None
    tag, content = one(value)
    assert tag == CONSTRUCTED_0  # and [0]
    equality, present = read(content)
    assert equality[0] == CONSTRUCTED_3
    assert read(equality[1]) == [(OCTET_STRING, b"uid"), (OCTET_STRING, b"a*(")]
    assert present == (PRESENT, b"objectClass")


# ---------------------------------------------------------------- RFC 4527 post-read


@pytest.mark.parametrize(
    ("attributes", "names"),
    [
        (["entryUUID", "uid"], [b"entryUUID", b"uid"]),
        (["*", "+"], [b"*", b"+"]),
        ([], [b"1.1"]),  # no attributes at all (RFC 4511 §4.5.1.8)
    ],
)
def test_a_post_read_asks_for_its_attributes(attributes: list[str], names: list[bytes]) -> None:
    oid, critical, value = post_read(attributes)
    # Not critical: a directory without the control still makes the write.
    assert (oid, critical) == ("1.3.6.1.1.13.2", False) == (POST_READ_OID, False)
    assert value is not None
    tag, content = one(value)
    assert tag == SEQUENCE
    assert read(content) == [(OCTET_STRING, name) for name in names]


def ldap3_controls(*controls: tuple[str, bytes | None]) -> dict[str, dict[str, object]]:
    """Response controls as ldap3 hands them over, from (OID, value) each."""
    decoded = {}
    for oid, value in controls:
        raw = [(0, 0, 4, oid.encode())] + ([] if value is None else [(0, 0, 4, value)])
        key, control = BaseStrategy.decode_control_fast(raw)
        decoded[key] = control
    return decoded


def entry(*attributes: tuple[bytes, list[bytes]]) -> bytes:
    """A SearchResultEntry (RFC 4511 §4.5.2), as a post-read response carries it."""
    listed = b"".join(
        tlv(SEQUENCE, tlv(OCTET_STRING, name) + tlv(0x31, b"".join(tlv(4, v) for v in values)))
        for name, values in attributes
    )
    return tlv(0x64, tlv(OCTET_STRING, b"uid=u,dc=x") + tlv(SEQUENCE, listed))


def test_a_post_read_answer() -> None:
    controls = ldap3_controls(
        ("1.2.3", b"other"),
        (POST_READ_OID, entry((b"entryUUID", [b"u-1"]), (b"mail", [b"a@x", b"b@x"]))),
    )
    written = parse_post_read(controls)
    assert written is controls[POST_READ_OID]["value"]["result"]  # type: ignore[index]
    assert written is not None
    assert written["entryUUID"] == ["u-1"]
    assert written["mail"] == ["a@x", "b@x"]


def test_a_post_read_answer_without_attributes() -> None:
    written = parse_post_read(ldap3_controls((POST_READ_OID, entry())))
    assert written is not None
    assert dict(written) == {}


@pytest.mark.parametrize(
    "controls",
    [
        None,
        {},
        {"1.3.6.1.1.13.1": {"value": {"result": {"uid": ["pre-read"]}}}},  # pre-read
        {"1.2.3": {"value": {"result": {"uid": ["u"]}}}},
        {POST_READ_OID: None},
        {POST_READ_OID: ["value"]},
        {POST_READ_OID: {}},
        {POST_READ_OID: {"value": None}},
        {POST_READ_OID: {"value": b"\x64\x00"}},  # undecoded
        {POST_READ_OID: {"value": {}}},
        {POST_READ_OID: {"value": {"result": None}}},
        {POST_READ_OID: {"value": {"result": ["uid", "u"]}}},
        {POST_READ_OID: {"value": {"result": "uid=u"}}},
        {POST_READ_OID: {"value": {"dn": "uid=u,dc=x"}}},
    ],
)
def test_no_post_read_answer(controls: dict[str, object] | None) -> None:
    assert parse_post_read(controls) is None  # type: ignore[arg-type]


# ---------------------------------------------------------------- VLV response


def vlv_response(
    target: int, count: int, result: int, context: bytes | None = None, *, tag: int = SEQUENCE
) -> bytes:
    """A VirtualListViewResponse (draft-ietf-ldapext-ldapv3-vlv-09 §6.2)."""
    fields = number(INTEGER, target) + number(INTEGER, count) + number(ENUMERATED, result)
    return tlv(tag, fields + (b"" if context is None else tlv(OCTET_STRING, context)))


@pytest.mark.parametrize(
    ("count", "result", "context"),
    [
        (12, 0, b"ctx"),  # success
        (0, 0, None),
        (100_000, 61, b"\x00\xff" * 100),  # offsetRangeError: the total is still there
        (3, 53, None),  # unwillingToPerform
        (7, 80, b"c"),  # other
        (7, 200, None),  # not one the draft lists: passed on as it came
    ],
)
def test_a_vlv_answer(count: int, result: int, context: bytes | None) -> None:
    controls = ldap3_controls(
        (SORT_OID, b"\x30\x03\x0a\x01\x00"),
        (VLV_RESPONSE_OID, vlv_response(5, count, result, context)),
    )
    assert parse_vlv_response(controls) == VlvResult(count, result, context, 5)


def test_a_vlv_answer_in_a_search_result() -> None:
    """The response control as the fast path decodes it from a whole searchResDone."""
    control = tlv(
        SEQUENCE,
        tlv(OCTET_STRING, VLV_RESPONSE_OID.encode())
        + tlv(OCTET_STRING, vlv_response(1, 42, 0, b"k")),
    )
    done = tlv(SEARCH_DONE, tlv(ENUMERATED, b"\x00") + tlv(4, b"") + tlv(4, b""))
    data = tlv(SEQUENCE, tlv(INTEGER, b"\x07") + done + tlv(CONSTRUCTED_0, control))
    _, tag, start, end = parse_message(data)
    final = parse_final(data, start, end, tag, frozenset())
    assert parse_vlv_response(final["controls"]) == VlvResult(42, 0, b"k", 1)


@pytest.mark.parametrize(
    "controls",
    [
        None,
        {},
        {"1.2.3": {"value": vlv_response(1, 5, 0)}},
        {VLV_REQUEST_OID: {"value": vlv_response(1, 5, 0)}},  # the request's OID
        {VLV_RESPONSE_OID: {}},
        {VLV_RESPONSE_OID: {"value": None}},
        {VLV_RESPONSE_OID: {"value": vlv_response(1, 5, 0).hex()}},
    ],
)
def test_no_vlv_answer(controls: dict[str, dict[str, object]] | None) -> None:
    assert parse_vlv_response(controls) is None


def test_a_vlv_answer_without_a_value() -> None:
    assert parse_vlv_response(ldap3_controls((VLV_RESPONSE_OID, None))) is None


@pytest.mark.parametrize(
    "value",
    [
        b"",
        vlv_response(1, 5, 0, b"ctx")[:-1],  # cut short
        tlv(SEQUENCE, number(INTEGER, 1) + number(INTEGER, 5)),  # no result
        vlv_response(1, 5, 0, tag=0x31),  # a SET, not a SEQUENCE
    ],
)
def test_a_malformed_vlv_answer_is_never_taken_for_a_count(value: bytes) -> None:
    with pytest.raises(DirectoryRefused) as refused:
        parse_vlv_response({VLV_RESPONSE_OID: {"value": value}})
    assert refused.value.status == 502
    assert "malformed virtual list view control" in str(refused.value)
