"""Structured JSON logging with password redaction applied before anything is formatted."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["JsonFormatter", "RedactPasswords", "configure_logging", "redact"]

_SECRET_KEYS = re.compile(r"password|userpassword|secret|authorization|token", re.IGNORECASE)
_MASK = "[redacted]"
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
# Textual forms: JSON ("password": "x"), LDAP attribute dumps (userPassword: x), key=value.
_INLINE = re.compile(
    r"""(?P<key>["']?(?:user)?password["']?\s*[:=]\s*)(?P<value>"[^"]*"|'[^']*'|\[[^\]]*\]|[^\s,}]+)""",
    re.IGNORECASE,
)


def redact(value: Any) -> Any:
    """A copy of ``value`` with every password-like key's value masked, at any depth."""
    # Text and numbers first: nearly every value logged is one, and an ABC check costs more.
    if isinstance(value, str):
        # Most logged text names no password: a case-folded look first spares the pattern's
        # scan (case folding finds every spelling the pattern's IGNORECASE matches, and more).
        if "password" not in value.casefold():
            return value
        return _INLINE.sub(lambda m: m.group("key") + _MASK, value)
    if type(value) in _PLAIN:
        return value
    if isinstance(value, Mapping):
        return {
            k: (_MASK if isinstance(k, str) and _SECRET_KEYS.search(k) else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v) for v in value)
    if isinstance(value, bytes):
        return redact(value.decode("utf-8", "replace"))
    return value


_PLAIN = (int, float, bool, type(None))


class RedactPasswords(logging.Filter):
    """Masks passwords in a record's message, arguments and extras before formatting."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.msg = (
                str(record.msg) % record.args
                if isinstance(record.args, (tuple, dict))
                else record.msg
            )
            record.args = None
        record.msg = redact(str(record.msg))
        for key, value in list(vars(record).items()):
            if key not in _STANDARD:
                setattr(record, key, redact(value))
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD:
                entry[key] = value
        if record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure_logging(level: str = "INFO") -> None:
    """Send every logger (ldap3's included) through one redacting JSON handler on stderr."""
    root = logging.getLogger()
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactPasswords())
    root.addHandler(handler)
    root.setLevel(level.upper())
