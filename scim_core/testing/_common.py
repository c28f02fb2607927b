"""What the three throwaway-directory launchers (slapd, dirsrv, samba) share.

They use the standard library only (no ldap3): "does this server answer" and "can this name
log in with this password" are one BindRequest and its BindResponse (RFC 4511 §4.2), over TLS
when a CA file is given. Beside that: the tail of a log for error messages, the context
manager, and the foreground runner behind each launcher's ``python -m``.
"""

from __future__ import annotations

import argparse
import atexit
import ctypes.util
import functools
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Protocol, Self

__all__ = [
    "Binder",
    "Launcher",
    "answers",
    "find_binary",
    "foreground_parser",
    "preloaded_environment",
    "run_tool",
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


@functools.cache
def _installed(library: str) -> str | None:
    """The soname of ``library`` (as ``ctypes.util.find_library`` takes it) where installed."""
    return ctypes.util.find_library(library)


def preloaded_environment(allocator: str | None) -> dict[str, str]:
    """This process's environment with the malloc library ``allocator`` preloaded
    (``LD_PRELOAD``) where it is installed; as it is for ``None`` or a library not installed.

    A directory server copies every value of an entry it modifies, one allocation each: on a
    big group glibc's malloc and free took about half of its time (OpenLDAP and 389-DS).
    """
    environment = dict(os.environ)
    if allocator and (library := _installed(allocator)):
        preloaded = environment.get("LD_PRELOAD", "").split()
        environment["LD_PRELOAD"] = " ".join([*preloaded, library])
    return environment


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

    @property
    def admin_dn(self) -> str: ...

    @property
    def admin_password(self) -> str: ...

    @property
    def log_file(self) -> Path: ...


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


# Strong references: a running instance is never garbage-collected with its server left behind.
_running: set[Launcher] = set()


@atexit.register
def _stop_leftovers() -> None:
    """Stop every instance still running when the interpreter exits."""
    for instance in list(_running):
        instance.stop_at_exit()


class Launcher:
    """A throwaway directory server run as a child process. As a context manager entering
    starts it and leaving closes it (also when the start fails half-way)."""

    _proc: subprocess.Popen[bytes] | None = None
    _directory: Path

    def start(self) -> Self:  # overridden by each launcher
        raise NotImplementedError

    def close(self) -> None:  # overridden by each launcher
        raise NotImplementedError

    @property
    def directory(self) -> Path:
        """The folder holding the server's configuration, data and log."""
        return self._directory

    @property
    def pid(self) -> int | None:
        """The process id of the running server, or None when stopped."""
        return self._proc.pid if self.running and self._proc is not None else None

    @property
    def running(self) -> bool:
        """Whether the server started by this instance is still alive."""
        return self._proc is not None and self._proc.poll() is None

    def service_settings(self: _Directory) -> dict[str, str]:
        """The ``SCIM_LDAP_*`` environment that points the service at this directory as its
        own account (what ``make run``, the benchmarks and the subprocess tests start with)."""
        return service_settings(self)

    def environment(self: _Directory) -> dict[str, str]:
        """The ``LDAP_*`` settings printed by the launcher's command and ``make run``."""
        settings = {
            "LDAP_URL": self.url,
            "LDAP_USERS_BASE": self.users_base,
            "LDAP_GROUPS_BASE": self.groups_base,
            "LDAP_ADMIN_DN": self.admin_dn,
            "LDAP_ADMIN_PASSWORD": self.admin_password,
            "LDAP_SERVICE_DN": self.service_dn,
            "LDAP_SERVICE_PASSWORD": self.service_password,
        }
        if self.placeholder_dn:
            settings["LDAP_PLACEHOLDER_DN"] = self.placeholder_dn
        ldaps_url = getattr(self, "ldaps_url", None)  # a second, TLS listener
        if ldaps_url:
            settings["LDAP_LDAPS_URL"] = str(ldaps_url)
        if self.ca_file is not None:
            settings["LDAP_CA_FILE"] = str(self.ca_file)
        return settings

    def __repr__(self) -> str:
        state = f"pid={self.pid}" if self.running else "stopped"
        where = getattr(self, "url", "?")
        return f"<{type(self).__name__} {where} {state} {getattr(self, '_directory', '')}>"

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server with SIGTERM to its PID (SIGKILL after ``timeout`` seconds); keep
        the data."""
        if self._proc is None:
            return
        self._terminate(self._proc, timeout)
        self._forget()

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes], timeout: float) -> None:
        """SIGTERM to ``proc``, SIGKILL if it is still alive after ``timeout`` seconds."""
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def stop_at_exit(self) -> None:
        """What the interpreter's exit does to an instance still running."""
        self.stop()

    def _use_folder(self, directory: Path | str | None, prefix: str) -> None:
        """Work in ``directory``, or in a new temporary folder :meth:`_remove_folder` removes."""
        self._owns_directory = directory is None
        folder = tempfile.mkdtemp(prefix=prefix) if directory is None else directory
        self._directory = Path(folder).resolve()

    def _remove_folder(self) -> None:
        if self._owns_directory:
            shutil.rmtree(self._directory, ignore_errors=True)

    def _spawn(
        self, command: Sequence[str], log_file: Path, where: str, **popen: Any
    ) -> subprocess.Popen[bytes]:
        """Start ``command`` in a session of its own (a terminal's Ctrl-C reaches us, not the
        server), its output appended to ``log_file`` after a line marking the start."""
        with log_file.open("ab") as log:
            log.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} start on {where}\n".encode())
            log.flush()
            popen.setdefault("stdin", subprocess.DEVNULL)
            proc = subprocess.Popen(
                command, stdout=log, stderr=log, start_new_session=True, **popen
            )
        self._proc = proc
        _running.add(self)
        return proc

    def _await_answer(
        self,
        proc: subprocess.Popen[bytes],
        log: Path,
        answered: Callable[[], bool],
        error: type[Exception],
        *,
        timeout: float,
        interval: float,
        give_up: Callable[[], None],
        explain: Callable[[str], str] = lambda log: "",
    ) -> None:
        """Wait until ``answered()``; when ``proc`` exits first or ``timeout`` seconds pass,
        ``give_up()`` and raise ``error`` with the tail of ``log`` (and ``explain(tail)``, a
        likely cause read from it)."""
        what = Path(str(proc.args[0])).name  # type: ignore[index]  # _spawn's command list
        url = getattr(self, "url", "?")
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                give_up()
                last = tail(log)
                raise error(
                    f"{what} exited with status {proc.returncode} on {url}{explain(last)}; "
                    f"log {log}:\n{last}"
                )
            if answered():
                return
            if time.monotonic() > deadline:
                give_up()
                raise error(
                    f"{what} did not answer on {url} within {timeout:.0f} s; "
                    f"log {log}:\n{tail(log)}"
                )
            time.sleep(interval)

    def _forget(self) -> None:
        self._proc = None
        _running.discard(self)

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


def run_tool(
    command: Sequence[str],
    what: str,
    error: type[Exception],
    *,
    env: Mapping[str, str],
    timeout: float | None = None,
) -> str:
    """Run a directory's tool quietly and return its output; raise ``error`` with the output
    when it fails or does not finish within ``timeout`` seconds."""
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            check=False,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired as failure:
        raise error(f"{what} did not finish within {timeout:.0f} s") from failure
    output = (result.stdout + result.stderr).decode("utf-8", "replace").strip()
    if result.returncode != 0:
        raise error(f"{what} failed (exit {result.returncode}):\n{output[-4000:]}")
    return output


def bind_checked(
    host: str,
    port: int,
    name: str,
    password: str,
    ca_file: Path | str | None,
    error: type[Exception],
    url: str,
) -> bool:
    """Whether a simple bind over TLS as ``name`` with ``password`` succeeds: False when the
    server refuses it (any resultCode but success), and for an empty password (that would be
    an unauthenticated bind, which LDAP servers accept).

    :raises error: when the server cannot be reached.
    """
    if not password:
        return False
    try:
        return simple_bind(host, port, name, password, ca_file=ca_file) == 0
    except (OSError, ValueError) as failure:
        raise error(f"cannot bind on {url}: {failure}") from failure


def foreground_parser(
    module: str,
    description: str,
    *,
    seed_help: str,
    directory_help: str = "folder for config and data (kept); default: a temporary folder",
) -> argparse.ArgumentParser:
    """The command line of ``python -m MODULE`` with the options every launcher takes,
    ``--directory`` and ``--no-seed`` (``args.seed``); the launcher adds its own."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    parser.add_argument("--directory", type=Path, default=None, help=directory_help)
    parser.add_argument("--no-seed", dest="seed", action="store_false", help=seed_help)
    return parser


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
