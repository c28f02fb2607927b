"""One LDAP request and its answers on the ldap3 connection's socket: sent, each answer
framed and judged on its first bytes (:func:`~scim_core.backends.ldap.decoding.message_head`),
anything that cannot answer the request refused at once, the whole exchange within the
connection's receive timeout (see :mod:`~scim_core.backends.ldap.wire`)."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

from ldap3 import (
    Connection,
)
from ldap3.core.exceptions import (
    LDAPOperationResult,
    LDAPSessionTerminatedByServerError,
    LDAPSocketReceiveError,
    LDAPSocketSendError,
    communication_exception_factory,
)
from ldap3.core.results import DO_NOT_RAISE_EXCEPTIONS
from ldap3.utils.log import PROTOCOL, log, log_enabled

from scim_core.backends.ldap.decoding import (
    message_frame,
    operation_extent,
    parse_message,
    parse_result,
)
from scim_core.backends.ldap.encoding import (
    ADD_RESPONSE,
    EXTENDED_RESPONSE,
    INTERMEDIATE_RESPONSE,
    MODIFY_RESPONSE,
    NOTICE_OF_DISCONNECTION,
    SEARCH_DONE,
    SEARCH_ENTRY,
    SEARCH_REFERENCE,
    TYPE_NAMES,
    ProtocolError,
)

__all__ = ["conclude", "dropped", "exchange"]

_log = logging.getLogger("scim.ldap")


def _terminated(connection: Connection, why: str) -> LDAPSessionTerminatedByServerError:
    with contextlib.suppress(Exception):  # as ldap3 does: the server has gone already
        connection.strategy.close()
    connection.last_error = why
    return LDAPSessionTerminatedByServerError(why)


def conclude(connection: Connection, result: dict[str, Any]) -> None:
    """Record the result on the connection and raise for an error, as ldap3 does."""
    connection.result = result
    if log_enabled(PROTOCOL):
        log(PROTOCOL, "fast %s <%s> via <%s>", result["type"], result, connection)
    if connection.raise_exceptions and result["result"] not in DO_NOT_RAISE_EXCEPTIONS:
        raise LDAPOperationResult(
            result=result["result"],
            description=result["description"],
            dn=result["dn"],
            message=result["message"],
            response_type=result["type"],
        )


# The answers that may come before an operation's final one (RFC 4511 §4.5.2, §4.13).
_PARTIAL = {
    SEARCH_DONE: frozenset({SEARCH_ENTRY, SEARCH_REFERENCE, INTERMEDIATE_RESPONSE}),
    MODIFY_RESPONSE: frozenset({INTERMEDIATE_RESPONSE}),
    ADD_RESPONSE: frozenset({INTERMEDIATE_RESPONSE}),
}


def dropped(connection: Connection, error: ProtocolError) -> ProtocolError:
    """A :class:`ProtocolError` closes the connection: its stream cannot be trusted."""
    if not connection.closed:
        _broken(connection, str(error))
    return error


def _broken(connection: Connection, why: str, error: type[Exception] = ProtocolError) -> Exception:
    """Close a connection whose stream can no longer be trusted; the error to raise."""
    connection.last_error = why
    with contextlib.suppress(Exception):
        connection.strategy.close()
    return error(why)


def _unexpected(connection: Connection, request: dict[str, Any], tag: int, data: bytes) -> None:
    """An answer to our request of a type that cannot answer it: fail now, never wait.

    Samba answers an operation carrying a critical control it does not support with an
    ExtendedResponse (resultCode 12) instead of the operation's own response type; waiting for
    the expected type would only end at the receive timeout. An LDAPResult-shaped answer is the
    server's verdict on the operation and raises as a result; anything else leaves the stream
    in an unknown state, so the connection is closed and the failure counts as unavailable.
    ``data`` is the whole message for an ExtendedResponse, else only what has arrived of it.
    """
    kind = TYPE_NAMES.get(tag, hex(tag))
    if tag == EXTENDED_RESPONSE:
        _, _, start, end = parse_message(data)
        result = parse_result(data, start, end, tag)
        _log.error(
            "directory answered a %s with an %s (result %s, %s)",
            request["type"],
            kind,
            result["result"],
            result["description"],
        )
        if result["result"] not in DO_NOT_RAISE_EXCEPTIONS:
            conclude(connection, result)
    raise _broken(connection, f"unexpected {kind} in answer to a {request['type']}")


_TIMEOUT_SLACK = 0.25  # seconds


def _receive(
    connection: Connection, sock: Any, buffer: bytearray, wanted: int, deadline: float | None
) -> None:
    """Append what the socket has (at least one byte) to ``buffer``, by the deadline.

    ldap3's ``SyncStrategy.receiving`` would wait ``receive_timeout`` per read (a server
    trickling a byte at a time holds the worker for ever) and keeps every byte a length field
    promises; here the operation as a whole has ``receive_timeout``, and ``wanted`` is never
    more than the rest of a message :func:`message_head` has accepted.
    """
    try:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("timed out")
            # Shrunk only once it matters (settimeout is a system call): most operations end
            # in milliseconds, and the deadline is kept to within _TIMEOUT_SLACK.
            current = sock.gettimeout()
            if current is None or remaining < current - _TIMEOUT_SLACK:
                sock.settimeout(remaining)
        chunk = sock.recv(min(max(wanted, 65536), 1 << 20))
    except OSError as error:  # as ldap3's receiving: closed, and a communication error
        why = f"error receiving data: {error}"
        _broken(connection, why)
        raise communication_exception_factory(LDAPSocketReceiveError, type(error)(str(error)))(
            why
        ) from None
    if not chunk:
        raise _terminated(connection, "session terminated by server")
    buffer += chunk


def exchange(
    connection: Connection,
    message_id: int,
    payload: bytes,
    request: dict[str, Any],
    done: int = SEARCH_DONE,
) -> Iterator[tuple[int, bytes, int, int]]:
    """Send the request (none for an empty ``payload``) and yield the answers as they arrive, up
    to the final one (tag ``done``): (tag, message, start, end) each. Runs under the connection
    lock, the caller closing the connection on a :class:`ProtocolError` (:func:`_dropped`);
    ``request`` is for ldap3's log and usage counters.

    Each answer is judged by its first bytes (:func:`message_head`): another message id, an
    unsolicited message other than an ExtendedResponse, or a type that cannot answer the
    request fails at once, without waiting for the rest of it or for the timeout.
    """
    if not payload:
        return
    connection.request = request
    if log_enabled(PROTOCOL):
        log(PROTOCOL, "fast %s <%s> sent via <%s>", request["type"], request, connection)
    sock = connection.socket
    try:
        sock.sendall(payload)
    except OSError as error:
        connection.last_error = f"socket sending error {error}"
        raise communication_exception_factory(LDAPSocketSendError, type(error)(str(error)))(
            connection.last_error
        ) from None
    usage = connection._usage if connection.usage else None
    if usage is not None:
        usage.update_transmitted_message(request, len(payload))
    timeout = connection.receive_timeout
    deadline = None if timeout is None else time.monotonic() + timeout
    partial = _PARTIAL.get(done, frozenset())
    buffer = bytearray()
    try:
        while True:
            head = message_frame(buffer) if buffer else None
            while head is None:
                _receive(connection, sock, buffer, 16, deadline)
                head = message_frame(buffer)
            end, received_id, tag, op = head
            if received_id == message_id:
                if tag != done and tag not in partial and tag != EXTENDED_RESPONSE:
                    _unexpected(connection, request, tag, bytes(buffer))
            elif received_id != 0:
                raise _broken(connection, "invalid messageId received")
            elif tag != EXTENDED_RESPONSE:
                raise _broken(connection, "unsolicited message that is no notification")
            while len(buffer) < end:
                _receive(connection, sock, buffer, end - len(buffer), deadline)
            data = bytes(buffer[:end])
            del buffer[:end]
            if usage is not None:
                usage.update_received_message(len(data))
            start, stop = operation_extent(data, op)
            if received_id == 0:
                notice = parse_result(data, start, stop, tag)
                if notice.get("responseName") == NOTICE_OF_DISCONNECTION:
                    raise _terminated(connection, "session terminated by server")
                raise _broken(connection, "unknown unsolicited notification from server")
            if tag == EXTENDED_RESPONSE:
                _unexpected(connection, request, tag, data)
            yield tag, data, start, stop
            if tag == done:
                return
    finally:
        if deadline is not None and sock.gettimeout() != timeout:
            with contextlib.suppress(OSError):
                sock.settimeout(timeout)
