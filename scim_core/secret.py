"""Keeping password material out of reprs, logs and tracebacks.

:class:`Secret` masks itself wherever it is printed. While a password is actually sent (the
only moment it exists as plain text), :meth:`Secret.exposed` lists it as *in flight*, and
:class:`InFlightSecretFilter`, attached to a library's logger, masks every in-flight value
in that library's log records, even inside protocol dumps (ldap3 logs the BER payload of
the RFC 3062 password-modify request at its EXTENDED detail level).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, NoReturn

__all__ = ["InFlightSecretFilter", "Secret"]

_MASK: Final = "********"
#: How AD's unicodePwd carries a password.
_UNICODE_PWD_CODEC: Final = "utf-16-le"
_in_flight: dict[str, int] = {}
_in_flight_lock = threading.Lock()


class Secret:
    """Holds a password; ``str``/``repr`` show a mask, only :meth:`reveal` gives the value.

    Passing a :class:`Secret` rather than a ``str`` means a stray ``%r`` in a log call, an
    exception message or a debugger dump prints the mask, never the password.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The password itself; call only at the point where it is sent to the directory."""
        return self._value

    @contextmanager
    def exposed(self) -> Iterator[str]:
        """The password, registered as in flight (masked in filtered logs) while in use."""
        with _in_flight_lock:
            _in_flight[self._value] = _in_flight.get(self._value, 0) + 1
        try:
            yield self._value
        finally:
            with _in_flight_lock:
                if _in_flight[self._value] <= 1:
                    del _in_flight[self._value]
                else:
                    _in_flight[self._value] -= 1

    def __repr__(self) -> str:
        return f"Secret({_MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")


class InFlightSecretFilter(logging.Filter):
    """Masks every in-flight secret in a record's message before any handler sees it.

    Attach it to the logger of a library that may dump requests (``logging.getLogger("ldap3")
    .addFilter(InFlightSecretFilter())``); logger filters run before propagation, so every
    handler, including ones added later, receives the masked record.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not _in_flight:
            return True
        with _in_flight_lock:
            secrets = list(_in_flight)
        message = record.getMessage()
        for secret in secrets:
            # Protocol dumps show bytes: a non-ASCII password appears as its escaped repr, and
            # AD's unicodePwd carries it in UTF-16LE.
            forms = (
                secret,
                repr(secret.encode())[2:-1],
                repr(secret.encode(_UNICODE_PWD_CODEC))[2:-1],
            )
            for form in forms:
                message = message.replace(form, _MASK)
        record.msg, record.args = message, None
        return True
