"""A Group PATCH as member changes and new values: every operation form a client sends."""

import pytest

from scim_core import InvalidPath, InvalidSyntax, InvalidValue, Mutability, NoTarget
from scim_core.group_patch import MembershipPlan, group_value
from scim_core.schemas.attributes import Attribute

GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
ACME = "urn:example:params:scim:schemas:extension:acme:2.0:Group"
KNOWN = {  # as the service keys a Group extension's attributes: the whole name in lower case
    f"{ACME}:costCenter".lower(): (f"{ACME}:costCenter", Attribute("costCenter", "string")),
    f"{ACME}:seats".lower(): (f"{ACME}:seats", Attribute("seats", "integer")),
}


def plan(*operations, known=None):
    return MembershipPlan.from_operations(list(operations), KNOWN if known is None else known)


def members(*ids):
    return [{"value": i} for i in ids]


def test_adds_and_removes_are_ordered_sets_and_cancel_each_other():
    p = plan(
        {"op": "add", "path": "members", "value": members("a", "b", "a")},
        {"op": "remove", "path": "members", "value": members("b", "c")},
        {"op": "add", "path": "members", "value": {"value": "c"}},
    )
    assert (list(p.add), list(p.remove), p.replace) == (["a", "c"], ["b"], None)


def test_a_filtered_remove_names_the_ids_of_its_or_terms():
    p = plan({"op": "remove", "path": 'members[value eq "a" or value eq "b"]'})
    assert list(p.remove) == ["a", "b"] and not p.add


@pytest.mark.parametrize(
    "path",
    [
        'members[value ne "a"]',
        'members[display eq "a"]',
        'members[value eq "a" and value eq "b"]',
        "members[value pr]",
        'members[value.x eq "a"]',
    ],
)
def test_other_member_filters_are_refused(path):
    with pytest.raises(InvalidPath):
        plan({"op": "remove", "path": path})


def test_only_remove_takes_a_member_filter():
    with pytest.raises(InvalidPath, match="Only remove"):
        plan({"op": "add", "path": 'members[value eq "a"]', "value": members("a")})


def test_remove_of_every_member_then_adds_are_a_replace():
    p = plan(
        {"op": "add", "path": "members", "value": members("x")},
        {"op": "remove", "path": "members"},
        {"op": "add", "path": "members", "value": members("a", "b")},
        {"op": "remove", "path": "members", "value": members("b")},
    )
    assert (p.replace, p.add, p.remove) == ({"a": None}, {}, {})


def test_replace_of_members_drops_what_came_before():
    p = plan(
        {"op": "add", "path": "members", "value": members("x")},
        {"op": "remove", "path": "members", "value": members("y")},
        {"op": "replace", "path": "members", "value": members("a")},
    )
    assert (list(p.replace or ()), p.add, p.remove) == (["a"], {}, {})


def test_path_less_operations_write_each_key():
    p = plan(
        {
            "op": "replace",
            "value": {"displayName": "New", "members": members("a"), "externalId": "e-1"},
        },
        {"op": "add", "value": {"id": "ignored", "schemas": [GROUP], "meta": {}}},
    )
    assert (p.display_name, list(p.replace or ()), p.external_id, p.external_id_sent) == (
        "New",
        ["a"],
        "e-1",
        True,
    )


def test_core_urn_qualified_paths_name_the_same_attributes():
    p = plan({"op": "replace", "path": f"{GROUP}:displayName", "value": "Named"})
    assert p.display_name == "Named"


@pytest.mark.parametrize("value", [None, "", []])
def test_external_id_is_cleared_by_remove_or_an_empty_value(value):
    p = plan({"op": "replace", "path": "externalId", "value": value})
    assert (p.external_id, p.external_id_sent) == (None, True)
    removed = plan({"op": "remove", "path": "externalId"})
    assert (removed.external_id, removed.external_id_sent) == (None, True)


def test_nothing_sent_about_the_external_id_leaves_it():
    p = plan({"op": "add", "path": "members", "value": members("a")})
    assert (p.external_id, p.external_id_sent, p.display_name, p.extensions) == (
        None,
        False,
        None,
        {},
    )


@pytest.mark.parametrize(
    ("operation", "error"),
    [
        ({"op": "replace", "path": "externalId", "value": 7}, InvalidValue),
        ({"op": "remove", "path": "displayName"}, Mutability),
        ({"op": "replace", "path": "displayName", "value": ""}, InvalidValue),
        ({"op": "replace", "path": "displayName", "value": 3}, InvalidValue),
        ({"op": "add", "path": "owners", "value": "x"}, InvalidPath),
        ({"op": "add", "path": "members.value", "value": "x"}, InvalidPath),
        ({"op": "add", "path": "members", "value": [{"value": ""}]}, InvalidValue),
        ({"op": "add", "path": "members", "value": [{"display": "no id"}]}, InvalidValue),
        ({"op": "add", "path": "members", "value": [7]}, InvalidValue),
        ({"op": "replace", "value": "not an object"}, InvalidSyntax),
        ({"op": "remove"}, NoTarget),
        ({"op": "add", "path": f"{ACME}:seats", "value": "twelve"}, InvalidValue),
        # An extension's URN takes an object of its attributes, and only to add or replace them.
        ({"op": "replace", "path": ACME, "value": "CC-1"}, InvalidPath),
        ({"op": "remove", "path": ACME, "value": {"costCenter": "CC-1"}}, InvalidPath),
    ],
)
def test_what_a_group_cannot_take_is_refused(operation, error):
    with pytest.raises(error):
        plan(operation)


def test_bare_ids_are_members_too():
    assert list(plan({"op": "add", "path": "members", "value": ["a", "b"]}).add) == ["a", "b"]


def test_extension_attributes_by_path_and_path_less_typed_as_their_schema():
    by_path = plan(
        {"op": "replace", "path": f"{ACME}:costCenter", "value": "CC-1"},
        {"op": "add", "path": f"{ACME}:seats", "value": 12},
    )
    assert by_path.extensions == {f"{ACME}:costCenter": "CC-1", f"{ACME}:seats": 12}
    path_less = plan({"op": "replace", "value": {ACME: {"costCenter": "CC-2", "SEATS": 3}}})
    assert path_less.extensions == {f"{ACME}:costCenter": "CC-2", f"{ACME}:seats": 3}
    cleared = plan(
        {"op": "remove", "path": f"{ACME}:costCenter"},
        {"op": "replace", "path": f"{ACME}:seats", "value": None},
    )
    assert cleared.extensions == {f"{ACME}:costCenter": None, f"{ACME}:seats": None}


def test_an_extension_path_with_a_filter_or_a_sub_attribute_is_refused():
    with pytest.raises(InvalidPath):
        plan({"op": "replace", "path": f'{ACME}:costCenter[value eq "x"]', "value": "y"})
    with pytest.raises(InvalidPath):
        plan({"op": "replace", "path": f"{ACME}:costCenter.sub", "value": "y"})


def test_extension_attributes_unknown_to_the_backend_are_refused():
    with pytest.raises(InvalidPath):
        plan({"op": "replace", "path": f"{ACME}:costCenter", "value": "x"}, known={})


def test_group_value_reads_core_and_extension_keys():
    group = {"displayName": "G", ACME: {"costCenter": "CC"}, "other": "x"}
    assert group_value(group, "displayName") == "G"
    assert group_value(group, f"{ACME}:costCenter") == "CC"
    assert group_value(group, f"{ACME}:seats") is None
    assert group_value({ACME: "not an object"}, f"{ACME}:costCenter") is None


def test_a_remove_with_a_value_still_clears_a_single_valued_attribute():
    p = plan(
        {"op": "remove", "path": "externalId", "value": "ext-1"},
        {"op": "remove", "path": f"{ACME}:costCenter", "value": "CC-1"},
    )
    assert (p.external_id, p.external_id_sent) == (None, True)
    assert p.extensions == {f"{ACME}:costCenter": None}


@pytest.mark.parametrize("value", ["", [], None])
def test_an_empty_extension_value_clears_it(value):
    p = plan({"op": "add", "path": f"{ACME}:costCenter", "value": value})
    assert p.extensions == {f"{ACME}:costCenter": None}


def test_operations_after_a_path_less_one_apply_too():
    p = plan(
        {"op": "replace", "value": {"displayName": "Named"}},
        {"op": "add", "path": "members", "value": members("a")},
    )
    assert (p.display_name, list(p.add)) == ("Named", ["a"])


def test_a_path_less_add_of_members_adds_them():
    p = plan({"op": "add", "value": {"members": members("a")}})
    assert (list(p.add), p.replace) == (["a"], None)


def test_removing_a_member_a_replace_does_not_hold_is_no_error():
    p = plan(
        {"op": "replace", "path": "members", "value": members("a")},
        {"op": "remove", "path": "members", "value": members("b", "a")},
    )
    assert (p.replace, p.add, p.remove) == ({}, {}, {})
