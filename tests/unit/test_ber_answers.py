"""The fast path's answers decoded from known bytes (RFC 4511 §4.1, §4.5.2; RFC 4527).

Example-based and fast: well-formed answers at the boundaries of BER's length forms, and
hostile ones that must fail at once as a
:class:`~scim_core.backends.ldap.encoding.ProtocolError`. The property tests against ldap3's
decoder and random bytes are in tests/unit/test_ldap_wire.py and test_wire_hostile.py.
"""

from __future__ import annotations

import pytest

from scim_core.backends.ldap.controls import POST_READ_OID
from scim_core.backends.ldap.decoding import (
    message_frame,
    message_head,
    operation_extent,
    parse_entry,
    parse_final,
    parse_message,
    parse_result,
)
from scim_core.backends.ldap.encoding import MAX_MESSAGE_SIZE, ProtocolError, RangedAnswer

ENTRY, DONE, MODIFIED, ADDED, EXTENDED = 0x64, 0x65, 0x67, 0x69, 0x78
SORT_RESPONSE_OID = "1.2.840.113556.1.4.474"


def tlv(tag: int, content: bytes) -> bytes:
    """One BER element with the shortest definite length (the test's own, for building input)."""
    size = len(content)
    if size < 0x80:
        return bytes((tag, size)) + content
    octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes((tag, 0x80 | len(octets))) + octets + content


def message(operation: bytes, controls: bytes | None = None, message_id: bytes = b"\x07") -> bytes:
    body = tlv(0x02, message_id) + operation
    return tlv(0x30, body + (b"" if controls is None else tlv(0xA0, controls)))


def attribute(name: bytes, *values: bytes) -> bytes:
    return tlv(0x30, tlv(0x04, name) + tlv(0x31, b"".join(tlv(0x04, v) for v in values)))


def entry_content(dn: bytes, *attributes: bytes) -> bytes:
    return tlv(0x04, dn) + tlv(0x30, b"".join(attributes))


def result_content(
    code: bytes = b"\x00", dn: bytes = b"", text: bytes = b"", *rest: bytes
) -> bytes:
    return tlv(0x0A, code) + tlv(0x04, dn) + tlv(0x04, text) + b"".join(rest)


def decode_entry(data: bytes, names: dict[str, str] | None = None, binary=frozenset()):
    _, tag, start, end = parse_message(data)
    assert tag == ENTRY
    return parse_entry(data, start, end, names or {}, binary)


def decode_final(data: bytes, binary=frozenset()):
    _, tag, start, end = parse_message(data)
    return parse_final(data, start, end, tag, binary)


# A searchResDone, message id 7: success, no matched DN, no diagnostic message.
DONE_7 = bytes.fromhex("30 0c 02 01 07 65 07 0a 01 00 04 00 04 00")

# ---------------------------------------------------------------- framing


def test_a_whole_message_is_framed() -> None:
    assert message_head(DONE_7) == (14, 7, DONE)
    assert message_frame(DONE_7) == (14, 7, DONE, 5)
    assert parse_message(DONE_7) == (7, DONE, 7, 14)


def test_the_head_is_known_as_soon_as_the_operation_tag_arrives() -> None:
    for size in range(6):
        assert message_head(DONE_7[:size]) is None
    assert message_head(DONE_7[:6]) == (14, 7, DONE)


def test_a_message_is_framed_where_it_starts() -> None:
    data = b"\x30\x00junk" + DONE_7
    assert message_frame(data, 6) == (20, 7, DONE, 11)
    assert message_head(data[:11], 6) is None  # the operation's tag not there yet
    assert message_head(data[:12], 6) == (20, 7, DONE)


@pytest.mark.parametrize("length", ["81 0c", "82 000c", "83 00000c", "84 0000000c"])
def test_long_form_message_lengths(length: str) -> None:
    data = b"\x30" + bytes.fromhex(length) + DONE_7[2:]
    head = len(data) - 12
    assert message_frame(data) == (len(data), 7, DONE, head + 3)
    for size in range(head + 4):
        assert message_head(data[:size]) is None
    assert parse_message(data) == (7, DONE, head + 5, len(data))


def test_the_largest_message_is_awaited_and_one_octet_more_refused() -> None:
    largest = b"\x30\x84" + (MAX_MESSAGE_SIZE - 6).to_bytes(4, "big") + b"\x02\x01\x07\x65"
    assert message_head(largest) == (MAX_MESSAGE_SIZE, 7, DONE)
    too_large = b"\x30\x84" + (MAX_MESSAGE_SIZE - 5).to_bytes(4, "big") + b"\x02\x01\x07\x65"
    with pytest.raises(ProtocolError, match="limit"):
        message_head(too_large[:6])  # refused on the length alone


@pytest.mark.parametrize(
    ("message_id", "expected"),
    [
        ("02 01 00", 0),  # an unsolicited notification (RFC 4511 §4.4)
        ("02 01 7f", 127),
        ("02 02 0080", 128),
        ("02 02 00ff", 255),
        ("02 03 00ffff", 65_535),
        ("02 04 7fffffff", 2**31 - 1),
    ],
)
def test_message_ids(message_id: str, expected: int) -> None:
    data = tlv(0x30, bytes.fromhex(message_id) + tlv(DONE, result_content()))
    assert message_head(data) == (len(data), expected, DONE)


@pytest.mark.parametrize(
    "first_bytes",
    [
        "04 03 02 01 07",  # not a SEQUENCE
        "04 03",  # known from two octets
        "30 0c 04 01",  # from the message id's tag and size alone
        "30 0c 02 00",
        "30 0c 02 05",
        "30 03 02 01",  # no room for an operation
        "30 80 02 01 07 65",  # indefinite length
        "30 85 00 00 00 00 0c",  # a length in five octets
        "30 ff",
        "30 0c 04 01 07 65",  # the message id an OCTET STRING
        "30 0c 02 00 65 07",  # a message id of no octets
        "30 0c 02 05 00 00 00 00 07 65",  # of five
        "30 0c 02 01 ff 65",  # negative
        "30 0c 02 02 80 00 65",  # negative, in two octets
        "30 03 02 01 07",  # no operation
        "30 04 02 01 07 65",  # an operation tag without its length
    ],
)
def test_headers_that_cannot_start_an_answer_fail_at_once(first_bytes: str) -> None:
    with pytest.raises(ProtocolError):
        message_head(bytes.fromhex(first_bytes))


@pytest.mark.parametrize("form", [0x80, 0x85, 0xFF])
def test_a_length_form_ldap_forbids_is_named(form: int) -> None:
    with pytest.raises(ProtocolError, match=f"length form 0x{form:02x}"):
        message_head(bytes((0x30, form, 0x02, 0x01, 0x07, 0x65, 0x00)))


def test_the_smallest_operation_is_two_octets() -> None:
    assert message_head(bytes.fromhex("30 05 02 01 07 65 00")) == (7, 7, DONE)


@pytest.mark.parametrize(
    "data",
    [
        DONE_7[:-1],  # short of its length
        DONE_7 + b"\x00",  # more than one message
        bytes.fromhex("30 0e 02 01 07 65 07 0a 01 00 04 00 04 00 04 00"),  # then no controls
        bytes.fromhex("30 10 02 01 07 65 07 0a 01 00 04 00 04 00 a0 00 04 00"),  # controls, more
        bytes.fromhex("30 06 02 01 07 65 00 a0"),  # controls cut short
        bytes.fromhex("30 06 02 01 07 65 84 00"),  # an operation length cut short
        bytes.fromhex("30 06 02 01 07 65 05 00"),  # an operation longer than its message
        bytes.fromhex("30 06 02 01 07 65 80 00"),  # an indefinite operation
    ],
)
def test_anything_but_one_message_is_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        parse_message(data)


def test_an_operation_may_be_followed_by_controls_only() -> None:
    data = message(tlv(DONE, result_content()), tlv(0x30, tlv(0x04, b"1.2")))
    assert parse_message(data) == (7, DONE, 7, 14)
    assert operation_extent(data, 5) == (7, 14)
    with pytest.raises(ProtocolError):
        operation_extent(data[:-1], 5)


# ---------------------------------------------------------------- entries


def test_an_entry_with_text_and_binary_values() -> None:
    data = message(
        tlv(
            ENTRY,
            entry_content(
                b"uid=jos\xc3\xa9,dc=x",
                attribute(b"CN", b"Jos\xc3\xa9", b"J"),
                attribute(b"jpegPhoto", b"\xff\xd8\xff"),
                attribute(b"mail"),
            ),
        )
    )
    got = decode_entry(data, {"cn": "cn"})
    assert got == {
        "type": "searchResEntry",
        "dn": "uid=jos\u00e9,dc=x",
        "attributes": {"cn": ["Jos\u00e9", "J"], "jpegPhoto": [b"\xff\xd8\xff"], "mail": []},
    }


def test_one_value_that_is_no_utf8_keeps_the_whole_attribute_as_octets() -> None:
    data = message(tlv(ENTRY, entry_content(b"", attribute(b"a", b"ok", b"\xe9"))))
    assert decode_entry(data)["attributes"] == {"a": [b"ok", b"\xe9"]}


def test_binary_attributes_stay_octets_whatever_their_spelling() -> None:
    data = message(tlv(ENTRY, entry_content(b"", attribute(b"objectGUID", b"abc"))))
    assert decode_entry(data, binary=frozenset({"objectguid"}))["attributes"] == {
        "objectGUID": [b"abc"]
    }
    assert decode_entry(data)["attributes"] == {"objectGUID": ["abc"]}


def test_a_dn_that_is_no_utf8_is_read_as_latin1() -> None:
    data = message(tlv(ENTRY, entry_content(b"cn=\xe9")))
    assert decode_entry(data) == {"type": "searchResEntry", "dn": "cn=\u00e9", "attributes": {}}


@pytest.mark.parametrize("size", [126, 127, 128, 129, 255, 256, 65_535, 65_536])
def test_entries_at_the_boundaries_of_the_length_forms(size: int) -> None:
    """Every part of an attribute in the short and the long length form."""
    value, name = b"v" * size, b"n" * size
    data = message(
        tlv(
            ENTRY, entry_content(b"d" * size, attribute(name, value, value), attribute(b"a", value))
        )
    )
    got = decode_entry(data)
    assert got["dn"] == "d" * size
    assert got["attributes"] == {"n" * size: ["v" * size] * 2, "a": ["v" * size]}


@pytest.mark.parametrize("length", ["81 03", "82 0003", "83 000003", "84 00000003"])
def test_long_forms_of_small_lengths_are_read(length: str) -> None:
    form = bytes.fromhex(length)
    value = b"\x04" + form + b"abc"
    name = b"\x04" + form + b"uid"
    values = b"\x31" + bytes.fromhex(length[:-2]) + bytes((len(value),)) + value
    parts = name + values
    attribute_ = b"\x30" + bytes.fromhex(length[:-2]) + bytes((len(parts),)) + parts
    data = message(tlv(ENTRY, tlv(0x04, b"") + tlv(0x30, attribute_)))
    assert decode_entry(data)["attributes"] == {"uid": ["abc"]}


def test_names_are_keyed_as_the_request_spelled_them() -> None:
    data = message(
        tlv(ENTRY, entry_content(b"", attribute(b"ENTRYuuid", b"1"), attribute(b"o", b"2")))
    )
    got = decode_entry(data, {"entryuuid": "entryUUID", "uid": "uid"})
    assert got["attributes"] == {"entryUUID": ["1"], "o": ["2"]}


@pytest.mark.parametrize("name", [b"member;range=0-1499", b"member;RANGE=0-*", b"m;x;range=5-9"])
def test_ranged_attributes_are_left_to_ldap3(name: bytes) -> None:
    data = message(tlv(ENTRY, entry_content(b"", attribute(name, b"uid=a"))))
    with pytest.raises(RangedAnswer, match=r"(?i);range="):
        decode_entry(data)


@pytest.mark.parametrize("name", [b"cn;lang-en", b"cn;binary", b"range=1-2", b"xrange"])
def test_options_that_are_no_range_are_kept(name: bytes) -> None:
    data = message(tlv(ENTRY, entry_content(b"", attribute(name, b"x"))))
    assert decode_entry(data)["attributes"] == {name.decode(): ["x"]}


def _indefinite(tag: int, content: bytes) -> bytes:
    """An element with the indefinite length octet, followed by exactly 128 octets: read as a
    short length of 128 (which 0x80 is not) it would look well-formed."""
    assert len(content) == 128
    return bytes((tag, 0x80)) + content


def _in_attribute_list(attribute_: bytes) -> bytes:
    return message(tlv(ENTRY, tlv(0x04, b"") + tlv(0x30, attribute_)))


@pytest.mark.parametrize(
    "data",
    [
        _in_attribute_list(_indefinite(0x30, tlv(0x04, b"n" * 124) + tlv(0x31, b""))),
        _in_attribute_list(tlv(0x30, _indefinite(0x04, b"n" * 128) + tlv(0x31, b""))),
        _in_attribute_list(tlv(0x30, tlv(0x04, b"n") + _indefinite(0x31, tlv(0x04, b"v" * 126)))),
        _in_attribute_list(tlv(0x30, tlv(0x04, b"n") + tlv(0x31, _indefinite(0x04, b"v" * 128)))),
        message(tlv(ENTRY, _indefinite(0x04, b"d" * 128) + tlv(0x30, b""))),
    ],
    ids=["attribute", "name", "values", "value", "dn"],
)
def test_an_indefinite_length_is_refused_anywhere_in_an_entry(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_entry(data)


@pytest.mark.parametrize(
    "content",
    [
        tlv(0x30, b"") + tlv(0x30, b""),  # a SEQUENCE where the DN belongs
        tlv(0x04, b"") + tlv(0x31, b""),  # the attribute list a SET
        tlv(0x04, b"") + tlv(0x30, tlv(0x31, b"")),  # an attribute a SET
        tlv(0x04, b"") + tlv(0x30, tlv(0x30, tlv(0x02, b"u") + tlv(0x31, b""))),  # name INTEGER
        tlv(0x04, b"") + tlv(0x30, tlv(0x30, tlv(0x04, b"u") + tlv(0x30, b""))),  # values SEQ
        tlv(0x04, b"") + tlv(0x30, attribute(b"u") + tlv(0x04, b"")),  # no attribute
        tlv(0x04, b"") + tlv(0x30, tlv(0x30, tlv(0x04, b"u") + tlv(0x31, tlv(0x02, b"1")))),
        tlv(0x04, b"") + tlv(0x30, tlv(0x30, tlv(0x04, b"\xff") + tlv(0x31, b""))),  # name
        tlv(0x04, b"") + tlv(0x30, tlv(0x30, tlv(0x04, b"u") + tlv(0x31, b"") + b"\x04\x00")),
        tlv(0x04, b"") + tlv(0x30, b"") + tlv(0x04, b""),  # more than DN and attributes
        tlv(0x04, b"") + tlv(0x30, tlv(0x30, tlv(0x04, b"u"))),  # no values
        tlv(0x04, b"") + tlv(0x30, tlv(0x30, b"")),  # an empty attribute
        tlv(0x04, b""),  # no attribute list
        b"",
    ],
)
def test_entries_with_wrong_tags_or_parts_are_refused(content: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_entry(message(tlv(ENTRY, content)))


def test_parts_that_claim_more_than_their_whole_are_refused() -> None:
    following = attribute(b"b", b"x" * 10)  # bytes there to misread
    value_past_values = tlv(0x30, tlv(0x04, b"a") + b"\x31\x03\x04\x02v") + following
    name_past_attribute = b"\x30\x03\x04\x05a" + tlv(0x31, b"") + following
    values_past_attribute = b"\x30\x05\x04\x01a\x31\x04" + tlv(0x04, b"vv") + following
    for attributes in (value_past_values, name_past_attribute, values_past_attribute):
        data = message(tlv(ENTRY, tlv(0x04, b"") + tlv(0x30, attributes)))
        with pytest.raises(ProtocolError):
            decode_entry(data)


def test_an_attribute_may_not_run_past_its_entry() -> None:
    """The entry's parts claim the bytes after it (a post-read entry inside a control)."""
    data = tlv(0x04, b"") + b"\x30\x03" + b"\x30\x07" + tlv(0x04, b"a") + tlv(0x31, tlv(0x04, b""))
    end = 2 + 2 + 3  # the DN, the attribute list's header and the three octets it claims
    with pytest.raises(ProtocolError):
        parse_entry(data, 0, end, {})
    whole = tlv(0x04, b"") + tlv(0x30, attribute(b"a", b""))
    assert parse_entry(whole, 0, len(whole), {})["attributes"] == {"a": [""]}


def test_an_entry_is_read_between_its_bounds() -> None:
    content = entry_content(b"uid=a", attribute(b"cn", b"A"))
    data = b"\x00" * 3 + content + b"\xff" * 4
    got = parse_entry(data, 3, 3 + len(content), {})
    assert got == {"type": "searchResEntry", "dn": "uid=a", "attributes": {"cn": ["A"]}}


# ---------------------------------------------------------------- results


def test_a_search_result_done() -> None:
    assert decode_final(DONE_7) == {
        "result": 0,
        "description": "success",
        "dn": "",
        "message": "",
        "referrals": None,
        "type": "searchResDone",
    }


@pytest.mark.parametrize(
    ("tag", "name"),
    [
        (DONE, "searchResDone"),
        (MODIFIED, "modifyResponse"),
        (ADDED, "addResponse"),
        (EXTENDED, "extendedResp"),
        (0x6B, "0x6b"),  # a compareResponse: not one of the fast path's, named by its tag
    ],
)
def test_results_are_named_by_their_operation(tag: int, name: str) -> None:
    content = result_content(b"\x20", b"ou=people,dc=x", b"no such \xc3\xa9ntry")
    got = decode_final(message(tlv(tag, content)))
    assert got == {
        "result": 32,
        "description": "noSuchObject",
        "dn": "ou=people,dc=x",
        "message": "no such \u00e9ntry",
        "referrals": None,
        "type": name,
    }


@pytest.mark.parametrize(
    ("code", "number", "description"),
    [(b"\x7a", 122, "assertionFailed"), (b"\x00\xc8", 200, "unknown"), (b"\xff", -1, "unknown")],
)
def test_result_codes(code: bytes, number: int, description: str) -> None:
    got = decode_final(message(tlv(DONE, result_content(code))))
    assert (got["result"], got["description"]) == (number, description)


def test_a_message_that_is_no_utf8_is_read_as_latin1() -> None:
    got = decode_final(message(tlv(DONE, result_content(b"\x50", b"cn=\xe9", b"\xe9t\xe9"))))
    assert (got["dn"], got["message"]) == ("cn=\u00e9", "\u00e9t\u00e9")


@pytest.mark.parametrize("size", [127, 128, 255, 256, 65_535, 65_536])
def test_long_diagnostic_messages(size: int) -> None:
    got = decode_final(message(tlv(DONE, result_content(b"\x00", b"d" * size, b"m" * size))))
    assert (got["dn"], got["message"]) == ("d" * size, "m" * size)


@pytest.mark.parametrize(
    ("length", "readable"),
    [("81 02", True), ("84 00000002", True), ("80", False), ("85 0000000002", False)],
)
def test_length_forms_in_a_result(length: str, readable: bool) -> None:
    content = tlv(0x0A, b"\x00") + tlv(0x04, b"") + b"\x04" + bytes.fromhex(length) + b"ok"
    data = message(tlv(DONE, content))
    if readable:
        assert decode_final(data)["message"] == "ok"
    else:
        with pytest.raises(ProtocolError):
            decode_final(data)


def test_referrals_and_an_extended_responses_name() -> None:
    referral = tlv(0xA3, tlv(0x04, b"ldap://a/dc=x") + tlv(0x04, b"ldap://b/dc=x"))
    got = decode_final(message(tlv(DONE, result_content(b"\x0a", b"", b"", referral))))
    assert got["referrals"] == ["ldap://a/dc=x", "ldap://b/dc=x"]
    empty = decode_final(message(tlv(DONE, result_content(b"\x0a", b"", b"", tlv(0xA3, b"")))))
    assert empty["referrals"] == []
    name = tlv(0x8A, b"1.3.6.1.4.1.1466.20036") + tlv(0x8B, b"\x01\x02")  # and its value
    got = decode_final(message(tlv(EXTENDED, result_content(b"\x34", b"", b"bye", name))))
    assert got["responseName"] == "1.3.6.1.4.1.1466.20036"
    assert (got["type"], got["message"], got["referrals"]) == ("extendedResp", "bye", None)
    assert "responseName" not in decode_final(DONE_7)
    odd = decode_final(message(tlv(EXTENDED, result_content(b"\x00", b"", b"", b"\x8a\x021\xff"))))
    assert odd["responseName"] == "1\ufffd"  # not an OID, still no crash


@pytest.mark.parametrize(
    "content",
    [
        tlv(0x02, b"\x00") + tlv(0x04, b"") + tlv(0x04, b""),  # an INTEGER result code
        tlv(0x0A, b"\x00") + tlv(0x30, b"") + tlv(0x04, b""),  # a SEQUENCE for the DN
        tlv(0x0A, b"\x00") + tlv(0x04, b"") + tlv(0x31, b""),  # a SET for the message
        tlv(0x0A, b"\x00") + tlv(0x04, b""),  # no diagnostic message
        result_content(b"\x00", b"", b"", tlv(0xA3, tlv(0x30, b""))),  # a referral no URI
        result_content(b"\x00", b"", b"", b"\xa3\x03\x04\x02u", b"\x04\x00"),  # a URI too long
        result_content(b"\x00", b"", b"", b"\x04"),  # an element cut short
        result_content(b"\x00", b"", b"", b"\x04\x80"),  # an indefinite one
        b"\x0a",
        b"",
    ],
)
def test_results_with_wrong_tags_or_parts_are_refused(content: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_final(message(tlv(DONE, content)))


def test_a_result_may_not_run_past_its_bounds() -> None:
    """The bytes after a result are its message's controls: no part of it may claim them."""
    message_past_end = tlv(0x0A, b"\x00") + tlv(0x04, b"") + b"\x04\x02"
    element_past_end = result_content() + b"\x8a\x02"
    for content in (message_past_end, element_past_end):
        data = content + b"\xa0\x00"
        with pytest.raises(ProtocolError):
            parse_result(data, 0, len(content), DONE)
    whole = result_content() + b"\xa0\x00"
    assert parse_result(whole, 0, len(whole) - 2, DONE)["result"] == 0


# ---------------------------------------------------------------- response controls


def post_read_entry(*attributes: bytes) -> bytes:
    return tlv(ENTRY, entry_content(b"uid=alice,dc=x", *attributes))


def control(oid: str, value: bytes | None, critical: bytes | None = None) -> bytes:
    flag = b"" if critical is None else tlv(0x01, critical)
    return tlv(0x30, tlv(0x04, oid.encode()) + flag + (b"" if value is None else tlv(0x04, value)))


def modified(*controls: bytes) -> bytes:
    return message(tlv(MODIFIED, result_content()), b"".join(controls))


def test_a_result_without_controls_has_none() -> None:
    assert "controls" not in decode_final(message(tlv(MODIFIED, result_content())))
    assert decode_final(message(tlv(MODIFIED, result_content()), b""))["controls"] == {}


def test_a_post_read_entry() -> None:
    entry = post_read_entry(attribute(b"entryUUID", b"u-1"), attribute(b"objectGUID", b"\x01"))
    got = decode_final(modified(control(POST_READ_OID, entry)), frozenset({"entryuuid"}))
    assert got["result"] == 0 and got["type"] == "modifyResponse"
    read = got["controls"][POST_READ_OID]
    assert (read["description"], read["criticality"]) == ("post-read", False)
    assert read["value"]["dn"] == "uid=alice,dc=x"
    written = read["value"]["result"]
    assert written["entryUUID"] == written["ENTRYUUID"] == [b"u-1"]  # binary as asked
    assert written["objectguid"] == ["\x01"]  # valid UTF-8, not asked for as binary
    assert set(got["controls"]) == {POST_READ_OID}


@pytest.mark.parametrize(("flag", "critical"), [(b"\xff", True), (b"\x01", True), (b"\x00", False)])
def test_the_criticality_of_a_control(flag: bytes, critical: bool) -> None:
    got = decode_final(modified(control(POST_READ_OID, post_read_entry(), flag)))
    assert got["controls"][POST_READ_OID]["criticality"] is critical


def test_other_controls_are_decoded_by_ldap3_beside_the_post_read() -> None:
    sort_value = tlv(0x30, tlv(0x0A, b"\x00"))
    data = modified(
        control(SORT_RESPONSE_OID, sort_value),
        control(POST_READ_OID, post_read_entry(attribute(b"uid", b"alice"))),
        control("1.2.3", b"xyz", b"\xff"),
    )
    got = decode_final(data)["controls"]
    assert set(got) == {SORT_RESPONSE_OID, POST_READ_OID, "1.2.3"}
    assert got[SORT_RESPONSE_OID]["value"] == sort_value
    assert got[SORT_RESPONSE_OID]["criticality"] is False
    assert got["1.2.3"] == {"description": "", "criticality": True, "value": b"xyz"}
    assert got[POST_READ_OID]["value"]["result"]["uid"] == ["alice"]
    assert got[POST_READ_OID]["description"] == "post-read"


def test_controls_without_a_value() -> None:
    alone = decode_final(modified(control("1.2.3", None)))["controls"]
    assert alone == {"1.2.3": {"description": "", "criticality": False, "value": None}}
    both = decode_final(modified(control("1.2.3", None), control("1.2.4", None, b"\xff")))
    assert both["controls"] == {
        "1.2.3": {"description": "", "criticality": False, "value": None},
        "1.2.4": {"description": "", "criticality": True, "value": None},
    }


def test_controls_ldap3_cannot_read_are_named_by_its_error() -> None:
    with pytest.raises(ProtocolError, match=r"undecodable response controls \(TypeError\)"):
        decode_final(modified(control(POST_READ_OID, None)))  # no entry to read


@pytest.mark.parametrize(
    "controls",
    [
        tlv(0x31, tlv(0x04, b"1.2")),  # a control as a SET
        tlv(0x30, tlv(0x06, b"\x2a\x03")),  # its type an OBJECT IDENTIFIER
        tlv(0x30, tlv(0x04, b"1.2") + tlv(0x02, b"\x01")),  # its value an INTEGER
        tlv(0x30, tlv(0x04, b"1.2") + tlv(0x04, b"") + tlv(0x04, b"")),  # two values
        tlv(0x30, tlv(0x04, b"1.2") + tlv(0x01, b"\xff") + tlv(0x01, b"\xff")),  # two flags
        tlv(0x30, tlv(0x04, b"1.2") + tlv(0x01, b"")) + control("1.3", None),  # an empty flag
        tlv(0x30, tlv(0x04, b"1.2") + tlv(0x01, b"\xff\xff")),  # a flag of two octets
        tlv(0x30, tlv(0x04, b"1.\xc3\xa9")),  # a type that is no OID
        tlv(0x30, tlv(0x04, b"1.2")) + b"\x30",  # cut short
        tlv(0x30, tlv(0x04, b"1.2")) + b"\x30\x05",  # claiming more than there is
        control(POST_READ_OID, b""),  # no entry
        control(POST_READ_OID, tlv(DONE, b"")),  # another operation for the entry
        control(POST_READ_OID, post_read_entry() + b"\x00"),  # more than the entry
        control(POST_READ_OID, post_read_entry()[:-1]),  # the entry cut short
        control(POST_READ_OID, tlv(ENTRY, tlv(0x04, b"") + tlv(0x31, b""))),  # a malformed entry
        control(POST_READ_OID, None),  # a post-read answer without its entry
    ],
)
def test_malformed_response_controls_are_refused(controls: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_final(modified(controls))


def test_controls_must_end_the_message() -> None:
    result = result_content()
    data = tlv(0x30, tlv(0x02, b"\x07") + tlv(MODIFIED, result) + tlv(0xA0, b"") + b"\x04\x00")
    start = 5 + 2
    with pytest.raises(ProtocolError):
        parse_final(data, start, start + len(result), MODIFIED)
    for wrong in (b"\x30\x00", b"\xa1\x00"):  # not a [0] Controls
        data = tlv(0x30, tlv(0x02, b"\x07") + tlv(MODIFIED, result) + wrong)
        with pytest.raises(ProtocolError):
            parse_final(data, start, start + len(result), MODIFIED)
