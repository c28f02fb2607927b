"""startIndex / count / cursor parsing with the service's defaults and bounds (RFC 7644
§3.4.2.4, RFC 9865 §2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scim_core.errors import InvalidCount, InvalidValue, ScimError

__all__ = ["Window", "parse_window"]


@dataclass(frozen=True)
class Window:
    """The effective page: 1-based ``start_index`` and ``count`` within the service bounds.

    :param cursor: ``None`` for index-based paging; for cursor-based paging the cursor sent,
        ``""`` on the first page of a walk.
    """

    start_index: int
    count: int
    cursor: str | None = None


def _integer(query: Mapping[str, str], name: str, error: type[ScimError]) -> int | None:
    raw = query.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        return int(raw.strip())
    except ValueError:
        raise error(f"{name} must be an integer.") from None


def parse_window(query: Mapping[str, str], *, default_count: int, max_results: int) -> Window:
    """Read ``startIndex``, ``count`` and ``cursor`` from query parameters.

    A startIndex below 1 means 1; a negative count means 0; a count above ``max_results`` is
    capped (both RFCs let the service return fewer). A ``cursor`` parameter, even empty,
    asks for cursor-based paging; with a ``startIndex`` too the request names two methods.

    :raises InvalidValue: a startIndex that is not an integer, or startIndex with cursor.
    :raises InvalidCount: a count that is not an integer, in a cursor walk.
    """
    cursor = query.get("cursor")
    if cursor is not None:
        cursor = cursor.strip()
        if (query.get("startIndex") or "").strip():
            raise InvalidValue("startIndex and cursor name two ways of paging; send one of them.")
    start = _integer(query, "startIndex", InvalidValue)
    # An index-paged request keeps the answer it always had; a cursor walk uses the
    # cursor-specific error of RFC 9865.
    count = _integer(query, "count", InvalidValue if cursor is None else InvalidCount)
    start_index = 1 if start is None else max(1, start)
    if count is None:
        count = default_count
    return Window(start_index=start_index, count=max(0, min(count, max_results)), cursor=cursor)
