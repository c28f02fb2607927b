"""wire.py's BER against ldap3's own: the same request bytes, the same decoded answers.

Pure functions only: ldap3 (with pyasn1) encodes the reference requests and the answers a
server would send; the round trip through a real slapd is in tests/integration/test_wire.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ldap3 import (
    BASE,
    DEREF_ALWAYS,
    LEVEL,
    MODIFY_ADD,
    MODIFY_DELETE,
    MODIFY_INCREMENT,
    MODIFY_REPLACE,
    SUBTREE,
)
from ldap3.operation.add import add_operation
from ldap3.operation.modify import modify_operation
from ldap3.operation.search import search_operation, search_result_entry_response_to_dict_fast
from ldap3.protocol.convert import build_controls_list
from ldap3.protocol.rfc4511 import (
    URI,
    LDAPMessage,
    MessageID,
    PartialAttribute,
    PartialAttributeList,
    ProtocolOp,
    Referral,
    ResultCode,
    SearchResultDone,
    SearchResultEntry,
    Vals,
)
from ldap3.strategy.base import BaseStrategy
from ldap3.utils.asn1 import decode_message_fast, encode, ldap_result_to_dict_fast
from pyasn1.codec.ber import encoder as pyasn1_encoder

from scim_core.backends.ldap.controls import (
    POST_READ_OID,
    assertion,
    parse_post_read,
    post_read,
    sort_control,
    values_return_filter,
    vlv_control,
)
from scim_core.backends.ldap.decoding import parse_entry, parse_message, parse_result
from scim_core.backends.ldap.encoding import (
    NotOurs,
    encode_add_request,
    encode_attribute_list,
    encode_filter,
    encode_modify_request,
    encode_search_request,
)
from scim_core.backends.ldap.escape import filter_value

BASE_DN = "ou=people,dc=example,dc=org"
SCOPES = {BASE: 0, LEVEL: 1, SUBTREE: 2}


def ldap3_request(
    message_id: int, base: str, scope: str, text: str, attributes: list[str], controls=None
):
    """The bytes ldap3's Connection.search sends for a search."""
    request = search_operation(
        base,
        text,
        scope,
        DEREF_ALWAYS,
        attributes or ["1.1"],
        0,
        0,
        False,
        True,  # auto_escape, as a Connection has by default
        True,
        None,
        validator=None,
        check_names=False,
    )
    message = LDAPMessage()
    message["messageID"] = MessageID(message_id)
    message["protocolOp"] = ProtocolOp().setComponentByName("searchRequest", request)
    if controls:
        message["controls"] = build_controls_list(controls)
    return encode(message)


FILTERS = [
    "(objectClass=*)",
    "(&(objectClass=inetOrgPerson)(uid=user000123))",
    "(&(objectClass=inetOrgPerson)(entryUUID=3f1c2b7a-1234-4c3b-9d2e-0a1b2c3d4e5f))",
    "(|(a=1)(b=2)(c=3))",
    "(!(pwdAccountLockedTime=000001010000Z))",
    "(&(a=1)(|(b=2)(!(c=3)))(d=*))",
    "(cn=ab*cd*ef)",
    "(cn=*x*)",
    "(cn=x*)",
    "(cn=*x)",
    "(cn=a**b)",
    "(mail>=m)",
    "(mail<=m)",
    "(mail~=m)",
    "(uid=\\2a\\28\\29\\5c\\00)",
    "(uid=\\2A\\5C)",
    "(userAccountControl:1.2.840.113556.1.4.803:=2)",
    "(cn:dn:2.5.13.5:=x)",
    "(:dn:2.5.13.5:=x)",
    "(cn:=x)",
    "(cn:dn:=x)",
    "(:2.5.13.5:=x)",
    "(uid=Jos\u00e9 \u00fc\u4e2d)",
    "(uid=)",
    "(memberOf=cn=bench-big,ou=groups,dc=example,dc=org)",
    "(uid=" + "x" * 300 + ")",
    "(&" + "(uid=u)" * 40 + ")",
    "(&(&(&(&(a=1)))))",
]


@pytest.mark.parametrize("text", FILTERS)
@pytest.mark.parametrize("message_id", [1, 127, 128, 255, 256, 32768, 70_000, 2**31 - 2])
def test_requests_are_byte_for_byte_ldap3s(text: str, message_id: int) -> None:
    for scope, number in SCOPES.items():
        for attributes in ([], ["entryUUID", "uid", "memberOf"], ["a" * 200, "b" * 70_000]):
            expected = ldap3_request(message_id, BASE_DN, scope, text, attributes)
            got = encode_search_request(message_id, BASE_DN, number, text, attributes)
            assert got == expected, (text, message_id, scope, attributes[:1])


CONTROLS = [
    [sort_control("uid", "caseIgnoreOrderingMatch"), vlv_control(90_000, 99)],
    [sort_control("cn"), vlv_control(1, 0, b"\x00context" * 40)],
    [values_return_filter("member", ["cn=a,dc=x", "uid=b,dc=x"])],
    [assertion("(entryCSN=1)"), post_read(["entryUUID", "uid"])],
    [("1.2.3.4", False, None), ("1.2.3.5", True, None), ("1.2.3.6", False, b"")],
]


@pytest.mark.parametrize("controls", CONTROLS)
def test_request_controls_are_byte_for_byte_ldap3s(controls) -> None:
    for message_id in (1, 300, 2**31 - 2):
        expected = ldap3_request(message_id, BASE_DN, LEVEL, "(uid=a*)", ["uid"], controls)
        got = encode_search_request(message_id, BASE_DN, 1, "(uid=a*)", ["uid"], controls=controls)
        assert got == expected


def test_a_long_base_dn_and_many_attributes() -> None:
    base = "cn=" + "g" * 5000 + ",ou=groups,dc=example,dc=org"
    attributes = [f"attribute{i}" for i in range(500)]
    expected = ldap3_request(9, base, BASE, "(objectClass=groupOfNames)", attributes)
    assert encode_search_request(9, base, 0, "(objectClass=groupOfNames)", attributes) == expected


# A small RFC 4515 grammar: every value goes through filter_value as the backend's do.
_attribute = st.sampled_from(["uid", "cn", "mail", "entryUUID", "memberOf", "title"])
# ldap3 strips whitespace around a value (see test_spaces_around_a_value_are_sent_as_they_are).
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12).filter(
    lambda s: s == s.strip()
)


def _simple(attribute: str, op: str, value: str) -> str:
    return f"({attribute}{op}{filter_value(value)})"


def _substring(attribute: str, parts: list[str]) -> str:
    return f"({attribute}=" + "*".join(filter_value(p) for p in parts) + ")"


_leaf = st.one_of(
    st.builds(_simple, _attribute, st.sampled_from(["=", ">=", "<=", "~="]), _text),
    st.builds(lambda a: f"({a}=*)", _attribute),
    st.builds(
        _substring,
        _attribute,
        st.lists(_text, min_size=2, max_size=4).filter(lambda p: any(p)),
    ),
)
_filters = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.builds(lambda fs: "(&" + "".join(fs) + ")", st.lists(inner, min_size=1, max_size=4)),
        st.builds(lambda fs: "(|" + "".join(fs) + ")", st.lists(inner, min_size=1, max_size=4)),
        st.builds(lambda f: f"(!{f})", inner),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(text=_filters, message_id=st.integers(1, 2**31 - 2))
def test_generated_filters_encode_as_ldap3_does(text: str, message_id: int) -> None:
    expected = ldap3_request(message_id, BASE_DN, LEVEL, text, ["uid"])
    assert encode_search_request(message_id, BASE_DN, 1, text, ["uid"]) == expected


@given(value=st.one_of(st.text(alphabet=st.characters(blacklist_categories=("Cs",))), st.binary()))
def test_every_value_reaches_the_wire_as_exactly_its_octets(value: str | bytes) -> None:
    """Why filters may stay text: whatever a value holds (filter syntax, NUL, spaces, any
    octet), filter_value's escapes come back off the text as exactly the value, never as
    filter structure."""
    octets = value.encode("utf-8") if isinstance(value, str) else value
    equality = b"\x04\x02cn" + b"\x04" + _length(octets) + octets  # RFC 4511 §4.5.1.7
    assert encode_filter(f"(cn={filter_value(value)})") == b"\xa3" + _length(equality) + equality


def _length(content: bytes) -> bytes:
    size = len(content)
    if size < 0x80:
        return bytes((size,))
    octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes((0x80 | len(octets),)) + octets


def test_spaces_around_a_value_are_sent_as_they_are() -> None:
    # ldap3 strips them; RFC 4515 does not (the matching rule decides what they mean).
    assert encode_filter("(uid= a b )") == b"\xa3\x0c\x04\x03uid\x04\x05 a b "


def test_no_attributes_is_one_dot_one() -> None:
    assert encode_attribute_list(()) == encode_attribute_list(("1.1",)) == b"0\x05\x04\x031.1"


# ---------------------------------------------------------------- answers


def entry_message(message_id: int, dn: bytes, attributes: list[tuple[str, list[bytes]]]) -> bytes:
    """A SearchResultEntry message as pyasn1 (through ldap3's ASN.1 types) encodes it."""
    entry = SearchResultEntry()
    entry["object"] = dn
    values = PartialAttributeList()
    for index, (name, items) in enumerate(attributes):
        attribute = PartialAttribute()
        attribute["type"] = name
        vals = Vals()
        for position, item in enumerate(items):
            vals.setComponentByPosition(position, item)
        attribute["vals"] = vals
        values.setComponentByPosition(index, attribute)
    entry["attributes"] = values
    message = LDAPMessage()
    message["messageID"] = MessageID(message_id)
    message["protocolOp"] = ProtocolOp().setComponentByName("searchResEntry", entry)
    return bytes(encode(message))


def done_message(message_id: int, code: int, dn: str, text: str, referrals=()) -> bytes:
    done = SearchResultDone()
    done["resultCode"] = ResultCode(code)
    done["matchedDN"] = dn
    done["diagnosticMessage"] = text
    if referrals:
        referral = Referral()
        for index, uri in enumerate(referrals):
            referral.setComponentByPosition(index, URI(uri))
        done["referral"] = referral
    message = LDAPMessage()
    message["messageID"] = MessageID(message_id)
    message["protocolOp"] = ProtocolOp().setComponentByName("searchResDone", done)
    return bytes(encode(message))


ENTRIES = [
    (b"uid=user000001,ou=people,dc=example,dc=org", [("uid", [b"user000001"])]),
    (
        "uid=Jos\u00e9,ou=people,dc=example,dc=org".encode(),
        [
            ("entryUUID", [b"3f1c2b7a-1234-4c3b-9d2e-0a1b2c3d4e5f"]),
            ("cn", ["Jos\u00e9 M\u00fcller".encode(), b"J. M."]),
            ("description", [b"d" * 200]),
            ("jpegPhoto", [bytes(range(256)) * 300]),
            ("mail", [f"m{i}@example.org".encode() for i in range(300)]),
        ],
    ),
    (b"", []),
]


@pytest.mark.parametrize(("dn", "attributes"), ENTRIES)
@pytest.mark.parametrize("message_id", [1, 200, 70_000])
def test_entries_decode_as_ldap3_decodes_them(dn, attributes, message_id) -> None:
    data = entry_message(message_id, dn, attributes)
    received_id, tag, start, end = parse_message(data)
    assert (received_id, tag, end) == (message_id, 0x64, len(data))
    names = {name.lower(): name for name, _ in attributes}
    got = parse_entry(data, start, end, names)
    reference = search_result_entry_response_to_dict_fast(
        decode_message_fast(data)["payload"], None, None, False
    )
    assert got["type"] == "searchResEntry"
    assert got["dn"] == reference["dn"]
    assert set(got["attributes"]) == set(reference["raw_attributes"])
    for name, raw in reference["raw_attributes"].items():
        try:
            expected = [v.decode("utf-8") for v in raw]
        except UnicodeDecodeError:
            expected = raw  # ldap3 would give latin-1 text; binary stays bytes here
        assert got["attributes"][name] == expected, name


def test_attributes_are_keyed_as_the_request_spelled_them() -> None:
    data = entry_message(3, b"uid=u,dc=x", [("ENTRYuuid", [b"1"]), ("other", [b"2"])])
    _, _, start, end = parse_message(data)
    got = parse_entry(data, start, end, {"entryuuid": "entryUUID"})
    assert got["attributes"] == {"entryUUID": ["1"], "other": ["2"]}


def test_binary_attributes_stay_octets_even_when_they_look_like_text() -> None:
    guid = b"abcdefghijklmnop"  # 16 octets that happen to be valid UTF-8
    data = entry_message(4, b"CN=u,DC=x", [("objectGUID", [guid]), ("cn", [b"u"])])
    _, _, start, end = parse_message(data)
    got = parse_entry(data, start, end, {}, frozenset({"objectguid"}))
    assert got["attributes"] == {"objectGUID": [guid], "cn": ["u"]}


@pytest.mark.parametrize(
    ("code", "dn", "text", "referrals"),
    [
        (0, "", "", ()),
        (32, "ou=people,dc=example,dc=org", "no such object", ()),
        (4, "", "size limit \u00e9", ()),
        (10, "", "", ("ldap://a.example/dc=x", "ldap://b.example/dc=x")),
        (80, "", "x" * 500, ()),
    ],
)
def test_results_decode_as_ldap3_decodes_them(code, dn, text, referrals) -> None:
    data = done_message(70_000, code, dn, text, referrals)
    received_id, tag, start, end = parse_message(data)
    assert (received_id, tag) == (70_000, 0x65)
    got = parse_result(data, start, end, tag)
    reference = ldap_result_to_dict_fast(decode_message_fast(data)["payload"])
    assert got == {**reference, "type": "searchResDone"}


# ---------------------------------------------------------------- post-read


def test_post_read_asks_for_the_attributes_it_is_given() -> None:
    oid, critical, value = post_read(["entryUUID", "uid"])
    assert (oid, critical) == (POST_READ_OID, False)
    # The control value is an AttributeSelection, as ldap3's SearchRequest carries it.
    selection = ldap3_request(1, "", BASE, "(objectClass=*)", ["entryUUID", "uid"])
    assert selection.endswith(value)
    assert value == b"0\x10\x04\tentryUUID\x04\x03uid"


def test_a_post_read_answer_is_read_from_ldap3s_decoded_controls() -> None:
    entry = SearchResultEntry()
    entry["object"] = b"uid=u,dc=x"
    attribute = PartialAttribute()
    attribute["type"] = "entryCSN"
    vals = Vals()
    vals.setComponentByPosition(0, b"20261122001740.999657Z#000000#000#000000")
    attribute["vals"] = vals
    attributes = PartialAttributeList()
    attributes.setComponentByPosition(0, attribute)
    entry["attributes"] = attributes
    control = (POST_READ_OID, False, pyasn1_encoder.encode(entry))
    # What ldap3's fast decoder makes of the response control (as in a modify's result).
    raw = [(0, 0, 4, POST_READ_OID.encode()), (0, 0, 4, control[2])]
    decoded = dict([BaseStrategy.decode_control_fast(raw)])
    written = parse_post_read(decoded)
    assert written is not None
    assert written["entryCSN"] == ["20261122001740.999657Z#000000#000#000000"]
    assert written["ENTRYCSN"] == written["entryCSN"]  # ldap3's keys ignore case
    assert parse_post_read(None) is None
    assert parse_post_read({"1.2.3": {"value": None}}) is None
    assert parse_post_read({POST_READ_OID: {"value": None}}) is None


def test_values_return_filter_is_unchanged() -> None:
    # The pyasn1 controls stay as they were; a smoke check that the import chain holds.
    assert values_return_filter("member", ["cn=a"])[0] == "1.2.826.0.1.3344810.2.3"


@pytest.mark.parametrize(
    "text",
    [
        "(entryCSN=20261122001740.999657Z#000000#000#000000)",
        "(modifyTimestamp=20261122001740Z)",
        "(uSNChanged=12345)",
        "(entryCSN=\\2a\\28x\\29)",
    ],
)
def test_the_assertion_control_carries_the_filter_as_ldap3_encodes_it(text: str) -> None:
    from ldap3.operation.search import compile_filter, parse_filter

    parsed = parse_filter(text, None, False, False, None, False)
    expected = pyasn1_encoder.encode(compile_filter(parsed.elements[0]))
    assert assertion(text) == ("1.3.6.1.1.12", True, expected)


# ---------------------------------------------------------------- modify


def ldap3_modify(message_id: int, dn: str, changes, controls=None) -> bytes:
    """The bytes ldap3's Connection.modify sends."""
    message = LDAPMessage()
    message["messageID"] = MessageID(message_id)
    request = modify_operation(dn, changes, True)
    message["protocolOp"] = ProtocolOp().setComponentByName("modifyRequest", request)
    if controls:
        message["controls"] = build_controls_list(controls)
    return encode(message)


MODIFIES = [
    {"title": [(MODIFY_REPLACE, ["New title"])]},
    {"displayName": [(MODIFY_DELETE, [])], "title": [(MODIFY_REPLACE, ["Jos\u00e9 \u4e2d"])]},
    {"member": [(MODIFY_ADD, ["uid=a,dc=x", "uid=b,dc=x"]), (MODIFY_DELETE, ["cn=p,dc=x"])]},
    {"jpegPhoto": [(MODIFY_REPLACE, [bytes(range(256)) * 300])]},
    {"objectClass": [(MODIFY_ADD, ["scimPerson"])], "scimExternalId": [(MODIFY_REPLACE, ["e"])]},
    {"uidNumber": [(MODIFY_INCREMENT, ["1"])], "x": [(2, ["int operations as ldap3 takes"])]},
    {"description": [(MODIFY_REPLACE, ["d" * 70_000])]},
]


@pytest.mark.parametrize("changes", MODIFIES)
@pytest.mark.parametrize("controls", [None, [assertion("(entryCSN=1)"), post_read(["uid"])]])
def test_modify_requests_are_byte_for_byte_ldap3s(changes, controls) -> None:
    for message_id in (1, 128, 70_000, 2**31 - 2):
        dn = "uid=Jos\u00e9\\2C,ou=people,dc=example,dc=org"
        expected = ldap3_modify(message_id, dn, changes, controls)
        assert encode_modify_request(message_id, dn, changes, controls=controls) == expected


def ldap3_add(message_id: int, dn: str, attributes, controls=None) -> bytes:
    """The bytes ldap3's Connection.add sends."""
    message = LDAPMessage()
    message["messageID"] = MessageID(message_id)
    request = add_operation(dn, attributes, True)
    message["protocolOp"] = ProtocolOp().setComponentByName("addRequest", request)
    if controls:
        message["controls"] = build_controls_list(controls)
    return encode(message)


ADDS = [
    {"objectClass": ["top", "inetOrgPerson"], "uid": ["alice"], "cn": ["Alice"], "sn": ["L"]},
    {"objectClass": ["user"], "unicodePwd": ['"Pa55word!"'.encode("utf-16-le")]},
    {"cn": ["Jos\u00e9 \u4e2d"], "member": ["uid=a,dc=x", "uid=b,dc=x"], "jpegPhoto": [bytes(256)]},
]


@pytest.mark.parametrize("attributes", ADDS)
@pytest.mark.parametrize("controls", [None, [post_read(["entryUUID", "cn"])]])
def test_add_requests_are_byte_for_byte_ldap3s(attributes, controls) -> None:
    for message_id in (1, 128, 70_000, 2**31 - 2):
        dn = "uid=Jos\u00e9\\2C,ou=people,dc=example,dc=org"
        expected = ldap3_add(message_id, dn, attributes, controls)
        assert encode_add_request(message_id, dn, attributes, controls=controls) == expected


@pytest.mark.parametrize("attributes", [{"n": [1]}, {"n": "one value"}])
def test_add_values_it_does_not_encode_are_left_to_ldap3(attributes) -> None:
    with pytest.raises(NotOurs):
        encode_add_request(1, "cn=x", attributes)


@pytest.mark.parametrize(
    "changes", [{"n": [(MODIFY_REPLACE, [1])]}, {"n": [(MODIFY_REPLACE, "one value")]}]
)
def test_values_it_does_not_encode_are_left_to_ldap3(changes) -> None:

    with pytest.raises(NotOurs):
        encode_modify_request(1, "uid=a,dc=x", changes)
