"""The PATCH engine against a reference model of RFC 7644 §3.5.2, on random operations.

The model below is written from the RFC (and the service's documented decisions in
scim_core/patch.py's module docstring), not from the engine: it shares no code with it. It
covers a User's simple attribute (``externalId``), a complex one (``name``) and a multi-valued
complex one (``emails``: whole, by value filter, a sub-attribute through a filter, ``not``),
with add, replace and remove.

Model decisions, each from the RFC or the service's docs:

* add/replace of a simple attribute sets it; remove unsets it; ``""`` or null unsets it too
  (RFC 7643 §2.5: unassigned);
* complex add/replace merges the given sub-attributes (RFC 7644 §3.5.2.1, §3.5.2.3); a
  sub-attribute path sets one; remove unsets the path;
* multi-valued add appends values not present (same ``value``, in any case: emails.value is
  not caseExact) and merges the others into the present one; replace sets the list; remove
  without value removes all, with a value list removes those values;
* a value filter selects elements; add merges the object into each, replace replaces each
  (keeping nothing), remove removes them; a sub-attribute path writes or removes that
  sub-attribute of each, and removing ``value`` removes the element; a filter matching nothing
  makes add/replace create one element from the filter's ``eq`` plus the value;
* at most one element is primary: the last one written with ``primary: true`` wins.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scim_core import apply_patch

START: dict[str, Any] = {
    "id": "u1",
    "userName": "bjensen",
    "externalId": "x1",
    "name": {"givenName": "Barbara", "familyName": "Jensen"},
    "emails": [
        {"value": "a@x.org", "type": "work", "primary": True},
        {"value": "b@x.org", "type": "home"},
    ],
}

ADDRESSES = ["a@x.org", "A@X.ORG", "b@x.org", "c@x.org"]
TYPES = ["work", "home", "other"]

# ------------------------------------------------------------------------------ the model


def _fold(text: Any) -> Any:
    return text.casefold() if isinstance(text, str) else text


def _condition(kind: str, sub: str, wanted: str, element: dict[str, Any]) -> bool:
    holds = _fold(element.get(sub)) == _fold(wanted)
    return not holds if kind == "not" else holds


class Model:
    def __init__(self, resource: dict[str, Any]) -> None:
        self.r = copy.deepcopy(resource)

    def apply(self, op: str, target: tuple[Any, ...], value: Any) -> None:
        kind = target[0]
        written: list[dict[str, Any]] = []
        if kind == "simple":
            if op == "remove" or value in ("", None):
                self.r.pop("externalId", None)
            else:
                self.r["externalId"] = value
        elif kind == "name":
            sub = target[1]
            name = self.r.setdefault("name", {})
            if sub is None:
                if op == "remove":
                    self.r.pop("name")
                else:
                    name.update(value)
            elif op == "remove":
                name.pop(sub, None)
            else:
                name[sub] = value
        elif kind == "emails":
            written = self.whole(op, value)
        else:  # ("filter", eq|not, on-sub, wanted, sub or None)
            written = self.filtered(op, *target[1:], value)
        self.primary(written)

    def whole(self, op: str, value: Any) -> list[dict[str, Any]]:
        emails = self.r.setdefault("emails", [])
        if op == "replace":
            self.r["emails"] = [dict(e) for e in value]
            return self.r["emails"]
        if op == "remove":
            if value is None:
                self.r["emails"] = []
            else:
                gone = {_fold(e["value"]) for e in value}
                self.r["emails"] = [e for e in emails if _fold(e["value"]) not in gone]
            return []
        written = []
        for element in value:
            present = next(
                (e for e in emails if _fold(e["value"]) == _fold(element["value"])), None
            )
            if present is None:
                present = dict(element)
                emails.append(present)
            else:
                present.update({k: v for k, v in element.items() if k != "value"})
            written.append(present)
        return written

    def filtered(
        self, op: str, kind: str, on: str, wanted: str, sub: str | None, value: Any
    ) -> list[dict[str, Any]]:
        emails = self.r.setdefault("emails", [])
        chosen = [i for i, e in enumerate(emails) if _condition(kind, on, wanted, e)]
        if op == "remove":
            if sub is None or sub == "value":
                self.r["emails"] = [e for i, e in enumerate(emails) if i not in chosen]
            else:
                for i in chosen:
                    emails[i].pop(sub, None)
            return []
        new = {sub: value} if sub is not None else dict(value)
        if not chosen:
            created = {**({on: wanted} if kind == "eq" else {}), **new}
            emails.append(created)
            return [created]
        for i in chosen:
            if sub is not None or op == "add":
                emails[i] = {**emails[i], **new}
            else:
                emails[i] = {**({on: wanted} if kind == "eq" else {}), **new}
        return [emails[i] for i in chosen]

    def primary(self, written: list[dict[str, Any]]) -> None:
        winner = next((e for e in reversed(written) if e.get("primary") is True), None)
        if winner is None:
            return
        for element in self.r.get("emails", []):
            if element is not winner and element.get("primary") is True:
                element["primary"] = False

    def result(self) -> dict[str, Any]:
        def clean(value: Any) -> Any:
            if isinstance(value, dict):
                kept = {k: clean(v) for k, v in value.items()}
                return {k: v for k, v in kept.items() if v not in (None, "", [], {})}
            if isinstance(value, list):
                return [c for c in (clean(v) for v in value) if c not in (None, "", [], {})]
            return value

        return clean(self.r)


# ------------------------------------------------------------------------------ operations

_ADDRESS = st.sampled_from(ADDRESSES)
_TYPE = st.sampled_from(TYPES)
_EMAIL = st.fixed_dictionaries(
    {"value": _ADDRESS}, optional={"type": _TYPE, "primary": st.booleans()}
)


def _emails_list() -> st.SearchStrategy[list[dict[str, Any]]]:
    # Distinct values within one list: two equal values in one request are the client's error.
    return st.lists(_EMAIL, max_size=3, unique_by=lambda e: e["value"].casefold())


@st.composite
def _operation(draw: Any) -> tuple[dict[str, Any], tuple[str, tuple[Any, ...], Any]]:
    choice = draw(st.sampled_from(["simple", "name", "name.sub", "emails", "filter", "filter.sub"]))
    if choice == "simple":
        op = draw(st.sampled_from(["add", "replace", "remove"]))
        value = draw(st.sampled_from(["x1", "x2", "X2", ""]))
        wire = {"op": op, "path": "externalId"} | ({} if op == "remove" else {"value": value})
        return wire, (op, ("simple",), value)
    if choice == "name":
        op = draw(st.sampled_from(["add", "replace"]))
        value = draw(
            st.fixed_dictionaries(
                {},
                optional={"givenName": st.sampled_from(["Babs", "B"]), "familyName": st.just("J")},
            )
        )
        return {"op": op, "path": "name", "value": value}, (op, ("name", None), value)
    if choice == "name.sub":
        op = draw(st.sampled_from(["add", "replace", "remove"]))
        sub = draw(st.sampled_from(["givenName", "familyName"]))
        value = draw(st.sampled_from(["Babs", "J"]))
        wire = {"op": op, "path": f"name.{sub}"} | ({} if op == "remove" else {"value": value})
        return wire, (op, ("name", sub), value)
    if choice == "emails":
        op = draw(st.sampled_from(["add", "replace", "remove", "remove-values"]))
        value = draw(_emails_list())
        if op == "remove":
            return {"op": "remove", "path": "emails"}, ("remove", ("emails",), None)
        if op == "remove-values":
            wire = {"op": "remove", "path": "emails", "value": value}
            return wire, ("remove", ("emails",), value)
        return {"op": op, "path": "emails", "value": value}, (op, ("emails",), value)
    op = draw(st.sampled_from(["add", "replace", "remove"]))
    kind = draw(st.sampled_from(["eq", "not"]))
    on = draw(st.sampled_from(["type", "value"]))
    wanted = draw(_TYPE if on == "type" else _ADDRESS)
    condition = f'{on} eq "{wanted}"'
    text = f"emails[{condition}]" if kind == "eq" else f"emails[not ({condition})]"
    if choice == "filter":
        value = draw(
            st.fixed_dictionaries(
                {"value": _ADDRESS} if on == "type" else {},
                optional={"type": _TYPE, "primary": st.booleans()},
            )
        )
        if kind == "not" or (on == "value" and op != "remove"):
            op = "remove"  # a created element needs its value from the filter or the object
        wire = {"op": op, "path": text} | ({} if op == "remove" else {"value": value})
        return wire, (op, ("filter", kind, on, wanted, None), value)
    sub = "type" if on == "value" else draw(st.sampled_from(["value", "type", "primary"]))
    value = draw(_ADDRESS if sub == "value" else st.booleans() if sub == "primary" else _TYPE)
    if op != "remove" and (kind == "not" or (on == "type" and sub != "value")):
        op = "remove"  # creating from these would make an element without a value
    wire = {"op": op, "path": f"{text}.{sub}"} | ({} if op == "remove" else {"value": value})
    return wire, (op, ("filter", kind, on, wanted, sub), value)


def _distinct(resource: dict[str, Any]) -> bool:
    values = [e.get("value", "").casefold() for e in resource.get("emails", [])]
    return len(values) == len(set(values)) and all(values)


@settings(max_examples=400, deadline=None)
@given(st.lists(_operation(), min_size=1, max_size=6))
def test_the_engine_agrees_with_the_model(operations):
    model = Model(START)
    resource: dict[str, Any] = START
    for wire, (op, target, value) in operations:
        model.apply(op, target, value)
        resource, _ = apply_patch(resource, [wire])
        if not _distinct(model.result()):
            return  # two elements with one value: the RFC leaves which one a later op means
        assert resource == model.result(), wire


@settings(max_examples=200, deadline=None)
@given(st.lists(_operation(), min_size=1, max_size=6))
def test_one_patch_equals_its_operations_one_by_one(operations):
    wires = [wire for wire, _ in operations]
    together, _ = apply_patch(START, wires)
    resource: dict[str, Any] = START
    for wire in wires:
        resource, _ = apply_patch(resource, [wire])
    assert together == resource
