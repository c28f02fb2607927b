"""A Group PATCH as value-by-value member changes and new attribute values.

A group may have hundreds of thousands of members, so a PATCH of one never reads and rewrites
the member list: the operations (checked by :func:`~scim_core.patch.checked_operations`, as a
User's are) become the member ids to add and to remove, or a whole new list for a replace,
which the backend writes value by value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scim_core.errors import InvalidPath, InvalidSyntax, InvalidValue, Mutability
from scim_core.filter import Compare, Filter, Or, parse_path
from scim_core.patch import PatchOperation, checked_operations
from scim_core.schemas.attributes import Attribute, coerce
from scim_core.schemas.resources import GROUP_URN

__all__ = ["MembershipPlan", "group_value"]


def group_value(group: Mapping[str, Any], key: str) -> Any:
    """``displayName``, ``externalId``, or ``urn:...:name`` of a Group extension."""
    urn, colon, name = key.rpartition(":")
    if not colon:
        return group.get(key)
    holder = group.get(urn)
    return holder.get(name) if isinstance(holder, Mapping) else None


@dataclass
class MembershipPlan:
    """What a group PATCH asks for, as value-by-value member changes (never the whole list)."""

    # Ordered sets (dict keys): a PATCH may carry thousands of members, in as many operations.
    add: dict[str, None] = field(default_factory=dict)
    remove: dict[str, None] = field(default_factory=dict)
    replace: dict[str, None] | None = None
    display_name: str | None = None
    external_id: str | None = None  # None with external_id_sent: clear it
    external_id_sent: bool = False
    #: ``urn:...:name`` (as its schema spells it) -> new value (None clears it).
    extensions: dict[str, Any] = field(default_factory=dict)
    known: Mapping[str, tuple[str, Attribute]] = field(default_factory=dict)

    @classmethod
    def from_operations(
        cls,
        operations: Sequence[Mapping[str, Any] | PatchOperation],
        extensions: Mapping[str, tuple[str, Attribute]] | None = None,
    ) -> MembershipPlan:
        """The plan of a group PATCH's ``operations``.

        :param extensions: the Group extensions' attributes, keyed ``urn:...:name`` in lower
            case, with the name as the schema spells it and the attribute.
        :raises ScimError: as :func:`~scim_core.patch.checked_operations`, and for a path or
            value a group cannot take.
        """
        plan = cls(known=extensions or {})
        for operation in checked_operations(operations):
            op, path, value = operation.op, operation.path, operation.value
            if path is None:
                if not isinstance(value, dict):
                    raise InvalidSyntax("A PATCH operation without a path needs an object value.")
                for key, item in value.items():
                    plan._apply(op, key, None, item)
                continue
            parsed = parse_path(path)
            attr = parsed.attr
            named = f"{attr.schema}:{attr.attr}" if attr.schema else attr.attr
            if attr.sub_attr is not None or (attr.schema and parsed.value_filter is not None):
                named = path  # not a plain attribute: refused below as an unknown path
            plan._apply(op, named, parsed.value_filter, value)
        return plan

    def _apply(self, op: str, attribute: str, value_filter: Filter | None, value: Any) -> None:
        name = attribute.lower().removeprefix(GROUP_URN.lower() + ":")
        if name in {"id", "schemas", "meta"}:
            return
        if self._extension(op, name, value):
            return
        if name == "externalid":
            cleared = op == "remove" or value in (None, "", [])
            if not cleared and not isinstance(value, str):
                raise InvalidValue("externalId takes a string.")
            self.external_id, self.external_id_sent = None if cleared else value, True
            return
        if name == "displayname":
            if op == "remove":
                raise Mutability("displayName is required: replace it, never remove it.")
            if not isinstance(value, str) or not value:
                raise InvalidValue("displayName takes a string that is not empty.")
            self.display_name = value
            return
        if name != "members":
            raise InvalidPath("A PATCH path names an attribute Groups cannot write; use members.")
        if value_filter is not None:
            if op != "remove":
                raise InvalidPath("Only remove takes a members[...] filter.")
            self._drop(_member_ids_in_filter(value_filter))
            return
        if op == "remove" and value is None:  # RFC 7644 §3.5.2.2: every member
            self.replace, self.add, self.remove = {}, {}, {}
            return
        ids = _member_ids(value)
        if op == "add":
            self._add(ids)
        elif op == "remove":
            self._drop(ids)
        else:
            self.replace, self.add, self.remove = dict.fromkeys(ids), {}, {}

    def _extension(self, op: str, name: str, value: Any) -> bool:
        """An attribute of a Group extension (or the extension's URN with an object of them,
        path-less): its new value noted; whether ``name`` was one."""
        if isinstance(value, Mapping) and op != "remove":
            prefix = name + ":"
            inner = {k: v for k, v in self.known.items() if k.startswith(prefix)}
            if inner:
                for key, item in value.items():
                    # Never a remove here: op only passes the add or replace on.
                    self._extension(op, prefix + str(key).lower(), item)  # pragma: no mutate
                return True
        known = self.known.get(name)
        if known is None:
            return False
        spelled, attribute = known
        cleared = op == "remove" or value in (None, "", [])
        self.extensions[spelled] = None if cleared else coerce(attribute, value)
        return True

    def _add(self, ids: Sequence[str]) -> None:
        if self.replace is not None:
            self.replace.update(dict.fromkeys(ids))
            return
        for ident in ids:
            self.remove.pop(ident, None)
        self.add.update(dict.fromkeys(ids))

    def _drop(self, ids: Sequence[str]) -> None:
        if self.replace is not None:
            for ident in ids:
                self.replace.pop(ident, None)
            return
        for ident in ids:
            self.add.pop(ident, None)
        self.remove.update(dict.fromkeys(ids))


def _member_ids(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    ids: list[str] = []
    for item in items:
        member = item.get("value") if isinstance(item, dict) else item
        if not isinstance(member, str) or not member:
            raise InvalidValue("Each member needs a non-empty string value (a user id).")
        ids.append(member)
    return ids


def _member_ids_in_filter(node: Filter) -> list[str]:
    """``members[value eq "a" or value eq "b"]`` -> ``["a", "b"]``; other forms are refused."""
    if isinstance(node, Or):
        return _member_ids_in_filter(node.left) + _member_ids_in_filter(node.right)
    if (
        isinstance(node, Compare)
        and node.op == "eq"
        and node.path.attr.lower() == "value"
        and node.path.sub_attr is None
        and isinstance(node.value, str)
    ):
        return [node.value]
    raise InvalidPath('A members filter must be of the form members[value eq "id"].')
