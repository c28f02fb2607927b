"""startIndex / count parsing with the service's defaults and bounds (RFC 7644 §3.4.2.4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scim_core.errors import InvalidValue

__all__ = ["Window", "parse_window"]


@dataclass(frozen=True)
class Window:
    """The effective page: 1-based ``start_index`` and ``count`` within the service bounds."""

    start_index: int
    count: int


def _integer(query: Mapping[str, str], name: str) -> int | None:
    raw = query.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        return int(raw.strip())
    except ValueError:
        raise InvalidValue(f"{name} must be an integer.") from None


def parse_window(query: Mapping[str, str], *, default_count: int, max_results: int) -> Window:
    """Read ``startIndex`` and ``count`` from query parameters.

    A startIndex below 1 means 1; a negative count means 0; a count above ``max_results`` is
    capped (RFC 7644 §3.4.2.4 lets the service choose a smaller page).

    :raises InvalidValue: when a parameter is not an integer.
    """
    start = _integer(query, "startIndex")
    count = _integer(query, "count")
    start_index = 1 if start is None else max(1, start)
    if count is None:
        count = default_count
    return Window(start_index=start_index, count=max(0, min(count, max_results)))
