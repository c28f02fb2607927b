"""Connections to the directory: one bound connection per thread, failover across URLs.

A gunicorn sync worker serves one request at a time, so one reused connection per worker
avoids a TCP connect and bind per request (about a third of the cost of a lookup). A broken
connection is dropped and the next request opens a new one, trying each configured URL in
order; when none answers the caller gets :class:`~scim_core.errors.DirectoryUnavailable`.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ldap3 import NONE, SYNC, Connection, Server, Tls
from ldap3.core.exceptions import (
    LDAPBindError,
    LDAPCommunicationError,
    LDAPException,
    LDAPResponseTimeoutError,
    LDAPSessionTerminatedByServerError,
    LDAPSocketOpenError,
    LDAPStartTLSError,
)

from scim_core.backends.ldap.settings import LdapSettings
from scim_core.errors import DirectoryUnavailable

__all__ = ["UNAVAILABLE", "ConnectionFactory"]

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


class ConnectionFactory:
    """Hands out this thread's bound connection, opening one when needed.

    :param settings: URLs, credentials, TLS and timeouts.
    """

    def __init__(self, settings: LdapSettings) -> None:
        self._settings = settings
        tls = None
        if (
            settings.ca_file
            or settings.start_tls
            or any(u.lower().startswith("ldaps://") for u in settings.urls)
        ):
            tls = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=settings.ca_file)
        self._tls = tls
        self._local = threading.local()

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
                return self._open_server(server)
            except UNAVAILABLE as error:
                failure = error
                log.warning("directory %s unreachable: %s", server.host, type(error).__name__)
        assert failure is not None
        raise failure

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
        )
        try:
            connection.open()
            if settings.start_tls and not server.ssl:
                connection.start_tls()
            connection.bind()
        except BaseException:
            self.discard_connection(connection)
            raise
        return connection

    def current(self, role: str = "connection") -> Connection:
        """This thread's connection for ``role``, opened and bound if there is none."""
        connection: Connection | None = getattr(self._local, role, None)
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
        """Close this thread's connections."""
        for role in ("connection", "sorted"):
            self.discard(role)

    @property
    def settings(self) -> LdapSettings:
        """The settings this factory connects with."""
        return self._settings


def result_code(error: Any) -> int | None:
    """The LDAP result code of an ldap3 operation error, if it carries one."""
    code = getattr(error, "result", None)
    return code if isinstance(code, int) else None
