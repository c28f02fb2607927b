"""Search bases: the DN lists of ``SCIM_LDAP_USERS_BASE`` and ``SCIM_LDAP_GROUPS_BASE``,
parsed, compared and checked against one another."""

from __future__ import annotations

import re

from ldap3.core.exceptions import LDAPInvalidDnError
from ldap3.utils.dn import parse_dn

from scim_core.backends.ldap.values import dn_key
from scim_core.config import ConfigError

__all__ = ["parse_bases", "settled_bases"]

# Spaces around an unescaped separator, as RFC 1779 allowed and AD's tools still print them.
_SPACED_SEPARATOR = re.compile(r"(?<!\\)\s*([,=+])\s*")


def _base_key(dn: str) -> str:
    """``dn`` in a comparable form, spaces around its separators tolerated."""
    return dn_key(_SPACED_SEPARATOR.sub(r"\1", dn))


def _is_under(dn: str, base: str) -> bool:
    """Whether ``dn`` is ``base`` or below it (RFC 4514 DNs, compared case-insensitively)."""
    entry, ancestor = _base_key(dn), _base_key(base)
    return entry == ancestor or entry.endswith("," + ancestor)


def _overlap(bases: tuple[str, ...]) -> str | None:
    """Why ``bases`` cannot all be searched (``None``: they can): an entry under two of them
    would be found twice."""
    for index, base in enumerate(bases):
        for other in bases[index + 1 :]:
            if _is_under(base, other) or _is_under(other, base):
                return (
                    f"{base!r} and {other!r} overlap (one is inside the other): its entries "
                    "would be found twice"
                )
    return None


def _split_unescaped(text: str, separator: str) -> list[str]:
    """``text`` cut at each ``separator`` no backslash escapes (RFC 4514: ``\\;`` is part of a
    value; ``\\3B`` holds no ``;`` at all)."""
    items: list[str] = []
    current: list[str] = []
    escaped = False  # pragma: no mutate (only `not escaped` reads it: None would do alike)
    for character in text:
        if character == separator and not escaped:
            items.append("".join(current))
            current = []
            continue
        current.append(character)
        escaped = character == "\\" and not escaped
    items.append("".join(current))
    return items


def parse_bases(text: str) -> tuple[str, ...]:
    """One or more DNs separated by ``;`` (that none is inside another is checked with the
    settings, which may also be built without this text).

    :raises ValueError: an empty item, or one that is not a DN.
    """
    bases = tuple(item.strip() for item in _split_unescaped(text, ";"))
    for base in bases:
        if not base:
            raise ValueError("an empty item: a ';' with no DN on one side")
        try:
            parse_dn(_SPACED_SEPARATOR.sub(r"\1", base))
        except LDAPInvalidDnError as error:
            raise ValueError(f"{base!r} is not a DN ({error})") from None
    return bases


def settled_bases(
    kind: str, base: str, bases: tuple[str, ...], new_base: str | None, *, subtree: bool
) -> tuple[tuple[str, ...], str]:
    """Every base of ``kind`` (``users``, ``groups``) and where new entries go, checked.

    :param base: the first base; ``bases``, when empty, is that one alone.
    :param new_base: where new entries are created (``None``: ``base``).
    :param subtree: whether entries are searched below the bases, not only right under them.
    :raises ConfigError: ``base`` is not the first of ``bases``, two bases overlap, or the
        new-entries base is one the service would not search (an entry created there could
        never be found again).
    """
    variable = f"SCIM_LDAP_{kind.upper()}_BASE"
    bases = bases or (base,)
    if _base_key(bases[0]) != _base_key(base):
        raise ConfigError(f"{variable}: {kind}_base must be the first of {kind}_bases.")
    overlapping = _overlap(bases)
    if overlapping:
        raise ConfigError(f"{variable}: {overlapping}.")
    new_base = new_base or base
    if not any(
        _is_under(new_base, b) if subtree else _base_key(new_base) == _base_key(b) for b in bases
    ):
        raise ConfigError(
            f"SCIM_LDAP_NEW_{kind.upper()}_BASE must be a {variable} or, with "
            f"SCIM_LDAP_{kind.upper()}_SCOPE=sub, an entry below one."
        )
    return bases, new_base
