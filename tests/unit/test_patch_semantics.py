"""PATCH cases a client sees the answer of: each pins one rule of RFC 7644 §3.5.2 (or one of
the service's documented decisions) that a plausible slip in the engine would break."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from scim_core import Mutability, ScimRequest, ScimService, apply_patch
from scim_core.backends.memory import MemoryBackend
from scim_core.errors import InvalidPath, InvalidValue
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, Attribute

ENT = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
CORE = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
USER: dict[str, Any] = {
    "id": "u1",
    "userName": "bjensen",
    "name": {"givenName": "Barbara", "familyName": "Jensen"},
    "emails": [
        {"value": "bjensen@example.com", "type": "work", "primary": True},
        {"value": "babs@jensen.org", "type": "home"},
    ],
    "active": True,
    ENT: {"employeeNumber": "701984", "department": "Tours"},
}
GROUP: dict[str, Any] = {
    "id": "g1",
    "displayName": "Tour Guides",
    "members": [{"value": "u1", "type": "User"}],
}


def patch(operations: list[dict[str, Any]], resource: dict[str, Any] | None = None, kind="User"):
    return apply_patch(resource or USER, operations, kind)


def test_operations_after_an_extension_remove_still_apply():
    result, changed = patch(
        [
            {"op": "remove", "path": ENT},
            {"op": "replace", "path": "name.givenName", "value": "Babs"},
            {"op": "add", "path": f"{ENT}:employeeNumber", "value": "42"},
        ]
    )
    assert changed
    assert result["name"]["givenName"] == "Babs"
    assert result[ENT] == {"employeeNumber": "42"}


def test_a_sub_attribute_removed_through_a_filter_goes_from_the_matched_elements_only():
    result, changed = patch([{"op": "remove", "path": 'emails[type eq "work"].primary'}])
    assert changed
    assert result["emails"] == [
        {"value": "bjensen@example.com", "type": "work"},
        {"value": "babs@jensen.org", "type": "home"},
    ]
    result, _ = patch([{"op": "remove", "path": 'emails[type eq "home"].type'}])
    assert result["emails"] == [
        {"value": "bjensen@example.com", "type": "work", "primary": True},
        {"value": "babs@jensen.org"},
    ]


def test_removing_the_value_of_filtered_elements_removes_those_elements_only():
    result, _ = patch([{"op": "remove", "path": 'emails[type eq "home"].value'}])
    assert result["emails"] == [{"value": "bjensen@example.com", "type": "work", "primary": True}]


def test_remove_with_a_negated_filter_keeps_what_the_filter_excludes():
    result, changed = patch([{"op": "remove", "path": 'emails[not (type eq "work")]'}])
    assert changed
    assert result["emails"] == [{"value": "bjensen@example.com", "type": "work", "primary": True}]
    result, _ = patch([{"op": "remove", "path": 'emails[not (type eq "work" or type eq "home")]'}])
    assert result["emails"] == USER["emails"]


def test_value_filters_compare_per_the_sub_attributes_case_exactness():
    # emails.value is not caseExact: any case matches.
    result, _ = patch([{"op": "remove", "path": 'emails[value eq "BABS@JENSEN.ORG"]'}])
    assert [e["value"] for e in result["emails"]] == ["bjensen@example.com"]
    # Nor is type.
    result, _ = patch([{"op": "replace", "path": 'emails[type eq "HOME"].type', "value": "other"}])
    assert [e.get("type") for e in result["emails"]] == ["work", "other"]


def test_a_list_of_one_object_writes_the_selected_element():
    result, changed = patch(
        [{"op": "replace", "path": 'emails[type eq "home"]', "value": [{"value": "b@x.org"}]}]
    )
    assert changed
    assert result["emails"][1] == {"value": "b@x.org", "type": "home"}
    result, _ = patch(
        [{"op": "add", "path": 'emails[type eq "home"]', "value": [{"primary": True}]}]
    )
    assert result["emails"] == [
        {"value": "bjensen@example.com", "type": "work", "primary": False},
        {"value": "babs@jensen.org", "type": "home", "primary": True},
    ]


def test_a_filter_matching_nothing_creates_the_element_from_its_equalities():
    result, _ = patch(
        [{"op": "replace", "path": 'emails[type eq "other"].value', "value": "o@x.org"}]
    )
    assert result["emails"][-1] == {"type": "other", "value": "o@x.org"}
    assert len(result["emails"]) == 3
    unchanged, changed = patch([{"op": "remove", "path": 'emails[type eq "other"]'}])
    assert (unchanged, changed) == (USER, False)


def test_an_immutable_attribute_in_a_pathless_replace_cannot_change():
    with pytest.raises(Mutability):
        patch([{"op": "replace", "value": {"displayName": "Renamed"}}], GROUP, "Group")
    same, changed = patch(
        [{"op": "replace", "value": {"displayName": "Tour Guides"}}], GROUP, "Group"
    )
    assert (same, changed) == (GROUP, False)
    # An immutable sub-attribute in a path-less replace is skipped, not written.
    same, changed = patch([{"op": "replace", "value": {"members.value": "u9"}}], GROUP, "Group")
    assert (same, changed) == (GROUP, False)


def test_an_immutable_attribute_through_a_path():
    with pytest.raises(Mutability):
        patch([{"op": "replace", "path": "displayName", "value": "Renamed"}], GROUP, "Group")
    with pytest.raises(Mutability):
        patch([{"op": "replace", "path": "members.value", "value": "u2"}], GROUP, "Group")
    with pytest.raises(Mutability):
        patch([{"op": "remove", "path": "displayName"}], GROUP, "Group")
    with pytest.raises(Mutability):
        patch([{"op": "replace", "path": "meta", "value": {}}])
    with pytest.raises(Mutability):
        patch([{"op": "remove", "path": f"{CORE}:id"}])


@pytest.mark.parametrize(
    "path",
    [
        f"{CORE}:nickName",
        f"{CORE}:name.middleName",
        f"{CORE}:phoneNumbers",
        f'{CORE}:addresses[type eq "work"].locality',
        f"{ENT}:costCenter",
        "NICKNAME",
        "ims",
    ],
)
def test_a_path_to_a_standard_attribute_nothing_stores_is_skipped(path):
    result, changed = patch(
        [
            {"op": "replace", "path": path, "value": "x"},
            {"op": "replace", "path": "name.givenName", "value": "Babs"},
        ]
    )
    assert changed
    assert result == {**USER, "name": {"givenName": "Babs", "familyName": "Jensen"}}


@pytest.mark.parametrize(
    "path",
    [
        "urn:example:other:2.0:User:nickName",
        f"{CORE}:nosuch",
        "nosuch",
        "name.nosuch",
        f"{ENT}:nosuch",
    ],
)
def test_a_path_to_anything_else_is_invalid(path):
    with pytest.raises(InvalidPath):
        patch([{"op": "replace", "path": path, "value": "x"}])


def _call(service: ScimService, method: str, path: str, body: Any = None):
    request = ScimRequest(
        method,
        path,
        body=None if body is None else json.dumps(body).encode(),
        content_type="application/scim+json",
    )
    response = service.handle(request)
    return response.status, json.loads(response.body_bytes() or b"null")


def test_over_the_service_a_negated_filter_removes_only_the_other_address():
    service = ScimService(MemoryBackend())
    status, user = _call(
        service,
        "POST",
        "/Users",
        {
            "userName": "negate",
            "name": {"givenName": "N", "familyName": "G"},
            "emails": [
                {"value": "n@work.example", "type": "work", "primary": True},
                {"value": "n@home.example", "type": "home"},
            ],
        },
    )
    assert status == 201
    operations = [{"op": "remove", "path": 'emails[not (type eq "work")]'}]
    body = {"schemas": [PATCH_OP], "Operations": operations}
    status, patched = _call(service, "PATCH", f"/Users/{user['id']}", body)
    assert status == 200
    assert [e["value"] for e in patched["emails"]] == ["n@work.example"]
    status, again = _call(service, "GET", f"/Users/{user['id']}")
    assert [e["value"] for e in again["emails"]] == ["n@work.example"]


# --------------------------------------------------------------------------- schemas a mapping
# may define: the engine follows the definitions it is given, not the default ones.

EXT = "urn:example:scim:schemas:extension:badge:1.0:User"


def _schemas(email_value: Attribute, *extension: Attribute):
    """The default schemas with ``emails`` of just ``email_value`` and ``primary`` (no
    ``type``), and an extension holding ``extension``."""
    emails = Attribute(
        "emails",
        "complex",
        multi_valued=True,
        sub_attributes=(email_value, Attribute("primary", "boolean")),
    )
    schemas = DEFAULT_SCHEMAS.with_attributes("User", CORE, (emails,))
    return schemas.with_attributes("User", EXT, extension) if extension else schemas


BADGE = Attribute(
    "badge",
    "complex",
    sub_attributes=(Attribute("number", "string", mutability="immutable"),),
)
TAGS = Attribute("tags", "string", multi_valued=True)
EXACT_TAGS = Attribute("exactTags", "string", multi_valued=True, case_exact=True)
CASE_EXACT = _schemas(Attribute("value", "string", case_exact=True), BADGE, TAGS, EXACT_TAGS)
MAILS = [{"value": "Ann@x.org", "primary": True}]


@pytest.mark.parametrize(
    ("operation", "emails"),
    [
        # caseExact value: another case is another value, and filters compare exactly.
        ({"op": "add", "path": "emails", "value": [{"value": "ann@x.org"}]}, 2),
        ({"op": "add", "path": 'emails[value eq "ann@x.org"].primary', "value": False}, 2),
        ({"op": "add", "path": 'emails[value eq "Ann@x.org"].primary', "value": False}, 1),
        ({"op": "add", "path": "emails", "value": [{"value": "Ann@x.org"}]}, 1),
    ],
)
def test_a_case_exact_value_is_compared_exactly(operation, emails):
    result, _ = apply_patch({"userName": "ann", "emails": MAILS}, [operation], "User", CASE_EXACT)
    assert len(result["emails"]) == emails


@pytest.mark.parametrize(
    ("name", "values"),
    [("tags", ["Red"]), ("exactTags", ["red", "Red"])],
)
def test_simple_values_are_the_same_per_the_attributes_case_exactness(name, values):
    resource = {"userName": "ann", EXT: {name: ["red"]}}
    result, changed = apply_patch(
        resource, [{"op": "add", "path": f"{EXT}:{name}", "value": ["Red"]}], "User", CASE_EXACT
    )
    assert result[EXT][name] == (values if len(values) > 1 else ["red"])
    assert changed == (len(values) > 1)


def test_the_primary_alias_creates_a_primary_element_without_a_type_the_schema_lacks():
    result, _ = apply_patch(
        {"userName": "ann"},
        [{"op": "add", "path": "email", "value": "a@x.org"}],
        "User",
        CASE_EXACT,
    )
    assert result["emails"] == [{"value": "a@x.org", "primary": True}]


def test_an_extension_path_may_set_an_immutable_sub_attribute_in_an_add_only():
    operation = {"path": EXT, "value": {"badge.number": "7"}}
    added, _ = apply_patch({"userName": "a"}, [{"op": "add", **operation}], "User", CASE_EXACT)
    assert added[EXT] == {"badge": {"number": "7"}}
    replaced, changed = apply_patch(
        {"userName": "a"}, [{"op": "replace", **operation}], "User", CASE_EXACT
    )
    assert (replaced, changed) == ({"userName": "a"}, False)


def test_group_members_immutable_sub_attributes_may_be_added_not_replaced():
    added, changed = patch([{"op": "add", "value": {"members.value": "u2"}}], GROUP, "Group")
    assert changed and added["members"] == [{"value": "u2", "type": "User"}]
    path = {"path": 'members[value eq "u1"].type', "value": "User"}
    same, changed = patch([{"op": "add", **path}], GROUP, "Group")
    assert (same, changed) == (GROUP, False)
    with pytest.raises(Mutability):
        patch([{"op": "replace", **path}], GROUP, "Group")


def test_replacing_a_selected_member_keeps_what_the_service_derived():
    group = {**GROUP, "members": [{"value": "u1", "type": "User", "display": "Babs"}]}
    result, changed = patch(
        [{"op": "replace", "path": 'members[value eq "u1"]', "value": {"value": "u1"}}],
        group,
        "Group",
    )
    assert (result, changed) == (group, False)


def test_reordering_elements_and_their_keys_is_no_change():
    resource = {
        "userName": "ann",
        "emails": [{"value": "a@x.org", "type": "home"}, {"type": "work", "value": "b@x.org"}],
    }
    reordered = [{"type": "home", "value": "a@x.org"}, {"value": "b@x.org", "type": "work"}]
    result, changed = apply_patch(
        resource, [{"op": "replace", "path": "emails", "value": reordered}]
    )
    assert (result["emails"], changed) == (reordered, False)


def test_a_value_json_cannot_hold_is_compared_as_text():
    stamp = datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC)
    resource = {"userName": "ann", "emails": [{"value": "a@x.org", "display": stamp}]}
    result, changed = apply_patch(resource, [{"op": "replace", "path": "userName", "value": "ann"}])
    assert (result, changed) == (resource, False)


def test_elements_without_a_value_are_the_same_when_all_else_is():
    resource = {"userName": "ann", "emails": [{"type": "home"}]}
    result, changed = apply_patch(
        resource, [{"op": "add", "path": "emails", "value": [{"type": "home"}, {"type": "work"}]}]
    )
    assert (result["emails"], changed) == ([{"type": "home"}, {"type": "work"}], True)


def test_the_primary_alias_means_the_first_primary_of_a_list_that_holds_two():
    resource = {
        "userName": "ann",
        "emails": [{"value": "a@x.org", "primary": True}, {"value": "b@x.org", "primary": True}],
    }
    result, _ = apply_patch(resource, [{"op": "replace", "path": "email", "value": "c@x.org"}])
    assert [e["value"] for e in result["emails"]] == ["c@x.org", "b@x.org"]


def test_a_selected_element_takes_an_object_not_a_bare_value():
    with pytest.raises(InvalidValue, match="object per value"):
        patch([{"op": "replace", "path": 'emails[type eq "work"]', "value": "w@x.org"}])
    same, changed = patch([{"op": "replace", "path": 'emails[type eq "other"]', "value": None}])
    assert (same, changed) == (USER, False)


@pytest.mark.parametrize("skipped", [{ENT: None}, {"id": "u9"}, {"shoeSize": 44}])
def test_keys_a_pathless_operation_skips_leave_the_next_ones_applied(skipped):
    result, _ = patch([{"op": "replace", "value": {**skipped, "userName": "babs"}}])
    assert result["userName"] == "babs"
    assert result["id"] == "u1"


def test_a_password_written_counts_as_a_change_whatever_follows():
    resource = {**USER, "password": "s3cret"}
    operations = [
        {"op": "replace", "path": "password", "value": "s3cret"},
        {"op": "replace", "path": "userName", "value": "bjensen"},
    ]
    assert apply_patch(resource, operations)[1] is True


def test_a_read_only_attribute_in_an_extension_object_leaves_the_next_ones_applied():
    value = {ENT: {"manager.displayName": "Boss", "employeeNumber": "42"}}
    result, _ = patch([{"op": "replace", "value": value}])
    assert result[ENT]["employeeNumber"] == "42"
    assert "displayName" not in result[ENT].get("manager", {})
