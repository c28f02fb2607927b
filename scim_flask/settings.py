"""The adapter's settings: the service's, the HTTP layer's, and the chosen backend's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scim_core.config import SERVICE_SETTINGS, ConfigError, ServiceConfig, Setting, read_settings
from scim_flask.auth import TokenSet, parse_tokens

__all__ = ["HTTP_SETTINGS", "WORKER_SETTINGS", "AppSettings", "ConfigError"]


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


def _public_url(text: str) -> str:
    url = text.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError("expected an absolute http(s) URL such as https://scim.example.com")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError("expected a URL without query, fragment or credentials")
    return url


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
        "`name=digest` (the name appears in the audit log).",
        required=True,
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
    READ_TIMEOUT,
)

#: What the gunicorn worker reads itself (before the app exists).
WORKER_SETTINGS: tuple[Setting[Any], ...] = (
    READ_TIMEOUT,
    next(setting for setting in SERVICE_SETTINGS if setting.name == "SCIM_MAX_BODY_BYTES"),
)


@dataclass(frozen=True)
class AppSettings:
    """Everything the Flask app needs, read once at start-up."""

    service: ServiceConfig
    tokens: TokenSet
    backend: str
    log_level: str
    rate_limit: float = 0.0
    auth_failure_limit: float = 5.0
    public_url: str | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> AppSettings:
        """Read ``SCIM_*`` variables; :class:`ConfigError` names the first bad one."""
        values = read_settings(HTTP_SETTINGS, environ)
        return cls(
            service=ServiceConfig.from_environ(environ),
            tokens=values["SCIM_TOKENS_SHA256"],
            backend=values["SCIM_BACKEND"],
            log_level=values["SCIM_LOG_LEVEL"],
            rate_limit=values["SCIM_RATE_LIMIT"],
            auth_failure_limit=values["SCIM_AUTH_FAILURE_LIMIT"],
            public_url=values["SCIM_PUBLIC_URL"],
        )
