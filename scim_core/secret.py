"""A wrapper that keeps password material out of reprs, logs and tracebacks."""

from __future__ import annotations

from typing import Final

__all__ = ["Secret"]

_MASK: Final = "********"


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

    def __repr__(self) -> str:
        return f"Secret({_MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> object:
        raise TypeError("a Secret cannot be pickled")
