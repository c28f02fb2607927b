"""Filters as predicates over SCIM resources: the in-process backend's query engine.

This module owns the meaning of each filter node on a resource in canonical RFC 7643 JSON form
(``{"userName": ..., "name": {"givenName": ...}, "emails": [{"value": ...}], ...}``), following
RFC 7644 §3.4.2.2:

- attribute names are case-insensitive (RFC 7643 §2.1); a schema-URI prefix names the
  attribute in that schema's extension object, or at the top level for a schema the resource
  lists in ``schemas`` (its core schema);
- string comparisons ignore case unless the attribute is ``caseExact`` (RFC 7643 §2.3.1; ``id``
  and ``externalId`` are, §3.1);
- a multi-valued attribute matches if any of its values matches; a complex attribute compared
  without a sub-attribute is compared through its ``value`` sub-attribute (RFC 7643 §2.4);
- ``pr`` needs a non-empty value, or a complex value with a non-empty sub-attribute; unassigned,
  ``null`` and ``[]`` are the same state (RFC 7643 §2.5), so ``eq null`` means "not present";
- ``ne`` is the negation of ``eq`` (no value equals), as the LDAP translation has it, so both
  backends answer alike; a comparison that does not apply to the value's type (``co`` on a
  number, ``gt`` on a boolean) does not match;
- DateTime strings (RFC 3339) compare as instants when both sides parse as such;
- ``email`` is an alias of ``emails.value`` (the contract's flat form).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from scim_core.filter.ast import (
    And,
    AttrPath,
    Compare,
    Filter,
    Not,
    Or,
    Present,
    Value,
    ValueFilter,
)

__all__ = ["CASE_EXACT", "evaluate"]

CASE_EXACT: frozenset[str] = frozenset({"id", "externalid"})
"""Lowercased dotted names of the ``caseExact`` attributes of RFC 7643 §3.1."""

_ALIASES: dict[str, AttrPath] = {"email": AttrPath("emails", "value")}
# The sub-attribute a complex value is compared through (RFC 7643 §2.4).
_VALUE = "value"
# Where a path is looked up: None for the resource, or one element of a multi-valued attribute
# inside a value filter with that attribute's lowercased key and a dot.
Scope = tuple[Mapping[str, Any], str] | None

_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
}
_TEXT: dict[str, Callable[[str, str], bool]] = {
    **_ORDER,
    "co": lambda actual, wanted: wanted in actual,
    "sw": str.startswith,
    "ew": str.endswith,
}


def evaluate(
    ast: Filter,
    resource: Mapping[str, Any],
    *,
    case_exact: Callable[[str], bool] | frozenset[str] = CASE_EXACT,
) -> bool:
    """Whether ``resource`` matches the filter ``ast`` (RFC 7644 §3.4.2.2).

    :param ast: a parsed filter.
    :param resource: the resource in canonical RFC 7643 JSON form.
    :param case_exact: which attributes compare strings case-sensitively: a set of lowercased
        dotted names (``"externalid"``, ``"emails.value"``) or a predicate on such a name.
    :returns: ``True`` if the resource matches.
    """
    if isinstance(case_exact, frozenset):
        exact: Callable[[str], bool] = frozenset(k.lower() for k in case_exact).__contains__
    else:
        exact = case_exact
    return _Evaluator(resource, exact).test(ast, None)


class _Evaluator:
    def __init__(self, resource: Mapping[str, Any], exact: Callable[[str], bool]) -> None:
        self.resource = resource
        self.exact = exact

    def test(self, node: Filter, scope: Scope) -> bool:
        if isinstance(node, And | Or):
            operands = _chain(node)
            if isinstance(node, And):
                return all(self.test(o, scope) for o in operands)
            return any(self.test(o, scope) for o in operands)
        if isinstance(node, Not):
            return not self.test(node.inner, scope)
        if isinstance(node, ValueFilter):
            # A value filter holds no value path (the grammar): it is always on the resource.
            key = node.path.key() + "."
            return any(self.test(node.filter, (element, key)) for element in self._elements(node))
        if isinstance(node, Present):
            return any(_non_empty(v) for v in self._nodes(node.path, scope)[1])
        return self._compare(node, scope)

    def _compare(self, node: Compare, scope: Scope) -> bool:
        key, nodes = self._nodes(node.path, scope)
        if node.value is None:
            # eq null: unassigned; ne null: assigned (RFC 7643 §2.5).
            present = any(_non_empty(v) for v in nodes)
            return {"eq": not present, "ne": present}.get(node.op, False)
        pairs: list[tuple[Any, bool]] = []
        exact = self.exact(key)
        for node_value in nodes:
            if isinstance(node_value, Mapping):
                # A complex value compared as a whole: its "value" sub-attribute (RFC 7643 §2.4).
                inner_exact = self.exact(f"{key}.{_VALUE}")
                pairs.extend((v, inner_exact) for v in _as_list(_get(node_value, _VALUE)))
            else:
                pairs.append((node_value, exact))
        if node.op == "ne":
            return not any(_matches("eq", v, node.value, e) for v, e in pairs)
        return any(_matches(node.op, v, node.value, e) for v, e in pairs)

    def _nodes(self, path: AttrPath, scope: Scope) -> tuple[str, list[Any]]:
        # The values ``path`` names, multi-valued attributes flattened, with the lowercased key
        # used for caseExact decisions.
        if scope is None:
            alias = _ALIASES.get(path.key())
            if alias is not None and _get(self.resource, path.attr) is None:
                path = alias
            container, key = self._schema_container(path.schema), path.key()
        else:
            container, prefix = scope
            key = prefix + path.key()
        found = _as_list(_get(container, path.attr))
        if path.sub_attr is None:
            return key, found
        values: list[Any] = []
        for item in found:
            if isinstance(item, Mapping):
                values.extend(_as_list(_get(item, path.sub_attr)))
        return key, values

    def _elements(self, node: ValueFilter) -> list[Mapping[str, Any]]:
        nodes = self._nodes(node.path, None)[1]
        # A simple multi-valued attribute's values act as {"value": v} in a value filter.
        return [n if isinstance(n, Mapping) else {_VALUE: n} for n in nodes]

    def _schema_container(self, schema: str | None) -> Mapping[str, Any]:
        resource = self.resource
        if schema is None:
            return resource
        extension = _get(resource, schema)
        if isinstance(extension, Mapping):
            return extension
        listed = resource.get("schemas")
        if not isinstance(listed, list):
            return resource  # no "schemas" to check against: take it as the core schema
        wanted = schema.lower()
        if any(isinstance(s, str) and s.lower() == wanted for s in listed):
            return resource
        return {}


def _chain(node: And | Or) -> list[Filter]:
    # The operands of a left-deep chain of one operator, in order, without recursion.
    kind = type(node)
    rights: list[Filter] = []
    current: Filter = node
    while isinstance(current, kind):
        rights.append(current.right)
        current = current.left
    rights.append(current)
    rights.reverse()
    return rights


def _get(mapping: Mapping[str, Any], name: str) -> Any:
    # Attribute names are case-insensitive (RFC 7643 §2.1).
    if name in mapping:
        return mapping[name]
    lowered = name.lower()
    for key, value in mapping.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return None


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _non_empty(value: Any) -> bool:
    if value is None or value == "" or value == []:
        return False
    if isinstance(value, Mapping):
        return any(_non_empty(v) for v in value.values())
    if isinstance(value, list):
        return any(_non_empty(v) for v in value)
    return True


def _datetime(text: str) -> datetime | None:
    if len(text) < 10 or text[4] != "-" or text[7] != "-":
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _matches(op: str, actual: Any, wanted: Value, exact: bool) -> bool:
    if isinstance(wanted, bool) or isinstance(actual, bool):
        both = isinstance(wanted, bool) and isinstance(actual, bool)
        return both and op == "eq" and actual == wanted
    if isinstance(wanted, str):
        if not isinstance(actual, str):
            return False
        if op in _ORDER:
            when, then = _datetime(actual), _datetime(wanted)
            if when is not None and then is not None:
                try:
                    return _ORDER[op](when, then)
                except TypeError:  # one naive, one aware: fall back to the text
                    pass
        if not exact:
            actual, wanted = actual.casefold(), wanted.casefold()
        return _TEXT[op](actual, wanted)
    if isinstance(wanted, int | float) and isinstance(actual, int | float):
        compare = _ORDER.get(op)
        return compare is not None and compare(actual, wanted)
    return False
