"""The PATCH engine (RFC 7644 §3.5.2): pure, idempotent, reporting whether anything changed.

:func:`apply_patch` takes a canonical resource and a list of operations and returns a new
resource plus ``changed``. It never mutates its input, never talks to a backend, and applying
its own result again gives ``changed=False`` for every operation kind an identity provider
repeats, so a retried PATCH writes nothing.

Each operation is resolved to a *target* (attribute, optional sub-attribute, optional element
selection) and then run through one handler picked from a table by ``(op, shape)`` where the
shape is that of the target: a simple attribute, a single complex attribute, a whole
multi-valued attribute, or selected elements of one.

Decisions where RFC 7644 is silent or identity providers depart from it:

* op names are case-insensitive; so are the keys ``op``/``path``/``value``;
* a path that is a bare extension URN means that extension's attributes: ``add``/``replace``
  take an object of them (as a path-less operation would), ``remove`` removes them all;
* without a path, an ``add``/``replace`` value object's keys may be plain, dotted,
  URN-prefixed, flat aliases, or an extension URN holding an object; unknown keys and
  read-only keys (``id``, ``meta``, ``schemas``: Okta sends ``id``) are ignored, always;
* a value filter matching nothing makes ``add``/``replace`` create the element from the
  filter's ``eq`` comparisons plus the value (Entra ID sends ``emails[type eq "work"].value``
  for users without a work email) instead of failing with ``noTarget``; ``remove`` of a filter
  matching nothing is a no-op;
* removing the ``value`` sub-attribute of an element removes the element (an element without
  its value is meaningless, RFC 7643 §2.4);
* ``remove`` of a single-valued attribute ignores any ``value`` (Entra ID sends one for
  ``manager``); only multi-valued attributes remove value-by-value;
* ``add`` of an element already present (same ``value``, compared case-insensitively unless
  the sub-attribute is caseExact) merges its other sub-attributes and keeps the stored value;
* at most one element is ``primary`` (RFC 7643 §2.4): the last one written wins, the others
  get ``primary: false``;
* ``$ref`` is derived by the service and dropped; ``manager`` keeps only ``value``;
* null, ``{}``, ``[]`` and ``""`` are unassigned (RFC 7643 §2.5): such keys are removed, so a
  ``replace`` with any of them clears an optional attribute as ``remove`` does (LDAP holds no
  empty value; Entra ID clears with ``""``), and an element whose ``value`` is ``""`` goes;
  a password is the exception: an empty one is refused, not ignored;
* reordering the values of a multi-valued attribute is no change (the directory stores them
  as unordered sets, RFC 4512 §2.3);
* writeOnly attributes (``password``) cannot be compared: writing one always counts as a
  change, and the caller pops it from the result.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scim_core.errors import (
    InvalidPath,
    InvalidSyntax,
    InvalidValue,
    Mutability,
    NoTarget,
    PayloadTooLarge,
)
from scim_core.filter.ast import And, Compare, Filter
from scim_core.filter.evaluate import evaluate
from scim_core.filter.parser import parse_path
from scim_core.observe import dropped_attribute
from scim_core.schemas.attributes import (
    DEFAULT_SCHEMAS,
    ENTERPRISE_URN,
    USER_URN,
    Attribute,
    AttrRef,
    SchemaSet,
    coerce,
    resolve,
)

log = logging.getLogger("scim.patch")

__all__ = ["MAX_OPERATIONS", "MAX_VALUES", "PatchOperation", "apply_patch", "checked_operations"]

Resource = dict[str, Any]
Element = dict[str, Any]
Selector = Callable[[list[Element]], list[int]]

#: Most operations one PATCH may carry (413 beyond, as for bulk maxOperations, RFC 7644 §3.7.4).
MAX_OPERATIONS = 1000
#: Most values one multi-valued attribute may hold, per resource type (Groups: unbounded, their
#: members are not written through this engine). Checked after every operation, so applying a
#: PATCH costs at most operations x values, whatever a 1 MiB body holds.
MAX_VALUES: Mapping[str, int] = {"User": 100}
#: Attributes a PATCH never writes (RFC 7643 §3.1 common attributes, and the schemas list).
_READ_ONLY_KEYS = frozenset({"id", "meta", "schemas"})
#: Sub-attributes the service derives from ``value`` and never stores.
_DERIVED = frozenset({"$ref"})
#: Complex attributes of extensions stored partially: (extension URN, attribute) -> what is kept.
_STORED_SUBS: Mapping[tuple[str, str], frozenset[str]] = {
    (ENTERPRISE_URN, "manager"): frozenset({"value"}),
}
#: A value as JSON text, equal for equal values whatever the order of their keys (a value JSON
#: cannot hold, such as a date a backend returned, as its text).
_json: Callable[[Any], str] = functools.partial(json.dumps, sort_keys=True, default=str)


@dataclass(frozen=True)
class _Target:
    """Where an operation writes: an attribute, and maybe some of its elements.

    :ivar ref: the resolved attribute (and sub-attribute).
    :ivar select: which elements are meant, or ``None`` for the attribute as a whole.
    :ivar template: what a created element starts from when ``select`` matches nothing.
    """

    ref: AttrRef
    select: Selector | None = None
    template: Mapping[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> str:
        """``elements``, ``multi``, ``complex`` or ``simple``: the handler table's column."""
        parent = self.ref.parent
        if self.select is not None:
            return "elements"
        if parent.multi_valued:
            return "multi"
        return "complex" if parent.type == "complex" else "simple"


# --------------------------------------------------------------------------- selection


def _all(items: list[Element]) -> list[int]:
    return list(range(len(items)))


def _primary(items: list[Element]) -> list[int]:
    return [i for i, item in enumerate(items) if item.get("primary") is True][:1]


def _matching(value_filter: Filter, parent: Attribute) -> Selector:
    """Elements matching a value filter; strings compare per the sub-attribute's caseExact."""

    def case_exact(key: str) -> bool:
        sub = parent.sub(key)
        return sub is not None and sub.case_exact

    def select(items: list[Element]) -> list[int]:
        return [
            i for i, item in enumerate(items) if evaluate(value_filter, item, case_exact=case_exact)
        ]

    return select


def _equalities(node: Filter, parent: Attribute) -> Iterator[tuple[str, Any]]:
    """The ``sub eq value`` pairs a value filter requires (under ``and``), canonically named."""
    if isinstance(node, And):
        yield from _equalities(node.left, parent)
        yield from _equalities(node.right, parent)
    elif isinstance(node, Compare) and node.op == "eq" and node.path.sub_attr is None:
        sub = parent.sub(node.path.attr)
        if sub is not None:
            yield sub.name, coerce(sub, node.value)


def _primary_template(parent: Attribute) -> dict[str, Any]:
    """A new primary element: ``{"type": <first canonical type>, "primary": True}``."""
    kind = parent.sub("type")  # pragma: no mutate - sub() ignores case
    template: dict[str, Any] = {"primary": True}
    if kind is not None and kind.canonical_values:
        template["type"] = kind.canonical_values[0]
    return template


def _target(ref: AttrRef, value_filter: Filter | None = None) -> _Target:
    """The target for ``ref``, narrowed by ``value_filter`` when the path has one.

    The primary-element alias (``email``) means the primary element only: written when there is
    one, created (as a primary work email) when there is none, removed when there is one. Never
    "the first element": the target would shift once it is removed or replaced, and a repeated
    PATCH would then change another element.
    """
    if value_filter is not None:
        return _Target(
            ref, _matching(value_filter, ref.parent), dict(_equalities(value_filter, ref.parent))
        )
    if ref.primary:
        return _Target(ref, _primary, _primary_template(ref.parent))
    if ref.parent.multi_valued and ref.sub_attribute is not None:
        return _Target(ref, _all)
    return _Target(ref)


# RFC 7643 §4.1 and §4.3 attributes a backend may not store (the LDAP plugin: unless a mapping
# file maps them). Identity providers map several of them by default (Entra ID: phoneNumbers,
# addresses, preferredLanguage, ...): a PATCH naming one that nothing stores is skipped like an
# unknown key of a request body, while a path naming anything else is still 400 invalidPath.
_UNSTORED_USER = frozenset(
    {
        "displayname",
        "title",
        "name.formatted",
        "employeenumber",
        "nickname",
        "profileurl",
        "usertype",
        "preferredlanguage",
        "locale",
        "timezone",
        "phonenumbers",
        "ims",
        "photos",
        "addresses",
        "groups",
        "entitlements",
        "roles",
        "x509certificates",
        "name.middlename",
        "name.honorificprefix",
        "name.honorificsuffix",
        "costcenter",
        "organization",
        "division",
        "department",
    }
)


def _report_dropped(name: str, resource_type: str) -> None:
    """Report a written attribute nothing stores (its name: schema, filter and value left out);
    read-only keys and the schema list are not attributes a client loses."""
    text = name.partition("[")[0]
    schema = None
    if text.lower().startswith("urn:"):
        # An attribute name holds no colon, so the schema is all before the last one.
        schema, _, text = text.rpartition(":")
    top, _, sub = text.partition(".")
    if top.lower() in _READ_ONLY_KEYS or not top:
        return
    standard = resource_type == "User" and _is_unstored_standard(schema, top, sub or None)
    dropped_attribute(resource_type, text, standard=standard)


class _Unstored(Exception):
    """A PATCH path names a standard attribute the service does not keep; skip it."""


def _is_unstored_standard(schema: str | None, attr: str, sub_attr: str | None) -> bool:
    if schema is not None and schema.lower() not in {USER_URN.lower(), ENTERPRISE_URN.lower()}:
        return False
    name = attr.lower()
    return name in _UNSTORED_USER or (
        sub_attr is not None and f"{name}.{sub_attr.lower()}" in _UNSTORED_USER
    )


@functools.lru_cache(maxsize=256)
def _path_target(path: str, op: str, resource_type: str, schemas: SchemaSet) -> _Target:
    """Parse and resolve a PATCH ``path`` (RFC 7644 §3.5.2, §3.10).

    :raises InvalidPath: syntax errors, unknown attributes, filters on simple attributes.
    :raises Mutability: ``id``, ``meta``, ``schemas``, read-only attributes, and changing
        immutable ones (RFC 7643 §2.2).
    """
    parsed = parse_path(path)
    attr = parsed.attr
    core = schemas.get(resource_type)[:1]
    if attr.attr.lower() in _READ_ONLY_KEYS and (
        attr.schema is None or attr.schema.lower() in {s.id.lower() for s in core}
    ):
        raise Mutability(f"The attribute '{attr.attr}' cannot be modified.")
    name = f"{attr.schema}:{attr.attr}" if attr.schema else attr.attr
    if attr.sub_attr is not None:
        name = f"{name}.{attr.sub_attr}"
    ref = resolve(name, resource_type, schemas)
    if ref is not None and parsed.value_filter is not None:
        if ref.sub_attribute is not None or ref.parent.type != "complex":
            raise InvalidPath(f"The path filters '{name}', which has no sub-attributes.")
        if parsed.sub_attr is not None:
            ref = resolve(f"{name}.{parsed.sub_attr}", resource_type, schemas)
    if ref is None:
        if resource_type == "User" and _is_unstored_standard(attr.schema, attr.attr, attr.sub_attr):
            raise _Unstored(path)
        raise InvalidPath(f"The path names no attribute of a {resource_type}.")
    mutability = ref.definition.mutability
    # A whole immutable attribute may be written when that changes nothing (or sets it for
    # the first time): checked on the result (:func:`_check_immutable`).
    whole = ref.sub_attribute is None and parsed.value_filter is None
    if mutability == "readOnly" or (mutability == "immutable" and op != "add" and not whole):
        named = (
            ref.attribute if ref.sub_attribute is None else f"{ref.attribute}.{ref.sub_attribute}"
        )
        raise Mutability(f"The attribute '{named}' is {mutability}.")
    return _target(ref, parsed.value_filter)


def _object_targets(
    value: Any, resource_type: str, op: str, schemas: SchemaSet
) -> Iterator[tuple[_Target, Any]]:
    """The targets of a path-less ``add``/``replace`` (RFC 7644 §3.5.2.1, §3.5.2.3).

    Unknown and read-only keys are skipped (unknown attributes are ignored), and so
    are immutable ones except in an ``add``, which may set them (RFC 7644 §3.5.2): that is how
    a POST body is folded.
    """
    if not isinstance(value, Mapping):
        raise InvalidValue("An operation without a path needs an object of attributes as value.")
    extensions = {s.id.lower(): s.id for s in schemas.get(resource_type)[1:]}
    for key, item in value.items():
        urn = extensions.get(str(key).lower())
        if urn is not None:
            if item is None:
                continue
            if not isinstance(item, Mapping):
                raise InvalidValue(f"The extension '{urn}' needs an object as value.")
            pairs = [(f"{urn}:{sub_key}", sub_item) for sub_key, sub_item in item.items()]
        else:
            pairs = [(str(key), item)]
        for name, attribute_value in pairs:
            ref = resolve(name, resource_type, schemas)
            if ref is None:
                _report_dropped(name, resource_type)
                continue
            if ref.definition.mutability == "readOnly":
                continue
            if ref.definition.mutability != "immutable" or op == "add" or ref.sub_attribute is None:
                yield _target(ref), attribute_value


def _extension_urn(path: str, resource_type: str, schemas: SchemaSet) -> str | None:
    """The canonical URN when ``path`` names a whole schema extension, else ``None``.

    RFC 7644 §3.10 builds paths from attributes; clients (scim2-client, for one) also send
    the bare extension URN to mean "this extension's attributes": its value is an object.
    """
    folded = path.lower()
    extensions = schemas.get(resource_type)[1:]
    return next((s.id for s in extensions if s.id.lower() == folded), None)


# --------------------------------------------------------------------------- handlers
# A handler writes ``value`` (already coerced) into ``holder`` (the resource, or its extension
# object) and returns the elements it wrote, for the single-primary rule.

Handler = Callable[[Resource, _Target, Any], list[Element]]


def _value_key(parent: Attribute, element: Any) -> Hashable:
    """What an element is the same value as another by (RFC 7643 §2.4): its ``value``
    sub-attribute, or a simple attribute's value itself, a string folded unless caseExact; an
    element without a value by all of it."""
    value_sub = parent.sub("value")  # pragma: no mutate - sub() ignores case
    value, case_exact = element, parent.case_exact
    if isinstance(element, Mapping):
        if value_sub is None or element.get("value") is None:
            return _json(element)
        value, case_exact = element["value"], value_sub.case_exact
    if isinstance(value, str):  # the common case, kept apart from any JSON text
        return (value if case_exact else value.casefold(),)
    return _json(value)


class _ByValue:
    """Elements found by value through a dictionary, without a pairwise scan: a 1 MiB body
    holds tens of thousands of values, and comparing each with each would cost minutes."""

    def __init__(self, parent: Attribute, items: Sequence[Element] = ()) -> None:
        self._parent = parent
        self._found: dict[Hashable, Element] = {}
        for item in items:
            self.add(item)

    def add(self, element: Element) -> None:
        # The first of equal elements, as a scan would find.
        self._found.setdefault(_value_key(self._parent, element), element)

    def find(self, element: Element) -> Element | None:
        return self._found.get(_value_key(self._parent, element))


def _with_derived(parent: Attribute, element: Element, previous: Element | None) -> Element:
    """``element`` keeping what ``previous`` had that clients cannot set (RFC 7643 §2.2).

    Read-only sub-attributes are derived by the service and immutable ones cannot change, so a
    value that stays (``members`` replaced by a list holding it again) keeps them.
    """
    if not isinstance(element, Mapping) or not isinstance(previous, Mapping):
        return element  # a simple attribute's value derives nothing
    derived = {s.name for s in parent.sub_attributes if s.mutability in {"readOnly", "immutable"}}
    kept = {k: v for k, v in previous.items() if k in derived}
    return {**kept, **element}


def _set(holder: Resource, target: _Target, value: Any) -> list[Element]:
    holder[target.ref.attribute] = value
    return []


def _unset(holder: Resource, target: _Target, value: Any = None) -> list[Element]:
    holder.pop(target.ref.attribute, None)
    return []


def _merge(holder: Resource, target: _Target, value: Any) -> list[Element]:
    """Complex add/replace: given sub-attributes are set, others left unchanged (§3.5.2.3)."""
    name, sub = target.ref.attribute, target.ref.sub_attribute
    incoming = {sub: value} if sub is not None else value
    current = holder.get(name)
    if isinstance(current, dict) and isinstance(incoming, dict):
        holder[name] = {**current, **incoming}
    else:
        holder[name] = incoming
    return []


def _unset_complex(holder: Resource, target: _Target, value: Any) -> list[Element]:
    current = holder.get(target.ref.attribute)
    if target.ref.sub_attribute is not None and isinstance(current, dict):
        current.pop(target.ref.sub_attribute, None)
        return []
    return _unset(holder, target)


def _union(holder: Resource, target: _Target, value: Any) -> list[Element]:
    """Multi-valued add: new values appended, present ones merged (RFC 7644 §3.5.2.1)."""
    parent = target.ref.parent
    items: list[Element] = holder.get(parent.name) or []
    holder[parent.name] = items
    written = []
    index = _ByValue(parent, items)
    for element in value or ():
        present = index.find(element)
        if present is None:
            items.append(element)
            index.add(element)
            written.append(element)
        else:
            if isinstance(present, dict):  # then so is element: both coerced alike
                present.update({k: v for k, v in element.items() if k != "value"})
            written.append(present)
    return written


def _replace_all(holder: Resource, target: _Target, value: Any) -> list[Element]:
    """Multi-valued replace: the whole list, derived sub-attributes kept (RFC 7644 §3.5.2.3)."""
    parent = target.ref.parent
    current = _ByValue(parent, holder.get(parent.name) or [])
    holder[parent.name] = [_with_derived(parent, e, current.find(e)) for e in value or ()]
    return list(holder[parent.name])


def _subtract(holder: Resource, target: _Target, value: Any) -> list[Element]:
    """Multi-valued remove: the given values, or all without a value (RFC 7644 §3.5.2.2)."""
    parent = target.ref.parent
    if value is None:
        return _unset(holder, target)
    current = holder.get(parent.name) or []
    removed = _ByValue(parent, value)
    holder[parent.name] = [e for e in current if removed.find(e) is None]
    return []


def _elements(holder: Resource, target: _Target) -> list[Element]:
    """The elements of the target attribute; a single complex value is a list of one."""
    current = holder.get(target.ref.attribute)
    if target.ref.parent.multi_valued:
        return list(current or [])
    return [current] if isinstance(current, dict) else []


def _store(holder: Resource, target: _Target, items: list[Element]) -> None:
    name = target.ref.attribute
    holder[name] = items if target.ref.parent.multi_valued else (items[-1] if items else None)


def _write_selected(op: str, holder: Resource, target: _Target, value: Any) -> list[Element]:
    """Add/replace on selected elements: matched ones updated, else one created (§3.5.2.3)."""
    items, sub, parent = _elements(holder, target), target.ref.sub_attribute, target.ref.parent
    chosen = (target.select or _all)(items)
    if not chosen:
        if value is None:
            return []
        created = {**target.template, **({sub: value} if sub is not None else value)}
        _store(holder, target, [*items, created])
        return [created]
    for i in chosen:
        if sub is not None:
            items[i] = {**items[i], sub: value}
        elif op == "add":
            items[i] = {**items[i], **(value or {})}
        else:
            items[i] = _with_derived(parent, {**target.template, **(value or {})}, items[i])
    _store(holder, target, items)
    return [items[i] for i in chosen]


def _remove_selected(holder: Resource, target: _Target, value: Any) -> list[Element]:
    """Remove on selected elements, or on one of their sub-attributes (RFC 7644 §3.5.2.2)."""
    items, sub = _elements(holder, target), target.ref.sub_attribute
    chosen = set((target.select or _all)(items))
    if sub is None or sub == "value":
        kept = [item for i, item in enumerate(items) if i not in chosen]
    else:
        kept = [
            {k: v for k, v in item.items() if k != sub} if i in chosen else item
            for i, item in enumerate(items)
        ]
    _store(holder, target, kept)
    return []


_HANDLERS: Mapping[tuple[str, str], Handler] = {
    ("add", "simple"): _set,
    ("replace", "simple"): _set,
    ("remove", "simple"): _unset,
    ("add", "complex"): _merge,
    ("replace", "complex"): _merge,
    ("remove", "complex"): _unset_complex,
    ("add", "multi"): _union,
    ("replace", "multi"): _replace_all,
    ("remove", "multi"): _subtract,
    ("add", "elements"): functools.partial(_write_selected, "add"),
    ("replace", "elements"): functools.partial(_write_selected, "replace"),
    ("remove", "elements"): _remove_selected,
}


# --------------------------------------------------------------------------- values


def _coerced(op: str, target: _Target, value: Any) -> Any:
    """``value`` in the canonical shape the target's handler expects."""
    ref = target.ref
    shape = target.shape
    if op == "remove":
        return coerce(ref.parent, value) if shape == "multi" else None
    if ref.sub_attribute is not None:
        return coerce(ref.definition, value)
    if shape == "elements":
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if value is not None and not isinstance(value, Mapping):
            raise InvalidValue(f"The attribute '{ref.attribute}' needs an object per value.")
        elements = coerce(ref.parent, value)  # a list of the one element, or None
        return elements[0] if elements else None
    return coerce(ref.parent, value)


def _single_primary(holder: Resource, target: _Target, written: list[Element]) -> None:
    """RFC 7643 §2.4: ``primary: true`` at most once; the last written primary wins."""
    primary = target.ref.parent.sub("primary")  # pragma: no mutate - sub() ignores case
    if primary is None:
        return
    winner = next((e for e in reversed(written) if e.get("primary") is True), None)
    items = holder.get(target.ref.attribute)
    if winner is None or not isinstance(items, list):
        return
    for item in items:
        if item is not winner and item.get("primary") is True:
            item["primary"] = False


def _unassigned(value: Any, key: str | None) -> bool:
    """null, ``{}``, ``[]``, and ``""`` but for a password (an empty one is refused, never
    taken for "no change"); ``key`` is the value's name, ``None`` for an element of a list."""
    return value is None or value == {} or value == [] or (value == "" and key != "password")


def _canonical(value: Any) -> Any:
    """``value`` without unassigned (null, ``{}``, ``[]``, ``""``) or derived parts (RFC 7643
    §2.5); an element whose ``value`` is empty is no element (RFC 7643 §2.4)."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, Mapping):
        pruned = {k: _canonical(v) for k, v in value.items() if k not in _DERIVED}
        return {k: v for k, v in pruned.items() if not _unassigned(v, k)}
    if isinstance(value, list):
        kept = (v for v in value if not (isinstance(v, Mapping) and v.get("value") == ""))
        items = [_canonical(v) for v in kept]
        return [v for v in items if not _unassigned(v, None)]
    return value


def _canonical_resource(resource: Mapping[str, Any]) -> Resource:
    """A new canonical copy: partially stored attributes narrowed, then :func:`_canonical`."""
    projected = dict(resource)
    for (urn, name), kept in _STORED_SUBS.items():
        holder = projected.get(urn)
        if isinstance(holder, Mapping) and isinstance(holder.get(name), Mapping):
            projected[urn] = {**holder, name: {k: v for k, v in holder[name].items() if k in kept}}
    result: Resource = _canonical(projected)
    return result


def _unordered(value: Any) -> Any:
    """``value`` with every list sorted: the order of multi-valued values is no change.

    The directory keeps attribute values as unordered sets (RFC 4512 §2.3), so a PATCH that
    only reorders values (a value removed, then added back) must not count as a change.
    """
    if type(value) in _SCALARS:
        return value
    if isinstance(value, Mapping):
        return {k: _unordered(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_unordered(v) for v in value]
        return sorted(items, key=_json)
    return value


# --------------------------------------------------------------------------- engine


_OPS = frozenset(_op for _op, _ in _HANDLERS)


def _apply(resource: Resource, target: _Target, op: str, value: Any, resource_type: str) -> bool:
    """Run one resolved operation; ``True`` when it wrote a writeOnly attribute.

    :raises InvalidValue: a multi-valued attribute grown past :data:`MAX_VALUES`.
    """
    ref = target.ref
    holder: Resource = resource.setdefault(ref.schema, {}) if ref.schema else resource
    written = _HANDLERS[op, target.shape](holder, target, _coerced(op, target, value))
    _single_primary(holder, target, written)
    limit = MAX_VALUES.get(resource_type)
    items = holder.get(ref.attribute)
    if limit is not None and isinstance(items, list) and len(items) > limit:
        raise InvalidValue(f"'{ref.attribute}' holds at most {limit} values.")
    return op != "remove" and ref.definition.mutability == "writeOnly"


@dataclass(frozen=True)
class PatchOperation:
    """One PATCH operation, checked: ``op`` in lower case, ``path`` stripped (``None`` when
    absent or blank), and ``value`` present unless the op is ``remove``."""

    op: str
    path: str | None
    value: Any


def checked_operations(operations: Sequence[Any]) -> list[PatchOperation]:
    """The operations of a PatchOp message, checked the same way for every resource type
    (RFC 7644 §3.5.2; member names and ``op`` values in any case). Operations checked
    before pass as they are.

    :raises PayloadTooLarge: more than :data:`MAX_OPERATIONS` operations.
    :raises InvalidSyntax: an operation is not an object, or its op is unknown.
    :raises InvalidPath: a path that is not a string.
    :raises InvalidValue: ``add`` or ``replace`` without a value.
    :raises NoTarget: a ``remove`` without a path (RFC 7644 §3.5.2.2).
    """
    if len(operations) > MAX_OPERATIONS:
        raise PayloadTooLarge(
            f"A PATCH carries at most {MAX_OPERATIONS} operations; split this one."
        )
    checked = []
    for index, raw in enumerate(operations):
        if isinstance(raw, PatchOperation):
            checked.append(raw)
            continue
        if not isinstance(raw, Mapping):
            raise InvalidSyntax(f"PATCH operation {index} is not an object.")
        operation = {str(k).lower(): v for k, v in raw.items()}
        name = operation.get("op")
        op = name.lower() if isinstance(name, str) else ""
        if op not in _OPS:
            raise InvalidSyntax(
                f"PATCH operation {index} has an unknown op; expected add, replace or remove."
            )
        path = operation.get("path")
        if path is not None and not isinstance(path, str):
            raise InvalidPath(f"PATCH operation {index} has a path that is not a string.")
        if op != "remove" and "value" not in operation:
            raise InvalidValue(f"PATCH operation {index} ({op}) has no value.")
        path = path.strip() if path else None
        if op == "remove" and not path:
            raise NoTarget(f"PATCH operation {index} (remove) has no path.")
        checked.append(PatchOperation(op, path or None, operation.get("value")))
    return checked


def apply_patch(
    resource: Mapping[str, Any],
    operations: Sequence[Mapping[str, Any] | PatchOperation],
    resource_type: str = "User",
    schemas: SchemaSet | None = None,
) -> tuple[Resource, bool]:
    """Apply PATCH operations (RFC 7644 §3.5.2) to a canonical resource, without mutating it.

    :param resource: the current canonical resource (RFC 7643 §4 JSON, canonical names).
    :param operations: the ``Operations`` of a PatchOp message (or the specification's bare
        array): mappings with ``op`` (add/replace/remove, any case), optional ``path`` and
        ``value``.
    :param resource_type: ``"User"`` or ``"Group"``; selects the schemas names resolve in.
    :param schemas: the schemas (default: :data:`~scim_core.schemas.attributes.DEFAULT_SCHEMAS`;
        a mapping may add attributes and extensions).
    :returns: the new canonical resource (empty containers and derived parts removed) and
        whether it differs from ``resource`` (always ``True`` once a writeOnly attribute such as
        ``password`` was written).
    :raises InvalidSyntax: an operation is not an object, or its op is unknown.
    :raises InvalidPath: a path does not parse or names an attribute the service lacks.
    :raises NoTarget: a ``remove`` without a path (RFC 7644 §3.5.2.2).
    :raises Mutability: a path names ``id``, ``meta``, ``schemas`` or a read-only attribute.
    :raises InvalidValue: a value does not fit its attribute, or ``add``/``replace`` lacks one,
        or a multi-valued attribute would hold more than :data:`MAX_VALUES` allows.
    :raises PayloadTooLarge: more than :data:`MAX_OPERATIONS` operations.
    """
    schemas = schemas or DEFAULT_SCHEMAS
    result: Resource = _copied(dict(resource))
    wrote_secret = False
    for operation in checked_operations(operations):
        op, path, value = operation.op, operation.path, operation.value
        extension = _extension_urn(path, resource_type, schemas) if path else None
        if extension is not None and op == "remove":
            result.pop(extension, None)
            continue
        if extension is not None:
            targets = list(_object_targets({extension: value}, resource_type, op, schemas))
        elif path:
            try:
                targets = [(_path_target(path, op, resource_type, schemas), value)]
            except _Unstored:
                _report_dropped(path, resource_type)
                continue
        else:
            targets = list(_object_targets(value, resource_type, op, schemas))
        for target, item in targets:
            wrote_secret |= _apply(result, target, op, item, resource_type)
    patched = _canonical_resource(result)
    before = _canonical_resource(resource)
    _check_immutable(before, patched, resource_type, schemas)
    return patched, wrote_secret or _differs(patched, before)


_SCALARS = (str, int, float, bool, type(None))


def _copied(value: Any) -> Any:
    """A deep copy of a JSON value (what a resource is made of), cheaper than
    :func:`copy.deepcopy`, which it still leaves anything else to."""
    # Fast paths only: copy.deepcopy makes the same copy of each kind, so a mutant that takes
    # another path changes nothing but the time.
    kind = type(value)  # pragma: no mutate - fast paths, see above
    if kind is dict:  # pragma: no mutate - fast paths, see above
        return {k: _copied(v) for k, v in value.items()}
    if kind is list:
        return [_copied(v) for v in value]
    if kind in _SCALARS:  # pragma: no mutate - fast paths, see above
        return value
    return copy.deepcopy(value)  # pragma: no mutate - only values JSON does not have come here


def _differs(after: Mapping[str, Any], before: Mapping[str, Any]) -> bool:
    """Whether two canonical resources differ in more than the order of multi-valued values
    (only attributes that are not equal as they stand need that comparison)."""
    return any(
        _unordered(after.get(key)) != _unordered(before.get(key))
        for key in after.keys() | before.keys()
        if after.get(key) != before.get(key)
    )


@functools.lru_cache(maxsize=16)
def _immutable(resource_type: str, schemas: SchemaSet) -> tuple[tuple[str | None, str], ...]:
    """(extension URN or None for the core, name) of each immutable top-level attribute."""
    return tuple(
        (None if index == 0 else schema.id, attribute.name)
        for index, schema in enumerate(schemas.get(resource_type))
        for attribute in schema.attributes
        if attribute.mutability == "immutable"
    )


def _check_immutable(
    before: Resource, after: Resource, resource_type: str, schemas: SchemaSet
) -> None:
    """RFC 7643 §7: an immutable attribute, once it has a value, keeps it (writing the same
    value again is no change, so a retried request still succeeds)."""
    for urn, name in _immutable(resource_type, schemas):
        old = (before if urn is None else before.get(urn) or {}).get(name)
        new = (after if urn is None else after.get(urn) or {}).get(name)
        if old is not None and new != old:  # canonical: no empty value is left
            raise Mutability(f"The attribute '{name}' is immutable.")
