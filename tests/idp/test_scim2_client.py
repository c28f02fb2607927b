"""A real SCIM client, python-scim's ``scim2-client``, driving the service on the real slapd.

The client discovers the service (``/ServiceProviderConfig``, ``/ResourceTypes``,
``/Schemas``), builds its resource models from what ``/Schemas`` publishes, and validates
every request and response against them; it then creates, queries, patches and deletes users
and creates and reads groups. It speaks HTTP through ``httpx2`` (the HTTP engine
scim2-client ships with), whose WSGI transport calls the Flask app in process.
"""

import httpx2
import pytest
from replay import TOKEN
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_models import (
    Error,
    ListResponse,
    PatchOp,
    PatchOperation,
    SearchRequest,
)


@pytest.fixture
def scim(app):
    transport = httpx2.WSGITransport(app=app)
    with httpx2.Client(
        base_url="http://localhost/scim/v2",
        transport=transport,
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as http_client:
        client = SyncSCIMClient(http_client)
        client.discover()
        yield client


def test_discovery_describes_what_the_service_stores(scim):
    config = scim.provider.config
    assert config.patch.supported is True
    assert config.bulk.supported is False
    assert config.filter.max_results == 200
    assert {rt.name for rt in scim.provider.resource_types} == {"User", "Group"}
    user_model = scim.get_resource_model("User")
    assert {"user_name", "name", "emails", "active", "password"} <= set(user_model.model_fields)
    assert "phone_numbers" in user_model.model_fields  # the profile maps three types
    assert "ims" not in user_model.model_fields and "photos" not in user_model.model_fields


def test_users_lifecycle(scim, directory, run_id):
    User = scim.get_resource_model("User")
    Enterprise = next(e for e in User.get_extension_models().values())
    user = User(
        user_name=f"Client.{run_id}",
        name=User.Name(given_name="Cli", family_name="Ent"),
        emails=[User.Emails(value=f"client.{run_id}@example.com", type="work", primary=True)],
        active=True,
        password=f"Client-Pw-{run_id}",
    )
    user[Enterprise] = Enterprise(employee_number="4711")

    created = scim.create(user)
    assert created.id and created.user_name == f"Client.{run_id}"
    assert created.password is None
    assert created[Enterprise].employee_number == "4711"
    assert created.meta.location.endswith(f"/Users/{created.id}")
    assert directory.can_bind(created.id, f"Client-Pw-{run_id}")

    fetched = scim.query(User, created.id)
    assert fetched.emails[0].value == f"client.{run_id}@example.com"

    found = scim.query(User, query_parameters={"filter": f'userName eq "CLIENT.{run_id}"'})
    assert isinstance(found, ListResponse)
    assert [r.id for r in found.resources] == [created.id]

    searched = scim.search(User, SearchRequest(filter=f'userName eq "client.{run_id}"', count=10))
    assert [r.id for r in searched.resources] == [created.id]

    patch = PatchOp[User](
        operations=[
            PatchOperation(op=PatchOperation.Op.replace_, path="title", value="Tester"),
            PatchOperation(op=PatchOperation.Op.replace_, path="active", value=False),
        ]
    )
    patched = scim.modify(User, created.id, patch)
    assert patched.title == "Tester" and patched.active is False
    locked = directory.user(created.id, "title", "pwdAccountLockedTime")
    assert locked["title"] == ["Tester"]
    assert locked["pwdAccountLockedTime"] == ["000001010000Z"]

    scim.delete(User, created.id)
    assert directory.user(created.id) is None
    missing = scim.query(User, created.id, raise_scim_errors=False)
    assert isinstance(missing, Error) and missing.status == 404


def test_groups_create_and_read(scim, directory, run_id):
    User, Group = scim.get_resource_model("User"), scim.get_resource_model("Group")
    member = scim.create(
        User(
            user_name=f"member.{run_id}",
            name=User.Name(given_name="Mem", family_name="Ber"),
            emails=[User.Emails(value=f"member.{run_id}@example.com")],
            active=True,
        )
    )
    group = scim.create(
        Group(
            display_name=f"Client Group {run_id}",
            members=[Group.Members(value=member.id)],
        )
    )
    assert group.id == f"Client Group {run_id}"
    assert [m.value for m in group.members] == [member.id]
    assert directory.members(group.id) == {directory.dn(member.id)}

    read = scim.query(Group, group.id)
    assert read.display_name == f"Client Group {run_id}"
    assert read.members[0].display is None  # derived: returned "request" (RFC 7643 §7)
    asked = scim.query(Group, group.id, query_parameters={"attributes": ["members.display"]})
    assert asked.members[0].display == f"member.{run_id}"

    listed = scim.query(Group, query_parameters={"filter": f'displayName eq "{group.id}"'})
    assert [g.id for g in listed.resources] == [group.id]

    refused = scim.delete(Group, group.id, raise_scim_errors=False, expected_status_codes=None)
    assert isinstance(refused, Error) and refused.status == 501
    assert directory.members(group.id) == {directory.dn(member.id)}
