"""The fast path's requests against known bytes (RFC 4511 §4.5.1, §4.6, §4.7; RFC 4515).

Example-based and fast: each expected message is written out octet by octet, so a wrong tag,
length or value shows at once. tests/unit/test_ldap_wire.py checks the same encoder against
ldap3's own bytes over many generated inputs.
"""

from __future__ import annotations

import re

import pytest
from ldap3 import BASE, MODIFY_ADD, MODIFY_DELETE, MODIFY_INCREMENT, MODIFY_REPLACE, SUBTREE

from scim_core.backends.ldap.encoding import (
    MODIFY_OPERATIONS,
    SCOPES,
    FilterError,
    NotOurs,
    encode_add_request,
    encode_attribute_list,
    encode_filter,
    encode_modify_request,
    encode_search_request,
)


@pytest.fixture(autouse=True)
def encoded_afresh() -> None:
    """Each example is encoded, not answered from the cache an earlier test filled."""
    encode_filter.cache_clear()
    encode_attribute_list.cache_clear()


# ---------------------------------------------------------------- whole messages


def test_a_subtree_search_for_every_entry_without_attributes() -> None:
    got = encode_search_request(1, "dc=example,dc=com", 2, "(objectClass=*)", [])
    assert got == bytes.fromhex(
        "30 3b"  # LDAPMessage
        " 02 01 01"  # messageID 1
        " 63 36"  # [APPLICATION 3] SearchRequest
        " 04 11 64633d6578616d706c652c64633d636f6d"  # baseObject "dc=example,dc=com"
        " 0a 01 02"  # scope wholeSubtree
        " 0a 01 03"  # derefAliases derefAlways (what ldap3 sends by default)
        " 02 01 00"  # sizeLimit 0
        " 02 01 00"  # timeLimit 0
        " 01 01 00"  # typesOnly FALSE
        " 87 0b 6f626a656374436c617373"  # present "objectClass"
        " 30 05 04 03 312e31"  # attributes: "1.1", none at all
    )


def test_a_search_with_every_parameter_and_a_control() -> None:
    got = encode_search_request(
        2,
        "",
        0,
        "(&(uid=a)(!(cn=b*)))",
        ["cn"],
        controls=[("1.2.3", True, b"\x30\x00")],
        deref=0,
        size_limit=500,
        time_limit=30,
        types_only=True,
    )
    assert got == bytes.fromhex(
        "30 48 02 01 02"
        " 63 31"
        " 04 00"  # the root DSE
        " 0a 01 00"  # baseObject
        " 0a 01 00"  # neverDerefAliases
        " 02 02 01f4"  # sizeLimit 500
        " 02 01 1e"  # timeLimit 30
        " 01 01 ff"  # typesOnly TRUE
        " a0 17"  # and
        "  a3 08 04 03 756964 04 01 61"  # uid=a
        "  a2 0b a4 09 04 02 636e 30 03 80 01 62"  # not (cn=b*)
        " 30 04 04 02 636e"  # attributes: cn
        " a0 10"  # [0] Controls
        "  30 0e 04 05 312e322e33 01 01 ff 04 02 3000"  # 1.2.3, critical, its value
    )


def test_scopes_are_numbered_as_rfc_4511_numbers_them() -> None:
    assert SCOPES[BASE] == 0 and SCOPES[SUBTREE] == 2
    for number in (0, 1, 2):
        request = encode_search_request(1, "", number, "(a=*)", [])
        assert request[9:12] == bytes((0x0A, 0x01, number))


@pytest.mark.parametrize(
    ("message_id", "encoded"),
    [
        (1, "02 01 01"),
        (127, "02 01 7f"),
        (128, "02 02 0080"),  # a leading 0 keeps it positive
        (255, "02 02 00ff"),
        (256, "02 02 0100"),
        (32_767, "02 02 7fff"),
        (32_768, "02 03 008000"),
        (65_535, "02 03 00ffff"),
        (2**31 - 1, "02 04 7fffffff"),
    ],
)
def test_message_ids_are_shortest_positive_integers(message_id: int, encoded: str) -> None:
    request = encode_search_request(message_id, "", 0, "(a=*)", [])
    id_field = bytes.fromhex(encoded)
    assert request[2 : 2 + len(id_field)] == id_field
    assert request[1] == len(request) - 2  # the message's length counts the id's octets


@pytest.mark.parametrize(
    ("limit", "encoded"), [(0, "02 01 00"), (127, "02 01 7f"), (128, "02 02 0080")]
)
def test_size_and_time_limits(limit: int, encoded: str) -> None:
    field = bytes.fromhex(encoded)
    sized = encode_search_request(1, "", 0, "(a=*)", [], size_limit=limit)
    timed = encode_search_request(1, "", 0, "(a=*)", [], time_limit=limit)
    assert sized[15:].startswith(field + bytes.fromhex("02 01 00"))
    assert timed[15:].startswith(bytes.fromhex("02 01 00") + field)


def test_a_modify_with_every_operation() -> None:
    changes = {
        "cn": [(MODIFY_REPLACE, ["x"]), (MODIFY_DELETE, [])],
        "n": [(MODIFY_INCREMENT, [b"1"]), (MODIFY_ADD, ["y"])],
    }
    assert encode_modify_request(3, "uid=a", changes) == bytes.fromhex(
        "30 49 02 01 03"
        " 66 44"  # [APPLICATION 6] ModifyRequest
        " 04 05 7569643d61"  # object "uid=a"
        " 30 3b"  # changes
        "  30 0e 0a 01 02 30 09 04 02 636e 31 03 04 01 78"  # replace cn: x
        "  30 0b 0a 01 01 30 06 04 02 636e 31 00"  # delete cn
        "  30 0d 0a 01 03 30 08 04 01 6e 31 03 04 01 31"  # increment n by 1 (RFC 4525)
        "  30 0d 0a 01 00 30 08 04 01 6e 31 03 04 01 79"  # add n: y
    )


def test_modify_operations_are_taken_by_name_or_number() -> None:
    by_name = {MODIFY_ADD: 0, MODIFY_DELETE: 1, MODIFY_REPLACE: 2, MODIFY_INCREMENT: 3}
    for name, number in by_name.items():
        assert MODIFY_OPERATIONS[name] == MODIFY_OPERATIONS[number] == number
        numbered = encode_modify_request(1, "", {"a": [(number, ["v"])]})
        assert numbered == encode_modify_request(1, "", {"a": [(name, ["v"])]})
        assert numbered[13:16] == bytes((0x0A, 0x01, number))


def test_an_add_with_text_and_octets() -> None:
    attributes = {"objectClass": ["top"], "uid": [b"a"]}
    assert encode_add_request(4, "uid=a", attributes) == bytes.fromhex(
        "30 30 02 01 04"
        " 68 2b"  # [APPLICATION 8] AddRequest
        " 04 05 7569643d61"  # entry "uid=a"
        " 30 22"  # attributes
        "  30 14 04 0b 6f626a656374436c617373 31 05 04 03 746f70"  # objectClass: top
        "  30 0a 04 03 756964 31 03 04 01 61"  # uid: a
    )


def test_text_is_sent_as_utf8() -> None:
    dn = "cn=\u00e9"  # 5 octets in UTF-8
    assert encode_add_request(1, dn, {"cn": ["\u4e2d"]}) == bytes.fromhex(
        "30 1b 02 01 01 68 16 04 05 636e3dc3a9 30 0d 30 0b 04 02 636e 31 05 04 03 e4b8ad"
    )
    assert encode_modify_request(1, dn, {"\u00e9": [(MODIFY_ADD, ["\u4e2d"])]}) == bytes.fromhex(
        "30 20 02 01 01 66 1b 04 05 636e3dc3a9"
        " 30 12 30 10 0a 01 00 30 0b 04 02 c3a9 31 05 04 03 e4b8ad"
    )
    assert encode_search_request(1, dn, 0, "(a=*)", ["\u00e9"]) == bytes.fromhex(
        "30 24 02 01 01 63 1f 04 05 636e3dc3a9 0a 01 00 0a 01 03 02 01 00 02 01 00 01 01 00"
        " 87 01 61 30 04 04 02 c3a9"
    )


@pytest.mark.parametrize(
    ("controls", "encoded"),
    [
        (None, ""),
        ([], ""),  # no controls at all, not an empty [0]
        ([("1.2", False, None)], "a0 07 30 05 04 03 312e32"),  # criticality FALSE left out
        ([("1.2", True, None)], "a0 0a 30 08 04 03 312e32 01 01 ff"),
        ([("1.2", False, b"")], "a0 09 30 07 04 03 312e32 04 00"),  # an empty value is sent
        (
            [("1.2", False, b"v"), ("1.3", True, b"w")],
            "a0 17 30 08 04 03 312e32 04 01 76 30 0b 04 03 312e33 01 01 ff 04 01 77",
        ),
    ],
)
def test_controls_follow_the_operation(controls, encoded: str) -> None:
    modify = encode_modify_request(5, "", {}, controls=controls)
    add = encode_add_request(5, "", {}, controls=controls)
    tail = bytes.fromhex(encoded)
    header = bytes((0x30, 9 + len(tail), 0x02, 0x01, 0x05))
    assert modify == header + bytes.fromhex("66 04 04 00 30 00") + tail
    assert add == header + bytes.fromhex("68 04 04 00 30 00") + tail


@pytest.mark.parametrize(
    ("values", "named"), [([1], "int"), ([bytearray(b"x")], "bytearray"), ([None], "NoneType")]
)
def test_a_value_left_to_ldap3_is_named_by_its_type(values, named: str) -> None:
    with pytest.raises(NotOurs, match=f"^{named}$"):
        encode_add_request(1, "cn=x", {"n": values})
    with pytest.raises(NotOurs, match=f"^{named}$"):
        encode_modify_request(1, "cn=x", {"n": [(MODIFY_ADD, values)]})


def test_values_it_does_not_encode_are_left_to_ldap3() -> None:
    refused = [
        lambda: encode_add_request(1, "cn=x", {"n": [1]}),
        lambda: encode_add_request(1, "cn=x", {"n": [bytearray(b"x")]}),
        lambda: encode_add_request(1, "cn=x", {"n": "one"}),
        lambda: encode_add_request(1, "cn=x", {"n": b"one"}),
        lambda: encode_modify_request(1, "cn=x", {"n": [(MODIFY_ADD, [None])]}),
        lambda: encode_modify_request(1, "cn=x", {"n": [(MODIFY_ADD, "one")]}),
        lambda: encode_modify_request(1, "cn=x", {"n": [(MODIFY_ADD, b"one")]}),
    ]
    for encode in refused:
        with pytest.raises(NotOurs):
            encode()


# ---------------------------------------------------------------- lengths


@pytest.mark.parametrize(
    ("size", "octets"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),  # the largest short form
        (128, "81 80"),  # the smallest long form
        (255, "81 ff"),
        (256, "82 0100"),
        (65_535, "82 ffff"),
        (65_536, "83 010000"),
    ],
)
def test_lengths_at_the_boundaries_of_their_forms(size: int, octets: str) -> None:
    name = b"n" * size
    length = bytes.fromhex(octets)
    inner = b"\x04" + length + name
    got = encode_attribute_list((name.decode(),))
    assert got[0] == 0x30 and got.endswith(inner)


@pytest.mark.parametrize(
    ("size", "outer"),
    [(125, "7f"), (126, "81 80"), (252, "81 ff"), (253, "82 0100"), (65_531, "82 ffff")],
)
def test_the_enclosing_length_counts_the_inner_header(size: int, outer: str) -> None:
    got = encode_attribute_list(("n" * size,))
    assert got.startswith(b"\x30" + bytes.fromhex(outer) + b"\x04")


def test_no_attributes_is_one_dot_one() -> None:
    assert encode_attribute_list(()) == b"\x30\x05\x04\x031.1"
    assert encode_attribute_list(("cn", "uid")) == b"\x30\x09\x04\x02cn\x04\x03uid"


# ---------------------------------------------------------------- filters


@pytest.mark.parametrize(
    ("text", "encoded"),
    [
        ("(uid=a)", "a3 08 04 03 756964 04 01 61"),
        ("(uid=)", "a3 07 04 03 756964 04 00"),
        ("(uid=*)", "87 03 756964"),
        ("(a>=1)", "a5 06 04 01 61 04 01 31"),
        ("(a<=1)", "a6 06 04 01 61 04 01 31"),
        ("(a~=1)", "a8 06 04 01 61 04 01 31"),
        ("(cn=a*b*c)", "a4 0f 04 02 636e 30 09 80 01 61 81 01 62 82 01 63"),
        ("(cn=a*)", "a4 09 04 02 636e 30 03 80 01 61"),
        ("(cn=*c)", "a4 09 04 02 636e 30 03 82 01 63"),
        ("(cn=*b*)", "a4 09 04 02 636e 30 03 81 01 62"),
        ("(cn=a**c)", "a4 0c 04 02 636e 30 06 80 01 61 82 01 63"),  # no empty any
        ("(cn=*b**d*)", "a4 0c 04 02 636e 30 06 81 01 62 81 01 64"),
        ("(&)", "a0 00"),  # RFC 4526 absolute true
        ("(|)", "a1 00"),  # and absolute false
        ("(&(a=1)(b=2))", "a0 10 a3 06 04 01 61 04 01 31 a3 06 04 01 62 04 01 32"),
        ("(|(a=1)(b=*))", "a1 0b a3 06 04 01 61 04 01 31 87 01 62"),
        ("(!(a=*))", "a2 03 87 01 61"),
        ("(&(|(!(a=*))))", "a0 07 a1 05 a2 03 87 01 61"),
        ("(cn:dn:2.5.13.5:=x)", "a9 14 81 08 322e352e31332e35 82 02 636e 83 01 78 84 01 ff"),
        ("(cn:DN:=x)", "a9 0a 82 02 636e 83 01 78 84 01 ff"),
        ("(:dn:1.2:=x)", "a9 0b 81 03 312e32 83 01 78 84 01 ff"),
        ("(:1.2:=\\2a)", "a9 08 81 03 312e32 83 01 2a"),
        ("(cn:=x)", "a9 07 82 02 636e 83 01 78"),
        ("(cn:1.2:=x)", "a9 0c 81 03 312e32 82 02 636e 83 01 78"),
        ("(X-Y=1)", "a3 08 04 03 582d59 04 01 31"),
        ("(uid= a )", "a3 0a 04 03 756964 04 03 206120"),  # spaces are part of the value
    ],
)
def test_filters_encode_to_known_bytes(text: str, encoded: str) -> None:
    assert encode_filter(text) == bytes.fromhex(encoded)


@pytest.mark.parametrize(
    ("value", "octets"),
    [
        ("\\2a", b"*"),
        ("\\2A", b"*"),
        ("\\28\\29", b"()"),
        ("\\5c", b"\\"),
        ("\\00", b"\x00"),
        ("\\ff", b"\xff"),  # any octet, even one that is no UTF-8 on its own
        ("\\c3\\a9", "\u00e9".encode()),
        ("a\\2ab", b"a*b"),
        ("\\2a\\2a", b"**"),
        ("\\30\\31", b"01"),
        ("\u00e9", "\u00e9".encode()),
        ("\\4a\\4b\\4c", b"JKL"),
    ],
)
def test_escapes_are_undone(value: str, octets: bytes) -> None:
    assert encode_filter(f"(a={value})") == b"\xa3" + bytes((5 + len(octets),)) + (
        b"\x04\x01a\x04" + bytes((len(octets),)) + octets
    )


def test_escapes_in_every_kind_of_value() -> None:
    assert encode_filter("(a>=\\2a)") == bytes.fromhex("a5 06 04 01 61 04 01 2a")
    assert encode_filter("(a=\\2a*\\28*\\29)") == bytes.fromhex(
        "a4 0e 04 01 61 30 09 80 01 2a 81 01 28 82 01 29"
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "uid=x",
        " (uid=x)",
        "(uid=x",
        "(uid=x))",
        "(uid=x) ",
        "(uid=x)(cn=y)",
        "(&(uid=x)",
        "(&(uid=x",
        "(&(a=1)(uid=x",
        "(&()(a=1))",
        "(|())",
        "(&(uid=x)x)",
        "(!(a=1)(b=2))",
        "(!)",
        "(=x)",
        "(>=x)",
        "(~=x)",
        "(=*)",
        "(uid)",
        "(cn=**)",
        "(cn=*)x",
        "(uid=\\zz)",
        "(uid=\\2)",
        "(uid=\\)",
        "(uid=\\g0)",
        "(uid=\\0g)",
        "(uid=\\ 2)",
        "(uid=\\+2)",
        "(uid=a(b)",
        "(u id=x)",
        "(u(id=x)",
        "(u*id=x)",
        "(u\\id=x)",
        "(u\x00id=x)",
        "(a b>=x)",
        "(a*=x)",
        "(:dn:=x)",
        "(:=x)",
        "(cn::=x)",
        "(cn:dn::=x)",
        "(cn:dn:a:b:=x)",
        "(c n:=x)",
        "(:dn:1.2:3:=x)",
    ],
)
def test_malformed_filters_are_refused(text: str) -> None:
    with pytest.raises(FilterError):
        encode_filter(text)


@pytest.mark.parametrize("item", ["u id=x", "u id=*", "u id=a*", "u id>=x", "u id~=x", "c n:=x"])
def test_a_malformed_attribute_is_named_with_its_item(item: str) -> None:
    with pytest.raises(FilterError, match=re.escape(f"attribute description in ({item})")):
        encode_filter(f"(&({item}))")


def test_a_filter_error_says_what_is_wrong() -> None:
    with pytest.raises(FilterError, match="malformed escape"):
        encode_filter("(uid=\\zz)")
    with pytest.raises(FilterError, match="text after the filter"):
        encode_filter("(uid=x)(cn=y)")
    with pytest.raises(FilterError, match="exactly one"):
        encode_filter("(!(a=1)(b=2))")
    assert issubclass(FilterError, ValueError)
