"""A cursor walk's parts: users by the second they were created, each part walked by its id.

Why (measured on OpenLDAP 2.5 at 1,000,000 users): a window of a sorted snapshot costs the
server a walk from the nearer end of its sorted tree to the window (slapo-sssvlv counts a
window's place one entry at a time), so a page in the middle of a million costs three times
one at either end, and a whole walk grows faster than the directory. Cut into parts of about
:data:`PART_SIZE` users, each a sorted snapshot of its own, a page costs the same wherever the
walk is and whatever the directory's size.

A part is the users whose ``createTimestamp`` falls in a span of seconds, ``low`` to
``high``: an entry keeps its creation time for life (a rename or a change leaves it), so it
belongs to one part for the whole walk, and within its part it is walked by its id as before.
slapd keeps ``createTimestamp`` in an ordered index (``index createTimestamp eq``), so a part's
search reads only its part. The walk's last part has no upper bound and also holds any entry
without a creation time (where the list by creation time ends with one), so every user is in
exactly one part. The parts are chosen as the
walk goes (:class:`WalkPosition` carries the current one in the cursor): a part ends where the
list sorted by creation time holds :data:`PART_SIZE` more users, which needs no part to be
exact, only to be the same for the whole walk.

This module is pure: the position's text form, a part's filter, and the seconds arithmetic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from scim_core.errors import InvalidCursor

__all__ = [
    "CREATED",
    "PART_SIZE",
    "TO_THE_END",
    "TO_THE_END_AND_UNDATED",
    "WalkPosition",
    "next_second",
    "part_filter",
    "second_of",
]

#: The attribute a walk is cut into parts by.
CREATED = "createTimestamp"
#: About how many users a part holds (a part's page walks at most half of it on the server).
PART_SIZE = 50_000

#: The last part's upper bound: none.
TO_THE_END = ""
#: The last part's upper bound where some users have no creation time: they are in it too.
TO_THE_END_AND_UNDATED = "!"

_SEPARATOR = "~"
_UNDECIDED = "*"
_SECOND = re.compile(r"\d{14}Z")
_TIME_FORMAT = "%Y%m%d%H%M%SZ"
_INVALID = "The cursor is not valid for this query; start again with an empty cursor."


@dataclass(frozen=True)
class WalkPosition:
    """Where a walk is: its part and the id of the last user it listed there.

    :ivar low: the part's first second (``YYYYmmddHHMMSSZ``); empty: from the beginning.
    :ivar high: its last second; :data:`TO_THE_END` or :data:`TO_THE_END_AND_UNDATED`: the
        walk's last part (the second also holds users without a creation time, which only
        a directory that does not keep them has); ``None``: not chosen yet (the walk has just
        moved on to this part).
    :ivar after: the id of the part's last user listed; empty: none yet.
    """

    low: str = ""
    high: str | None = None
    after: str = ""

    def text(self) -> str:
        """The position as the cursor carries it."""
        high = _UNDECIDED if self.high is None else self.high
        return _SEPARATOR.join((self.low, high, self.after))

    @classmethod
    def read(cls, text: str | None) -> WalkPosition:
        """The position a cursor carries (``None``: a walk's start).

        :raises InvalidCursor: not a position this module wrote (a cursor of another
            version of the service).
        """
        if text is None:
            return cls()
        fields = text.split(_SEPARATOR)
        if len(fields) != 3:
            raise InvalidCursor(_INVALID)
        low, high, after = fields
        if low and not _SECOND.fullmatch(low):
            raise InvalidCursor(_INVALID)
        if high not in (TO_THE_END, TO_THE_END_AND_UNDATED, _UNDECIDED) and not _SECOND.fullmatch(
            high
        ):
            raise InvalidCursor(_INVALID)
        return cls(low, None if high == _UNDECIDED else high, after)

    @property
    def last_part(self) -> bool:
        """Whether the position is in the walk's last part."""
        return self.high in (TO_THE_END, TO_THE_END_AND_UNDATED)

    def next_part(self) -> WalkPosition:
        """The start of the part after this one (which must have an upper bound)."""
        if self.high is None or self.last_part:
            raise ValueError("the walk's last part has no part after it")
        return WalkPosition(next_second(self.high))


def part_filter(search_filter: str, position: WalkPosition) -> str:
    """The list's filter narrowed to the position's part (whose bounds must be chosen)."""
    if position.high is None:
        raise ValueError("the part's upper bound is not chosen yet")
    low = f"({CREATED}>={position.low})" if position.low else ""
    if not position.last_part:
        return f"(&{search_filter}{low}({CREATED}<={position.high}))"
    if not low:
        return search_filter  # one part holds the whole list
    if position.high == TO_THE_END:
        return f"(&{search_filter}{low})"
    # Entries without a creation time are in no other part. The server tests every entry
    # for this one (no index lists what an entry lacks): only where there are some.
    return f"(&{search_filter}(|{low}(!({CREATED}=*))))"


def second_of(value: Any) -> str:
    """A ``createTimestamp`` value (text or the datetime ldap3 may make of it) as its second
    in UTC, ``YYYYmmddHHMMSSZ``.

    :raises ValueError: for a value that is not a GeneralizedTime.
    """
    if isinstance(value, datetime):
        moment = value if value.tzinfo is None else value.astimezone(UTC)
        return moment.strftime(_TIME_FORMAT)
    # pragma below: a codec's name has no case
    text = value.decode("ascii") if isinstance(value, bytes) else str(value)  # pragma: no mutate
    if len(text) < 14 or not text[:14].isdigit():
        raise ValueError(f"not a GeneralizedTime: {text!r}")
    if text.endswith("Z"):
        return text[:14] + "Z"
    # An offset (+hhmm / -hhmm) is turned to UTC; a fraction of a second is dropped.
    moment = datetime.strptime(text[:14], "%Y%m%d%H%M%S")
    offset = re.search(r"([+-])(\d\d)(\d\d)?$", text)
    if offset:
        sign = 1 if offset.group(1) == "+" else -1
        moment -= sign * timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3) or 0))
    return moment.strftime(_TIME_FORMAT)


def next_second(second: str) -> str:
    """The second after ``second`` (``YYYYmmddHHMMSSZ``)."""
    moment = datetime.strptime(second, _TIME_FORMAT)
    return (moment + timedelta(seconds=1)).strftime(_TIME_FORMAT)
