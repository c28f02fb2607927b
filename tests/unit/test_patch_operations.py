"""One check of PATCH operations for users and groups, before anything is read."""

import json

import pytest

from scim_core import (
    InvalidPath,
    InvalidSyntax,
    InvalidValue,
    NoTarget,
    PatchOperation,
    PayloadTooLarge,
    ScimRequest,
    ScimService,
    checked_operations,
)
from scim_core.backends.memory import MemoryBackend
from scim_core.patch import MAX_OPERATIONS

PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


def call(service, method, path, body):
    request = ScimRequest(
        method, path, body=json.dumps(body).encode(), content_type="application/scim+json"
    )
    return service.handle(request)


def test_operations_are_read_in_any_case_and_paths_stripped():
    checked = checked_operations(
        [{"OP": "Add", "Path": "  title ", "Value": "x"}, {"op": "REMOVE", "path": "nickName"}]
    )
    assert checked == [
        PatchOperation("add", "title", "x"),
        PatchOperation("remove", "nickName", None),
    ]
    assert checked_operations(checked) == checked  # checked ones pass as they are


@pytest.mark.parametrize(
    ("operation", "error"),
    [
        ("add", InvalidSyntax),
        ({"op": "move", "path": "title", "value": "x"}, InvalidSyntax),
        ({"op": "add", "path": 3, "value": "x"}, InvalidPath),
        ({"op": "replace", "path": "title"}, InvalidValue),
        ({"op": "remove"}, NoTarget),
        ({"op": "remove", "path": "   "}, NoTarget),
    ],
)
def test_each_malformed_operation_is_refused_with_its_error(operation, error):
    with pytest.raises(error):
        checked_operations([{"op": "add", "path": "title", "value": "ok"}, operation])


def test_more_operations_than_allowed_are_refused():
    with pytest.raises(PayloadTooLarge):
        checked_operations([{"op": "add", "path": "title", "value": "x"}] * (MAX_OPERATIONS + 1))


def user_and_group(service, name):
    """A new user and a new group, each named ``name``, as created."""
    body = {
        "userName": name,
        "name": {"givenName": "O", "familyName": "U"},
        "emails": [{"value": f"{name}@example.org"}],
    }
    user = json.loads(call(service, "POST", "/Users", body).body_bytes())
    group = json.loads(call(service, "POST", "/Groups", {"displayName": name}).body_bytes())
    return user, group


def test_groups_and_users_answer_a_remove_without_path_alike():
    service = ScimService(MemoryBackend())
    user, group = user_and_group(service, "ops.unit")
    for path in (f"/Users/{user['id']}", f"/Groups/{group['id']}"):
        response = call(
            service, "PATCH", path, {"schemas": [PATCH_OP], "Operations": [{"op": "remove"}]}
        )
        body = json.loads(response.body_bytes())
        assert (response.status, body["scimType"]) == (400, "noTarget"), path


def test_a_group_patch_takes_member_names_in_any_case():
    service = ScimService(MemoryBackend())
    user, group = user_and_group(service, "case.unit")
    operation = {"OP": "Add", "PATH": "members", "VALUE": [{"value": user["id"]}]}
    response = call(
        service,
        "PATCH",
        f"/Groups/{group['id']}",
        {"schemas": [PATCH_OP], "Operations": [operation]},
    )
    assert response.status == 200
    assert [m["value"] for m in json.loads(response.body_bytes())["members"]] == [user["id"]]
