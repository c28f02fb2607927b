"""SCIM filter AST -> RFC 4515 LDAP filter string.

This module owns the translation, driven by two tables: the operator templates below and a
:class:`FilterMapping` (SCIM attribute -> LDAP attribute, value transforms, boolean filters).
Every value taken from a client reaches the string only through
:func:`scim_core.backends.ldap.escape.filter_value` (RFC 4515 §3); attribute names and the
boolean filters come from trusted configuration.

Semantics the directory cannot share with SCIM are documented on :func:`to_ldap`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from scim_core.backends.ldap.escape import filter_value
from scim_core.errors import InvalidFilter
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
from scim_core.urns import GROUP_URN, USER_URN

__all__ = ["FilterMapping", "filter_key", "kind_classes", "list_filter", "lookup_filter", "to_ldap"]

# RFC 7644 §3.4.2.2 operators as RFC 4515 filters; {a} is the LDAP attribute, {v} the escaped
# value. LDAP has no strict ordering match: gt/lt are >=/<= without equality.
_TEMPLATES: Mapping[str, str] = MappingProxyType(
    {
        "eq": "({a}={v})",
        "ne": "(!({a}={v}))",
        "co": "({a}=*{v}*)",
        "sw": "({a}={v}*)",
        "ew": "({a}=*{v})",
        "gt": "(&({a}>={v})(!({a}={v})))",
        "ge": "({a}>={v})",
        "lt": "(&({a}<={v})(!({a}={v})))",
        "le": "({a}<={v})",
    }
)
_PRESENT = "({a}=*)"
_SUBSTRING = frozenset({"co", "sw", "ew"})
_ANY_ENTRY = "(objectClass=*)"


@dataclass(frozen=True)
class FilterMapping:
    """How SCIM attributes of one resource type appear in the directory.

    Keys are lowercased dotted SCIM names as :meth:`AttrPath.key` gives them (``"username"``,
    ``"emails.value"``, ``"name.givenname"``); an extension attribute is keyed with its schema
    URI (``"urn:ietf:params:scim:schemas:extension:enterprise:2.0:user:manager"``). Keys are
    matched case-insensitively.

    :param attributes: SCIM key -> LDAP attribute, e.g. ``"username" -> "uid"``.
    :param value_transforms: SCIM key -> function applied to a compared string value before
        escaping, e.g. the id's binary form.
    :param equalities: SCIM key -> function giving the whole raw filter of an ``eq`` with a
        string value (``ne`` negates it), where equality takes more than one attribute (the
        userName: its uid narrows, the userName as kept decides); it escapes what it takes.
    :param booleans: SCIM key -> (raw LDAP filter meaning true, raw filter meaning false), from
        trusted configuration, e.g. ``"active"`` -> the profile's disable marker, negated and
        not.
    :param schemas: schema URIs whose prefix names the plain (core) attribute; by default the
        core User and Group schemas (RFC 7643 §4).
    """

    attributes: Mapping[str, str]
    value_transforms: Mapping[str, Callable[[str], str | bytes]] = field(default_factory=dict)
    equalities: Mapping[str, Callable[[str], str]] = field(default_factory=dict)
    booleans: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    schemas: frozenset[str] = frozenset({USER_URN, GROUP_URN})
    _attributes: Mapping[str, str] = field(init=False, repr=False, compare=False)
    _transforms: Mapping[str, Callable[[str], str | bytes]] = field(
        init=False, repr=False, compare=False
    )
    _equalities: Mapping[str, Callable[[str], str]] = field(init=False, repr=False, compare=False)
    _booleans: Mapping[str, tuple[str, str]] = field(init=False, repr=False, compare=False)
    _schemas: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lowered = {
            "_attributes": self.attributes,
            "_transforms": self.value_transforms,
            "_equalities": self.equalities,
            "_booleans": self.booleans,
        }
        for name, table in lowered.items():
            object.__setattr__(self, name, {k.lower(): v for k, v in table.items()})
        object.__setattr__(self, "_schemas", frozenset(s.lower() for s in self.schemas))

    def key(self, path: AttrPath) -> str:
        """The table key of ``path``: its dotted name, schema-qualified unless a core schema.

        :param path: an attribute path from a filter.
        :returns: e.g. ``"name.givenname"``.
        """
        key = path.key()
        if path.schema is None or path.schema.lower() in self._schemas:
            return key
        return f"{path.schema.lower()}:{key}"


def list_filter(kind_filter: str, condition: str = "") -> str:
    """The filter of a list: the kind's filter (a profile's users or groups filter) and the
    client's condition (from :func:`to_ldap`), if any, as ``(&<kind><condition>)``.

    Every list of a kind writes its filter here, and so do the VLV indexes made for them:
    389-DS uses an index only for a search whose filter text is the index's own.
    """
    return f"(&{kind_filter}{condition})"


_CLASS = r"\(objectClass=([A-Za-z][A-Za-z0-9-]*)\)"


def kind_classes(kind_filter: str) -> frozenset[str] | None:
    """The object classes (lower case) any one of which puts an entry in the kind
    ``kind_filter`` selects, where that filter is one class, ``(objectClass=c)``, or a choice of
    classes, ``(|(objectClass=c)(objectClass=d)...)``; ``None`` for any other filter (one that
    excludes a class, or asks for other attributes), whose kind only the directory can tell.

    An entry whose objectClass values hold one of them matches the filter on any directory;
    one whose values hold none may still match it (a site's subclass, or values the service
    may not read): only the directory can say.
    """
    single = re.fullmatch(_CLASS, kind_filter, re.IGNORECASE)
    if single:
        return frozenset({single[1].lower()})
    choice = re.fullmatch(rf"\(\|((?:{_CLASS})+)\)", kind_filter, re.IGNORECASE)
    if choice is None:
        return None
    return frozenset(name.lower() for name in re.findall(_CLASS, choice[1], re.IGNORECASE))


def lookup_filter(kind_filter: str, names: str) -> str:
    """The filter of a lookup: the entries of a kind that ``names`` picks out (an id, a DN
    value, a list of them), as ``(&<names><kind>)``.

    The narrow assertion comes first: OpenLDAP reads an AND's candidates in the order given,
    and the kind's index list names nearly every entry. Measured on slapd at 100,000 users
    (``python -m bench.slapd_work``), a search by id costs 10 to 15% less this way round; 389-DS
    and AD order an AND by their own estimate, so it costs them nothing.
    """
    return f"(&{names}{kind_filter})"


def to_ldap(ast: Filter, mapping: FilterMapping) -> str:
    """Translate a SCIM filter (RFC 7644 §3.4.2.2) into an RFC 4515 filter string.

    ``and``/``or``/``not`` become ``(&...)``, ``(|...)``, ``(!...)`` (chains flattened), ``pr``
    becomes ``(a=*)``, and the attribute operators follow the table: ``eq (a=v)``, ``ne
    (!(a=v))``, ``co (a=*v*)``, ``sw (a=v*)``, ``ew (a=*v)``, ``ge (a>=v)``, ``le (a<=v)``,
    ``gt (&(a>=v)(!(a=v)))``, ``lt (&(a<=v)(!(a=v)))``.

    Values: strings pass the attribute's value transform, then :func:`filter_value`; numbers
    are written in decimal and booleans as ``TRUE``/``FALSE`` (RFC 4517 §3.3.3), also escaped.
    ``eq null`` is ``(!(a=*))`` and ``ne null`` is ``(a=*)`` (RFC 7643 §2.5). A substring
    operator with an empty value is presence. A boolean attribute (``booleans``) takes ``eq``/
    ``ne`` with ``true``/``false``, and ``pr`` (always true).

    A complex attribute without sub-attribute (``emails co "x"``) falls back to its ``value``
    sub-attribute's mapping. A value filter ``emails[type eq "work" and value co "@x"]`` maps
    its paths as sub-attributes (``emails.type``, ``emails.value``); since a directory
    attribute's values carry no structure, its conditions need not hold for the same value.

    :param ast: a parsed filter.
    :param mapping: the resource type's attribute mapping.
    :returns: the LDAP filter, parenthesized.
    :raises InvalidFilter: for an attribute the mapping lacks (named in the detail), or an
        operator or value the attribute cannot take.
    """
    return _Translator(mapping).filter(ast, None)


class _Translator:
    def __init__(self, mapping: FilterMapping) -> None:
        self.mapping = mapping

    def filter(self, node: Filter, outer: AttrPath | None) -> str:
        if isinstance(node, And | Or):
            kind = type(node)
            rights: list[Filter] = []
            current: Filter = node
            while isinstance(current, kind):  # a left-deep chain, without recursion
                rights.append(current.right)
                current = current.left
            parts = [self.filter(current, outer)]
            parts.extend(self.filter(right, outer) for right in reversed(rights))
            return ("(&" if kind is And else "(|") + "".join(parts) + ")"
        if isinstance(node, Not):
            return f"(!{self.filter(node.inner, outer)})"
        if isinstance(node, ValueFilter):
            if outer is not None:
                raise InvalidFilter(f"A value filter cannot hold another one ('{node.path}[').")
            return self.filter(node.filter, node.path)
        return self.attribute_expression(node, outer)

    def attribute_expression(self, node: Compare | Present, outer: AttrPath | None) -> str:
        path = node.path
        if outer is not None:
            # Inside attr[...] a path names a sub-attribute of attr (RFC 7644 §3.4.2.2).
            sub = path.attr if path.sub_attr is None else f"{path.attr}.{path.sub_attr}"
            path = AttrPath(outer.attr, sub, outer.schema)
        key = self.mapping.key(path)
        booleans = self.mapping._booleans
        if key in booleans:
            return self.boolean(node, booleans[key], path)
        attribute = self.mapping._attributes.get(key)
        if attribute is None and path.sub_attr is None:
            # A complex attribute compared as a whole: its "value" (RFC 7643 §2.4).
            key = key + ".value"
            attribute = self.mapping._attributes.get(key)
        if attribute is None:
            raise InvalidFilter(f"The attribute '{path}' cannot be used in a filter.")
        if isinstance(node, Present):
            return _PRESENT.format(a=attribute)
        op, value = node.op, node.value
        equality = self.mapping._equalities.get(key)
        if equality is not None and op in ("eq", "ne") and isinstance(value, str):
            whole = equality(value)
            return whole if op == "eq" else f"(!{whole})"
        if value is None:
            if op not in ("eq", "ne"):
                raise InvalidFilter(f"'{path} {op} null' is not a valid comparison.")
            present = _PRESENT.format(a=attribute)
            return present if op == "ne" else f"(!{present})"
        text = self.value(key, value)
        if op in _SUBSTRING and not text:
            return _PRESENT.format(a=attribute)  # every value contains "" (and starts, ends)
        return _TEMPLATES[op].format(a=attribute, v=filter_value(text))

    def value(self, key: str, value: Value) -> str | bytes:
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, str):
            transform = self.mapping._transforms.get(key)
            return transform(value) if transform is not None else value
        return repr(value)

    def boolean(self, node: Compare | Present, filters: tuple[str, str], path: AttrPath) -> str:
        if isinstance(node, Present):
            return _ANY_ENTRY
        if node.op not in ("eq", "ne") or not isinstance(node.value, bool):
            raise InvalidFilter(f"'{path}' takes only 'eq' or 'ne' with true or false.")
        wanted = node.value if node.op == "eq" else not node.value
        return filters[0] if wanted else filters[1]


def filter_key(path: Sequence[str]) -> str:
    """A SCIM location as :class:`FilterMapping` keys it: dotted, an extension's URN-qualified."""
    if path[0].lower().startswith("urn:"):
        return f"{path[0]}:{'.'.join(path[1:])}".lower()
    return ".".join(path).lower()
