"""A big group's members: held as (display, id) pairs, written to JSON in chunks.

A group of 100,000 members read as one dict per member, rendered as another and dumped as one
string held a worker's memory at about 1.7 KB a member for the length of the answer. Here the
backend hands over the members as two strings each (:class:`MemberList`, a read-only sequence
whose dicts are made only when one is looked at), and the service writes the answer's JSON a
slice of members at a time (:class:`StreamedGroup`): the bytes are exactly those
``json.dumps`` gives for the whole rendered group, with the ``members`` array written from the
pairs by a per-member template learnt from rendering the first member the ordinary way
(projection, ``returned``, ``$ref`` included).

Everything that can fail (the directory's answers, the projection) happens before the first
byte: the pairs are all read before the answer starts, and writing them is string formatting.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any, overload

__all__ = ["CHUNK_MEMBERS", "STREAMED_MEMBERS", "MemberList", "StreamedGroup", "member_template"]

#: Members per chunk of a streamed answer (about 150 KB of JSON).
CHUNK_MEMBERS = 1000

#: A group GET with more members than this is answered in chunks.
STREAMED_MEMBERS = 1000

_encode: Callable[[str], str] = json.encoder.encode_basestring


class MemberList(Sequence[dict[str, str]]):
    """A group's user members in display order, as (display, id) pairs.

    Reads as the usual member dicts, ``{"value": id, "display": userName, "type": "User"}``,
    each made on access; :attr:`pairs` are what is kept.

    :param pairs: (display, id) per member, in any order; sorted here by display, stably
        (members that show the same display keep the order they came in).
    """

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        pairs.sort(key=itemgetter(0))
        self.pairs = pairs

    def __len__(self) -> int:
        return len(self.pairs)

    @overload
    def __getitem__(self, index: int) -> dict[str, str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, str]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, str] | list[dict[str, str]]:
        if isinstance(index, slice):
            return [_member(pair) for pair in self.pairs[index]]
        return _member(self.pairs[index])

    def __iter__(self) -> Iterator[dict[str, str]]:
        return map(_member, self.pairs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MemberList):
            return self.pairs == other.pairs
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _member(pair: tuple[str, str]) -> dict[str, str]:
    return {"value": pair[1], "display": pair[0], "type": "User"}


_FIELDS: dict[str, Callable[[str, str, str], str]] = {
    "value": lambda display, ident, base: ident,
    "display": lambda display, ident, base: display,
    "type": lambda display, ident, base: "User",
    "$ref": lambda display, ident, base: f"{base}/Users/{ident}",
}


def member_template(
    rendered: Mapping[str, Any], pair: tuple[str, str], base_url: str
) -> Callable[[tuple[str, str]], str] | None:
    """How to write one member as JSON, learnt from ``rendered``, the member ``pair`` as the
    ordinary rendering showed it; ``None`` when its keys or values are not those this module
    can reproduce (the caller then renders the usual way)."""
    # JSON escapes character by character, so the escaped $ref is the escaped base and "/Users/"
    # followed by the escaped id (without their quotes between): one escape per id, not two.
    slots = {
        "value": "%(value)s",
        "display": "%(display)s",
        "type": '"User"',
        "$ref": _encode(f"{base_url}/Users/")[:-1].replace("%", "%%") + "%(ref)s",
    }
    text = []
    for key, value in rendered.items():
        make = _FIELDS.get(key)
        if make is None or make(pair[0], pair[1], base_url) != value:
            return None
        text.append(_encode(key) + ":" + slots[key])  # one of _FIELDS: no "%" to escape
    if not text:
        return None
    form = "{" + ",".join(text) + "}"
    if "%(display)s" in form:

        def write(member: tuple[str, str]) -> str:
            ident = _encode(member[1])
            return form % {"value": ident, "display": _encode(member[0]), "ref": ident[1:]}

    else:

        def write(member: tuple[str, str]) -> str:
            ident = _encode(member[1])
            return form % {"value": ident, "ref": ident[1:]}

    if write(pair) != _dumps(rendered):
        return None
    return write


class StreamedGroup:
    """A rendered group's JSON in chunks, its ``members`` written from a :class:`MemberList`.

    Iterable any number of times; each pass yields the same bytes, which are
    ``json.dumps(body, ensure_ascii=False, separators=(",", ":"))`` of the group rendered with
    all its members.

    :param rendered: the rendered group, its ``members`` value any placeholder (replaced).
    :param members: the members, in the order they are written.
    :param write: one member's JSON (from :func:`member_template`).
    """

    def __init__(
        self,
        rendered: Mapping[str, Any],
        members: MemberList,
        write: Callable[[tuple[str, str]], str],
    ) -> None:
        marker = f"members-{secrets.token_hex(16)}"  # pragma: no mutate (any length will do)
        text = _dumps({**rendered, "members": marker})
        self._head, self._tail = text.split(f'"{marker}"')
        self._members = members
        self._write = write

    def __iter__(self) -> Iterator[bytes]:
        pairs, write = self._members.pairs, self._write
        yield (self._head + "[").encode()
        for start in range(0, len(pairs), CHUNK_MEMBERS):
            text = ",".join(map(write, pairs[start : start + CHUNK_MEMBERS]))
            yield (text if start == 0 else "," + text).encode()
        yield ("]" + self._tail).encode()


#: What ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` gives.
_dumps: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
