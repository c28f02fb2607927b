"""The two escaping functions every value takes on its way into LDAP.

No filter or DN in the LDAP plugin is built from a client value except through
:func:`filter_value` (RFC 4515 §3) or :func:`dn_value` (RFC 4514 §2.4).
"""

from __future__ import annotations

from ldap3.utils.conv import escape_filter_chars

__all__ = ["dn_value", "filter_value"]

# RFC 4514 §2.4: these are escaped with a backslash wherever they stand.
_DN_SPECIALS = {c: "\\" + c for c in '\\,+"<>;='}
_DN_SPECIALS["\x00"] = "\\00"


def filter_value(value: str | bytes) -> str:
    """Escape an assertion value for an RFC 4515 filter (``* ( ) \\`` and NUL become ``\\XX``).

    A binary value (AD's objectGUID) has every octet escaped, as RFC 4515 §3 allows.
    """
    if isinstance(value, bytes):
        return "".join(f"\\{octet:02x}" for octet in value)
    return str(escape_filter_chars(value))


def dn_value(value: str) -> str:
    """Escape an attribute value for an RFC 4514 DN: specials, leading ``#``/space, trailing space.

    :raises ValueError: for the empty string, which no RDN may hold.
    """
    if not value:
        raise ValueError("an RDN value cannot be empty")
    parts = [_DN_SPECIALS.get(c, c) for c in value]
    if value[0] in "# ":
        parts[0] = "\\" + parts[0]
    if value[-1] == " ":  # a lone space is escaped once: it is its own first character
        parts[-1] = "\\ "
    return "".join(parts)
