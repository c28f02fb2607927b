"""The gunicorn worker the service ships: threads, with each request read in full before one runs.

gunicorn's ``gthread`` worker hands a connection to a thread as soon as a byte arrives, and the
thread then blocks until the request is complete: a client that sends its request slowly (or a
``Content-Length`` and then nothing) holds a thread, and a few of them starve every other
client. This worker reads the request head and its body (of announced length, or chunked) up
to the body limit in the worker's event loop, where a waiting connection costs a buffer and no
thread; the request runs once it has fully arrived. With one thread (the shipped setting) it runs
in the loop's own thread, as in a sync worker: handing it to a pool thread and back costs more
CPU than a lookup; with more threads, in the pool. Everything is bounded:

- ``SCIM_READ_TIMEOUT`` seconds to send a whole request, from its first byte (or from the
  connection for a client that sends nothing); after it a partial request is answered 408 and
  the connection closed; one that sent nothing is closed;
- what a worker buffers in all is capped (``_BUFFER_CAP``); beyond it the body is read by the
  thread, still within the same deadline;
- ``worker_connections`` bounds the open connections per worker (gunicorn stops accepting).

With HTTPS (a certificate in the configuration) the TLS handshake happens in the same loop and
under the same deadline: a client that stalls its handshake holds no thread either. Each worker
builds its TLS context once, when it starts, so a renewed certificate is served by the workers a
graceful reload starts.

Errors gunicorn answers itself (a malformed request line, a header past its limits, a bad chunk)
become RFC 7644 error bodies instead of HTML, and the ``Server`` header names no software.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import socket
import ssl
import time
from concurrent.futures import Future
from functools import partial
from typing import Any

import gunicorn.http
import gunicorn.http.wsgi
import gunicorn.sock
from gunicorn.http import errors as http_errors
from gunicorn.util import write_nonblock
from gunicorn.workers.gthread import TConn, ThreadWorker
from werkzeug.exceptions import RequestEntityTooLarge, RequestTimeout

from scim_core.config import ConfigError, read_settings
from scim_core.messages import SCIM_MEDIA_TYPE
from scim_core.urns import ERROR_URN
from scim_flask.settings import WORKER_SETTINGS

__all__ = ["ScimWorker", "error_bytes"]

#: What the ``Server`` header says: nothing about the software or its version.
SERVER_NAME = "scim"
#: The longest request line: a filter at the service's limit, every character percent-encoded.
_LINE_LIMIT = 32 * 1024
#: The largest request head (request line and headers).
_HEAD_LIMIT = 64 * 1024
#: All request bytes one worker holds for connections still sending, at most.
_BUFFER_CAP = 64 * 1024 * 1024
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d{1,18})[ \t]*\r\n", re.IGNORECASE)
_HTTP1_LINE = re.compile(rb" HTTP/1\.[01]$")
_TRANSFER_ENCODING = re.compile(rb"\r\ntransfer-encoding:", re.IGNORECASE)
_REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    408: "Request Timeout",
    413: "Content Too Large",
    414: "URI Too Long",
    417: "Expectation Failed",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
}


def error_bytes(status: int, detail: str) -> bytes:
    """A complete HTTP/1.1 answer carrying an RFC 7644 error body; the connection closes."""
    body = json.dumps(
        {"schemas": [ERROR_URN], "status": str(status), "detail": detail},
        separators=(",", ":"),
    ).encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        f"Server: {SERVER_NAME}\r\nConnection: close\r\n"
        f"Content-Type: {SCIM_MEDIA_TYPE}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


def _answer_for(error: BaseException) -> tuple[int, str]:
    """The status and detail for an error gunicorn met before the application ran."""
    if isinstance(error, http_errors.LimitRequestLine):
        return 414, "The request line is too long."
    if isinstance(error, http_errors.LimitRequestHeaders):
        return 431, "The request headers are too many or too large."
    if isinstance(error, http_errors.UnsupportedTransferCoding):
        return 501, "The transfer coding is not supported."
    if isinstance(error, http_errors.ExpectationFailed):
        return 417, "The expectation cannot be met."
    if isinstance(error, (http_errors.ForbiddenProxyRequest, http_errors.InvalidSchemeHeaders)):
        return 400, "The forwarding headers are not accepted."
    if isinstance(error, http_errors.ParseException):
        return 400, "The request is not valid HTTP/1.1."
    if isinstance(error, RequestTimeout):
        return 408, "The request did not arrive in time."
    if isinstance(error, RequestEntityTooLarge):
        return 413, "The request is over the size limit."
    return 500, "Internal error."


class _DeadlineReader:
    """The socket as gunicorn's parser reads it: each read waits at most until the deadline.

    Running out raises werkzeug's :class:`~werkzeug.exceptions.RequestTimeout`: in the head it
    reaches :meth:`ScimWorker.handle_error` (a 408 body), in a body the application reads it is
    an HTTP error the application answers as 408 like any other.
    """

    def __init__(self, sock: socket.socket, conn: TConn) -> None:
        self._sock = sock
        self._conn = conn

    def recv(self, size: int) -> bytes:
        remaining = self._conn.scim_deadline - time.monotonic()
        if remaining <= 0:
            raise RequestTimeout()
        if self._conn.scim_allowance <= 0:
            raise RequestEntityTooLarge()
        self._sock.settimeout(remaining)
        try:
            received = self._sock.recv(min(size, self._conn.scim_allowance))
            self._conn.scim_allowance -= len(received)
            return received
        except TimeoutError:
            raise RequestTimeout() from None
        finally:
            # Answers are written on the same socket: a slow reader of a large one is not
            # held to the request's deadline.
            self._sock.settimeout(None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class ScimWorker(ThreadWorker):  # type: ignore[misc]  # gunicorn has no type information
    """gunicorn's thread worker, reading each request in full in its event loop (module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        try:
            values = read_settings(WORKER_SETTINGS, os.environ)
        except ConfigError as error:
            raise SystemExit(f"scim-ldap: configuration error: {error}") from None
        self.read_timeout: float = values["SCIM_READ_TIMEOUT"]
        self.body_limit: int = values["SCIM_MAX_BODY_BYTES"]
        self._reading: dict[TConn, bytearray] = {}
        self._buffered = 0
        self._tls: ssl.SSLContext | None = None
        # One thread: a request, complete when it is handed over, runs in the loop's own thread.
        # A hand-off to a pool thread and back (a wake-up, a pipe byte, the GIL passed twice)
        # costs more CPU than many requests do, and the thread would wait on the loop anyway.
        self._inline = self.cfg.threads == 1
        self._running = False

    def init_process(self) -> None:
        # gunicorn writes its own name and version into every answer's Server header and has
        # no setting for it; the constant is read when each answer is built.
        gunicorn.http.wsgi.SERVER = SERVER_NAME
        if self.cfg.is_ssl:
            self._tls = gunicorn.sock.ssl_context(self.cfg)
        super().init_process()

    # -- reading in the event loop -----------------------------------------------------------

    def accept(self, listener: socket.socket) -> None:
        try:
            client, address = listener.accept()
        except OSError:
            return
        self.nr_conns += 1
        if self._tls is not None:
            client = self._tls.wrap_socket(
                client, server_side=True, do_handshake_on_connect=False, suppress_ragged_eofs=True
            )
        conn = TConn(self.cfg, client, address, listener.getsockname())
        self._read_next_request(conn)

    def on_client_socket_readable(self, conn: TConn, client: socket.socket) -> None:
        # A kept-alive connection's next request is read like a new one, in the loop.
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._read_next_request(conn)

    def _start_request(self, conn: TConn) -> None:
        """A new request's budget: its deadline, and the bytes it may take from the socket."""
        conn.scim_deadline = time.monotonic() + self.read_timeout
        # A head, a body at the limit and its chunk framing: a request that goes on past this
        # (a pipelined one the event loop did not see) is refused, not buffered.
        conn.scim_allowance = _HEAD_LIMIT + 2 * self.body_limit

    def _read_next_request(self, conn: TConn) -> None:
        conn.sock.setblocking(False)
        self._start_request(conn)
        self._reading[conn] = bytearray()
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_bytes, conn))

    def _on_bytes(self, conn: TConn, sock: socket.socket) -> None:
        data = self._reading[conn]
        try:
            received = self._receive(sock)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except ssl.SSLError as error:  # a failed handshake: an old protocol, no certificate...
            self.log.info("refused a TLS connection: %s", error.reason or type(error).__name__)
            received = b""
        except OSError:
            received = b""
        if not received:
            self._drop(conn)
            return
        data += received
        self._buffered += len(received)
        line_end = data.find(b"\r\n")
        if line_end > _LINE_LIMIT or (line_end < 0 and len(data) > _LINE_LIMIT):
            self._drop(conn, error_bytes(414, "The request line is too long."))
        elif data.find(b"\r\n\r\n") < 0 and len(data) > _HEAD_LIMIT:
            self._drop(conn, error_bytes(431, "The request headers are too many or too large."))
        elif self._complete(data) or self._buffered > _BUFFER_CAP:
            self._hand_over(conn)

    @staticmethod
    def _receive(sock: socket.socket) -> bytes:
        """What the client sent; over TLS, the handshake first and every decrypted byte."""
        if not isinstance(sock, ssl.SSLSocket):
            return sock.recv(65536)
        if sock.version() is None:  # not through the handshake yet
            sock.do_handshake()
        received = sock.recv(65536)
        # A TLS record already read from the socket leaves no readiness for the poller to see.
        while received and (pending := sock.pending()):
            received += sock.recv(pending)
        return received

    def _complete(self, data: bytearray) -> bool:
        """Whether a thread may take the request now without waiting for the client."""
        line_end = data.find(b"\r\n")
        if line_end >= 0 and not _HTTP1_LINE.search(data[:line_end]):
            return True  # not HTTP/1.x (HTTP/0.9, garbage): the parser refuses it at once
        end = data.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = bytes(data[: end + 2])
        if _TRANSFER_ENCODING.search(head):
            # A chunked body waits here until its last chunk seems to have come (or it is
            # past the limit, which the service refuses): a thread then reads what is
            # buffered, and anything left within the same deadline.
            body = len(data) - (end + 4)
            return data.endswith(b"0\r\n\r\n") or body > self.body_limit + _HEAD_LIMIT
        length = _CONTENT_LENGTH.search(head)
        wanted = int(length.group(1)) if length else 0
        # A body over the limit is refused without being read: no reason to wait for it.
        return wanted > self.body_limit or len(data) - (end + 4) >= wanted

    def _hand_over(self, conn: TConn) -> None:
        data = self._reading.pop(conn)
        self._buffered -= len(data)
        self.poller.unregister(conn.sock)
        conn.scim_buffered = bytes(data)
        conn.data_ready = True
        self.enqueue_req(conn)

    def enqueue_req(self, conn: TConn) -> None:
        if not self._inline:
            super().enqueue_req(conn)
            return
        if self._running:
            # A pipelined request found after an answer: run it on the loop's next turn, after
            # the other connections' events, not nested in this one.
            self.method_queue.defer(self.enqueue_req, conn)
            return
        self._running = True
        try:
            outcome: Future[Any] = Future()
            try:
                outcome.set_result(self.handle(conn))
            except Exception as error:  # handle() answers what it can; finish_request closes
                outcome.set_exception(error)
            self.finish_request(conn, outcome)
        finally:
            self._running = False

    def _drop(self, conn: TConn, answer: bytes | None = None) -> None:
        data = self._reading.pop(conn, None)
        if data is not None:
            self._buffered -= len(data)
            self.poller.unregister(conn.sock)
        if answer is not None:
            try:
                conn.sock.setblocking(True)
                conn.sock.settimeout(1.0)
                conn.sock.sendall(answer)
            except OSError:
                pass
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self) -> None:
        super().murder_pending()
        now = time.monotonic()
        for conn in [c for c in self._reading if c.scim_deadline <= now]:
            partial_request = bool(self._reading[conn])
            answer = error_bytes(408, "The request did not arrive in time.")
            self._drop(conn, answer if partial_request else None)

    # -- in the thread -----------------------------------------------------------------------

    def handle(self, conn: TConn) -> Any:
        buffered: bytes = conn.__dict__.pop("scim_buffered", b"")
        if not buffered:  # a pipelined request, already in the parser's buffer
            self._start_request(conn)
        else:
            conn.scim_allowance -= len(buffered)
        conn.sock.setblocking(True)
        if isinstance(conn.sock, ssl.SSLSocket) and conn.parser is None:
            # Wrapped and through its handshake in the event loop: gunicorn would wrap it again.
            conn.initialized = True
            conn.parser = gunicorn.http.get_parser(self.cfg, conn.sock, conn.client)
        conn.init()
        if not isinstance(conn.parser.unreader.sock, _DeadlineReader):
            conn.parser.unreader.sock = _DeadlineReader(conn.sock, conn)
        if buffered:
            conn.parser.unreader.unread(buffered)
        return super().handle(conn)

    def handle_error(self, req: Any, client: socket.socket, addr: Any, exc: BaseException) -> None:
        status, detail = _answer_for(exc)
        if status >= 500:
            self.log.exception("error handling a request")
        else:
            self.log.info("refused a request: %s", type(exc).__name__)
        try:
            write_nonblock(client, error_bytes(status, detail))
        except Exception:  # the client may be gone: nothing more to tell it
            self.log.debug("could not send the error answer")
