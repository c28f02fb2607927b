"""One LDAP simple bind on the wire, for the throwaway-directory launchers.

The launchers use the standard library only (no ldap3): they need nothing but "does this
server answer" and "can this name log in with this password", which is one BindRequest and
its BindResponse (RFC 4511 §4.2), over TLS when a CA file is given.
"""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

__all__ = ["answers", "simple_bind"]


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


def answers(host: str, port: int, *, ca_file: Path | str | None = None, timeout: float) -> bool:
    """Whether an LDAP server on ``host:port`` accepts an anonymous bind."""
    try:
        return simple_bind(host, port, "", "", ca_file=ca_file, timeout=timeout) == 0
    except (OSError, ValueError):
        return False
