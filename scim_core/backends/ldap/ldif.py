"""RFC 2849 LDIF as the plugin writes it: the dry run's change records and the LDIF
``scim-ldap schema --vlv-indexes`` prints, both read back by ``ldapmodify``/``ldapadd``."""

from __future__ import annotations

import base64
from collections.abc import Sequence

__all__ = ["change_record", "ldif_line"]


def _safe(value: str) -> bool:
    """RFC 2849 SAFE-STRING: printable ASCII, not starting with space, colon or '<'."""
    return (
        value.isascii()
        and value.isprintable()
        and not value.startswith((" ", ":", "<"))
        and not value.endswith(" ")
    )


def ldif_line(name: str, value: object) -> str:
    """One RFC 2849 attribute line: the value as written when it is a SAFE-STRING, else base64."""
    if isinstance(value, bytes | bytearray) or not _safe(str(value)):
        raw = bytes(value) if isinstance(value, bytes | bytearray) else str(value).encode()
        return f"{name}:: {base64.b64encode(raw).decode()}"
    return f"{name}: {value}"


def change_record(
    dn: str,
    changetype: str,
    body: Sequence[str] = (),
    comments: Sequence[str] = (),
) -> str:
    """One RFC 2849 change record (``dn``, ``changetype`` and ``body`` lines), comments first."""
    lines = [f"# {comment}" for comment in comments]
    lines += [ldif_line("dn", dn), f"changetype: {changetype}", *body]
    return "\n".join(lines) + "\n"
