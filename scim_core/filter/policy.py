"""Which filter forms the service answers: a declarative allow-list over the parsed AST.

The grammar accepts the whole RFC 7644 §3.4.2.2 language so that syntax errors are precise; a
:class:`FilterPolicy` then decides which forms a resource type supports. A service provider may
support only some filters (RFC 7644 §3.4.2.2: it "MAY" support filtering, and answers
``invalidFilter`` for a filter it does not support). :data:`DEFAULT_POLICY` is the contract's:
exact matches on ``userName``, ``email``, ``emails.value`` and ``active`` for users, and on
``displayName`` for groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from scim_core.errors import InvalidFilter
from scim_core.filter.ast import And, AttrPath, Compare, Filter, Not, Or, Present, ValueFilter
from scim_core.schemas.attributes import resolve
from scim_core.urns import GROUP_URN, USER_URN

__all__ = [
    "CORE_SCHEMAS",
    "DEFAULT_POLICY",
    "FilterPolicy",
    "Form",
]

CORE_SCHEMAS: Mapping[str, str] = MappingProxyType({"User": USER_URN, "Group": GROUP_URN})
"""Resource type -> its core schema URI: a path prefixed with it names the same attribute."""

Form = tuple[str, str, str]
"""An allowed filter form: ``(resource_type, attribute, operator)``, e.g. ``("User", "userName",
"eq")``. The attribute is a dotted name, case-insensitive; an extension attribute is written
with its schema URI (``"urn:...:enterprise:2.0:User:employeeNumber"``). The operator is one of
RFC 7644 §3.4.2.2 Table 3, ``pr`` included."""


#: RFC 7643 §3.1 attributes every resource has: named in errors like schema attributes.
_COMMON_ATTRIBUTES = frozenset({"id", "externalid", "meta", "schemas"})


@dataclass(frozen=True)
class FilterPolicy:
    """An allow-list of filter forms per resource type (RFC 7644 §3.4.2.2, ``invalidFilter``).

    :param forms: the allowed ``(resource_type, attribute, operator)`` forms.
    :param value_types: per form, the Python types its value may have; a form not listed here
        takes strings only. ``bool`` means ``true``/``false``, ``type(None)`` means ``null``.
    :param logical: the logical operators allowed between forms, among ``"and"``, ``"or"``,
        ``"not"`` (none by default).
    :param value_filters: whether ``attr[sub op value]`` is allowed; it is checked as the form
        ``attr.sub op`` for each comparison inside.
    :param schemas: resource type -> core schema URI, whose prefix names the plain attribute.
    """

    forms: frozenset[Form]
    value_types: Mapping[Form, tuple[type, ...]] = field(default_factory=dict)
    logical: frozenset[str] = frozenset()
    value_filters: bool = False
    schemas: Mapping[str, str] = field(default_factory=lambda: CORE_SCHEMAS)
    _index: Mapping[tuple[str, str, str], tuple[Form, tuple[type, ...]]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        index = {}
        types = {_lower(form): kinds for form, kinds in self.value_types.items()}
        for form in self.forms:
            key = _lower(form)
            index[key] = (form, types.get(key, (str,)))
        object.__setattr__(self, "_index", MappingProxyType(index))

    def allowed(self, resource_type: str) -> list[str]:
        """The allowed forms of one resource type, as text for messages (``"userName eq"``).

        :param resource_type: ``"User"``, ``"Group"``, ...
        :returns: the forms in declaration-independent (sorted) order, logical operators last.
        """
        texts = []
        for form, kinds in self._index.values():
            if form[0].lower() != resource_type.lower():
                continue
            text = f"{form[1]} {form[2]}"
            if kinds != (str,) and form[2] != "pr":
                text += " " + "|".join(_LISTED.get(kind, kind.__name__) for kind in kinds)
            texts.append(text)
        return sorted(texts, key=str.lower) + sorted(self.logical)

    def check(self, ast: Filter, resource_type: str) -> None:
        """Raise unless every part of ``ast`` is an allowed form for ``resource_type``.

        :param ast: a parsed filter.
        :param resource_type: the resource type being filtered, e.g. ``"User"``.
        :raises InvalidFilter: naming the first offending form and listing the allowed ones.
        """
        self._check(ast, resource_type, None)

    def _check(self, node: Filter, resource_type: str, outer: AttrPath | None) -> None:
        # Iterative over and/or chains so long chains cannot exhaust the stack.
        stack: list[Filter] = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, And | Or | Not):
                keyword = _KEYWORDS[type(current)]
                if keyword not in self.logical:
                    self._reject(f"the logical operator {keyword!r}", resource_type)
                if isinstance(current, Not):
                    stack.append(current.inner)
                else:
                    stack.extend((current.right, current.left))
            elif isinstance(current, ValueFilter):
                if outer is not None or not self.value_filters:
                    self._reject("a value filter 'attribute[...]'", resource_type)
                self._check(current.filter, resource_type, current.path)
            else:
                self._check_form(current, resource_type, outer)

    def _check_form(
        self, node: Compare | Present, resource_type: str, outer: AttrPath | None
    ) -> None:
        path = node.path
        name = self._name(path, resource_type, outer)
        op = node.op if isinstance(node, Compare) else "pr"
        entry = self._index.get((resource_type.lower(), name.lower(), op))
        # An attribute name the policy does not know is not quoted back: it is client text.
        known = (
            resolve(name, resource_type) is not None
            or name.split(".")[0].lower() in _COMMON_ATTRIBUTES
            or any(key[:2] == (resource_type.lower(), name.lower()) for key in self._index)
        )
        named = str(path) if known else "an attribute"
        shown = f"{named} {op}" if outer is None else f"{outer}[{named} {op}]"
        if entry is None:
            self._reject(f"{shown!r}", resource_type)
        elif isinstance(node, Compare) and type(node.value) not in entry[1]:
            kind = type(node.value)
            self._reject(f"{shown!r} with a {_NAMED[kind]} value", resource_type)

    def _name(self, path: AttrPath, resource_type: str, outer: AttrPath | None) -> str:
        if outer is not None:
            # Inside attr[...], a path names a sub-attribute of attr (RFC 7644 §3.4.2.2).
            path = AttrPath(outer.attr, path.attr, outer.schema)
        dotted = path.attr if path.sub_attr is None else f"{path.attr}.{path.sub_attr}"
        core = self.schemas.get(resource_type)
        if path.schema is None or (core is not None and path.schema.lower() == core.lower()):
            return dotted
        return f"{path.schema}:{dotted}"

    def _reject(self, what: str, resource_type: str) -> None:
        allowed = self.allowed(resource_type)
        if not allowed:
            raise InvalidFilter(f"Filtering {resource_type} resources is not supported.")
        raise InvalidFilter(
            f"Unsupported filter: {what} on {resource_type}; "
            f"the supported forms are: {', '.join(allowed)}."
        )


_KEYWORDS: dict[type, str] = {And: "and", Or: "or", Not: "not"}

# How a value type is listed among allowed forms, and named in a rejection.
_LISTED: dict[type, str] = {str: "string", bool: "true|false", int: "integer", float: "decimal"}
_LISTED[type(None)] = "null"
# Every type a parsed filter's value has.
_NAMED: dict[type, str] = {str: "string", bool: "boolean", int: "number", float: "number"}
_NAMED[type(None)] = "null"


def _lower(form: Form) -> tuple[str, str, str]:
    return (form[0].lower(), form[1].lower(), form[2].lower())


DEFAULT_POLICY = FilterPolicy(
    forms=frozenset(
        {
            ("User", "userName", "eq"),
            ("User", "email", "eq"),
            ("User", "emails.value", "eq"),
            ("User", "active", "eq"),
            ("Group", "displayName", "eq"),
        }
    ),
    value_types={("User", "active", "eq"): (bool,)},
)
"""The contract: users by ``userName eq``, ``email eq``, ``emails.value eq`` or
``active eq true|false``; groups by ``displayName eq``. No logical operators, no value
filters."""
