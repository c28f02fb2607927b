"""Bearer-token authentication: tokens configured as SHA-256 digests, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

__all__ = ["TokenSet", "digest", "parse_tokens"]

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


def digest(token: str) -> str:
    """The hex SHA-256 digest under which a token is configured."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TokenSet:
    """Known token digests and the names the audit log shows for them."""

    digests: tuple[tuple[str, bytes], ...]

    def identify(self, authorization: str | None) -> str | None:
        """The caller's name for a valid ``Authorization: Bearer ...`` header, else ``None``.

        Every configured digest is compared, each with :func:`hmac.compare_digest`, so the time
        taken does not depend on which token (if any) matched or how much of it did.
        """
        if not authorization:
            return None
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        offered = hashlib.sha256(token.strip().encode()).digest()
        found: str | None = None
        for name, known in self.digests:
            if hmac.compare_digest(offered, known):
                found = name
        return found


def parse_tokens(text: str) -> TokenSet:
    """Parse ``SCIM_TOKENS_SHA256``: comma-separated ``name=hexdigest`` or bare ``hexdigest``.

    :raises ValueError: for an entry that is not a 64-character hex digest.
    """
    entries = []
    for index, item in enumerate(part.strip() for part in text.split(",") if part.strip()):
        name, sep, hexdigest = item.rpartition("=")
        if not sep:
            name = f"token-{index + 1}"
        if not _HEX64.match(hexdigest):
            raise ValueError(f"entry {index + 1} is not a SHA-256 hex digest (64 hex characters)")
        entries.append((name or f"token-{index + 1}", bytes.fromhex(hexdigest)))
    if not entries:
        raise ValueError("no token digests given")
    return TokenSet(tuple(entries))
