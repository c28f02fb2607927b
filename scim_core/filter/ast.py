"""The filter AST: frozen dataclasses for RFC 7644 §3.4.2.2 filters and §3.5.2 PATCH paths.

This module owns the node types, their canonical string form, and :class:`AstBuilder`, the Lark
transformer that builds the nodes while the parser reduces (it does nothing else).

``str(node)`` is canonical: lowercase operators and keywords, JSON literals for values, and
parentheses exactly where precedence (not > and > or, left-associative) needs them, so that
``parse_filter(str(node)) == node``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from lark import Token, Transformer

__all__ = [
    "And",
    "AstBuilder",
    "AttrPath",
    "Compare",
    "CompareOp",
    "Filter",
    "Not",
    "Or",
    "PatchPath",
    "Present",
    "Value",
    "ValueFilter",
]

CompareOp: TypeAlias = Literal["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"]
"""The attribute operators of RFC 7644 §3.4.2.2, Table 3 (``pr`` is :class:`Present`)."""

Value: TypeAlias = str | bool | int | float | None
"""A comparison value: ``compValue`` of RFC 7644 §3.4.2.2, a JSON literal (RFC 7159)."""


@dataclass(frozen=True, slots=True)
class AttrPath:
    """An attribute path, ``attrPath = [URI ":"] ATTRNAME *1subAttr`` (RFC 7644 §3.4.2.2, §3.10).

    :param attr: the attribute name, as written (names are case-insensitive, RFC 7643 §2.1).
    :param sub_attr: the sub-attribute name after ``.``, if any.
    :param schema: the schema URI prefix, if the path is fully qualified.
    """

    attr: str
    sub_attr: str | None = None
    schema: str | None = None

    def key(self) -> str:
        """The lowercased dotted name without schema, e.g. ``"name.givenname"``, for lookups.

        :returns: ``attr`` or ``attr.sub_attr``, lowercased (RFC 7643 §2.1).
        """
        if self.sub_attr is None:
            return self.attr.lower()
        return f"{self.attr}.{self.sub_attr}".lower()

    def __str__(self) -> str:
        text = self.attr if self.sub_attr is None else f"{self.attr}.{self.sub_attr}"
        return text if self.schema is None else f"{self.schema}:{text}"


def _json(value: Value) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        # RFC 7159 has no infinities; a number too large for a float parses to one.
        if math.isnan(value):
            raise ValueError("NaN has no SCIM filter representation")
        return repr(value).replace("inf", "1e999")  # "inf" or "-inf"
    return json.dumps(value, ensure_ascii=False)  # pragma: no mutate - None is as false as False


@dataclass(frozen=True, slots=True)
class Compare:
    """``attrPath SP compareOp SP compValue`` (RFC 7644 §3.4.2.2).

    :param path: the attribute compared.
    :param op: the lowercase operator.
    :param value: the JSON value: string, boolean, number or ``None`` for ``null``.
    """

    path: AttrPath
    op: CompareOp
    value: Value

    def __str__(self) -> str:
        return f"{self.path} {self.op} {_json(self.value)}"


@dataclass(frozen=True, slots=True)
class Present:
    """``attrPath SP "pr"``: the attribute has a non-empty value (RFC 7644 §3.4.2.2).

    :param path: the attribute tested.
    """

    path: AttrPath

    def __str__(self) -> str:
        return f"{self.path} pr"


@dataclass(frozen=True, slots=True)
class And:
    """``FILTER SP "and" SP FILTER`` (RFC 7644 §3.4.2.2); parsed left-associative.

    :param left: the left operand.
    :param right: the right operand.
    """

    left: Filter
    right: Filter

    def __str__(self) -> str:
        return _logical(self, And, "and", (Or,), (Or, And))


@dataclass(frozen=True, slots=True)
class Or:
    """``FILTER SP "or" SP FILTER`` (RFC 7644 §3.4.2.2); the weakest operator, left-associative.

    :param left: the left operand.
    :param right: the right operand.
    """

    left: Filter
    right: Filter

    def __str__(self) -> str:
        return _logical(self, Or, "or", (), (Or,))


@dataclass(frozen=True, slots=True)
class Not:
    """``"not" "(" FILTER ")"`` (RFC 7644 §3.4.2.2).

    :param inner: the negated filter.
    """

    inner: Filter

    def __str__(self) -> str:
        return f"not ({self.inner})"


@dataclass(frozen=True, slots=True)
class ValueFilter:
    """``valuePath = attrPath "[" valFilter "]"`` (RFC 7644 §3.4.2.2).

    Matches when one value of the multi-valued attribute ``path`` satisfies ``filter``, whose
    attribute paths name sub-attributes of that value.

    :param path: the (multi-valued, usually complex) attribute.
    :param filter: the condition on one of its values; it holds no :class:`ValueFilter`.
    """

    path: AttrPath
    filter: Filter

    def __str__(self) -> str:
        return f"{self.path}[{self.filter}]"


Filter: TypeAlias = Compare | Present | And | Or | Not | ValueFilter
"""Any filter node (RFC 7644 §3.4.2.2 ``FILTER``)."""


def _logical(
    node: And | Or,
    kind: type[And] | type[Or],
    keyword: str,
    wrap_left: tuple[type, ...],
    wrap_right: tuple[type, ...],
) -> str:
    # Walk the left spine of a same-operator chain without recursion, so long and/or chains do
    # not reach the recursion limit; parentheses follow precedence and left-associativity.
    rights: list[Filter] = []
    current: Filter = node
    while isinstance(current, kind):
        rights.append(current.right)
        current = current.left
    parts = [f"({current})" if isinstance(current, wrap_left) else str(current)]
    for right in reversed(rights):
        parts.append(f"({right})" if isinstance(right, wrap_right) else str(right))
    return f" {keyword} ".join(parts)


@dataclass(frozen=True, slots=True)
class PatchPath:
    """A PATCH target, ``PATH = attrPath / valuePath [subAttr]`` (RFC 7644 §3.5.2).

    :param attr: the attribute (``name.givenName``; or ``emails`` for a value path).
    :param value_filter: the value selection inside ``[...]``, if any.
    :param sub_attr: the sub-attribute after ``]``, e.g. ``value`` in ``emails[...].value``.
    :raises ValueError: for a ``sub_attr`` without ``value_filter`` (it belongs in ``attr``).
    """

    attr: AttrPath
    value_filter: Filter | None = None
    sub_attr: str | None = None

    def __post_init__(self) -> None:
        if self.sub_attr is not None and self.value_filter is None:
            raise ValueError("sub_attr follows a value filter; put it in attr otherwise")

    def __str__(self) -> str:
        if self.value_filter is None:
            return str(self.attr)
        text = f"{self.attr}[{self.value_filter}]"
        return text if self.sub_attr is None else f"{text}.{self.sub_attr}"


_OPS: dict[str, CompareOp] = {
    op: op for op in ("eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le")
}
_LITERALS: dict[str, Value] = {"true": True, "false": False, "null": None}


def _attr_path(text: str) -> AttrPath:
    # ATTRPATH is one terminal: the schema URI ends at the last ":", the sub-attribute follows
    # the first "." of the name (names hold neither character).
    schema, _, name = text.rpartition(":")
    attr, dot, sub = name.partition(".")
    return AttrPath(attr, sub if dot else None, schema or None)


def _value(text: str) -> Value:
    first = text[0]
    if first == '"':
        return json.loads(text)  # type: ignore[no-any-return]
    if first == "-" or first.isdigit():
        try:
            return int(text)
        except ValueError:  # a fraction or an exponent
            return float(text)
    return _LITERALS[text.lower()]


class AstBuilder(Transformer[Token, "Filter | PatchPath"]):
    """Builds the AST from ``filter.lark`` reductions; pass it as Lark's ``transformer=``.

    The grammar is used with ``keep_all_tokens=True``: each method receives every symbol of its
    rule (punctuation included) and picks what it needs, so Lark adds no child filter per call.
    """

    def compare(self, c: list[Token]) -> Compare:
        """``ATTRPATH COMPAREOP COMPVALUE``."""
        return Compare(_attr_path(c[0].value), _OPS[c[1].lower()], _value(c[2].value))

    def present(self, c: list[Token]) -> Present:
        """``ATTRPATH PR``."""
        return Present(_attr_path(c[0].value))

    def and_(self, c: list[Any]) -> And:
        """``filter AND term``."""
        return And(c[0], c[2])

    def or_(self, c: list[Any]) -> Or:
        """``filter OR term``."""
        return Or(c[0], c[2])

    def not_(self, c: list[Any]) -> Not:
        """``NOT LPAR filter RPAR``."""
        return Not(c[2])

    def group(self, c: list[Any]) -> Filter:
        """``LPAR filter RPAR``: grouping leaves no node."""
        inner: Filter = c[1]
        return inner

    def value_filter(self, c: list[Any]) -> ValueFilter:
        """``ATTRPATH LSQB valfilter RSQB``."""
        return ValueFilter(_attr_path(c[0].value), c[2])

    def path_attr(self, c: list[Token]) -> PatchPath:
        """``ATTRPATH`` as a PATCH path."""
        return PatchPath(_attr_path(c[0].value))

    def path_value(self, c: list[Any]) -> PatchPath:
        """``ATTRPATH LSQB valfilter RSQB [SUBATTR]`` as a PATCH path."""
        sub = c[4].value[1:] if len(c) == 5 else None
        return PatchPath(_attr_path(c[0].value), c[2], sub)
