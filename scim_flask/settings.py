"""The adapter's settings: the service's, the HTTP layer's, and the chosen backend's."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any
from urllib.parse import urlsplit

from scim_core.auth import TokenSet, bearer_token, parse_tokens
from scim_core.config import (
    SERVICE_SETTINGS,
    ConfigError,
    ServiceConfig,
    Setting,
    parse_int,
    parse_list,
    read_settings,
)
from scim_core.oauth import (
    ASYMMETRIC_ALGORITHMS,
    JwksKeys,
    JwtIssuer,
    issuer_of,
    looks_like_jwt,
)

__all__ = ["HTTP_SETTINGS", "SERVER_SETTINGS", "WORKER_SETTINGS", "AppSettings", "ConfigError"]


def _level(text: str) -> str:
    if text.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ValueError("expected DEBUG, INFO, WARNING or ERROR")
    return text.upper()


def _rate(text: str) -> float:
    value = float(text.strip())
    if not value >= 0 or value == float("inf"):
        raise ValueError("expected requests per second, 0 or more (0 = no limit)")
    return value


def _seconds(text: str) -> float:
    value = float(text.strip())
    if not 0 < value <= 300:
        raise ValueError("expected seconds, above 0 and at most 300")
    return value


def _algorithms(text: str) -> tuple[str, ...]:
    names = parse_list(text)
    wrong = [name for name in names if name not in ASYMMETRIC_ALGORITHMS]
    if wrong or not names:
        raise ValueError("expected asymmetric algorithms among " + ", ".join(ASYMMETRIC_ALGORITHMS))
    return names


def _claims(text: str) -> dict[str, str]:
    claims = {}
    for item in parse_list(text):
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError("expected claim=value, comma-separated")
        claims[name.strip()] = value.strip()
    return claims


def _public_url(text: str) -> str:
    url = text.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError("expected an absolute http(s) URL such as https://scim.example.com")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("expected a URL without query, fragment or credentials")
    return url


def _networks(text: str) -> tuple[IPv4Network | IPv6Network, ...]:
    try:
        return tuple(ip_network(item, strict=False) for item in parse_list(text))
    except ValueError:
        raise ValueError("expected IP addresses or networks, e.g. 10.0.0.5,192.0.2.0/24") from None


READ_TIMEOUT = Setting(
    "SCIM_READ_TIMEOUT",
    _seconds,
    10.0,
    "Seconds a client has to send a whole request (head and body) from its first byte, and a "
    "new connection to start one; then 408 (or the connection is closed if nothing came).",
)

HTTP_SETTINGS: tuple[Setting[Any], ...] = (
    Setting(
        "SCIM_TOKENS_SHA256",
        parse_tokens,
        None,
        "Comma-separated SHA-256 hex digests of the accepted bearer tokens, optionally "
        "`name=digest` (the name appears in the audit log). Required unless "
        "`SCIM_JWT_ISSUER` is set; both may be.",
    ),
    Setting(
        "SCIM_JWT_ISSUER",
        str,
        None,
        "Accept JWT bearer tokens from this issuer (their `iss`, exactly), e.g. "
        "`https://login.microsoftonline.com/<tenant>/v2.0`. Another issuer gets its own "
        "variables with a name appended: `SCIM_JWT_ISSUER_OKTA`, `SCIM_JWT_JWKS_OKTA`, ...",
    ),
    Setting(
        "SCIM_JWT_JWKS",
        str,
        None,
        "Where the issuer publishes its signing keys: an https URL (fetched when needed, kept "
        "an hour, fetched again for an unknown key id at most once a minute) or a file.",
    ),
    Setting(
        "SCIM_JWT_AUDIENCE",
        parse_list,
        (),
        "Comma-separated `aud` values accepted (the app's client id or Application ID URI).",
    ),
    Setting(
        "SCIM_JWT_ALGORITHMS",
        _algorithms,
        ASYMMETRIC_ALGORITHMS,
        "Comma-separated signature algorithms accepted; asymmetric ones only (HMAC and `none` "
        "are never accepted).",
    ),
    Setting(
        "SCIM_JWT_PRINCIPAL_CLAIMS",
        parse_list,
        ("azp", "appid", "client_id", "sub"),
        "Claims naming the caller in audit lines and rate limits; the first present wins.",
    ),
    Setting(
        "SCIM_JWT_REQUIRED_CLAIMS",
        _claims,
        {},
        "Comma-separated `claim=value` a token must carry (a list or space-separated claim "
        "such as `roles` or `scp` must contain the value), e.g. `roles=SCIM.Provision`.",
    ),
    Setting(
        "SCIM_JWT_LEEWAY",
        _seconds,
        60.0,
        "Seconds of clock skew allowed when checking `exp`, `nbf` and `iat`.",
    ),
    Setting("SCIM_BACKEND", str, "ldap", "The backend plugin: `ldap` or `memory` (or your own)."),
    Setting("SCIM_LOG_LEVEL", _level, "INFO", "DEBUG, INFO, WARNING or ERROR."),
    Setting(
        "SCIM_RATE_LIMIT",
        _rate,
        0.0,
        "Requests per second per token name, per worker process (429 with Retry-After beyond); "
        "0 turns the limit off.",
    ),
    Setting(
        "SCIM_AUTH_FAILURE_LIMIT",
        _rate,
        5.0,
        "Requests with a missing or wrong token allowed per second per client address, per "
        "worker process, in bursts of up to 20 seconds' worth (429 with Retry-After beyond); "
        "0 turns the limit off.",
    ),
    Setting(
        "SCIM_PUBLIC_URL",
        _public_url,
        None,
        "The service's public base URL as clients reach it (for example "
        "`https://scim.example.com`): every `Location`, `meta.location` and `$ref` starts with "
        "it. Unset, only a loopback `Host` (localhost, 127.0.0.1, [::1]) is used and any other "
        "`Host` is refused with 400.",
    ),
    Setting(
        "SCIM_TRUSTED_PROXIES",
        _networks,
        (),
        "Comma-separated addresses or networks of reverse proxies whose `X-Forwarded-For`, "
        "`-Proto`, `-Host`, `-Port` and `-Prefix` headers are believed (one proxy hop). From any "
        "other address those headers are removed before the application sees them.",
    ),
    READ_TIMEOUT,
)


def _bind(text: str) -> str:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("expected address:port, e.g. 0.0.0.0:8443 or [::]:8443")
    return text.strip()


def _readable_file(text: str) -> str:
    path = text.strip()
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror}") from None
    return path


#: How the server listens: read by the shipped gunicorn configuration (``scim-ldap serve``).
SERVER_SETTINGS: tuple[Setting[Any], ...] = (
    Setting(
        "SCIM_BIND",
        _bind,
        None,
        "Where the service listens, `address:port` (default `127.0.0.1:` and `SCIM_PORT`, "
        "itself 8080 by default); `0.0.0.0:8443` for every IPv4 interface.",
    ),
    Setting(
        "SCIM_WORKERS",
        parse_int(1),
        None,
        "Worker processes (default two per core); each serves one request at a time.",
    ),
    Setting(
        "SCIM_TLS_CERT_FILE",
        _readable_file,
        None,
        "Serve HTTPS with this certificate chain (PEM, the server's certificate first). TLS 1.2 "
        "is the floor with forward-secret suites only; TLS 1.3 is offered. A renewed file is "
        "served after a graceful reload (`kill -HUP` the master process).",
    ),
    Setting(
        "SCIM_TLS_KEY_FILE",
        _readable_file,
        None,
        "The certificate's private key (PEM), unless `SCIM_TLS_CERT_FILE` holds it too.",
    ),
    Setting(
        "SCIM_TLS_CLIENT_CA_FILE",
        _readable_file,
        None,
        "Require a client certificate issued by one of these CAs (PEM) on every connection "
        "(mutual TLS); needs `SCIM_TLS_CERT_FILE`.",
    ),
)


#: What the gunicorn worker reads itself (before the app exists).
WORKER_SETTINGS: tuple[Setting[Any], ...] = (
    READ_TIMEOUT,
    next(setting for setting in SERVICE_SETTINGS if setting.name == "SCIM_MAX_BODY_BYTES"),
)


#: The settings of one issuer; ``SCIM_JWT_<KEY>_<NAME>`` gives another issuer its own.
_ISSUER_KEYS = (
    "ISSUER",
    "JWKS",
    "AUDIENCE",
    "ALGORITHMS",
    "PRINCIPAL_CLAIMS",
    "REQUIRED_CLAIMS",
    "LEEWAY",
)
_NAMED = re.compile(r"^SCIM_JWT_(?:" + "|".join(_ISSUER_KEYS) + r")_([A-Z0-9]+)$")


def _issuer(environ: Mapping[str, str], suffix: str = "") -> JwtIssuer | None:
    """The issuer the ``SCIM_JWT_*<suffix>`` variables describe, or ``None`` if unnamed."""
    settings = [
        replace(s, name=s.name + suffix) for s in HTTP_SETTINGS if s.name.startswith("SCIM_JWT_")
    ]
    values = {k.removesuffix(suffix): v for k, v in read_settings(settings, environ).items()}
    issuer_name = "SCIM_JWT_ISSUER" + suffix
    if not values["SCIM_JWT_ISSUER"]:
        if suffix:  # a companion variable without its issuer
            raise ConfigError(f"{issuer_name} is missing: the other SCIM_JWT_*{suffix} need it.")
        return None
    for needed in ("SCIM_JWT_JWKS", "SCIM_JWT_AUDIENCE"):
        if not values[needed]:
            raise ConfigError(f"{needed}{suffix} is required with {issuer_name}.")
    try:
        return JwtIssuer(
            issuer=values["SCIM_JWT_ISSUER"],
            keys=JwksKeys(values["SCIM_JWT_JWKS"]),
            audiences=values["SCIM_JWT_AUDIENCE"],
            algorithms=values["SCIM_JWT_ALGORITHMS"],
            principal_claims=values["SCIM_JWT_PRINCIPAL_CLAIMS"],
            required_claims=values["SCIM_JWT_REQUIRED_CLAIMS"],
            leeway=values["SCIM_JWT_LEEWAY"],
        )
    except ImportError as error:  # PyJWT, the [jwt] extra, is not installed
        raise ConfigError(f"{issuer_name}: {error}") from None


def _issuers(environ: Mapping[str, str]) -> tuple[JwtIssuer, ...]:
    """The unnamed issuer and every named one (``SCIM_JWT_ISSUER_OKTA``, ...), in name order."""
    names = sorted({m[1] for key in environ if (m := _NAMED.match(key))})
    found = [_issuer(environ), *(_issuer(environ, "_" + name) for name in names)]
    issuers = tuple(i for i in found if i is not None)
    seen: set[str] = set()
    for issuer in issuers:
        if issuer.issuer in seen:
            raise ConfigError(f"Two SCIM_JWT_ISSUER* variables name the issuer {issuer.issuer}.")
        seen.add(issuer.issuer)
    return issuers


@dataclass(frozen=True)
class AppSettings:
    """Everything the Flask app needs, read once at start-up."""

    service: ServiceConfig
    tokens: TokenSet | None
    backend: str
    log_level: str
    rate_limit: float = 0.0
    auth_failure_limit: float = 5.0
    public_url: str | None = None
    jwt_issuers: tuple[JwtIssuer, ...] = ()
    trusted_proxies: tuple[IPv4Network | IPv6Network, ...] = ()

    def identify(self, authorization: str | None) -> str | None:
        """The caller's name for a valid ``Authorization: Bearer`` header, else ``None``: a
        JWT of a configured issuer (the one its ``iss`` names checks it), or a configured
        static token.

        :raises scim_core.oauth.KeysUnavailable: a JWT whose keys cannot be fetched yet.
        """
        token = bearer_token(authorization)
        if self.jwt_issuers and token is not None and looks_like_jwt(token):
            issuer = issuer_of(self.jwt_issuers, token)
            return issuer.identify(token) if issuer is not None else None
        return self.tokens.identify(authorization) if self.tokens is not None else None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> AppSettings:
        """Read ``SCIM_*`` variables; :class:`ConfigError` names the first bad one."""
        values = read_settings(HTTP_SETTINGS, environ)
        issuers = _issuers(environ)
        if not issuers and values["SCIM_TOKENS_SHA256"] is None:
            raise ConfigError(
                "SCIM_TOKENS_SHA256 is required (or SCIM_JWT_ISSUER): no caller could authenticate."
            )
        return cls(
            jwt_issuers=issuers,
            service=ServiceConfig.from_environ(environ),
            tokens=values["SCIM_TOKENS_SHA256"],
            backend=values["SCIM_BACKEND"],
            log_level=values["SCIM_LOG_LEVEL"],
            rate_limit=values["SCIM_RATE_LIMIT"],
            auth_failure_limit=values["SCIM_AUTH_FAILURE_LIMIT"],
            public_url=values["SCIM_PUBLIC_URL"],
            trusted_proxies=values["SCIM_TRUSTED_PROXIES"],
        )
