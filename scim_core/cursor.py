"""Cursor tokens for cursor-based list pages (RFC 9865): sealed, bound, expiring, stateless.

A cursor carries a backend's *position* (an opaque string: where the next page starts), the
walk's page size and an expiry time, authenticated with HMAC-SHA256 under a server secret. The
MAC also covers what the cursor is bound to (the resource type, the filter and the caller that
started the walk), without carrying it: a cursor presented with another filter, to another
endpoint or by another caller fails verification exactly as an altered one does, and says
nothing about why. Nothing is kept on the server, so any worker or instance configured with
the same secret continues any walk.

The token is URL-safe base64 (RFC 4648 §5, no padding) of the payload, a ``.``, and the same
of the tag: only characters RFC 3986 calls unreserved, as a cursor must be. The payload is
readable by whoever holds the token (it is signed, not encrypted): the position is the id or
name of the last resource of the page, which that caller has just been shown.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from scim_core.errors import ExpiredCursor, InvalidCount, InvalidCursor
from scim_core.secret import Secret

__all__ = ["MIN_SECRET_LENGTH", "CursorBinding", "CursorCodec"]

#: The shortest secret accepted: 32 characters (about 190 bits from a random base64 string).
MIN_SECRET_LENGTH = 32

_VERSION = 1
_HEADER = struct.Struct(">BQI")  # version, expiry (Unix seconds), count
_MAX_TOKEN = 4096  # far above any cursor issued here: a longer one is refused unread
_INVALID = "The cursor is not valid for this query; start again with an empty cursor."


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    # The decoder ignores padding beyond what it needs; a character outside ASCII is a
    # ValueError.
    data = base64.urlsafe_b64decode(text + "==")
    # Only the one spelling this module writes: the last character's unused bits could
    # otherwise give one cursor several accepted forms.
    if _b64(data) != text:
        raise ValueError("not the canonical encoding")
    return data


@dataclass(frozen=True)
class CursorBinding:
    """What a cursor belongs to: verified, never stored in the token.

    :param resource_type: ``User`` or ``Group``.
    :param filter: the filter in a canonical form (equal filters spelled differently agree).
    :param principal: the authenticated caller (``None`` when the embedding application has
        no authentication).
    """

    resource_type: str
    filter: str = ""
    principal: str | None = None

    def encoded(self) -> bytes:
        """An unambiguous byte form: each part prefixed with its length (4 bytes, big-endian)."""
        parts = (self.resource_type, self.filter, self.principal or "")
        return b"".join(len(p.encode()).to_bytes(4) + p.encode() for p in parts)


@dataclass(frozen=True)
class CursorCodec:
    """Seals positions into cursors and opens them again.

    :param secret: the server secret (at least :data:`MIN_SECRET_LENGTH` characters).
    :param timeout: seconds a cursor stays valid after its page was served.
    :param clock: the time source (Unix seconds); tests pass their own.
    """

    secret: Secret
    timeout: int = 3600
    clock: Callable[[], float] = field(default=time.time, repr=False)

    def __post_init__(self) -> None:
        if len(self.secret.reveal()) < MIN_SECRET_LENGTH:
            raise ValueError(f"a cursor secret needs at least {MIN_SECRET_LENGTH} characters")
        if self.timeout < 1:
            raise ValueError("a cursor timeout is at least one second")

    def _key(self) -> bytes:
        # A key of its own, derived from the secret: were the secret reused for something
        # else, a tag made there could never pass here.
        return hmac.new(
            self.secret.reveal().encode(), b"scim cursor key v1", hashlib.sha256
        ).digest()

    def _tag(self, payload: bytes, binding: CursorBinding) -> bytes:
        return hmac.new(self._key(), payload + binding.encoded(), hashlib.sha256).digest()

    def seal(self, position: str, count: int, binding: CursorBinding) -> str:
        """The cursor for the page after ``position`` of a walk of pages of ``count``."""
        expires = int(self.clock()) + self.timeout
        payload = _HEADER.pack(_VERSION, expires, count) + position.encode()
        return f"{_b64(payload)}.{_b64(self._tag(payload, binding))}"

    def open(self, token: str, count: int, binding: CursorBinding) -> str:
        """The position a cursor carries, once it is shown to be ours, for this binding,
        unexpired, and for a walk with this ``count``.

        :raises InvalidCursor: malformed, altered, or issued for another query or caller.
        :raises ExpiredCursor: older than the timeout.
        :raises InvalidCount: ``count`` is not the walk's page size.
        """
        if len(token) > _MAX_TOKEN:
            raise InvalidCursor(_INVALID)
        try:
            encoded_payload, encoded_tag = token.split(".")
            payload, tag = _unb64(encoded_payload), _unb64(encoded_tag)
        except ValueError:  # binascii.Error and UnicodeEncodeError are ValueErrors too
            raise InvalidCursor(_INVALID) from None
        # The tag is checked first, in constant time: nothing unauthenticated is looked at.
        # Past it, the payload is one this secret sealed: only another format version (or a
        # bug) makes it unreadable.
        if not hmac.compare_digest(tag, self._tag(payload, binding)):
            raise InvalidCursor(_INVALID)
        if len(payload) < _HEADER.size or payload[0] != _VERSION:
            raise InvalidCursor(_INVALID)
        _, expires, walk_count = _HEADER.unpack_from(payload)
        if self.clock() > expires:
            raise ExpiredCursor(
                f"The cursor has expired (cursors last {self.timeout} s between pages); "
                "start again with an empty cursor."
            )
        if count != walk_count:
            raise InvalidCount(
                f"count must stay {walk_count} for the whole walk, as on its first page."
            )
        try:
            return payload[_HEADER.size :].decode()
        except UnicodeDecodeError:
            raise InvalidCursor(_INVALID) from None
