"""Properties of the PATCH engine that tests/unit/test_patch.py leaves out.

* whole multi-valued attributes (``emails`` lists, group ``members``): any sequence of add,
  remove and replace applied to its own result changes nothing;
* arbitrary, hostile operations: only SCIM errors come out, the input is never mutated;
* the by-value index finds exactly what the pairwise comparison it replaced finds;
* bounds: operations and values per attribute, and linear time on large value lists.
"""

from __future__ import annotations

import copy
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scim_core.errors import InvalidValue, PayloadTooLarge, ScimError
from scim_core.patch import MAX_OPERATIONS, MAX_VALUES, _ByValue, apply_patch
from scim_core.schemas.attributes import GROUP_SCHEMA, USER_SCHEMA

ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
USER: dict[str, Any] = {
    "id": "u1",
    "userName": "bjensen",
    "name": {"givenName": "Barbara", "familyName": "Jensen"},
    "emails": [
        {"value": "bjensen@example.com", "type": "work", "primary": True},
        {"value": "babs@jensen.org", "type": "home"},
    ],
    "active": True,
}
GROUP: dict[str, Any] = {
    "id": "g1",
    "displayName": "Tour Guides",
    "members": [{"value": "u1", "display": "babs", "type": "User"}],
}

_ADDRESS = st.sampled_from(["a@x.org", "A@X.org", "b@x.org", "c@x.org", "B@x.ORG"])
_EMAIL = st.fixed_dictionaries(
    {"value": _ADDRESS},
    optional={"type": st.sampled_from(["work", "home"]), "primary": st.booleans()},
)
_MEMBER = st.fixed_dictionaries({"value": st.sampled_from(["u1", "u2", "u3", "u4"])})


def _list_operations(path: str, element: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    values = st.lists(element, max_size=3)
    operation = st.one_of(
        st.fixed_dictionaries(
            {
                "op": st.sampled_from(["add", "replace", "Add"]),
                "path": st.just(path),
                "value": values,
            }
        ),
        st.fixed_dictionaries(
            {"op": st.sampled_from(["remove", "Remove"]), "path": st.just(path), "value": values}
        ),
        st.fixed_dictionaries({"op": st.just("remove"), "path": st.just(path)}),
        st.fixed_dictionaries(
            {"op": st.just("add"), "value": st.fixed_dictionaries({path: values})}
        ),
    )
    return st.lists(operation, max_size=5)


def _unordered(resource: dict[str, Any], name: str) -> dict[str, Any]:
    items = sorted(resource.get(name, []), key=repr)
    return {**resource, name: items}


@settings(max_examples=300, deadline=None)
@given(operations=_list_operations("emails", _EMAIL))
def test_whole_email_lists_are_idempotent(operations: list[dict[str, Any]]) -> None:
    once, _ = apply_patch(USER, operations)
    twice, changed = apply_patch(once, operations)
    assert changed is False
    assert _unordered(twice, "emails") == _unordered(once, "emails")
    assert sum(1 for e in once.get("emails", []) if e.get("primary") is True) <= 1


@settings(max_examples=300, deadline=None)
@given(operations=_list_operations("members", _MEMBER))
def test_whole_member_lists_are_idempotent(operations: list[dict[str, Any]]) -> None:
    once, _ = apply_patch(GROUP, operations, "Group")
    twice, changed = apply_patch(once, operations, "Group")
    assert changed is False
    assert _unordered(twice, "members") == _unordered(once, "members")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_PATHS = st.sampled_from(
    [
        "title",
        "emails",
        'emails[type eq "work"]',
        'emails[type eq "work"].value',
        "emails[value pr]",
        "emails[",
        "name.givenName",
        "name",
        "manager",
        f"{ENT}:manager.value",
        ENT,
        "members",
        'members[value eq "u1"]',
        "id",
        "meta.version",
        "password",
        "active",
        "",
        " ",
        "\u0000",
        "x" * 5000,
    ]
)
_HOSTILE = st.one_of(
    _JSON,
    st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "ADD", "move", "", None, 1])},
        optional={"path": st.one_of(_PATHS, _JSON), "value": _JSON},
    ),
)


@settings(max_examples=500, deadline=None)
@given(
    resource=st.sampled_from([USER, GROUP, {}]),
    resource_type=st.sampled_from(["User", "Group"]),
    operations=st.lists(_HOSTILE, max_size=4),
)
def test_hostile_operations_raise_only_scim_errors(
    resource: dict[str, Any], resource_type: str, operations: list[Any]
) -> None:
    before = copy.deepcopy((resource, operations))
    try:
        result, _ = apply_patch(resource, operations, resource_type)
    except ScimError as error:
        assert error.status in (400, 413)
    else:
        again, changed_again = apply_patch(result, [], resource_type)
        assert (again, changed_again) == (result, False)
    assert (resource, operations) == before


_ELEMENTS = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "value": st.one_of(
                    _ADDRESS, st.integers(0, 2), st.none(), st.lists(st.integers(), max_size=1)
                )
            },
            optional={"type": st.sampled_from(["work", "home"])},
        ),
        st.fixed_dictionaries({}, optional={"type": st.sampled_from(["work", "home"])}),
    ),
    max_size=6,
)


def _same_value(left: dict[str, Any], right: dict[str, Any]) -> bool:
    """RFC 7643 §2.4, written here apart from the engine: two elements are one value when their
    ``value`` sub-attributes are equal (emails.value and members.value are not caseExact, so
    strings compare in any case); an element without a value is only itself."""
    a, b = left.get("value"), right.get("value")
    if a is None or b is None:
        return left == right
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    return type(a) is type(b) and a == b


@settings(max_examples=500, deadline=None)
@given(items=_ELEMENTS, probes=_ELEMENTS)
def test_the_index_finds_what_a_pairwise_scan_finds(items: list[Any], probes: list[Any]) -> None:
    for parent in (USER_SCHEMA.attribute("emails"), GROUP_SCHEMA.attribute("members")):
        assert parent is not None
        index = _ByValue(parent, items)
        for probe in probes:
            scanned = next((item for item in items if _same_value(item, probe)), None)
            assert index.find(probe) is scanned


def test_operations_per_patch_are_bounded() -> None:
    title = {"op": "replace", "path": "title", "value": "t"}
    assert apply_patch(USER, [title] * MAX_OPERATIONS)[0]["title"] == "t"
    with pytest.raises(PayloadTooLarge, match=str(MAX_OPERATIONS)):
        apply_patch(USER, [title] * (MAX_OPERATIONS + 1))


def test_values_per_user_attribute_are_bounded_but_not_group_members() -> None:
    limit = MAX_VALUES["User"]
    emails = [{"value": f"e{i}@example.com"} for i in range(limit)]
    with pytest.raises(InvalidValue, match=f"at most {limit}"):
        apply_patch(USER, [{"op": "add", "path": "emails", "value": emails}])
    replaced, _ = apply_patch(USER, [{"op": "replace", "path": "emails", "value": emails}])
    assert len(replaced["emails"]) == limit
    members = [{"value": f"u{i}"} for i in range(5000)]
    grown, _ = apply_patch(GROUP, [{"op": "add", "path": "members", "value": members}], "Group")
    assert len(grown["members"]) == 5000


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail as soon as the block has run ``seconds`` (a quadratic scan would take an hour)."""

    def expired(signum: int, frame: object) -> None:
        raise AssertionError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_large_value_lists_take_linear_time() -> None:
    """Adding, replacing and removing 30,000 members (a 1 MiB body's worth) stays fast."""
    members = [{"value": f"user-{i:05d}"} for i in range(30_000)]
    started = time.perf_counter()
    # A minute: linear takes about a second, ten times that under mutmut's call recording on a
    # loaded machine; the pairwise scan it replaced took about an hour.
    with within(60):
        grown, _ = apply_patch(GROUP, [{"op": "add", "path": "members", "value": members}], "Group")
        everyone = [{"op": "replace", "path": "members", "value": grown["members"]}]
        same, changed = apply_patch(grown, everyone, "Group")
        removal = [{"op": "remove", "path": "members", "value": members}]
        emptied, _ = apply_patch(same, removal, "Group")
    elapsed = time.perf_counter() - started
    assert len(grown["members"]) == 30_001 and not changed
    assert emptied["members"] == GROUP["members"]
    assert elapsed < 60, elapsed
