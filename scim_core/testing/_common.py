"""What the three throwaway-directory launchers (slapd, dirsrv, samba) share.

They use the standard library only (no ldap3): "does this server answer" and "can this name
log in with this password" are one BindRequest and its BindResponse (RFC 4511 §4.2), over TLS
when a CA file is given. Beside that: the tail of a log for error messages, the context
manager, and the foreground runner behind each launcher's ``python -m``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Protocol, Self

__all__ = [
    "Binder",
    "Launcher",
    "answers",
    "find_binary",
    "serve_in_foreground",
    "service_settings",
    "simple_bind",
    "tail",
]


def _ber(tag: int, value: bytes) -> bytes:
    """One BER element (definite length)."""
    if len(value) < 0x80:
        return bytes([tag, len(value)]) + value
    size = (len(value).bit_length() + 7) // 8
    return bytes([tag, 0x80 | size]) + len(value).to_bytes(size, "big") + value


def _header(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of value, end of value) of the BER element at ``pos``."""
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        size = length & 0x7F
        length = int.from_bytes(data[pos : pos + size], "big")
        pos += size
    if pos + length > len(data):
        raise ValueError("truncated BER element")
    return tag, pos, pos + length


def simple_bind(
    host: str,
    port: int,
    name: str,
    password: str,
    *,
    ca_file: Path | str | None = None,
    timeout: float = 10.0,
) -> int:
    """Send one simple BindRequest to ``host:port`` and return the BindResponse's resultCode.

    :param ca_file: speak LDAPS, verifying the certificate for ``host`` with this CA.
    :raises OSError: when the connection or the TLS handshake fails or the answer is cut short.
    :raises ValueError: when the answer is not a BindResponse.
    """
    request = _ber(0x02, b"\x03") + _ber(0x04, name.encode()) + _ber(0x80, password.encode())
    message = _ber(0x30, _ber(0x02, b"\x01") + _ber(0x60, request))
    with socket.create_connection((host, port), timeout=timeout) as raw:
        sock: socket.socket = raw
        if ca_file is not None:
            context = ssl.create_default_context(cafile=str(ca_file))
            sock = context.wrap_socket(raw, server_hostname=host)
        with sock:
            sock.sendall(message)
            data = b""
            while True:
                try:
                    if _header(data, 0)[2] <= len(data):
                        break
                except (IndexError, ValueError):
                    pass
                chunk = sock.recv(4096)
                if not chunk:
                    raise ConnectionError("the server closed the connection before answering")
                data += chunk
    try:
        tag, pos, _ = _header(data, 0)  # LDAPMessage SEQUENCE
        _, _, pos = _header(data, pos)  # messageID INTEGER
        op, pos, _ = _header(data, pos)  # [APPLICATION 1] BindResponse
        code_tag, start, end = _header(data, pos)  # resultCode ENUMERATED
    except IndexError:
        raise ValueError("truncated LDAP message") from None
    if tag != 0x30 or op != 0x61 or code_tag != 0x0A:
        raise ValueError(f"not a BindResponse: {data[:32].hex()}")
    return int.from_bytes(data[start:end], "big")


class Binder:
    """Simple binds back to back on one connection (RFC 4511 §4.2.1 allows a bind at any
    time), reconnecting when the server closes it.

    A new connection per bind spends its time in the TCP (and TLS) handshake; a race test
    needs binds as dense as the server can answer them, to land in windows of a millisecond.

    :param host: the server's host name (the name the certificate is valid for, over TLS).
    :param port: its port.
    :param ca_file: speak LDAPS, verifying the certificate for ``host`` with this CA.
    :param timeout: for connecting and for each answer.
    """

    def __init__(
        self, host: str, port: int, *, ca_file: Path | str | None = None, timeout: float = 10.0
    ) -> None:
        self._host = host
        self._port = port
        self._ca_file = ca_file
        self._timeout = timeout
        self._sock: socket.socket | None = None
        self._message_id = 0

    def __call__(self, name: str, password: str) -> int:
        """Send one BindRequest and return the BindResponse's resultCode (0: logged in).

        :raises OSError: when the server cannot be reached or cuts the connection twice.
        """
        request = _ber(0x02, b"\x03") + _ber(0x04, name.encode()) + _ber(0x80, password.encode())
        for attempt in range(2):
            if self._sock is None:
                self._sock = self._connect()
            self._message_id = self._message_id % 0x7FFFFFFF + 1
            message_id = self._message_id.to_bytes(4, "big").lstrip(b"\x00")
            if message_id[0] & 0x80:
                message_id = b"\x00" + message_id
            message = _ber(0x30, _ber(0x02, message_id) + _ber(0x60, request))
            try:
                self._sock.sendall(message)
                return self._answer()
            except (OSError, ValueError):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the connection (the next bind opens a new one)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _connect(self) -> socket.socket:
        raw = socket.create_connection((self._host, self._port), timeout=self._timeout)
        if self._ca_file is None:
            return raw
        context = ssl.create_default_context(cafile=str(self._ca_file))
        return context.wrap_socket(raw, server_hostname=self._host)

    def _answer(self) -> int:
        assert self._sock is not None
        data = b""
        while True:
            try:
                end = _header(data, 0)[2]
            except (IndexError, ValueError):
                end = None
            if end is not None and end <= len(data):
                break
            chunk = self._sock.recv(4096)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            data += chunk
        _, pos, _ = _header(data, 0)
        _, _, pos = _header(data, pos)
        op, pos, _ = _header(data, pos)
        if op != 0x61:  # not a BindResponse (a notice of disconnection, say): reconnect
            raise ValueError(f"not a BindResponse: tag {op:#x}")
        code_tag, start, end = _header(data, pos)
        if code_tag != 0x0A:
            raise ValueError("malformed BindResponse")
        return int.from_bytes(data[start:end], "big")


def answers(host: str, port: int, *, ca_file: Path | str | None = None, timeout: float) -> bool:
    """Whether an LDAP server on ``host:port`` accepts an anonymous bind."""
    try:
        return simple_bind(host, port, "", "", ca_file=ca_file, timeout=timeout) == 0
    except (OSError, ValueError):
        return False


def find_binary(
    name: str, folders: Sequence[str], missing: type[Exception], install_hint: str
) -> str:
    """Locate ``name`` on ``PATH`` or in ``folders`` (system folders root's PATH may lack).

    :raises missing: naming the binary and how to install it.
    """
    found = shutil.which(name)
    if found:
        return found
    for folder in folders:
        candidate = Path(folder, name)
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise missing(f"{name} not found: {install_hint}")


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a log file, or a note that it is empty."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


class _Instance(Protocol):
    @property
    def running(self) -> bool: ...

    @property
    def log_file(self) -> Path: ...

    def start(self) -> Any: ...

    def close(self) -> None: ...

    def environment(self) -> dict[str, str]: ...


class _Directory(Protocol):
    dialect: str

    @property
    def url(self) -> str: ...

    @property
    def service_dn(self) -> str: ...

    @property
    def service_password(self) -> str: ...

    @property
    def users_base(self) -> str: ...

    @property
    def groups_base(self) -> str: ...

    @property
    def placeholder_dn(self) -> str | None: ...

    @property
    def ca_file(self) -> Path | None: ...


def service_settings(directory: _Directory) -> dict[str, str]:
    """The ``SCIM_LDAP_*`` environment pointing the service at a throwaway directory as its
    own account, in its profile (what ``make run``, the benchmarks and the subprocess tests
    start with); the CA file where the URL is ``ldaps://``."""
    settings = {
        "SCIM_LDAP_URL": directory.url,
        "SCIM_LDAP_BIND_DN": directory.service_dn,
        "SCIM_LDAP_BIND_PASSWORD": directory.service_password,
        "SCIM_LDAP_USERS_BASE": directory.users_base,
        "SCIM_LDAP_GROUPS_BASE": directory.groups_base,
        "SCIM_LDAP_DIALECT": directory.dialect,
    }
    if directory.placeholder_dn:
        settings["SCIM_LDAP_GROUP_PLACEHOLDER_DN"] = directory.placeholder_dn
    if directory.url.startswith("ldaps://") and directory.ca_file is not None:
        settings["SCIM_LDAP_CA_FILE"] = str(directory.ca_file)
    return settings


class Launcher:
    """A context manager for a launcher: entering starts it, leaving closes it (also when
    the start fails half-way)."""

    def start(self) -> Self:  # overridden by each launcher
        raise NotImplementedError

    def close(self) -> None:  # overridden by each launcher
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def serve_in_foreground(instance: _Instance, error: type[Exception], what: str) -> int:
    """Start ``instance``, print its ``LDAP_*`` lines, run until SIGINT or SIGTERM, close it.

    :returns: 0 after a clean stop, 1 when it failed to start or died.
    """
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        instance.start()
        for name, value in instance.environment().items():
            print(f"{name}={value}", flush=True)
        while not stopping.wait(0.2):
            if not instance.running:
                log = instance.log_file
                print(f"{what} died; log {log}:\n{tail(log)}", file=sys.stderr, flush=True)
                return 1
    except error as failure:
        print(f"error: {failure}", file=sys.stderr, flush=True)
        return 1
    finally:
        instance.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
