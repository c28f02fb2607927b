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
        attributes = vars(record)
        # The extras only: a set difference leaves the two dozen standard attributes in C.
        for key in attributes.keys() - _STANDARD:
            attributes[key] = redact(attributes[key])
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S%z"
# One encoder for every line: json.dumps with options builds a new one per call.
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any extras."""

    def __init__(self) -> None:
        super().__init__()
        # The last second formatted and its text, one tuple (threads swap it whole): a busy
        # server logs many lines a second, and formatting a time is dear.
        self._last: tuple[int, str] = (-1, "")

    def format(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        last = self._last
        if last[0] != second:
            last = self._last = (second, self.formatTime(record, _TIME_FORMAT))
        entry: dict[str, Any] = {
            "time": last[1],
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD:
                entry[key] = value
        if record.exc_text:
            entry["exception"] = record.exc_text
        return _ENCODER.encode(entry)


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
