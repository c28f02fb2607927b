"""Bearer JWTs issued by the identity provider (OAuth 2.0 access tokens), checked with PyJWT.

An identity provider that issues tokens for the app (Microsoft Entra ID, Okta) signs them with
keys it publishes as a JWKS. :class:`JwtIssuer` accepts a token when its signature verifies
with a published key under an allowed, asymmetric algorithm (never ``none``, never HMAC, so a
public key can never serve as an HMAC secret), its ``iss`` is the issuer's, its ``aud`` one of
the accepted audiences, it has not expired (``exp`` is required; ``nbf`` and ``iat`` are
honoured; both with a small leeway), and it carries the required claims. The caller's name for
audit lines and rate limits comes from the first present of the configured claims. Where
several identity providers issue tokens, :func:`issuer_of` picks the one a token names.

Keys: fetched from the JWKS URL (or read from a file) on first use and kept for
:data:`KEYS_MAX_AGE`; a token naming a key id the set lacks makes it fetched again, at most once
per :data:`REFETCH_INTERVAL`, so a rotation is picked up and a flood of made-up key ids cannot
hammer the identity provider. A fetch waits at most :data:`FETCH_TIMEOUT`. When the endpoint is
down, the keys already fetched keep working; with none ever fetched, a request bearing a JWT is
answered 503 (:class:`KeysUnavailable`): the service cannot check it, which is not the
client's fault. A failed fetch is tried again only after :data:`REFETCH_INTERVAL` too, so an
outage of the endpoint costs neither it nor the requests a fetch each.

PyJWT (``pip install 'scim-ldap[jwt]'``) is imported when present: this module, and so the
adapters' settings, import without it, and :class:`JwtIssuer` says what to install when made.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scim_core.errors import ScimError

try:
    import jwt
    from jwt import PyJWKSet
except ImportError as error:  # the [jwt] extra is not installed
    _PYJWT_MISSING: ImportError | None = error
else:
    _PYJWT_MISSING = None

if TYPE_CHECKING:
    from jwt import PyJWK

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "FETCH_TIMEOUT",
    "KEYS_MAX_AGE",
    "REFETCH_INTERVAL",
    "JwksKeys",
    "JwtIssuer",
    "KeysUnavailable",
    "issuer_of",
    "looks_like_jwt",
]

log = logging.getLogger("scim.auth")

#: The algorithms a token may be signed with: public-key ones only.
ASYMMETRIC_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
#: The key type each algorithm family needs (by the algorithm's first two letters).
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}
#: Seconds fetched keys are used before they are fetched again.
KEYS_MAX_AGE = 3600.0
#: Least seconds between two fetches caused by unknown key ids.
REFETCH_INTERVAL = 60.0
#: Seconds a JWKS fetch may take.
FETCH_TIMEOUT = 3.0
_MAX_JWKS_BYTES = 1024 * 1024


class KeysUnavailable(ScimError):
    """503: a token's signing keys cannot be fetched and none are known yet."""

    status = 503

    def __init__(self) -> None:
        super().__init__(
            "The identity provider's signing keys cannot be fetched; retry later.",
            headers={"Retry-After": "30"},
        )


def looks_like_jwt(token: str) -> bool:
    """Three base64url parts: a JWS in compact form (a static token never has two dots)."""
    parts = token.split(".")
    return len(parts) == 3 and all(parts[:2])


def _fetch_url(url: str) -> bytes:
    # Only http(s) URLs get here (the caller checks the scheme).
    # urllib sends header names capitalized whatever their case: those mutants change nothing.
    request = urllib.request.Request(  # noqa: S310
        url,
        headers={"Accept": "application/json"},  # pragma: no mutate
    )
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as answer:  # noqa: S310
        data: bytes = answer.read(_MAX_JWKS_BYTES + 1)
    if len(data) > _MAX_JWKS_BYTES:
        raise ValueError("the JWKS is over 1 MiB")
    return data


@dataclass
class JwksKeys:
    """An issuer's published keys, by key id, fetched when needed (see the module doc).

    :param source: an ``https://`` or ``http://`` URL, or a file path.
    :param clock: a monotonic clock in seconds (replaceable in tests).
    """

    source: str
    clock: Callable[[], float] = time.monotonic
    _keys: dict[str, PyJWK] = field(default_factory=dict, init=False, repr=False)
    _fetched_at: float | None = field(default=None, init=False, repr=False)
    _tried_at: float | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def key(self, kid: str | None) -> PyJWK | None:
        """The key with id ``kid`` (the only key when the set has one and ``kid`` is None).

        :raises KeysUnavailable: no keys were ever fetched and fetching fails now.
        """
        with self._lock:
            now = self.clock()
            stale = self._fetched_at is None or now - self._fetched_at > KEYS_MAX_AGE
            unknown = kid is not None and kid not in self._keys
            may_retry = self._tried_at is None or now - self._tried_at >= REFETCH_INTERVAL
            if (stale or unknown) and may_retry:
                self._refresh(now)
            elif self._fetched_at is None:  # never fetched, the last try failed a moment ago
                raise KeysUnavailable()
            if kid is None:
                return next(iter(self._keys.values())) if len(self._keys) == 1 else None
            return self._keys.get(kid)

    def _refresh(self, now: float) -> None:
        self._tried_at = now
        try:
            if self.source.startswith(("https://", "http://")):
                data = _fetch_url(self.source)
            else:
                data = Path(self.source).read_bytes()
            document = json.loads(data)
            keys = PyJWKSet.from_dict(document).keys
        except Exception as error:  # any failure: keep what we have, say so once per try
            log.warning("cannot fetch the JWKS %s: %s", self.source, type(error).__name__)
            if not self._keys:
                raise KeysUnavailable() from None
            return
        by_id = {str(key.key_id): key for key in keys if key.key_id is not None}
        if not by_id and len(keys) == 1:
            by_id = {"": keys[0]}  # one key without an id: tokens without a kid use it
        self._keys = by_id
        self._fetched_at = now


@dataclass(frozen=True)
class JwtIssuer:
    """One identity provider whose tokens are accepted.

    :param issuer: the ``iss`` its tokens carry, exactly.
    :param keys: its published keys.
    :param audiences: the ``aud`` values accepted (at least one).
    :param algorithms: allowed signature algorithms, a subset of :data:`ASYMMETRIC_ALGORITHMS`.
    :param principal_claims: claims naming the caller, the first present wins.
    :param required_claims: claim -> a value it must equal or, for a list or a space-separated
        string (``roles``, ``scp``), contain.
    :param leeway: seconds of clock skew allowed for ``exp``, ``nbf`` and ``iat``.
    """

    issuer: str
    keys: JwksKeys
    audiences: tuple[str, ...]
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    principal_claims: tuple[str, ...] = ("azp", "appid", "client_id", "sub")
    required_claims: Mapping[str, str] = field(default_factory=dict)
    leeway: float = 60.0

    def __post_init__(self) -> None:
        if _PYJWT_MISSING is not None:
            raise ImportError(
                "JWT bearer tokens need PyJWT: pip install 'scim-ldap[jwt]'"
            ) from _PYJWT_MISSING
        wrong = [a for a in self.algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if wrong or not self.algorithms:
            raise ValueError("only asymmetric algorithms can be allowed: " + ", ".join(wrong))
        if not self.audiences:
            raise ValueError("at least one audience is needed")

    def identify(self, token: str) -> str | None:
        """The caller's name for a valid token of this issuer, else ``None``.

        :raises KeysUnavailable: the token's keys cannot be fetched and none are known.
        """
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        if header.get("alg") not in self.algorithms:
            return None
        key = self.keys.key(header.get("kid"))
        if key is None or key.key_type != _KEY_TYPES[str(header["alg"])[:2]]:
            return None  # unknown key, or a key of another kind than the algorithm needs
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[str(header["alg"])],
                audience=list(self.audiences),
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, ValueError, TypeError) as error:
            log.info("a JWT was refused: %s", type(error).__name__)
            return None
        if not all(_holds(claims.get(k), v) for k, v in self.required_claims.items()):
            log.info("a JWT lacks a required claim")
            return None
        for name in self.principal_claims:
            if isinstance(claims.get(name), str) and claims[name]:
                return f"{name}:{claims[name]}"
        return "jwt"


def issuer_of(issuers: Sequence[JwtIssuer], token: str) -> JwtIssuer | None:
    """The issuer among ``issuers`` whose ``iss`` the token names, or ``None``.

    The claim is read without checking the signature, only to choose the issuer that then
    checks everything (``iss`` included) with its own keys, audiences and rules.
    """
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    named = claims.get("iss")
    return next((i for i in issuers if isinstance(named, str) and i.issuer == named), None)


def _holds(value: Any, wanted: str) -> bool:
    if isinstance(value, str):
        return value == wanted or wanted in value.split()
    if isinstance(value, Sequence):
        return wanted in value
    return False
