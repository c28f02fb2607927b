"""The adapter's settings: the service's, the HTTP layer's, and the chosen backend's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scim_core.config import ConfigError, ServiceConfig, Setting, read_settings
from scim_flask.auth import TokenSet, parse_tokens

__all__ = ["HTTP_SETTINGS", "AppSettings", "ConfigError"]


def _level(text: str) -> str:
    if text.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ValueError("expected DEBUG, INFO, WARNING or ERROR")
    return text.upper()


def _rate(text: str) -> float:
    value = float(text.strip())
    if not value >= 0 or value == float("inf"):
        raise ValueError("expected requests per second, 0 or more (0 = no limit)")
    return value


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
)


@dataclass(frozen=True)
class AppSettings:
    """Everything the Flask app needs, read once at start-up."""

    service: ServiceConfig
    tokens: TokenSet
    backend: str
    log_level: str
    rate_limit: float = 0.0

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
        )
