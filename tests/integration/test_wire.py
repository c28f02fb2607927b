"""wire.search on the real slapd: the answers ldap3 gives, its errors, and the writes' post-read.

The search path encodes and decodes its own BER on ldap3's socket (scim_core/backends/ldap/
wire.py). Here it runs against the session's slapd next to ldap3's ``Connection.search`` on the
same data; a scripted TCP peer plays the server answers slapd cannot be made to send (a notice
of disconnection, a wrong message id, silence).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from ldap3 import (
    BASE,
    LEVEL,
    MODIFY_ADD,
    MODIFY_DELETE,
    MODIFY_REPLACE,
    NONE,
    SUBTREE,
    Connection,
    Server,
)
from ldap3.core.exceptions import (
    LDAPAssertionFailedResult,
    LDAPAttributeOrValueExistsResult,
    LDAPNoSuchObjectResult,
    LDAPOperationResult,
    LDAPSessionTerminatedByServerError,
    LDAPSocketReceiveError,
)
from ldap3.protocol.rfc4511 import ExtendedResponse, LDAPMessage, MessageID, ProtocolOp, ResultCode
from ldap3.utils.asn1 import encode
from scim_http import settings_for

from scim_core.backends.ldap import LdapBackend, LdapSettings, decoding, encoding, wire
from scim_core.backends.ldap.connection import UNAVAILABLE, ConnectionFactory
from scim_core.backends.ldap.controls import (
    assertion,
    parse_post_read,
    parse_vlv_response,
    post_read,
    sort_control,
    vlv_control,
)
from scim_core.backends.ldap.escape import filter_value
from scim_core.testing.slapd import SlapdInstance

pytestmark = pytest.mark.slapd

PREFIX = "zz-wire-" + uuid.uuid4().hex[:6]
TRICKY = ["star*", "paren(s)", "back\\slash", "nul\x00byte", "Jos\u00e9 \u4e2d", "x" * 200]
PHOTO = bytes(range(256)) * 40
USER_ATTRIBUTES = ["entryUUID", "uid", "cn", "sn", "mail", "description", "jpegPhoto", "entryCSN"]


def connect(slapd: SlapdInstance) -> Connection:
    return Connection(
        Server(slapd.url, get_info=NONE),
        slapd.service_dn,
        slapd.service_password,
        auto_bind=True,
        raise_exceptions=True,
        check_names=False,
        return_empty_attributes=False,  # as ConnectionFactory opens them
    )


@pytest.fixture(scope="module")
def people(slapd: SlapdInstance) -> Iterator[list[str]]:
    """60 users (answers larger than one socket read), some with hard values; their uids."""
    admin = Connection(Server(slapd.url), slapd.admin_dn, slapd.admin_password, auto_bind=True)
    uids = [f"{PREFIX}-{i:02d}" for i in range(60)]
    dns = []
    try:
        for index, uid in enumerate(uids):
            dn = f"uid={uid},{slapd.users_base}"
            values: dict[str, Any] = {
                "uid": uid,
                "cn": TRICKY[index] if index < len(TRICKY) else f"Wire {index}",
                "sn": "Wire",
                "mail": [f"{uid}-{n}@example.org" for n in range(index % 4 + 1)],
                "description": "d" * (index * 40 + 1),
            }
            if index == 3:
                values["jpegPhoto"] = PHOTO
            assert admin.add(dn, ["inetOrgPerson"], values), admin.result
            dns.append(dn)
        yield uids
    finally:
        for dn in dns:
            admin.delete(dn)
        admin.unbind()


def normalized(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """DN -> attributes with lower-case names: how both paths' answers are compared."""
    return {
        e["dn"]: {name.lower(): list(values) for name, values in e["attributes"].items()}
        for e in entries
    }


def ldap3_answer(connection: Connection, base: str, text: str, scope: str, attributes: list[str]):
    connection.search(base, text, search_scope=scope, attributes=attributes or ["1.1"])
    return [e for e in connection.response if e["type"] == "searchResEntry"]


def filters(slapd: SlapdInstance) -> list[tuple[str, str, str]]:
    people = slapd.users_base
    return [
        (people, f"(uid={PREFIX}-07)", LEVEL),
        (people, f"(&(objectClass=inetOrgPerson)(uid={PREFIX}-*))", LEVEL),
        (people, f"(|(uid={PREFIX}-01)(uid={PREFIX}-02)(!(objectClass=*)))", LEVEL),
        (people, f"(&(uid={PREFIX}-1*)(mail=*-2@example.org))", LEVEL),
        (people, f"(&(uid={PREFIX}-*)(uid>={PREFIX}-50))", LEVEL),
        (people, "(uid=nobody-at-all)", LEVEL),
        (slapd.base_dn, f"(&(uid={PREFIX}-0*)(cn=*))", SUBTREE),
        (f"uid={PREFIX}-03,{people}", "(objectClass=*)", BASE),
        *[(people, f"(cn={filter_value(value)})", LEVEL) for value in TRICKY],
        *[(people, f"(cn=*{filter_value(value[1:4])}*)", LEVEL) for value in TRICKY],
    ]


def test_answers_are_ldap3s(slapd: SlapdInstance, people: list[str]) -> None:
    fast, reference = connect(slapd), connect(slapd)
    try:
        found = 0
        for base, text, scope in filters(slapd):
            for attributes in (USER_ATTRIBUTES, ["uid"], []):
                entries, result = wire.search(fast, wire.Search(base, text, scope, attributes))
                expected = normalized(ldap3_answer(reference, base, text, scope, attributes))
                for attributes_of in expected.values():
                    if "jpegphoto" in attributes_of:  # ldap3 decodes binary as latin-1
                        assert attributes_of["jpegphoto"] == [PHOTO.decode("latin-1")]
                        attributes_of["jpegphoto"] = [PHOTO]
                assert normalized(entries) == expected, text
                assert result["result"] == 0 and result["type"] == "searchResDone"
                assert fast.result is result and fast.response == entries
                found += len(entries)
        assert found > 200
    finally:
        fast.unbind()
        reference.unbind()


def test_a_kept_answer_is_what_keep_made_of_each_entry_on_both_paths(
    slapd: SlapdInstance, people: list[str]
) -> None:
    """``keep`` turns each entry into what the caller keeps (a big group's members as
    pairs), as it arrives on the fast path and after ldap3's whole answer without it; the
    connection is left holding neither."""
    fast, plain = connect(slapd), connect(slapd)
    plain.scim_fast_path = False  # as ConnectionFactory marks SCIM_LDAP_FAST_PATH=off
    text = f"(&(objectClass=inetOrgPerson)(uid={PREFIX}-*))"
    try:
        whole, _ = wire.search(fast, wire.Search(slapd.users_base, text, LEVEL, ["uid", "cn"]))
        expected = sorted((e["attributes"]["uid"][0], e["attributes"]["cn"][0]) for e in whole)
        assert len(expected) == 60
        for connection in (fast, plain):
            kept, result = wire.search(
                connection,
                wire.Search(
                    slapd.users_base,
                    text,
                    LEVEL,
                    ["uid", "cn"],
                    keep=lambda e: (e["attributes"]["uid"][0], e["attributes"]["cn"][0]),
                ),
            )
            assert sorted(kept) == expected and result["result"] == 0
            assert connection.response is None
    finally:
        fast.unbind()
        plain.unbind()


def test_sorted_windows_and_their_controls_are_ldap3s(
    slapd: SlapdInstance, people: list[str]
) -> None:
    fast, reference = connect(slapd), connect(slapd)
    text = f"(uid={PREFIX}-*)"
    try:
        for start, after in ((1, 9), (25, 19), (55, 9)):
            controls = [sort_control("uid", "caseIgnoreOrderingMatch"), vlv_control(start, after)]
            entries, result = wire.search(
                fast, wire.Search(slapd.users_base, text, LEVEL, ["uid"], controls)
            )
            reference.search(slapd.users_base, text, LEVEL, attributes=["uid"], controls=controls)
            expected = [e for e in reference.response if e["type"] == "searchResEntry"]
            assert normalized(entries) == normalized(expected)
            assert [e["attributes"]["uid"][0] for e in entries] == people[start - 1 : start + after]
            got, want = (parse_vlv_response(r["controls"]) for r in (result, reference.result))
            assert got is not None and want is not None
            assert (got.content_count, got.result) == (want.content_count, want.result) == (60, 0)
        # Past the end: virtualListViewError, raised with the result (and its controls) kept.
        controls = [sort_control("uid", "caseIgnoreOrderingMatch"), vlv_control(500, 9)]
        with pytest.raises(LDAPOperationResult) as raised:
            wire.search(fast, wire.Search(slapd.users_base, text, LEVEL, ["uid"], controls))
        assert raised.value.result == 76 and fast.response == []
        vlv = parse_vlv_response(fast.result["controls"])
        assert vlv is not None and vlv.content_count == 60
    finally:
        fast.unbind()
        reference.unbind()


def test_every_tricky_value_is_found_exactly(slapd: SlapdInstance, people: list[str]) -> None:
    connection = connect(slapd)
    try:
        for value in TRICKY:
            entries, _ = wire.search(
                connection,
                wire.Search(slapd.users_base, f"(cn={filter_value(value)})", LEVEL, ["cn", "uid"]),
            )
            assert [e["attributes"]["cn"] for e in entries] == [[value]], value
        photo, _ = wire.search(
            connection,
            wire.Search(
                f"uid={PREFIX}-03,{slapd.users_base}", "(objectClass=*)", BASE, ["jpegPhoto"]
            ),
        )
        assert photo[0]["attributes"] == {"jpegPhoto": [PHOTO]}
    finally:
        connection.unbind()


def test_a_missing_base_raises_as_ldap3_does(slapd: SlapdInstance) -> None:
    connection = connect(slapd)
    try:
        with pytest.raises(LDAPNoSuchObjectResult) as raised:
            wire.search(
                connection, wire.Search(f"ou=nowhere,{slapd.base_dn}", "(uid=x)", LEVEL, ["uid"])
            )
        assert raised.value.result == 32
        assert raised.value.dn == slapd.base_dn  # the matched DN, as ldap3 reports it
        assert connection.result["result"] == 32
        # The connection is fine afterwards.
        entries, _ = wire.search(
            connection, wire.Search(slapd.users_base, "(uid=alice)", LEVEL, ["uid"])
        )
        assert entries[0]["attributes"] == {"uid": ["alice"]}
    finally:
        connection.unbind()


def test_without_raise_exceptions_the_result_is_returned(slapd: SlapdInstance) -> None:
    connection = connect(slapd)
    connection.raise_exceptions = False
    try:
        entries, result = wire.search(
            connection, wire.Search(f"ou=nowhere,{slapd.base_dn}", "(uid=x)", LEVEL, ["uid"])
        )
        assert (entries, result["result"], result["description"]) == ([], 32, "noSuchObject")
    finally:
        connection.unbind()


@pytest.mark.parametrize(
    "options", [{"check_names": True}, {"return_empty_attributes": True}], ids=str
)
def test_other_connections_go_through_ldap3(
    slapd: SlapdInstance, people: list[str], options: dict[str, Any], monkeypatch
) -> None:
    """A connection this path does not cover (schema checks, empty attributes) gets
    ldap3's own search, with the same answer."""
    parsed: list[object] = []
    monkeypatch.setattr(wire, "parse_entry", lambda *a: parsed.append(a))
    connection = Connection(
        Server(slapd.url),
        slapd.service_dn,
        slapd.service_password,
        auto_bind=True,
        raise_exceptions=True,
        **options,
    )
    try:
        entries, result = wire.search(
            connection, wire.Search(slapd.users_base, f"(uid={PREFIX}-05)", LEVEL, ["uid", "sn"])
        )
        assert [e["attributes"]["uid"] for e in entries] == [[f"{PREFIX}-05"]]
        assert result["result"] == 0 and not parsed
    finally:
        connection.unbind()


def test_a_filter_it_cannot_read_is_left_to_ldap3(slapd: SlapdInstance) -> None:
    connection = connect(slapd)
    try:
        # ldap3 accepts spaces between the parts of a filter; this encoder does not.
        entries, _ = wire.search(
            connection, wire.Search(slapd.users_base, "(& (uid=alice))", LEVEL, ["uid"])
        )
        assert [e["attributes"]["uid"] for e in entries] == [["alice"]]
    finally:
        connection.unbind()


def test_a_connection_closed_under_it_is_unavailable_and_replaced(slapd: SlapdInstance) -> None:
    factory = ConnectionFactory(settings_for(slapd))
    connection = factory.current()
    # A peer that has closed its side: the request goes out, every read sees the end of the
    # stream at once (a shutdown of our own reading side races with the server's answer).
    ours, theirs = socket.socketpair()
    theirs.shutdown(socket.SHUT_WR)
    connection.socket.close()
    connection.socket = ours
    try:
        with pytest.raises(LDAPSessionTerminatedByServerError):
            wire.search(connection, wire.Search(slapd.users_base, "(uid=alice)", LEVEL, ["uid"]))
    finally:
        theirs.close()
    assert connection.closed
    # The factory's next operation opens a new connection and the search goes through.
    entries, _ = factory.run(
        lambda c: wire.search(c, wire.Search(slapd.users_base, "(uid=alice)", LEVEL, ["uid"]))
    )
    assert entries[0]["attributes"] == {"uid": ["alice"]}
    factory.close()


def test_modify_answers_as_ldap3_does(slapd: SlapdInstance, people: list[str]) -> None:
    connection = connect(slapd)
    dn = f"uid={people[20]},{slapd.users_base}"
    try:
        entries, _ = wire.search(connection, wire.Search(dn, "(objectClass=*)", BASE, ["entryCSN"]))
        version = entries[0]["attributes"]["entryCSN"][0]
        guard = [assertion(f"(entryCSN={filter_value(version)})"), post_read(["title", "entryCSN"])]
        result = wire.modify(connection, dn, {"title": [(MODIFY_REPLACE, ["Wired"])]}, guard)
        assert result["result"] == 0 and result["type"] == "modifyResponse"
        assert connection.result is result
        written = parse_post_read(result["controls"])
        assert written is not None and written["title"] == ["Wired"]
        assert written["entryCSN"][0] != version
        # The same guard again: the entry moved on, so the assertion fails and nothing changes.
        with pytest.raises(LDAPAssertionFailedResult):
            wire.modify(connection, dn, {"title": [(MODIFY_REPLACE, ["Stale"])]}, guard)
        assert connection.result["result"] == 122
        entries, _ = wire.search(connection, wire.Search(dn, "(objectClass=*)", BASE, ["title"]))
        assert entries[0]["attributes"]["title"] == ["Wired"]
        with pytest.raises(LDAPAttributeOrValueExistsResult):
            wire.modify(connection, dn, {"mail": [(MODIFY_ADD, [f"{people[20]}-0@example.org"])]})
        with pytest.raises(LDAPNoSuchObjectResult):
            wire.modify(
                connection, f"uid=nobody,{slapd.users_base}", {"title": [(MODIFY_DELETE, [])]}
            )
        # A value it does not encode goes through ldap3's modify, with the same result.
        result = wire.modify(connection, dn, {"description": [(MODIFY_REPLACE, [42])]})
        assert result["result"] == 0 and connection.result["type"] == "modifyResponse"
        entries, _ = wire.search(
            connection, wire.Search(dn, "(objectClass=*)", BASE, ["description"])
        )
        assert entries[0]["attributes"]["description"] == ["42"]
    finally:
        connection.unbind()


def test_with_the_fast_path_off_every_search_and_modify_is_ldap3s(
    slapd: SlapdInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SCIM_LDAP_FAST_PATH=off: a create, a change with its post-read and assertion, a
    filtered list and a read all work without one byte of the plugin's own BER."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the fast path was taken")

    monkeypatch.setattr(wire, "exchange", refused)
    backend = LdapBackend(settings_for(slapd, fast_path=False))
    try:
        created = new_user(backend, title="Off")
        changed = backend.update_user(created["id"], created, {**created, "title": "Off 2"}, None)
        assert changed == backend.get_user(created["id"]) and changed["title"] == "Off 2"
        assert changed["meta"]["version"] != created["meta"]["version"]
        with pytest.raises(Exception) as raised:  # the assertion control still guards
            backend.update_user(created["id"], created, {**created, "title": "Off 3"}, None)
        assert type(raised.value).__name__ == "VersionConflict"
        backend.delete_user(created["id"])
    finally:
        backend.close()


# ---------------------------------------------------------------- a scripted peer


@contextlib.contextmanager
def scripted_peer(answer: Callable[[socket.socket, int], None]) -> Iterator[int]:
    """A TCP port whose peer reads one request and then runs ``answer(sock, message_id)``."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    done = threading.Event()

    def serve() -> None:
        peer, _ = listener.accept()
        with peer:
            request = peer.recv(65536)
            message_id = decoding.parse_message(request)[0]
            answer(peer, message_id)
            done.wait(10)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        done.set()
        thread.join(10)
        listener.close()


def opened(port: int, timeout: int = 10) -> Connection:
    """An open, unbound connection (a peer that answers no bind) ready for a search."""
    connection = Connection(
        Server(f"ldap://127.0.0.1:{port}", get_info=NONE),
        raise_exceptions=True,
        receive_timeout=timeout,
        check_names=False,
        return_empty_attributes=False,
    )
    connection.open()
    return connection


def extended(message_id: int, name: bytes) -> bytes:
    response = ExtendedResponse()
    response["resultCode"] = ResultCode(52)
    response["matchedDN"] = ""
    response["diagnosticMessage"] = "going away"
    response["responseName"] = name
    message = LDAPMessage()
    message["messageID"] = MessageID(message_id)
    message["protocolOp"] = ProtocolOp().setComponentByName("extendedResp", response)
    return bytes(encode(message))


def test_a_notice_of_disconnection_ends_the_session() -> None:
    notice = extended(0, b"1.3.6.1.4.1.1466.20036")
    with scripted_peer(lambda peer, _: peer.sendall(notice)) as port:
        connection = opened(port)
        with pytest.raises(LDAPSessionTerminatedByServerError):
            wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
        assert connection.closed


def test_an_answer_to_another_request_is_a_broken_connection() -> None:
    def wrong_id(peer: socket.socket, message_id: int) -> None:
        peer.sendall(extended(message_id + 1, b"1.2.3"))

    with scripted_peer(wrong_id) as port:
        connection = opened(port)
        with pytest.raises(LDAPSocketReceiveError) as raised:
            wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
        assert isinstance(raised.value, UNAVAILABLE)
        connection.strategy.close()


def refusal(message_id: int) -> bytes:
    """Samba's answer to an operation with a critical control it lacks: an ExtendedResponse
    with the operation's own message id and unavailableCriticalExtension (12)."""
    response = ExtendedResponse()
    response["resultCode"] = ResultCode(12)
    response["matchedDN"] = ""
    response["diagnosticMessage"] = "critical extension is unavailable"
    message = LDAPMessage()
    message["messageID"] = MessageID(message_id)
    message["protocolOp"] = ProtocolOp().setComponentByName("extendedResp", response)
    return bytes(encode(message))


@pytest.mark.parametrize("operation", ["search", "modify"])
def test_an_extended_response_to_an_operation_fails_it_at_once(operation: str) -> None:
    with scripted_peer(lambda peer, message_id: peer.sendall(refusal(message_id))) as port:
        connection = opened(port, timeout=30)
        started = time.monotonic()
        with pytest.raises(LDAPOperationResult) as raised:
            if operation == "search":
                wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
            else:
                wire.modify(connection, "uid=a,dc=x", {"title": [(MODIFY_REPLACE, ["t"])]})
        assert raised.value.result == 12
        assert time.monotonic() - started < 5  # not the 30 s receive timeout
        connection.strategy.close()


def test_an_answer_of_the_wrong_type_is_a_broken_connection_at_once() -> None:
    def entry_for_a_modify(peer: socket.socket, message_id: int) -> None:
        # A SearchResultEntry (dn "", no attributes) in answer to a modify.
        entry = bytes([0x64, 0x04, 0x04, 0x00, 0x30, 0x00])
        message_id_element = bytes([0x02, 0x04]) + message_id.to_bytes(4, "big")
        body = message_id_element + entry
        peer.sendall(bytes([0x30, len(body)]) + body)

    with scripted_peer(entry_for_a_modify) as port:
        connection = opened(port, timeout=30)
        started = time.monotonic()
        with pytest.raises(LDAPSocketReceiveError) as raised:
            wire.modify(connection, "uid=a,dc=x", {"title": [(MODIFY_REPLACE, ["t"])]})
        assert isinstance(raised.value, UNAVAILABLE)
        assert time.monotonic() - started < 5
        assert connection.closed


def test_a_silent_server_times_out_as_unavailable() -> None:
    with scripted_peer(lambda peer, _: None) as port:
        connection = opened(port, timeout=1)
        with pytest.raises(UNAVAILABLE):
            wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
        assert connection.closed


def test_garbage_fails_at_once_and_closes_the_connection() -> None:
    with scripted_peer(lambda peer, _: peer.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")) as port:
        connection = opened(port, timeout=30)
        started = time.monotonic()
        with pytest.raises(encoding.ProtocolError):
            wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
        assert time.monotonic() - started < 5
        assert connection.closed


def test_a_length_claiming_two_gigabytes_fails_on_its_first_bytes() -> None:
    def liar(peer: socket.socket, message_id: int) -> None:
        peer.sendall(b"\x30\x84\x80\x00\x00\x00\x02\x04" + message_id.to_bytes(4, "big"))

    with scripted_peer(liar) as port:
        connection = opened(port, timeout=30)
        started = time.monotonic()
        with pytest.raises(encoding.ProtocolError, match="limit"):
            wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
        assert time.monotonic() - started < 5
        assert connection.closed


def test_an_unsolicited_message_that_is_no_notification_fails_at_once() -> None:
    entry = bytes([0x30, 0x0B, 0x02, 0x01, 0x00, 0x64, 0x06, 0x04, 0x00, 0x30, 0x00, 0, 0])
    with scripted_peer(lambda peer, _: peer.sendall(entry[:11])) as port:
        connection = opened(port, timeout=30)
        started = time.monotonic()
        with pytest.raises(encoding.ProtocolError):
            wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
        assert time.monotonic() - started < 5


def test_a_trickling_server_gets_one_timeout_for_the_whole_operation() -> None:
    """A byte every half second never lets a per-read timeout expire; the operation's does."""

    def trickle(peer: socket.socket, message_id: int) -> None:
        ident = bytes([0x02, 0x04]) + message_id.to_bytes(4, "big")
        answer = bytes([0x30, 0x7F]) + ident + b"\x65" + b"\x00" * 200
        for octet in answer:
            peer.sendall(bytes((octet,)))
            time.sleep(0.5)
            if connection.closed:
                return

    with scripted_peer(trickle) as port:
        connection = opened(port, timeout=2)
        started = time.monotonic()
        with pytest.raises(UNAVAILABLE):
            wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
        assert time.monotonic() - started < 4
        assert connection.closed


def test_an_answer_cut_short_by_a_closed_connection_fails_at_once() -> None:
    def cut(peer: socket.socket, message_id: int) -> None:
        ident = bytes([0x02, 0x04]) + message_id.to_bytes(4, "big")
        peer.sendall(bytes([0x30, 0x40]) + ident + bytes([0x64, 0x38, 0x04]))
        peer.shutdown(socket.SHUT_WR)

    with scripted_peer(cut) as port:
        connection = opened(port, timeout=30)
        started = time.monotonic()
        with pytest.raises(LDAPSessionTerminatedByServerError):
            wire.search(connection, wire.Search("dc=x", "(uid=a)", LEVEL, ["uid"]))
        assert time.monotonic() - started < 5


# ---------------------------------------------------------------- a hostile directory


def done_message(message_id: int, operation: int) -> bytes:
    """A success LDAPResult (bindResponse, searchResDone) for ``message_id``."""
    result = bytes([0x0A, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00])
    body = bytes([0x02, 0x04]) + message_id.to_bytes(4, "big") + bytes([operation, len(result)])
    return bytes([0x30, len(body) + len(result)]) + body + result


def _hostile_answers(message_id: int) -> dict[str, bytes]:
    ident = bytes([0x02, 0x04]) + message_id.to_bytes(4, "big")
    # A searchResEntry whose message length is honest and whose parts claim more than it holds.
    cut = ident + bytes([0x64, 0x0A, 0x04, 0x05]) + b"uid=a" + bytes([0x30, 0x40, 0x30])
    return {
        "garbage": b"\x00\xff" * 64,
        "extended response": refusal(message_id),
        "notice of disconnection": extended(0, b"1.3.6.1.4.1.1466.20036"),
        "a truncated message": bytes([0x30, len(cut)]) + cut,
        "a length of 2 GB": b"\x30\x84\x80\x00\x00\x00" + ident,
        "another message id": extended(message_id + 5, b"1.2.3"),
    }


@contextlib.contextmanager
def hostile_directory(answer: str) -> Iterator[int]:
    """A port on 127.0.0.1 where every connection binds and reads the rootDSE fine, and then
    gets ``answer`` to its first other search, and silence after it (the socket stays open)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    peers: list[socket.socket] = []

    def serve(peer: socket.socket) -> None:
        buffer = b""
        while not stop.is_set():
            head = decoding.message_head(buffer)
            if head is None or len(buffer) < head[0]:
                data = peer.recv(65536)
                if not data:
                    return
                buffer += data
                continue
            message, buffer = buffer[: head[0]], buffer[head[0] :]
            message_id, tag, start, _ = decoding.parse_message(message)
            if tag == 0x60:  # bindRequest
                peer.sendall(done_message(message_id, 0x61))
            elif tag == 0x63 and message[start + 1] == 0:  # a search of the rootDSE
                peer.sendall(done_message(message_id, 0x65))
            elif tag == 0x63:
                peer.sendall(_hostile_answers(message_id)[answer])
            else:  # an unbind
                return

    def accept() -> None:
        while not stop.is_set():
            try:
                peer, _ = listener.accept()
            except OSError:
                return
            peers.append(peer)
            threading.Thread(target=serve, args=(peer,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()
        for peer in peers:
            peer.close()


@pytest.mark.parametrize("answer", list(_hostile_answers(1)))
def test_a_hostile_directory_is_a_prompt_scim_error(answer: str) -> None:
    """Through the whole service: the search fails at once (a broken answer twice: the retry
    on a new connection meets the same) and the client gets the SCIM error, long before the
    30 s operation timeout: 503 for an answer that is no LDAP (the directory is as good as
    down), 502 for an LDAP refusal in the wrong type (the directory's own verdict)."""
    from scim_http import INTEGRATION_TOKEN, Http, make_app

    with hostile_directory(answer) as port:
        settings = LdapSettings(
            urls=(f"ldap://127.0.0.1:{port}",),
            bind_dn="cn=service,dc=example,dc=org",
            bind_password="secret",
            users_base="ou=people,dc=example,dc=org",
            groups_base="ou=groups,dc=example,dc=org",
            timeout=30,
            fast_path=True,  # this is the fast path's own defence
        )
        backend = LdapBackend(settings)
        try:
            http = Http(make_app(backend, INTEGRATION_TOKEN).test_client(), INTEGRATION_TOKEN)
            started = time.monotonic()
            response = http("GET", '/Users?filter=userName eq "alice"')
            elapsed = time.monotonic() - started
        finally:
            backend.close()
    status = 502 if answer == "extended response" else 503
    assert response.status_code == status, response.get_data(as_text=True)
    body = response.get_json()
    assert body["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert body["status"] == str(status)
    assert elapsed < 5


# ---------------------------------------------------------------- post-read


ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"


@pytest.fixture
def counted(ldap_backend: LdapBackend, monkeypatch) -> list[str]:
    """The filters of every search the backend makes from now on."""
    seen: list[str] = []
    search = LdapBackend._search

    def counting(self: LdapBackend, base: str, search_filter: str, *args: Any, **kw: Any):
        seen.append(search_filter)
        return search(self, base, search_filter, *args, **kw)

    monkeypatch.setattr(LdapBackend, "_search", counting)
    return seen


def new_user(backend: LdapBackend, **extra: Any) -> dict[str, Any]:
    name = f"{PREFIX}-pr-" + uuid.uuid4().hex[:8]
    user = {
        "userName": name,
        "name": {"givenName": "Post", "familyName": "Read"},
        "emails": [{"value": f"{name}@example.org", "type": "work", "primary": True}],
        **extra,
    }
    return backend.create_user(user, None)


def test_a_create_and_a_change_need_no_search_after_the_write(
    ldap_backend: LdapBackend, counted: list[str]
) -> None:
    created = new_user(ldap_backend, title="Before")
    assert counted == []  # the add brought the entry back
    assert created == ldap_backend.get_user(created["id"])
    counted.clear()
    desired = {**created, "title": "After", "displayName": "Post R."}
    updated = ldap_backend.update_user(created["id"], created, desired, None)
    assert counted == []  # nor did the modify need one
    assert updated["title"] == "After" and updated["displayName"] == "Post R."
    assert updated["meta"]["version"] != created["meta"]["version"]
    # Exactly what a read gives: the new version included.
    assert updated == ldap_backend.get_user(created["id"])
    ldap_backend.delete_user(created["id"])


def test_the_users_a_write_names_need_no_search_after_it(
    ldap_backend: LdapBackend, counted: list[str]
) -> None:
    boss, other = new_user(ldap_backend), new_user(ldap_backend)
    manager = {ENTERPRISE: {"manager": {"value": boss["id"]}}}
    counted.clear()
    created = new_user(ldap_backend, **manager)
    assert len(counted) == 1  # the manager's id -> DN, before the add; nothing after it
    assert created == ldap_backend.get_user(created["id"])
    counted.clear()
    retitled = ldap_backend.update_user(created["id"], created, {**created, "title": "T"}, None)
    assert counted == []  # the manager stays: the asserted version vouches for it
    assert retitled == ldap_backend.get_user(created["id"])
    counted.clear()
    moved = {**retitled, ENTERPRISE: {"manager": {"value": other["id"]}}}
    updated = ldap_backend.update_user(created["id"], retitled, moved, None)
    assert len(counted) == 1  # the new manager's id -> DN; none to name it after the write
    assert updated[ENTERPRISE]["manager"]["value"] == other["id"]
    assert updated == ldap_backend.get_user(created["id"])
    for user in (created, boss, other):
        ldap_backend.delete_user(user["id"])


def test_the_version_written_is_the_one_the_next_change_must_assert(
    ldap_backend: LdapBackend,
) -> None:
    created = new_user(ldap_backend)
    first = ldap_backend.update_user(created["id"], created, {**created, "title": "1"}, None)
    # first's version came from the post-read: a change based on it goes through...
    second = ldap_backend.update_user(created["id"], first, {**first, "title": "2"}, None)
    assert second["title"] == "2"
    # ...and one based on the stale version is refused (the assertion still guards).
    with pytest.raises(Exception) as raised:
        ldap_backend.update_user(created["id"], first, {**first, "title": "3"}, None)
    assert type(raised.value).__name__ == "VersionConflict"
    ldap_backend.delete_user(created["id"])


def test_without_the_post_read_answer_the_entry_is_read(
    ldap_backend: LdapBackend, counted: list[str], monkeypatch
) -> None:
    # A control the server does not know (not critical) stands for one that is unsupported.
    monkeypatch.setattr(ldap_backend, "_read_back", ("1.2.3.4.5", False, None))
    created = new_user(ldap_backend)
    assert len(counted) == 1 and counted[0] == "(objectClass=*)"
    counted.clear()
    updated = ldap_backend.update_user(created["id"], created, {**created, "title": "T"}, None)
    assert counted == ["(objectClass=*)"]
    assert updated == ldap_backend.get_user(created["id"]) and updated["title"] == "T"
    ldap_backend.delete_user(created["id"])


def test_a_rename_reads_the_entry_again_and_a_password_needs_no_read(
    ldap_backend: LdapBackend, counted: list[str]
) -> None:
    from scim_core.secret import Secret

    created = new_user(ldap_backend)
    counted.clear()
    renamed = {**created, "userName": created["userName"] + "-b", "title": "R"}
    updated = ldap_backend.update_user(created["id"], created, renamed, None)
    assert "(objectClass=*)" in counted
    assert updated == ldap_backend.get_user(created["id"])
    assert updated["userName"] == renamed["userName"]
    counted.clear()
    password = Secret("Post-Read-Pass-1")
    changed = ldap_backend.update_user(created["id"], updated, {**updated, "title": "P"}, password)
    # The password goes first, so the modify after it reads back the final version itself.
    assert "(objectClass=*)" not in counted
    assert changed == ldap_backend.get_user(created["id"])  # the version after the password
    ldap_backend.delete_user(created["id"])


def test_a_real_samba_dc_refusing_a_critical_control_fails_at_once(samba_dc) -> None:
    """Samba answers a modify with a critical control it lacks (here the RFC 4528 assertion)
    with an ExtendedResponse; the wire path turns it into the result at once."""
    factory = ConnectionFactory(settings_for(samba_dc, timeout=30))
    try:
        connection = factory.current()
        assert not factory.capabilities().assertion  # so the service never sends it
        dn = f"CN=alice,{samba_dc.users_base}"
        started = time.monotonic()
        with pytest.raises(LDAPOperationResult) as raised:
            wire.modify(
                connection,
                dn,
                {"title": [(MODIFY_REPLACE, ["x"])]},
                [assertion("(objectClass=*)")],
            )
        assert raised.value.result == 12
        assert time.monotonic() - started < 5
    finally:
        factory.close()
