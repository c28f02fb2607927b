"""Connections to the directory: one bound connection per thread, failover across URLs.

A gunicorn sync worker serves one request at a time, so one reused connection per worker
avoids a TCP connect and bind per request (about a third of the cost of a lookup). A broken
connection is dropped and the next request opens a new one, trying each configured URL in
order; when none answers the caller gets :class:`~scim_core.errors.DirectoryUnavailable`.
"""

from __future__ import annotations

import logging
import select
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from ldap3 import BASE, NONE, SYNC, Connection, Server, Tls
from ldap3.core import results as ldap3_results
from ldap3.core.exceptions import (
    LDAPBindError,
    LDAPCommunicationError,
    LDAPException,
    LDAPOperationResult,
    LDAPResponseTimeoutError,
    LDAPSessionTerminatedByServerError,
    LDAPSocketOpenError,
    LDAPSocketReceiveError,
    LDAPStartTLSError,
)

from scim_core.backends.ldap import operations
from scim_core.backends.ldap.capabilities import ROOT_DSE_ATTRIBUTES, Capabilities
from scim_core.backends.ldap.dryrun import Planner
from scim_core.backends.ldap.operations import Search
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.errors import DirectoryUnavailable
from scim_core.secret import InFlightSecretFilter

__all__ = ["UNAVAILABLE", "ConnectionFactory", "failure_reason", "prepare_ldap3"]

log = logging.getLogger("scim.ldap")

T = TypeVar("T")

UNAVAILABLE: tuple[type[Exception], ...] = (
    LDAPCommunicationError,
    LDAPResponseTimeoutError,
    LDAPSessionTerminatedByServerError,
    LDAPSocketOpenError,
    LDAPStartTLSError,
    LDAPBindError,
    OSError,
)
"""Failures meaning "the directory is not there right now" rather than "your request is wrong"."""


def _refuse_self_connection(connection: Connection) -> None:
    """A TCP connect to a local port nobody listens on can, rarely, connect the socket to
    itself (simultaneous open, when the port is in the ephemeral range): the bind request
    would then come back as its own answer. It holds the port, too, so close it at once."""
    sock = connection.socket
    try:
        looped = sock is not None and sock.getsockname() == sock.getpeername()
    except OSError:
        return
    if looped:
        raise LDAPSocketOpenError("connected to itself: nothing listens on the directory port")


class _VerifiedTls(Tls):  # type: ignore[misc]  # ldap3 has no type information
    """ldap3's :class:`~ldap3.Tls` with the server's name checked by OpenSSL in the handshake.

    ldap3 2.9 turns ``SSLContext.check_hostname`` off and compares the name afterwards with
    :func:`ssl.match_hostname`, deprecated since Python 3.7 (a DeprecationWarning on every
    connection, a failed connection under ``-W error``) and removed in 3.12, where ldap3's
    fallback accepts no IP address. Here the default context verifies the chain against the
    CA file (the system's CAs without one) and the URL's host against the certificate's
    subjectAltName (DNS name or IP address): a mismatch fails the handshake.
    """

    def wrap_socket(self, connection: Connection, do_handshake: bool = False) -> None:
        context = ssl.create_default_context(cafile=self.ca_certs_file)
        connection.socket = context.wrap_socket(
            connection.socket,
            server_side=False,
            do_handshake_on_connect=do_handshake,
            server_hostname=connection.server.host,
        )


def _dropped(connection: Connection) -> bool:
    """Whether the server has closed (or sent something unasked on) an idle connection.

    A synchronous connection between operations has nothing to read; if its socket is
    readable, the server has closed it or sent a notice of disconnection (RFC 4511 §4.4.1).
    """
    sock = getattr(connection, "socket", None)
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def failure_reason(error: BaseException) -> str:
    """Why a connection failed, for the log and ``scim-ldap check``: never a credential,
    OpenSSL's words for TLS."""
    if isinstance(error, ssl.SSLError):
        text = str(error)
        detail = text[text.find("[SSL") :] if "[SSL" in text else text
        kind = "certificate verification" if isinstance(error, ssl.CertificateError) else "TLS"
        return f"{kind} failed: {detail.rstrip(chr(39) + chr(34) + ',) ')}"
    if isinstance(error, LDAPBindError):
        return f"{type(error).__name__} ({error})"
    return type(error).__name__


_VLV_ERROR = 76
_prepared = threading.Lock()


def prepare_ldap3() -> None:
    """Fit ldap3 for this service, once per process (every :class:`ConnectionFactory` calls it).

    ldap3 dumps request payloads at its EXTENDED log level, password-modify included: a filter
    on its logger masks every password in flight. ldap3 2.9 cannot decode a result it has no
    name for and raises KeyError instead; VLV's own error code (76) is missing from its table.
    """
    with _prepared:
        ldap3_log = logging.getLogger("ldap3")
        if not any(isinstance(f, InFlightSecretFilter) for f in ldap3_log.filters):
            ldap3_log.addFilter(InFlightSecretFilter())
        ldap3_results.RESULT_CODES.setdefault(_VLV_ERROR, "virtualListViewError")


class ConnectionFactory:
    """Hands out this thread's bound connection, opening one when needed.

    :param settings: URLs, credentials, TLS and timeouts.
    """

    def __init__(self, settings: LdapSettings) -> None:
        prepare_ldap3()
        self._settings = settings
        tls = None
        if (
            settings.ca_file
            or settings.start_tls
            or any(u.lower().startswith("ldaps://") for u in settings.urls)
        ):
            tls = _VerifiedTls(validate=ssl.CERT_REQUIRED, ca_certs_file=settings.ca_file)
        self._tls = tls
        self._local = threading.local()
        self._capabilities: dict[str, Capabilities] = {}
        #: Set for a dry run: every connection's writes are planned, not sent.
        self.planner: Planner | None = None

    def _open(self) -> Connection:
        """Connect to the first URL that answers, in the configured order (failover).

        ldap3's ServerPool would sleep between rounds when every server is down; here an
        outage costs at most one connect timeout per URL, then the caller answers 503.
        """
        failure: Exception | None = None
        for url in self._settings.urls:
            # A fresh Server each time: ldap3 remembers an address that failed once and
            # skips it, so a reused Server would not see a directory that came back.
            server = Server(
                url, get_info=NONE, connect_timeout=self._settings.connect_timeout, tls=self._tls
            )
            try:
                connection = self._open_server(server)
                self._learn(url, connection)
                return connection
            except UNAVAILABLE as error:
                failure = error
                log.warning("directory %s unreachable: %s", url, failure_reason(error))
        assert failure is not None
        raise failure

    def _learn(self, url: str, connection: Connection) -> None:
        """Read the server's rootDSE on its first connection; tag every connection with it."""
        capabilities = self._capabilities.get(url)
        if capabilities is None:
            try:
                entries, _ = operations.search(
                    connection, Search("", "(objectClass=*)", BASE, ROOT_DSE_ATTRIBUTES)
                )
            except BaseException:
                self.discard_connection(connection)
                raise
            capabilities = Capabilities.from_root_dse(entries[0]["attributes"] if entries else {})
            self._capabilities[url] = capabilities
            log.info(
                "directory %s: assertion %s, values-return filter %s, sort+VLV %s, who-am-i %s",
                url,
                capabilities.assertion,
                capabilities.values_return_filter,
                capabilities.sorted_windows,
                capabilities.who_am_i,
            )
        connection.scim_capabilities = capabilities
        connection.scim_planner = self.planner

    def capabilities(self, role: str = "connection") -> Capabilities:
        """What the server behind this thread's connection supports (read once per server)."""
        capabilities: Capabilities = self.current(role).scim_capabilities
        return capabilities

    def _open_server(self, server: Server) -> Connection:
        settings = self._settings
        connection = Connection(
            server,
            user=settings.bind_dn,
            password=settings.bind_password,
            client_strategy=SYNC,
            raise_exceptions=True,
            receive_timeout=settings.timeout,
            auto_referrals=False,
            read_only=False,
            check_names=False,
            return_empty_attributes=False,
        )
        connection.scim_fast_path = settings.fast_path  # read by wire.search and wire.modify
        try:
            connection.open()
            _refuse_self_connection(connection)
            if settings.start_tls and not server.ssl:
                connection.start_tls()
            try:
                connection.bind()
            except LDAPOperationResult as error:
                # raise_exceptions makes a refused bind a result error, not LDAPBindError. The
                # service's own account was refused (wrong password, locked, removed): no
                # client request can fix that, so it is "unavailable" (503), never a 400.
                raise LDAPBindError(f"bind refused: {error.description}") from None
            except (KeyError, IndexError, ValueError, TypeError) as error:
                # ldap3's decoder fails this way on bytes that are no LDAP answer: whatever
                # answered is not the directory, which is as good as unreachable.
                raise LDAPSocketReceiveError(
                    f"the bind got no LDAP answer ({type(error).__name__})"
                ) from None
        except BaseException:
            self.discard_connection(connection)
            raise
        return connection

    def current(self, role: str = "connection") -> Connection:
        """This thread's connection for ``role``, opened and bound if there is none."""
        connection: Connection | None = getattr(self._local, role, None)
        if connection is not None and not connection.closed and _dropped(connection):
            # The server closed it while it was idle (a restart, an idle timeout): open a new
            # one now rather than fail the next operation, which may be a create that is
            # never retried.
            log.info("directory closed an idle connection; reconnecting")
            self.discard(role)
            connection = None
        if connection is None or connection.closed:
            try:
                connection = self._open()
            except UNAVAILABLE:
                raise DirectoryUnavailable() from None
            setattr(self._local, role, connection)
        return connection

    def discard(self, role: str = "connection") -> None:
        """Forget this thread's connection for ``role`` (after a failure), closing it quietly."""
        connection: Connection | None = getattr(self._local, role, None)
        setattr(self._local, role, None)
        if connection is not None:
            self.discard_connection(connection)

    @contextmanager
    def fresh(self) -> Iterator[Connection]:
        """A connection of its own, closed afterwards (for a bind test as another user)."""
        connection = self._open()
        try:
            yield connection
        finally:
            self.discard_connection(connection)

    @staticmethod
    def discard_connection(connection: Connection) -> None:
        """Close a connection for good, even one the server already dropped."""
        try:
            connection.unbind()
        except (LDAPException, OSError):
            log.debug("unbind failed")
        finally:
            # A session the server terminated leaves ldap3's socket open after unbind.
            sock = getattr(connection, "socket", None)
            if sock is not None:
                sock.close()

    def run(
        self,
        operation: Callable[[Connection], T],
        *,
        retry: bool = True,
        role: str = "connection",
    ) -> T:
        """Run ``operation`` on this thread's connection for ``role``.

        A broken connection is replaced and, for ``retry`` operations (reads and writes that are
        safe to repeat), the operation is tried once more; otherwise the caller gets 503.
        Roles keep separate connections per thread (sorted searches have their own, see
        :mod:`scim_core.backends.ldap.paging`).
        """
        attempts = 2 if retry else 1
        for attempt in range(attempts):
            connection = self.current(role)
            try:
                return operation(connection)
            except UNAVAILABLE as error:
                self.discard(role)
                log.warning(
                    "directory connection failed (%s), attempt %d",
                    type(error).__name__,
                    attempt + 1,
                )
        raise DirectoryUnavailable()

    def close(self) -> None:
        """Close this thread's connections, of every role it opened."""
        for role in list(vars(self._local)):
            self.discard(role)

    @property
    def settings(self) -> LdapSettings:
        """The settings this factory connects with."""
        return self._settings
