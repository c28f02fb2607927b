"""wire.py's decoder against hostile answers: random bytes, truncations, wrong tags, lengths
that lie, depth bombs. Pure functions only; the same answers from a TCP peer are in
tests/integration/test_wire.py.

Every malformed answer must raise :class:`~scim_core.backends.ldap.wire.ProtocolError` (a
communication error: the connection is dropped, the request answers 503), never another
exception, and a length field is judged on the bytes that carry it, before any body is read.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scim_core.backends.ldap.connection import UNAVAILABLE
from scim_core.backends.ldap.decoding import message_head, parse_entry, parse_final, parse_message
from scim_core.backends.ldap.encoding import MAX_MESSAGE_SIZE, ProtocolError

_ENTRY, _DONE, MODIFY_RESPONSE, _EXTENDED = 0x64, 0x65, 0x67, 0x78


def header(tag: int, size: int) -> bytes:
    if size < 0x80:
        return bytes((tag, size))
    octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes((tag, 0x80 | len(octets))) + octets


def tlv(tag: int, content: bytes) -> bytes:
    return header(tag, len(content)) + content


def message(message_id: int, operation: bytes, controls: bytes | None = None) -> bytes:
    body = tlv(0x02, message_id.to_bytes(4, "big", signed=True)) + operation
    return tlv(0x30, body + (tlv(0xA0, controls) if controls is not None else b""))


ENTRY_CONTENT = tlv(0x04, b"uid=alice,dc=x") + tlv(
    0x30,
    tlv(0x30, tlv(0x04, b"uid") + tlv(0x31, tlv(0x04, b"alice")))
    + tlv(0x30, tlv(0x04, b"mail") + tlv(0x31, b"".join(tlv(0x04, b"a@x") for _ in range(3))))
    + tlv(0x30, tlv(0x04, b"jpegPhoto") + tlv(0x31, tlv(0x04, bytes(range(256)) * 2))),
)


def entry(message_id: int = 7) -> bytes:
    return message(message_id, tlv(_ENTRY, ENTRY_CONTENT))


def done(message_id: int = 7, code: int = 0, referral: bytes = b"") -> bytes:
    content = tlv(0x0A, bytes((code,))) + tlv(0x04, b"") + tlv(0x04, b"fine") + referral
    return message(message_id, tlv(_DONE, content))


def decode(data: bytes) -> object:
    """Everything the receiver does with one answer it has framed: the operation decoded."""
    _, tag, start, end = parse_message(data)
    if tag == _ENTRY:
        return parse_entry(data, start, end, {"uid": "uid"})
    return parse_final(data, start, end, tag)


def frame(data: bytes) -> tuple[int, int, int] | None:
    """message_head on every prefix of ``data`` (bytes arrive one by one): the first answer."""
    for size in range(len(data) + 1):
        head = message_head(data[:size])
        if head is not None:
            return head
    return None


def test_well_formed_answers_decode() -> None:
    assert decode(entry())["attributes"]["uid"] == ["alice"]  # type: ignore[index]
    assert decode(done())["message"] == "fine"  # type: ignore[index]
    assert frame(entry(70_000)) == (len(entry(70_000)), 70_000, _ENTRY)


def test_malformed_answers_are_protocol_errors_and_unavailable() -> None:
    assert issubclass(ProtocolError, UNAVAILABLE)


_LIKELY_MESSAGES = st.builds(
    lambda tag, rest: bytes((0x30, len(rest) + 4, 0x02, 0x01, 0x07, tag)) + rest,
    st.sampled_from([_ENTRY, _DONE, MODIFY_RESPONSE, _EXTENDED, 0x30, 0x04]),
    st.binary(max_size=120),
)


@given(st.one_of(st.binary(max_size=300), _LIKELY_MESSAGES))
def test_random_bytes_fail_only_as_protocol_errors(data: bytes) -> None:
    try:
        head = frame(data)
    except ProtocolError:
        head = None
    if head is None or head[0] != len(data):
        with pytest.raises(ProtocolError):
            decode(data)
    else:
        assert head[0] <= MAX_MESSAGE_SIZE
        with Either():
            decode(data)


class Either:
    """Success or a ProtocolError: any other exception fails the test."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, error: BaseException | None, trace: object) -> bool:
        return kind is None or issubclass(kind, ProtocolError)


@given(
    st.sampled_from([entry(), done(), done(referral=tlv(0xA3, tlv(0x04, b"ldap://b")))]), st.data()
)
def test_mutated_answers_decode_or_fail_as_protocol_errors(original: bytes, data) -> None:
    """A valid answer with bytes changed (tags, lengths, anything): decoded or refused."""
    mutated = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(mutated) - 1))
        mutated[position] = data.draw(st.integers(0, 255))
    outcome: object = None
    try:
        if frame(bytes(mutated)) is not None:
            outcome = decode(bytes(mutated))
    except ProtocolError as error:
        outcome = error
    assert outcome is None or isinstance(outcome, dict | ProtocolError)


@pytest.mark.parametrize("answer", [entry(), done()], ids=["entry", "done"])
def test_a_truncated_answer_is_awaited_and_never_decoded(answer: bytes) -> None:
    for size in range(len(answer)):
        head = message_head(answer[:size])
        # The receiver waits for more: no head yet, or one promising more than has come.
        assert head is None or head[0] > size
        with pytest.raises(ProtocolError):
            decode(answer[:size])


def test_content_cut_inside_a_complete_message_is_refused() -> None:
    """The message's own length is honest, its parts claim more than it holds."""
    for cut in range(len(ENTRY_CONTENT)):
        with pytest.raises(ProtocolError):
            decode(message(7, tlv(_ENTRY, ENTRY_CONTENT[:cut])))


@pytest.mark.parametrize(
    "first_bytes",
    [
        b"\x30\x84\x80\x00\x00\x00",  # 2 GiB
        b"\x30\x84\xff\xff\xff\xff",  # 4 GiB
        b"\x30\x84" + (MAX_MESSAGE_SIZE - 5).to_bytes(4, "big"),  # one above the limit
        b"\x30\x85\x01\x00\x00\x00\x00",  # a length in five octets
        b"\x30\xff",  # the reserved length form
        b"\x30\x80\x02\x01\x01",  # indefinite length (BER allows it, LDAP does not)
        b"HTTP/1.1 400 Bad Request\r\n",  # another protocol
        b"\x16\x03\x01\x00\x2a",  # a TLS handshake on a plain connection
        b"\x30\x05\x04\x01\x01",  # no message id
        b"\x30\x0a\x02\x05\x00\x00\x00\x00\x01",  # a message id in five octets
        b"\x30\x06\x02\x01\xff\x65\x00",  # a negative message id
        b"\x30\x03\x02\x01\x01",  # no operation at all
    ],
)
def test_lying_headers_fail_on_their_first_bytes(first_bytes: bytes) -> None:
    """No body is awaited (nor memory held) for a message that could never be taken."""
    with pytest.raises(ProtocolError):
        frame(first_bytes)


def test_the_largest_message_allowed_is_awaited() -> None:
    head = message_head(
        b"\x30\x84" + (MAX_MESSAGE_SIZE - 6).to_bytes(4, "big") + b"\x02\x01\x07\x65"
    )
    assert head == (MAX_MESSAGE_SIZE, 7, _DONE)


def test_the_operation_is_known_before_its_body() -> None:
    """An answer of the wrong type or id is recognized from its first bytes."""
    big = message(9, tlv(_ENTRY, b"\x00" * 100_000))
    assert message_head(big[:13]) == (len(big), 9, _ENTRY)


DN = tlv(0x04, b"uid=a")


def attribute(name: bytes, values: bytes) -> bytes:
    return tlv(0x30, tlv(0x04, name) + values)


@pytest.mark.parametrize(
    "content",
    [
        tlv(0x30, b"") + tlv(0x30, b""),  # a SEQUENCE where the DN belongs
        DN + tlv(0x31, b""),  # the attribute list as a SET
        DN + tlv(0x30, tlv(0x31, b"")),  # an attribute as a SET
        DN + tlv(0x30, tlv(0x30, tlv(0x02, b"u") + tlv(0x31, b""))),  # its name an INTEGER
        DN + tlv(0x30, attribute(b"u", tlv(0x30, b""))),  # its values a SEQUENCE
        DN + tlv(0x30, attribute(b"u", tlv(0x31, tlv(0x02, b"\x01")))),  # a value an INTEGER
        DN + tlv(0x30, attribute(b"u", tlv(0x31, tlv(0x30, tlv(0x04, b"v"))))),  # nested
        DN + tlv(0x30, attribute(b"\xff\xfe", tlv(0x31, b""))),  # a name that is no UTF-8
        DN + tlv(0x30, attribute(b"u", tlv(0x31, b"") + tlv(0x04, b"x"))),  # more than name+values
        DN + tlv(0x30, b"") + tlv(0x04, b"more"),  # an element after the attributes
    ],
)
def test_entries_with_wrong_tags_or_parts_are_refused(content: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode(message(3, tlv(_ENTRY, content)))


@pytest.mark.parametrize(
    "content",
    [
        tlv(0x02, b"\x00") + tlv(0x04, b"") + tlv(0x04, b""),  # an INTEGER result code
        tlv(0x0A, b"\x00") + tlv(0x30, b"") + tlv(0x04, b""),
        tlv(0x0A, b"\x00") + tlv(0x04, b""),  # no diagnostic message
        tlv(0x0A, b"\x00") + tlv(0x04, b"") + tlv(0x04, b"") + tlv(0xA3, tlv(0x30, b"")),
        b"",
    ],
)
def test_results_with_wrong_tags_are_refused(content: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode(message(3, tlv(_DONE, content)))


def depth_bomb(depth: int) -> bytes:
    """``depth`` SEQUENCEs, each the only content of the one around it."""
    headers, size = [], 0
    for _ in range(depth):  # inside out: each header wraps what is built so far
        headers.append(header(0x30, size))
        size += len(headers[-1])
    return b"".join(reversed(headers))


@pytest.mark.parametrize("depth", [50, 5_000, 200_000])
def test_depth_bombs_are_refused(depth: int) -> None:
    bomb = depth_bomb(depth)
    result = tlv(0x0A, b"\x00") + tlv(0x04, b"") + tlv(0x04, b"")
    answers = [
        message(3, tlv(_DONE, result), controls=bomb),  # response controls: ldap3 decodes them
        message(3, tlv(_ENTRY, tlv(0x04, b"uid=a") + tlv(0x30, bomb))),  # as an attribute
        message(3, tlv(_ENTRY, tlv(0x04, b"uid=a") + bomb)),  # as the attribute list
        message(3, bomb),  # as the operation
    ]
    for answer in answers:
        with pytest.raises(ProtocolError):
            decode(answer)


def test_lengths_pointing_past_the_end_are_refused() -> None:
    # Each long-form length claims far more than the message holds.
    for claim in (b"\x84\x7f\xff\xff\xff", b"\x82\xff\xff", b"\x81\xff"):
        value = b"\x04" + claim + b"abc"
        attribute = tlv(0x30, tlv(0x04, b"uid") + tlv(0x31, value))
        with pytest.raises(ProtocolError):
            decode(message(3, tlv(_ENTRY, tlv(0x04, b"uid=a") + tlv(0x30, attribute))))


POST_READ = b"1.3.6.1.1.13.2"
GUID = "guid-Ωé".encode()  # octets that happen to be valid UTF-8 too


def modified(control_value: bytes, critical: bool = False) -> bytes:
    result = tlv(0x0A, b"\x00") + tlv(0x04, b"") + tlv(0x04, b"")
    flag = tlv(0x01, b"\xff") if critical else b""
    control = tlv(0x30, tlv(0x04, POST_READ) + flag + tlv(0x04, control_value))
    return message(7, tlv(0x67, result), control)


def post_read_entry() -> bytes:
    attributes = attribute(b"entryCSN", tlv(0x31, tlv(0x04, b"20261125.0#0#000"))) + attribute(
        b"objectGUID", tlv(0x31, tlv(0x04, GUID))
    )
    return tlv(_ENTRY, tlv(0x04, b"uid=alice,dc=x") + tlv(0x30, attributes))


def test_a_post_read_entry_is_decoded_like_a_search_entry() -> None:
    data = modified(post_read_entry(), critical=True)
    _, tag, start, end = parse_message(data)
    control = parse_final(data, start, end, tag, frozenset({"objectguid"}))["controls"][
        POST_READ.decode()
    ]
    written = control["value"]["result"]
    assert control["criticality"] is True and control["value"]["dn"] == "uid=alice,dc=x"
    # Any spelling finds an attribute, as in ldap3's entries; octets stay octets.
    assert written["entryCSN"] == written["ENTRYcsn"] == ["20261125.0#0#000"]
    assert written.get("EntryCSN") == ["20261125.0#0#000"] and "entrycsn" in written
    assert written["objectGUID"] == [GUID]
    as_text = parse_final(data, start, end, tag)["controls"][POST_READ.decode()]
    assert as_text["value"]["result"]["objectguid"] == [GUID.decode()]


@pytest.mark.parametrize(
    "value",
    [
        b"",  # no entry at all
        tlv(0x65, b""),  # another operation where the entry belongs
        post_read_entry() + b"\x00",  # more than the entry
        post_read_entry()[:-3],  # the entry cut short
    ],
)
def test_a_malformed_post_read_value_is_a_protocol_error(value: bytes) -> None:
    data = modified(value)
    _, tag, start, end = parse_message(data)
    with pytest.raises(ProtocolError):
        parse_final(data, start, end, tag)
