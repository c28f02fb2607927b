"""The RFC 4533 refreshOnly codec: values OpenLDAP sent, values encoded here, hostile values.

The ``REAL_*`` values were captured from OpenLDAP 2.5.13 (slapd with slapo-syncprov and a
session log) answering a refreshOnly search; their UUIDs are written out as OpenLDAP shows
entryUUID. The round trips encode with this file's own pyasn1 types (the RFC's module, with
real ENUMERATED and BOOLEAN types), so a field the codec reads from the wrong place fails here
whatever the codec's own types say. Every malformed value must raise
:class:`~scim_core.backends.ldap.encoding.ProtocolError` and nothing else.
"""

# pyasn1 declares ASN.1 types through camelCase class attributes.
# ruff: noqa: N815

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyasn1.codec.ber import encoder
from pyasn1.type import namedtype, tag, univ

from scim_core.backends.ldap.encoding import ProtocolError
from scim_core.backends.ldap.syncrefresh import (
    SYNC_DONE_OID,
    SYNC_INFO_OID,
    SYNC_REQUEST_OID,
    SYNC_STATE_OID,
    SyncDone,
    SyncInfo,
    SyncInfoKind,
    SyncState,
    SyncStateKind,
    cookie_for,
    parse_sync_done,
    parse_sync_info,
    parse_sync_state,
    sync_request,
)

REAL_ID_SET = (
    b"\xa3}\x04drid=000,csn=20261128164422.606967Z#000000#000#000000,"
    b"delcsn=20261128164422.769037Z#000000#000#000000"
    b"\x01\x01\xff1\x12\x04\x10\xb5e\x98\x90\x7f\x96\x10A\x80{QZ\x13\xb2\xc6z"
)
REAL_STATE_ADD = b"0\x15\n\x01\x01\x04\x10\xb5e\x94\x94\x7f\x96\x10A\x80wQZ\x13\xb2\xc6z"
REAL_DONE = b"09\x044rid=000,csn=20261128164423.066135Z#000000#000#000000\x01\x01\xff"
REAL_DONE_NO_COOKIE = b"0\x03\x01\x01\xff"
REAL_VALUES = (REAL_ID_SET, REAL_STATE_ADD, REAL_DONE, REAL_DONE_NO_COOKIE)

STATES: tuple[SyncStateKind, ...] = ("present", "add", "modify", "delete")
Parser = Callable[[bytes], object]
PARSERS: tuple[Parser, ...] = (parse_sync_state, parse_sync_info, parse_sync_done)

UUID_A = bytes(range(16))
UUID_B = bytes(range(0xF0, 0x100))
UUID_C = b"\x5a" * 16
TEXT_A = "00010203-0405-0607-0809-0a0b0c0d0e0f"
TEXT_B = "f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff"
TEXT_C = "5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a5a"
CSN_1 = "20261128164422.606967Z#000000#000#000000"
CSN_2 = "20261128170102.000001Z#00000a#001#000000"
CSN_3 = "20261128170103.123456Z#000000#00f#000002"
# A cookie that is not UTF-8: opaque octets, which must come back byte for byte.
RAW_COOKIE = b"rid=000,\xff\xfe"


def tlv(identifier: int, content: bytes) -> bytes:
    """One BER element, definite length in the short or long form."""
    if len(content) < 0x80:
        return bytes((identifier, len(content))) + content
    size = len(content).to_bytes((len(content).bit_length() + 7) // 8, "big")
    return bytes((identifier, 0x80 | len(size))) + size + content


# ---------------------------------------------------------------- RFC 4533's module, for tests


def _context(number: int) -> tag.Tag:
    return tag.Tag(tag.tagClassContext, tag.tagFormatConstructed, number)


class StateValue(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("state", univ.Enumerated()),
        namedtype.NamedType("entryUUID", univ.OctetString()),
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
    )


class DoneValue(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
        namedtype.DefaultedNamedType("refreshDeletes", univ.Boolean(False)),
    )


class RefreshValue(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
        namedtype.DefaultedNamedType("refreshDone", univ.Boolean(True)),
    )


class UuidSet(univ.SetOf):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = univ.OctetString()


class IdSetValue(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
        namedtype.DefaultedNamedType("refreshDeletes", univ.Boolean(False)),
        namedtype.NamedType("syncUUIDs", UuidSet()),
    )


class InfoValue(univ.Choice):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.NamedType(
            "newcookie",
            univ.OctetString().subtype(
                implicitTag=tag.Tag(tag.tagClassContext, tag.tagFormatSimple, 0)
            ),
        ),
        namedtype.NamedType("refreshDelete", RefreshValue().subtype(implicitTag=_context(1))),
        namedtype.NamedType("refreshPresent", RefreshValue().subtype(implicitTag=_context(2))),
        namedtype.NamedType("syncIdSet", IdSetValue().subtype(implicitTag=_context(3))),
    )


def encode_state(state: int, entry_uuid: bytes, cookie: bytes | None) -> bytes:
    value = StateValue()
    value["state"] = state
    value["entryUUID"] = entry_uuid
    if cookie is not None:
        value["cookie"] = cookie
    return bytes(encoder.encode(value))


def encode_done(cookie: bytes | None, refresh_deletes: bool | None) -> bytes:
    value = DoneValue()
    if cookie is not None:
        value["cookie"] = cookie
    if refresh_deletes is not None:
        value["refreshDeletes"] = refresh_deletes
    return bytes(encoder.encode(value))


def encode_info(
    kind: str,
    cookie: bytes | None,
    flag: bool | None = None,
    uuids: tuple[bytes, ...] = (),
) -> bytes:
    """A syncInfoValue of choice ``kind``; ``flag`` is refreshDone or refreshDeletes."""
    value = InfoValue()
    if kind == "newcookie":
        value["newcookie"] = cookie
        return bytes(encoder.encode(value))
    chosen = value.setComponentByName(kind).getComponentByName(kind)
    if cookie is not None:
        chosen["cookie"] = cookie
    if flag is not None:
        chosen["refreshDeletes" if kind == "syncIdSet" else "refreshDone"] = flag
    if kind == "syncIdSet":
        chosen["syncUUIDs"] = UuidSet()
        for item in uuids:
            chosen["syncUUIDs"].append(item)
    return bytes(encoder.encode(value))


# ---------------------------------------------------------------- values OpenLDAP sent


def test_the_oids_are_rfc_4533s() -> None:
    assert SYNC_REQUEST_OID == "1.3.6.1.4.1.4203.1.9.1.1"
    assert SYNC_STATE_OID == "1.3.6.1.4.1.4203.1.9.1.2"
    assert SYNC_DONE_OID == "1.3.6.1.4.1.4203.1.9.1.3"
    assert SYNC_INFO_OID == "1.3.6.1.4.1.4203.1.9.1.4"


def test_real_sync_id_set_names_the_deleted_entry() -> None:
    assert str(uuid.UUID(bytes=REAL_ID_SET[-16:])) == "b5659890-7f96-1041-807b-515a13b2c67a"
    assert parse_sync_info(REAL_ID_SET) == SyncInfo(
        kind="syncIdSet",
        cookie="rid=000,csn=20261128164422.606967Z#000000#000#000000,"
        "delcsn=20261128164422.769037Z#000000#000#000000",
        refresh_done=None,
        refresh_deletes=True,
        uuids=("b5659890-7f96-1041-807b-515a13b2c67a",),
    )
    assert parse_sync_info(REAL_ID_SET).cookie == REAL_ID_SET[4:104].decode()


def test_real_sync_state_is_an_add() -> None:
    assert parse_sync_state(REAL_STATE_ADD) == SyncState(
        state="add", entry_uuid="b5659494-7f96-1041-8077-515a13b2c67a", cookie=None
    )


def test_real_sync_done_with_a_cookie() -> None:
    assert parse_sync_done(REAL_DONE) == SyncDone(
        cookie="rid=000,csn=20261128164423.066135Z#000000#000#000000", refresh_deletes=True
    )


def test_real_sync_done_without_a_cookie() -> None:
    assert parse_sync_done(REAL_DONE_NO_COOKIE) == SyncDone(cookie=None, refresh_deletes=True)


# ---------------------------------------------------------------- the request and the cookie


def test_cookie_for_one_server() -> None:
    assert cookie_for((CSN_1,)) == "rid=000,csn=20261128164422.606967Z#000000#000#000000"


def test_cookie_for_several_servers_keeps_their_order() -> None:
    assert cookie_for((CSN_1, CSN_2, CSN_3)) == f"rid=000,csn={CSN_1};{CSN_2};{CSN_3}"


@pytest.mark.parametrize(
    "marker",
    [
        (),
        ("",),
        (CSN_1 + ",sid=001",),
        (CSN_1, CSN_2 + ";" + CSN_3),
        ("20261128164422.606967Z#000000#000",),
        ("20261128164422.606967Z#000000#000#00000G",),
        (" " + CSN_1,),
    ],
)
def test_cookie_for_refuses_what_is_not_a_csn(marker: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        cookie_for(marker)


def test_sync_request_without_a_cookie() -> None:
    # SEQUENCE { mode ENUMERATED refreshOnly(1) }: no cookie, reloadHint at its default.
    assert sync_request(None) == (SYNC_REQUEST_OID, True, b"\x30\x03\x0a\x01\x01")


def test_sync_request_with_a_cookie() -> None:
    cookie = cookie_for((CSN_1,))
    assert len(cookie) == 52
    expected = b"\x30\x39\x0a\x01\x01\x04\x34" + cookie.encode()
    assert sync_request(cookie) == (SYNC_REQUEST_OID, True, expected)


def test_sync_request_with_a_long_cookie_uses_the_long_length_form() -> None:
    cookie = cookie_for((CSN_1, CSN_2, CSN_3))
    assert len(cookie) == 134
    expected = b"\x30\x81\x8c\x0a\x01\x01\x04\x81\x86" + cookie.encode()
    assert sync_request(cookie) == (SYNC_REQUEST_OID, True, expected)


def test_sync_request_with_an_empty_cookie_sends_it() -> None:
    assert sync_request("")[2] == b"\x30\x05\x0a\x01\x01\x04\x00"


def test_a_cookie_that_is_not_utf8_goes_back_byte_for_byte() -> None:
    done = parse_sync_done(encode_done(RAW_COOKIE, None))
    assert done.cookie is not None
    assert sync_request(done.cookie)[2] == tlv(0x30, b"\x0a\x01\x01" + tlv(0x04, RAW_COOKIE))


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("state", [0, 1, 2, 3])
@pytest.mark.parametrize("cookie", [None, b"", b"rid=000,csn=x", RAW_COOKIE])
def test_sync_state_round_trip(state: int, cookie: bytes | None) -> None:
    parsed = parse_sync_state(encode_state(state, UUID_A, cookie))
    assert parsed == SyncState(
        state=STATES[state],
        entry_uuid=TEXT_A,
        cookie=None if cookie is None else cookie.decode(errors="surrogateescape"),
    )
    if cookie is not None:
        assert parsed.cookie is not None
        assert parsed.cookie.encode(errors="surrogateescape") == cookie


@pytest.mark.parametrize("cookie", [None, b"", b"rid=000,csn=x", RAW_COOKIE])
@pytest.mark.parametrize("refresh_deletes", [None, False, True])
def test_sync_done_round_trip(cookie: bytes | None, refresh_deletes: bool | None) -> None:
    assert parse_sync_done(encode_done(cookie, refresh_deletes)) == SyncDone(
        cookie=None if cookie is None else cookie.decode(errors="surrogateescape"),
        refresh_deletes=bool(refresh_deletes),
    )


@pytest.mark.parametrize("cookie", [b"", b"rid=000,csn=x", RAW_COOKIE])
def test_sync_info_new_cookie_round_trip(cookie: bytes) -> None:
    assert parse_sync_info(encode_info("newcookie", cookie)) == SyncInfo(
        kind="newcookie", cookie=cookie.decode(errors="surrogateescape")
    )


@pytest.mark.parametrize("kind", ["refreshDelete", "refreshPresent"])
@pytest.mark.parametrize("cookie", [None, b"rid=000,csn=x", RAW_COOKIE])
@pytest.mark.parametrize("refresh_done", [None, False, True])
def test_sync_info_refresh_round_trip(
    kind: SyncInfoKind, cookie: bytes | None, refresh_done: bool | None
) -> None:
    assert parse_sync_info(encode_info(kind, cookie, refresh_done)) == SyncInfo(
        kind=kind,
        cookie=None if cookie is None else cookie.decode(errors="surrogateescape"),
        refresh_done=refresh_done is not False,
        refresh_deletes=None,
        uuids=(),
    )


@pytest.mark.parametrize("cookie", [None, b"rid=000,csn=x"])
@pytest.mark.parametrize("refresh_deletes", [None, False, True])
@pytest.mark.parametrize(
    ("uuids", "texts"),
    [((), ()), ((UUID_A,), (TEXT_A,)), ((UUID_A, UUID_C, UUID_B), (TEXT_A, TEXT_C, TEXT_B))],
)
def test_sync_info_id_set_round_trip(
    cookie: bytes | None,
    refresh_deletes: bool | None,
    uuids: tuple[bytes, ...],
    texts: tuple[str, ...],
) -> None:
    assert parse_sync_info(encode_info("syncIdSet", cookie, refresh_deletes, uuids)) == SyncInfo(
        kind="syncIdSet",
        cookie=None if cookie is None else cookie.decode(),
        refresh_done=None,
        refresh_deletes=bool(refresh_deletes),
        uuids=texts,
    )


def test_sync_id_set_keeps_the_order_sent() -> None:
    # OpenLDAP does not sort the SET OF (BER does not ask it to).
    uuids = tlv(0x31, tlv(0x04, UUID_B) + tlv(0x04, UUID_A))
    assert parse_sync_info(tlv(0xA3, uuids)).uuids == (TEXT_B, TEXT_A)


def test_booleans_are_any_nonzero_octet_and_defaults_may_be_sent() -> None:
    assert parse_sync_done(tlv(0x30, tlv(0x01, b"\x01"))).refresh_deletes is True
    assert parse_sync_done(tlv(0x30, tlv(0x01, b"\x00"))).refresh_deletes is False
    refresh = parse_sync_info(tlv(0xA1, tlv(0x01, b"\xff")))
    assert (refresh.kind, refresh.refresh_done) == ("refreshDelete", True)
    present = parse_sync_info(tlv(0xA2, tlv(0x01, b"\x00")))
    assert (present.kind, present.refresh_done) == ("refreshPresent", False)
    id_set = parse_sync_info(tlv(0xA3, tlv(0x01, b"\x00") + tlv(0x31, b"")))
    assert (id_set.refresh_deletes, id_set.uuids) == (False, ())


def test_long_length_forms_are_read() -> None:
    assert parse_sync_done(b"\x30\x84\x00\x00\x00\x03\x01\x01\xff") == SyncDone(None, True)


# ---------------------------------------------------------------- malformed values


STATE_BODY = tlv(0x04, UUID_A)
MALFORMED: list[tuple[str, Parser, bytes]] = [
    ("state: empty", parse_sync_state, b""),
    ("state: empty sequence", parse_sync_state, tlv(0x30, b"")),
    ("state: set, not sequence", parse_sync_state, tlv(0x31, tlv(0x0A, b"\x01") + STATE_BODY)),
    (
        "state: INTEGER, not ENUMERATED",
        parse_sync_state,
        tlv(0x30, tlv(0x02, b"\x01") + STATE_BODY),
    ),
    ("state: 4", parse_sync_state, tlv(0x30, tlv(0x0A, b"\x04") + STATE_BODY)),
    ("state: 255", parse_sync_state, tlv(0x30, tlv(0x0A, b"\x00\xff") + STATE_BODY)),
    ("state: -1", parse_sync_state, tlv(0x30, tlv(0x0A, b"\xff") + STATE_BODY)),
    ("state: 256", parse_sync_state, tlv(0x30, tlv(0x0A, b"\x01\x00") + STATE_BODY)),
    ("state: no octet", parse_sync_state, tlv(0x30, tlv(0x0A, b"") + STATE_BODY)),
    ("state: leading zero", parse_sync_state, tlv(0x30, tlv(0x0A, b"\x00\x01") + STATE_BODY)),
    ("state: no UUID", parse_sync_state, tlv(0x30, tlv(0x0A, b"\x01"))),
    ("state: UUID of 15", parse_sync_state, encode_state(1, UUID_A[:15], None)),
    ("state: UUID of 17", parse_sync_state, encode_state(1, UUID_A + b"\x00", None)),
    ("state: UUID of 0", parse_sync_state, encode_state(1, b"", None)),
    ("state: trailing", parse_sync_state, REAL_STATE_ADD + b"\x00"),
    ("state: two values", parse_sync_state, REAL_STATE_ADD * 2),
    (
        "state: extra element",
        parse_sync_state,
        tlv(0x30, tlv(0x0A, b"\x01") + STATE_BODY + tlv(0x04, b"c") + tlv(0x04, b"d")),
    ),
    ("done: truncated", parse_sync_done, REAL_DONE[:-1]),
    ("done: trailing", parse_sync_done, REAL_DONE_NO_COOKIE + b"\x00\x00"),
    ("done: fields swapped", parse_sync_done, tlv(0x30, tlv(0x01, b"\xff") + tlv(0x04, b"c"))),
    ("done: BOOLEAN of 0", parse_sync_done, tlv(0x30, tlv(0x01, b""))),
    ("done: BOOLEAN of 2", parse_sync_done, tlv(0x30, tlv(0x01, b"\xff\xff"))),
    ("done: indefinite length", parse_sync_done, b"\x30\x80\x01\x01\xff\x00\x00"),
    ("done: length of 9 octets", parse_sync_done, b"\x30\x89" + b"\xff" * 9 + b"\x01\x01\xff"),
    ("done: length of 8 octets", parse_sync_done, b"\x30\x88" + b"\x7f" + b"\xff" * 7),
    ("done: wrong tag", parse_sync_done, tlv(0xA3, b"")),
    ("info: empty", parse_sync_info, b""),
    ("info: choice [4]", parse_sync_info, tlv(0xA4, b"")),
    ("info: choice [5]", parse_sync_info, tlv(0xA5, tlv(0x04, b"c"))),
    ("info: universal sequence", parse_sync_info, tlv(0x30, b"")),
    ("info: refreshDelete primitive", parse_sync_info, tlv(0x81, b"")),
    ("info: newcookie trailing", parse_sync_info, encode_info("newcookie", b"c") + b"\x00"),
    ("info: truncated", parse_sync_info, REAL_ID_SET[:-1]),
    ("info: indefinite length", parse_sync_info, b"\xa1\x80\x00\x00"),
    ("info: indefinite newcookie", parse_sync_info, b"\x80\x80\x00\x00"),
    ("info: refresh BOOLEAN of 2", parse_sync_info, tlv(0xA2, tlv(0x01, b"\x00\x00"))),
    ("info: idSet BOOLEAN of 0", parse_sync_info, tlv(0xA3, tlv(0x01, b"") + tlv(0x31, b""))),
    ("info: idSet without UUIDs", parse_sync_info, tlv(0xA3, b"")),
    ("info: idSet UUIDs in a SEQUENCE", parse_sync_info, tlv(0xA3, tlv(0x30, tlv(0x04, UUID_A)))),
    (
        "info: idSet UUID of 15",
        parse_sync_info,
        encode_info("syncIdSet", None, None, (UUID_A, UUID_B[:15])),
    ),
    (
        "info: idSet UUID of 17",
        parse_sync_info,
        encode_info("syncIdSet", None, True, (UUID_A * 2,)),
    ),
]


# Each parser's errors name the value it was given (what a log of them must tell apart).
NOUNS: dict[Parser, str] = {
    parse_sync_state: "sync state control",
    parse_sync_info: "sync info message",
    parse_sync_done: "sync done control",
}


@pytest.mark.parametrize(
    ("parse", "value"), [(p, v) for _, p, v in MALFORMED], ids=[n for n, _, _ in MALFORMED]
)
def test_malformed_values_are_protocol_errors(parse: Parser, value: bytes) -> None:
    with pytest.raises(ProtocolError, match=rf"^a (malformed )?{NOUNS[parse]}( |$)"):
        parse(value)


def test_errors_never_hold_the_value() -> None:
    secret = b"rid=000,csn=do-not-echo"
    cases: list[tuple[Parser, bytes]] = [
        (parse_sync_state, encode_state(1, b"\xab" * 15, secret)),
        (parse_sync_state, encode_state(4, UUID_A, secret)),
        (parse_sync_state, encode_state(1, UUID_A, secret) + secret),
        (parse_sync_done, tlv(0x30, tlv(0x04, secret) + tlv(0x01, b"\xab\xab"))),
        (parse_sync_info, encode_info("syncIdSet", secret, True, (b"\xab" * 17,))),
        (parse_sync_info, tlv(0xA4, tlv(0x04, secret))),
    ]
    for parse, value in cases:
        with pytest.raises(ProtocolError) as caught:
            parse(value)
        message = str(caught.value)
        for leaked in ("do-not-echo", "\\xab", "abab", "171"):
            assert leaked not in message
        assert 0 < len(message) <= 100


# ---------------------------------------------------------------- hostile input


def well_formed(result: object) -> None:
    """What any parse may return: known states and choices, canonical UUIDs, the fields of
    the choice made and no other, cookies that go back to octets."""
    if isinstance(result, SyncState):
        assert result.state in STATES
        uuids: tuple[str, ...] = (result.entry_uuid,)
        cookie = result.cookie
    elif isinstance(result, SyncDone):
        assert isinstance(result.refresh_deletes, bool)
        uuids, cookie = (), result.cookie
    else:
        assert isinstance(result, SyncInfo)
        refresh = result.kind in ("refreshDelete", "refreshPresent")
        id_set = result.kind == "syncIdSet"
        assert refresh or id_set or (result.kind == "newcookie" and result.cookie is not None)
        assert isinstance(result.refresh_done, bool) is refresh
        assert isinstance(result.refresh_deletes, bool) is id_set
        assert id_set or result.uuids == ()
        uuids, cookie = result.uuids, result.cookie
    for text in uuids:
        assert text == str(uuid.UUID(text))
    assert cookie is None or isinstance(cookie.encode(errors="surrogateescape"), bytes)


def parses_or_refuses(parse: Parser, value: bytes) -> bool:
    """Whether ``parse`` took ``value`` (and gave a well-formed result); any exception but
    ProtocolError propagates."""
    try:
        result = parse(value)
    except ProtocolError:
        return False
    well_formed(result)
    return True


@pytest.mark.parametrize("value", REAL_VALUES, ids=["idset", "state", "done", "done-no-cookie"])
def test_every_truncation_of_a_real_value_is_refused(value: bytes) -> None:
    for parse in PARSERS:
        for size in range(len(value)):
            assert not parses_or_refuses(parse, value[:size]), (parse.__name__, size)


def test_each_real_value_is_taken_only_by_its_own_parser() -> None:
    owners = {
        REAL_ID_SET: parse_sync_info,
        REAL_STATE_ADD: parse_sync_state,
        REAL_DONE: parse_sync_done,
        REAL_DONE_NO_COOKIE: parse_sync_done,
    }
    for value, owner in owners.items():
        assert [p for p in PARSERS if parses_or_refuses(p, value)] == [owner]


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=160))
def test_random_bytes_parse_or_raise_protocol_error(value: bytes) -> None:
    for parse in PARSERS:
        parses_or_refuses(parse, value)


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(REAL_VALUES),
    st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_corrupted_real_values_parse_or_raise_protocol_error(
    value: bytes, changes: list[tuple[int, int]]
) -> None:
    corrupted = bytearray(value)
    for position, octet in changes:
        corrupted[position % len(corrupted)] = octet
    for parse in PARSERS:
        parses_or_refuses(parse, bytes(corrupted))
