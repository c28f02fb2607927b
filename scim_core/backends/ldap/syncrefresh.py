"""The LDAP Content Synchronization operation (RFC 4533) in refreshOnly mode, encoded and
decoded with pyasn1.

A search with :func:`sync_request` and a cookie naming the contextCSN values a list page was
read at asks OpenLDAP (slapo-syncprov with a session log) what changed in the search's result
since: entries added or modified come back as entries with a Sync State control
(:func:`parse_sync_state`); entries that left the result (deleted, moved out of the base, or
modified so they no longer match the filter) come back as entryUUIDs in Sync Info intermediate
responses (:func:`parse_sync_info`); the searchResultDone carries a Sync Done control
(:func:`parse_sync_done`) with the cookie to ask from next time. In that refresh OpenLDAP
gives a modified entry the state ``add`` too. The search must not dereference aliases while
searching (``derefAliases`` neverDerefAliases or derefFindingBaseObj): syncprov answers any
other with protocolError, and ldap3's default is derefAlways.

Cookies are opaque octet strings (RFC 4533 §2.1.1). They are handed out as text decoded from
UTF-8 with ``surrogateescape``, so a cookie that is not UTF-8 still goes back to the server
byte for byte through :func:`sync_request`. Every malformed value raises
:class:`~scim_core.backends.ldap.encoding.ProtocolError`, whose message never holds the value.
"""

# pyasn1 declares ASN.1 types through camelCase class attributes.
# ruff: noqa: N815

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from pyasn1.codec.ber import encoder
from pyasn1.codec.der import decoder as der_decoder
from pyasn1.error import PyAsn1Error
from pyasn1.type import namedtype, tag, univ

from scim_core.backends.ldap.controls import Control
from scim_core.backends.ldap.encoding import ProtocolError

__all__ = [
    "SYNC_DONE_OID",
    "SYNC_INFO_OID",
    "SYNC_REQUEST_OID",
    "SYNC_STATE_OID",
    "SyncDone",
    "SyncInfo",
    "SyncInfoKind",
    "SyncState",
    "SyncStateKind",
    "cookie_for",
    "parse_sync_done",
    "parse_sync_info",
    "parse_sync_state",
    "sync_request",
]

#: The Sync Request control (RFC 4533 §2.2), sent with the search.
SYNC_REQUEST_OID = "1.3.6.1.4.1.4203.1.9.1.1"
#: The Sync State control (RFC 4533 §2.3), on each searchResultEntry.
SYNC_STATE_OID = "1.3.6.1.4.1.4203.1.9.1.2"
#: The Sync Done control (RFC 4533 §2.4), on the searchResultDone.
SYNC_DONE_OID = "1.3.6.1.4.1.4203.1.9.1.3"
#: The Sync Info message (RFC 4533 §2.5), the responseName of an intermediate response.
SYNC_INFO_OID = "1.3.6.1.4.1.4203.1.9.1.4"

#: What a Sync State control says of its entry (RFC 4533 §2.3).
SyncStateKind = Literal["present", "add", "modify", "delete"]
#: Which of the four Sync Info messages a value is (RFC 4533 §2.5).
SyncInfoKind = Literal["newcookie", "refreshDelete", "refreshPresent", "syncIdSet"]

_STATES: tuple[SyncStateKind, ...] = ("present", "add", "modify", "delete")
_REFRESH_ONLY = 1
_UUID_SIZE = 16

# A CSN as OpenLDAP writes it: time, change count, server id, modification number. Checked so
# that a value can never bring a "," or ";" into the cookie and change what it asks for.
_CSN = re.compile(r"[0-9]{14}\.[0-9]{6}Z#[0-9a-f]{6}#[0-9a-f]{3}#[0-9a-f]{6}")


class _SyncRequest(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("mode", univ.Enumerated()),
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
        namedtype.DefaultedNamedType("reloadHint", univ.Boolean(False)),
    )


# In the answers, ENUMERATED and BOOLEAN are taken as their content octets and read here:
# pyasn1 reads an empty one as 0 or FALSE and a BOOLEAN of any length, where X.690 wants one
# octet. A BOOLEAN DEFAULT is optional here and its default applied when it is read.
_ENUMERATED = univ.OctetString(tagSet=univ.Enumerated.tagSet)
_BOOLEAN = univ.OctetString(tagSet=univ.Boolean.tagSet)


class _SyncState(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("state", _ENUMERATED),
        namedtype.NamedType("entryUUID", univ.OctetString()),
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
    )


class _SyncDone(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
        namedtype.OptionalNamedType("refreshDeletes", _BOOLEAN),
    )


class _Refresh(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
        namedtype.OptionalNamedType("refreshDone", _BOOLEAN),
    )


class _Uuids(univ.SetOf):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = univ.OctetString()


class _SyncIdSet(univ.Sequence):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.OptionalNamedType("cookie", univ.OctetString()),
        namedtype.OptionalNamedType("refreshDeletes", _BOOLEAN),
        namedtype.NamedType("syncUUIDs", _Uuids()),
    )


# RFC 4533's module has IMPLICIT TAGS: each choice is known by its context tag alone.
_SIMPLE = (tag.tagClassContext, tag.tagFormatSimple)
_CONSTRUCTED = (tag.tagClassContext, tag.tagFormatConstructed)


class _SyncInfo(univ.Choice):  # type: ignore[misc]  # pyasn1 is untyped
    componentType = namedtype.NamedTypes(
        namedtype.NamedType(
            "newcookie", univ.OctetString().subtype(implicitTag=tag.Tag(*_SIMPLE, 0))
        ),
        namedtype.NamedType(
            "refreshDelete", _Refresh().subtype(implicitTag=tag.Tag(*_CONSTRUCTED, 1))
        ),
        namedtype.NamedType(
            "refreshPresent", _Refresh().subtype(implicitTag=tag.Tag(*_CONSTRUCTED, 2))
        ),
        namedtype.NamedType(
            "syncIdSet", _SyncIdSet().subtype(implicitTag=tag.Tag(*_CONSTRUCTED, 3))
        ),
    )


@dataclass(frozen=True)
class SyncState:
    """A Sync State control: what happened to the entry it came with, the entry's entryUUID
    (``8-4-4-4-12``, lower case) and the cookie the server attached, if any."""

    state: SyncStateKind
    entry_uuid: str
    cookie: str | None


@dataclass(frozen=True)
class SyncInfo:
    """A Sync Info message.

    ``kind`` names the choice. ``cookie`` is the new cookie for ``newcookie`` (always there),
    the optional cookie for the others. ``refresh_done`` is given for ``refreshDelete`` and
    ``refreshPresent`` only (``None`` otherwise), ``refresh_deletes`` for ``syncIdSet`` only
    (``None`` otherwise): with it true, ``uuids`` are entries that left the result; with it
    false, entries still in it. ``uuids`` is empty but for ``syncIdSet``, in the order sent.
    """

    kind: SyncInfoKind
    cookie: str | None
    refresh_done: bool | None = None
    refresh_deletes: bool | None = None
    uuids: tuple[str, ...] = ()


@dataclass(frozen=True)
class SyncDone:
    """A Sync Done control: the cookie to ask from next time, if the server sent one, and
    whether the refresh was given as deletions (``True``) rather than present entries."""

    cookie: str | None
    refresh_deletes: bool


def cookie_for(marker: tuple[str, ...]) -> str:
    """The cookie OpenLDAP takes for "every change after these contextCSN values".

    ``marker`` holds the naming context's contextCSN values, one per server id, in the order
    they should appear (sorted). The replica id is 000: a client asking for a refreshOnly
    search has no replication agreement of its own.

    :raises ValueError: for no value, or one that is not a CSN (it would change the cookie's
        meaning, not just be refused).
    """
    if not marker:
        raise ValueError("a sync cookie needs at least one contextCSN value")
    for csn in marker:
        if not _CSN.fullmatch(csn):
            raise ValueError(f"not a CSN: {csn!r}")
    return "rid=000,csn=" + ";".join(marker)


def sync_request(cookie: str | None) -> Control:
    """A critical Sync Request control for a refreshOnly search, from ``cookie`` or, without
    one, from the beginning (every entry of the result sent as an add). reloadHint is left
    out (its default, FALSE)."""
    request = _SyncRequest()
    request["mode"] = _REFRESH_ONLY
    if cookie is not None:
        request["cookie"] = cookie.encode(errors="surrogateescape")
    return (SYNC_REQUEST_OID, True, encoder.encode(request))


def _decode(value: bytes, spec: Any, what: str) -> Any:
    """``value`` decoded as ``spec``, which it must fill exactly.

    pyasn1's DER decoder refuses the indefinite length RFC 4511 §5.1 forbids (OpenLDAP never
    sends one), where its BER decoder would take it.
    """
    try:
        decoded, rest = der_decoder.decode(value, asn1Spec=spec)
    except (PyAsn1Error, OverflowError):
        # OverflowError: a length of more octets than Python can slice with.
        raise ProtocolError(f"a malformed {what}") from None
    if rest:
        raise ProtocolError(f"a {what} followed by {len(rest)} more octets")
    return decoded


def _cookie(component: Any) -> str | None:
    """The text of an optional cookie, ``None`` when absent."""
    if not component.isValue:
        return None
    return bytes(component).decode(errors="surrogateescape")


def _flag(component: Any, default: bool, what: str) -> bool:
    """An optional BOOLEAN's value, ``default`` when absent.

    Any octet but 0 is TRUE (X.690 §8.2.2; OpenLDAP sends 0xFF, as RFC 4511 §5.1 has it).
    """
    if not component.isValue:
        return default
    raw = bytes(component)
    if len(raw) != 1:
        raise ProtocolError(f"a {what} with a BOOLEAN of {len(raw)} octets")
    return raw != b"\x00"


def _uuid(component: Any, what: str) -> str:
    raw = bytes(component)
    if len(raw) != _UUID_SIZE:
        raise ProtocolError(f"a {what} with a UUID of {len(raw)} octets, not {_UUID_SIZE}")
    return str(uuid.UUID(bytes=raw))


def parse_sync_state(value: bytes) -> SyncState:
    """Decode the value of a Sync State control (RFC 4533 §2.3).

    :raises ProtocolError: for anything but one well-formed syncStateValue.
    """
    decoded = _decode(value, _SyncState(), "sync state control")
    state = bytes(decoded["state"])
    # One octet: 0 to 3 need no more, and X.690 allows no leading zero octet.
    if len(state) != 1 or state[0] >= len(_STATES):
        raise ProtocolError(f"a sync state control with a state other than 0 to {len(_STATES) - 1}")
    return SyncState(
        state=_STATES[state[0]],
        entry_uuid=_uuid(decoded["entryUUID"], "sync state control"),
        cookie=_cookie(decoded["cookie"]),
    )


def parse_sync_info(value: bytes) -> SyncInfo:
    """Decode the value of a Sync Info intermediate response (RFC 4533 §2.5).

    :raises ProtocolError: for anything but one well-formed syncInfoValue.
    """
    decoded = _decode(value, _SyncInfo(), "sync info message")
    kind: SyncInfoKind = decoded.getName()
    chosen = decoded.getComponent()
    if kind == "newcookie":
        return SyncInfo(kind=kind, cookie=_cookie(chosen))
    if kind == "syncIdSet":
        return SyncInfo(
            kind=kind,
            cookie=_cookie(chosen["cookie"]),
            refresh_deletes=_flag(chosen["refreshDeletes"], False, "sync info message"),
            uuids=tuple(_uuid(item, "sync info message") for item in chosen["syncUUIDs"]),
        )
    return SyncInfo(
        kind=kind,
        cookie=_cookie(chosen["cookie"]),
        refresh_done=_flag(chosen["refreshDone"], True, "sync info message"),
    )


def parse_sync_done(value: bytes) -> SyncDone:
    """Decode the value of a Sync Done control (RFC 4533 §2.4).

    :raises ProtocolError: for anything but one well-formed syncDoneValue.
    """
    decoded = _decode(value, _SyncDone(), "sync done control")
    return SyncDone(
        cookie=_cookie(decoded["cookie"]),
        refresh_deletes=_flag(decoded["refreshDeletes"], False, "sync done control"),
    )
