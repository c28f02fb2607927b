"""LDAP syntaxes narrower than a Directory String (RFC 4517 §3.3): a value's LDAP form, checked.

A mapping entry names the syntax of its LDAP attribute (``syntax = "telephoneNumber"``) when it
is one of these, so a value the directory would refuse is refused before any write, with the
SCIM attribute named: where a password is set with its own operation first, a refusal of the
modify that follows would leave the request half applied.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final

from scim_core.errors import InvalidValue

__all__ = ["SYNTAXES", "from_ldap", "to_ldap"]

_PRINTABLE: Final = re.compile(r"^[A-Za-z0-9'()+,\-./:=? ]+$")
_PRINTABLE_RULE: Final = "letters a-z, digits, space and ' ( ) + , - . / : = ?"


def _printable(name: str, value: str) -> str:
    if not _PRINTABLE.match(value):
        raise InvalidValue(f"{name} may hold only {_PRINTABLE_RULE} (a PrintableString).")
    return value


def _country(name: str, value: str) -> str:
    if len(value) != 2 or not _PRINTABLE.match(value):
        raise InvalidValue(f"{name} must be a two-letter ISO 3166 country code.")
    return value


def _ia5(name: str, value: str) -> str:
    if not value.isascii():
        raise InvalidValue(f"{name} may hold ASCII characters only.")
    return value


def _to_postal_address(name: str, value: str) -> str:
    """RFC 4517 §3.3.28: lines joined with ``$``; ``\\`` and ``$`` within a line escaped.
    An empty line has no LDAP form (a line holds at least one character): it is left out."""
    lines = value.replace("\r\n", "\n").split("\n")
    kept = [line.replace("\\", "\\5C").replace("$", "\\24") for line in lines if line]
    if not kept:
        raise InvalidValue(f"{name} needs at least one line that is not empty.")
    return "$".join(kept)


def _from_postal_address(value: str) -> str:
    lines = value.split("$")
    return "\n".join(
        re.sub(r"\\(5[Cc]|24)", lambda m: "\\" if m[1].upper() == "5C" else "$", line)
        for line in lines
    )


_Check = Callable[[str, str], str]

#: syntax name -> (SCIM string -> its LDAP form, raising InvalidValue naming the attribute;
#: LDAP form -> SCIM string).
SYNTAXES: Final[Mapping[str, tuple[_Check, Callable[[str], str]]]] = {
    "directoryString": (lambda _, value: value, str),
    "printableString": (_printable, str),
    "telephoneNumber": (_printable, str),
    # A fax number may carry "$"-separated G3 parameters; the service writes the number alone.
    "facsimileTelephoneNumber": (_printable, lambda value: value.split("$", 1)[0]),
    "countryString": (_country, str),
    "ia5String": (_ia5, str),
    "postalAddress": (_to_postal_address, _from_postal_address),
}


def to_ldap(syntax: str, name: str, value: str) -> str:
    """``value`` in the LDAP form of ``syntax``.

    :param name: the SCIM attribute, for the message of a refusal (the value is not quoted).
    :raises InvalidValue: the directory would refuse the value.
    """
    return SYNTAXES[syntax][0](name, value)


def from_ldap(syntax: str, value: str) -> str:
    """A value of ``syntax`` read from the directory, as a SCIM string."""
    return SYNTAXES[syntax][1](value)
