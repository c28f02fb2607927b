"""Static bearer tokens (RFC 6750), configured as SHA-256 digests and compared in constant time.

Framework-free: an adapter hands over the ``Authorization`` header it received and gets the
caller's name back (for the audit log and rate limits), or answers
:class:`~scim_core.Unauthorized` (401 with ``WWW-Authenticate: Bearer``) rendered by
:func:`~scim_core.error_response`::

    tokens = parse_tokens(os.environ["SCIM_TOKENS_SHA256"])
    try:
        principal = tokens.authenticate(environ.get("HTTP_AUTHORIZATION"))
    except ScimError as error:
        response = error_response(error)

Only digests are kept, so a configuration or a memory dump does not reveal a token.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from scim_core.errors import Unauthorized

__all__ = ["TokenSet", "bearer_token", "digest", "parse_tokens"]

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


def digest(token: str) -> str:
    """The hex SHA-256 digest under which a token is configured."""
    return hashlib.sha256(token.encode()).hexdigest()


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (any case of ``Bearer``), or
    ``None`` for a missing header, another scheme or an empty token."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


@dataclass(frozen=True)
class TokenSet:
    """Known token digests and the names the audit log shows for them.

    :param digests: ``(name, 32-byte SHA-256 digest)`` pairs; :func:`parse_tokens` makes them.
    """

    digests: tuple[tuple[str, bytes], ...]

    def identify(self, authorization: str | None) -> str | None:
        """The caller's name for a valid ``Authorization: Bearer ...`` header, else ``None``.

        Every configured digest is compared, each with :func:`hmac.compare_digest`, so the time
        taken does not depend on which token (if any) matched or how much of it did.
        """
        token = bearer_token(authorization)
        if token is None:
            return None
        offered = hashlib.sha256(token.encode()).digest()
        found: str | None = None
        for name, known in self.digests:
            if hmac.compare_digest(offered, known):
                found = name
        return found

    def authenticate(self, authorization: str | None) -> str:
        """The caller's name, as :meth:`identify` finds it.

        :raises Unauthorized: no valid bearer token (401 with ``WWW-Authenticate: Bearer``).
        """
        principal = self.identify(authorization)
        if principal is None:
            raise Unauthorized()
        return principal


def parse_tokens(text: str) -> TokenSet:
    """Parse ``SCIM_TOKENS_SHA256``: comma-separated ``name=hexdigest`` or bare ``hexdigest``
    (named ``token-N`` after its position).

    :raises ValueError: for an entry that is not a 64-character hex digest, or no entry at all.
    """
    entries = []
    for index, item in enumerate(part.strip() for part in text.split(",") if part.strip()):
        name, _, hexdigest = item.rpartition("=")
        if not _HEX64.match(hexdigest):
            raise ValueError(f"entry {index + 1} is not a SHA-256 hex digest (64 hex characters)")
        entries.append((name or f"token-{index + 1}", bytes.fromhex(hexdigest)))
    if not entries:
        raise ValueError("no token digests given")
    return TokenSet(tuple(entries))
