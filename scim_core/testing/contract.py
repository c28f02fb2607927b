"""The backend contract suite: the service's behaviour, runnable against any backend.

Subclass :class:`BackendContract` in a test module and provide a ``backend`` fixture::

    import pytest
    from scim_core.testing.contract import BackendContract

    class TestMyBackend(BackendContract):
        @pytest.fixture
        def backend(self):
            return MyBackend()

Every test drives :class:`~scim_core.ScimService` with :class:`~scim_core.ScimRequest` values,
so it checks what a SCIM client would see. Tests create their own uniquely named users and
groups, so a backend may share one store across the whole session.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

import pytest

from scim_core.backend import Backend
from scim_core.messages import ScimRequest, ScimResponse
from scim_core.service import ScimService
from scim_core.urns import ENTERPRISE_URN, LIST_RESPONSE_URN, PATCH_OP_URN, USER_URN

__all__ = ["BackendContract", "Client", "user_body"]

PATCH_OP = PATCH_OP_URN


class Client:
    """A tiny SCIM client over :meth:`ScimService.handle` (no HTTP)."""

    def __init__(self, service: ScimService, base_url: str = "https://scim.test/scim/v2"):
        self.service = service
        self.base_url = base_url

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Mapping[str, str] | None = None,
        if_match: str | None = None,
    ) -> ScimResponse:
        """Send one request and return the service's response."""
        raw = b"" if body is None else json.dumps(body).encode()
        return self.service.handle(
            ScimRequest(
                method=method,
                path=path,
                query=dict(query or {}),
                body=raw,
                content_type="application/scim+json" if body is not None else None,
                if_match=if_match,
                base_url=self.base_url,
                principal="contract",
            )
        )

    def ok(self, method: str, path: str, body: Any = None, **kwargs: Any) -> dict[str, Any]:
        """Like :meth:`call`, asserting a 2xx answer, returning its body."""
        response = self.call(method, path, body, **kwargs)
        assert 200 <= response.status < 300, (
            f"{method} {path} answered {response.status}, expected 2xx: {response.body}"
        )
        return dict(response.body or {})

    def patch(self, path: str, *operations: dict[str, Any], **kwargs: Any) -> ScimResponse:
        """PATCH with the RFC 7644 envelope."""
        return self.call(
            "PATCH", path, {"schemas": [PATCH_OP], "Operations": list(operations)}, **kwargs
        )


def unique(prefix: str = "u") -> str:
    """A name no other test uses."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def user_body(user_name: str | None = None, **extra: Any) -> dict[str, Any]:
    """A minimal valid User body in RFC 7643 form."""
    name = user_name or unique()
    body: dict[str, Any] = {
        "schemas": [USER_URN],
        "userName": name,
        "name": {"givenName": "Barbara", "familyName": "Jensen"},
        "emails": [{"value": f"{name}@example.com", "type": "work", "primary": True}],
    }
    body.update(extra)
    return body


class BackendContract:
    """Behaviour every backend must show through the service."""

    @pytest.fixture
    def backend(self) -> Backend:
        """Override: the backend under test."""
        raise NotImplementedError("provide a `backend` fixture")

    @pytest.fixture
    def client(self, backend: Backend) -> Client:
        """The service over the backend, behind a :class:`Client`."""
        return Client(ScimService(backend))

    # ------------------------------------------------------------- users: create and read

    def test_create_then_get(self, client: Client) -> None:
        """POST /Users stores the user; GET /Users/{id} returns the same resource."""
        created = client.ok("POST", "/Users", user_body())
        assert created["id"] and created["meta"]["resourceType"] == "User"
        assert created["meta"]["location"].endswith("/Users/" + created["id"])
        fetched = client.ok("GET", "/Users/" + created["id"])
        assert fetched["userName"] == created["userName"]
        assert fetched["name"]["familyName"] == "Jensen"
        assert fetched["emails"][0]["value"] == created["emails"][0]["value"]
        assert fetched["active"] is True

    def test_create_answers_201_with_location_and_etag(self, client: Client) -> None:
        """A create is 201 with ``Location`` and ``ETag`` matching ``meta``."""
        response = client.call("POST", "/Users", user_body())
        assert response.status == 201
        assert response.headers["Location"] == dict(response.body or {})["meta"]["location"]
        assert response.headers["ETag"] == dict(response.body or {})["meta"]["version"]

    def test_flat_aliases_are_accepted(self, client: Client) -> None:
        """Flat ``givenName``, ``familyName`` and ``email`` are accepted on input."""
        name = unique()
        body = {
            "userName": name,
            "givenName": "Flat",
            "familyName": "Alias",
            "email": f"{name}@example.com",
        }
        created = client.ok("POST", "/Users", body)
        assert created["name"]["givenName"] == "Flat"
        assert created["emails"][0]["value"] == f"{name}@example.com"

    def test_every_missing_required_field_is_named(self, client: Client) -> None:
        """A create missing fields is 400 ``invalidValue`` naming each of them."""
        response = client.call("POST", "/Users", {"schemas": [USER_URN]})
        assert response.status == 400
        body = dict(response.body or {})
        assert body["scimType"] == "invalidValue"
        for field in ("userName", "givenName", "familyName", "emails"):
            assert field in body["detail"]

    def test_username_is_kept_as_sent_and_unique(self, client: Client) -> None:
        """userName comes back as written (surrounding space aside); one in another case
        is the same userName: 409."""
        name = unique("Ana.") + "XY"
        created = client.ok("POST", "/Users", user_body("  " + name + "  "))
        assert created["userName"] == name
        fetched = client.ok("GET", "/Users/" + created["id"])
        assert fetched["userName"] == name
        again = client.call("POST", "/Users", user_body(name.lower()))
        assert again.status == 409
        assert dict(again.body or {})["scimType"] == "uniqueness"

    def test_unknown_and_malformed_ids_are_404(self, client: Client) -> None:
        """Unknown, malformed and overlong user ids are 404 with an error body."""
        for ident in (str(uuid.uuid4()), "not-an-id", "x" * 300):
            response = client.call("GET", "/Users/" + ident)
            assert response.status == 404
            assert dict(response.body or {})["status"] == "404"

    def test_unknown_attributes_are_ignored(self, client: Client) -> None:
        """Attributes the service does not store are ignored, never echoed back."""
        ims = [{"value": "ignored", "type": "xmpp"}]
        created = client.ok("POST", "/Users", user_body(roles=[], ims=ims))
        assert "roles" not in created and "ims" not in created

    def test_password_is_never_returned(self, client: Client) -> None:
        """A password is write-only: no response ever contains it."""
        created = client.ok("POST", "/Users", user_body(password="Canary-Pa55word!"))
        fetched = client.ok("GET", "/Users/" + created["id"])
        assert "Canary" not in json.dumps(created) + json.dumps(fetched)

    # ------------------------------------------------------------- users: list and filter

    def test_username_filter_is_case_insensitive(self, client: Client) -> None:
        """``userName eq`` matches whatever the case of the value."""
        name = unique()
        created = client.ok("POST", "/Users", user_body(name))
        found = client.ok("GET", "/Users", query={"filter": f'userName eq "{name.upper()}"'})
        assert found["totalResults"] == 1
        assert found["Resources"][0]["id"] == created["id"]
        assert found["schemas"] == [LIST_RESPONSE_URN]

    def test_email_filters(self, client: Client) -> None:
        """``email eq`` and ``emails.value eq`` (any case of the name) find the user."""
        name = unique()
        created = client.ok("POST", "/Users", user_body(name))
        for attribute in ("email", "emails.value", "EMAILS.VALUE"):
            found = client.ok(
                "GET", "/Users", query={"filter": f'{attribute} eq "{name}@example.com"'}
            )
            assert [r["id"] for r in found["Resources"]] == [created["id"]]

    def test_a_miss_is_an_empty_list(self, client: Client) -> None:
        """A filter matching nothing is a 200 ListResponse with no resources."""
        found = client.ok("GET", "/Users", query={"filter": f'userName eq "{unique()}"'})
        assert (found["totalResults"], found["Resources"]) == (0, [])

    def test_disallowed_filter_is_invalid_filter(self, client: Client) -> None:
        """A filter form outside the policy is 400 ``invalidFilter``."""
        response = client.call("GET", "/Users", query={"filter": 'title co "x"'})
        assert response.status == 400
        assert dict(response.body or {})["scimType"] == "invalidFilter"

    def test_paging_is_stable_and_bounded(self, client: Client) -> None:
        """Pages follow ``startIndex``/``count`` in userName order; ``count=0`` counts."""
        prefix = unique("p")
        for index in range(5):
            client.ok("POST", "/Users", user_body(f"{prefix}-{index}"))
        query = {"filter": f'userName eq "{prefix}-3"', "startIndex": "1", "count": "25"}
        one = client.ok("GET", "/Users", query=query)
        assert (one["totalResults"], one["itemsPerPage"], one["startIndex"]) == (1, 25, 1)
        everyone = client.ok("GET", "/Users", query={"count": "0"})
        assert everyone["Resources"] == [] and everyone["totalResults"] >= 5
        first = client.ok("GET", "/Users", query={"startIndex": "1", "count": "2"})
        second = client.ok("GET", "/Users", query={"startIndex": "3", "count": "2"})
        names = [r["userName"] for r in first["Resources"] + second["Resources"]]
        assert names == sorted(names, key=str.casefold) and len(set(names)) == 4
        beyond = client.ok("GET", "/Users", query={"startIndex": str(everyone["totalResults"] + 5)})
        assert beyond["Resources"] == []

    def test_cursor_walk_lists_each_user_once(self, backend: Backend) -> None:
        """With a cursor secret, a backend that pages by position (``keyset_paging``) walks
        every user once, in pages of ``count`` with ``nextCursor`` on all but the last, even
        when users are deleted and renamed between pages; one that does not refuses cursors
        with 400 ``invalidCursor`` and says ``cursor: false`` in ServiceProviderConfig."""
        from scim_core.config import ServiceConfig
        from scim_core.secret import Secret

        client = Client(ScimService(backend, ServiceConfig(cursor_secret=Secret("c" * 40))))
        offered = client.ok("GET", "/ServiceProviderConfig")["pagination"]["cursor"]
        if not getattr(backend, "keyset_paging", False):
            assert offered is False
            response = client.call("GET", "/Users", query={"cursor": "", "count": "5"})
            assert (response.status, dict(response.body or {}).get("scimType")) == (
                400,
                "invalidCursor",
            )
            return
        assert offered is True
        prefix = unique("w")
        made = [client.ok("POST", "/Users", user_body(f"{prefix}-{i}"))["id"] for i in range(9)]
        seen: list[str] = []
        cursor = ""
        pages = 0
        while True:
            page = client.ok("GET", "/Users", query={"cursor": cursor, "count": "4"})
            assert "startIndex" not in page and page["itemsPerPage"] == len(page["Resources"])
            seen += [r["id"] for r in page["Resources"]]
            pages += 1
            if pages == 1:  # between pages: a delete and a rename
                client.ok("DELETE", "/Users/" + made[8])
                client.patch(
                    "/Users/" + made[7],
                    {"op": "replace", "path": "userName", "value": "0" + prefix},
                )
            if "nextCursor" not in page:
                break
            assert len(page["Resources"]) == 4
            cursor = page["nextCursor"]
        assert len(seen) == len(set(seen))
        assert set(made[:8]) <= set(seen)

    def test_active_filter(self, client: Client) -> None:
        """``active eq true|false`` separates disabled users from the others."""
        name = unique()
        created = client.ok("POST", "/Users", user_body(name))
        client.patch("/Users/" + created["id"], {"op": "replace", "path": "active", "value": False})
        inactive = client.ok("GET", "/Users", query={"filter": "active eq false", "count": "200"})
        assert created["id"] in [r["id"] for r in inactive["Resources"]]
        active = client.ok("GET", "/Users", query={"filter": "active eq true", "count": "0"})
        assert active["totalResults"] + inactive["totalResults"] >= 1

    def test_attributes_projection(self, client: Client) -> None:
        """``attributes`` and ``excludedAttributes`` shape what a GET returns."""
        created = client.ok("POST", "/Users", user_body())
        only = client.ok("GET", "/Users/" + created["id"], query={"attributes": "userName"})
        assert set(only) >= {"id", "userName", "schemas"} and "emails" not in only
        without = client.ok(
            "GET", "/Users/" + created["id"], query={"excludedAttributes": "emails"}
        )
        assert "emails" not in without and "userName" in without

    # ------------------------------------------------------------- users: patch, put, delete

    def test_patch_is_idempotent(self, client: Client) -> None:
        """Repeating a PATCH gives the same 200 body and the same state."""
        created = client.ok("POST", "/Users", user_body())
        path = "/Users/" + created["id"]
        op = {"op": "Replace", "path": "name.givenName", "value": "Babs"}
        first = client.patch(path, op)
        second = client.patch(path, op)
        assert first.status == second.status == 200
        assert first.body == second.body
        assert dict(second.body or {})["name"]["givenName"] == "Babs"

    def test_disable_is_repeatable_and_reversible(self, client: Client) -> None:
        """active=false (or "False") disables, repeatably; true re-enables."""
        created = client.ok("POST", "/Users", user_body())
        path = "/Users/" + created["id"]
        for _ in range(2):
            response = client.patch(path, {"op": "Replace", "path": "active", "value": "False"})
            assert response.status == 200
            assert dict(response.body or {})["active"] is False
        enabled = client.patch(path, {"op": "replace", "value": {"active": True}})
        assert dict(enabled.body or {})["active"] is True

    def test_only_an_explicit_true_enables(self, client: Client) -> None:
        """A PUT without active, or with null, keeps a disabled user disabled; a PATCH that
        removes or nulls active is 400 invalidValue and changes nothing."""
        name = "keep-" + uuid.uuid4().hex[:10]
        created = client.ok("POST", "/Users", user_body(name, active=False))
        path = "/Users/" + created["id"]
        assert created["active"] is False
        for body in (user_body(name, title="Absent"), user_body(name, title="Null", active=None)):
            replaced = client.ok("PUT", path, body)
            assert replaced["active"] is False, body
        for operation in (
            {"op": "remove", "path": "active"},
            {"op": "replace", "path": "active", "value": None},
            {"op": "replace", "value": {"active": None}},
        ):
            refused = client.patch(
                path, operation, {"op": "replace", "path": "title", "value": "X"}
            )
            assert refused.status == 400, operation
            assert dict(refused.body or {})["scimType"] == "invalidValue"
            after = client.ok("GET", path)
            assert after["active"] is False and after["title"] == "Null", operation
        assert client.ok("PUT", path, user_body(name, active=True))["active"] is True
        assert client.ok("PUT", path, user_body(name))["active"] is True
        # /Schemas says so: always present, only true or false, kept by a PUT without it.
        schema = client.ok("GET", "/Schemas/" + USER_URN)
        (active,) = [a for a in schema["attributes"] if a["name"] == "active"]
        assert (active["type"], active["mutability"], active["required"]) == (
            "boolean",
            "readWrite",
            True,
        )
        description = active["description"]
        assert "PUT without it" in description and "keeps it" in description, description
        assert "cannot be removed or nulled" in description, description

    def test_bare_array_patch_and_pathless_values(self, client: Client) -> None:
        """A bare array of operations, and path-less dotted or URN keys, work."""
        created = client.ok("POST", "/Users", user_body())
        path = "/Users/" + created["id"]
        bare = client.call("PATCH", path, [{"op": "replace", "path": "title", "value": "CTO"}])
        assert bare.status == 200 and dict(bare.body or {})["title"] == "CTO"
        dotted = client.patch(
            path,
            {
                "op": "replace",
                "value": {"name.familyName": "Smith", f"{USER_URN}:displayName": "B. Smith"},
            },
        )
        body = dict(dotted.body or {})
        assert body["name"]["familyName"] == "Smith" and body["displayName"] == "B. Smith"

    def test_work_email_by_value_filter(self, client: Client) -> None:
        """The path ``emails[type eq "work"].value`` replaces the work address."""
        created = client.ok("POST", "/Users", user_body())
        response = client.patch(
            "/Users/" + created["id"],
            {"op": "replace", "path": 'emails[type eq "work"].value', "value": "new@example.com"},
        )
        assert [e["value"] for e in dict(response.body or {})["emails"]] == ["new@example.com"]

    def test_primary_email_is_stored_as_written(self, client: Client) -> None:
        """``primary`` reads back as written (RFC 7643 §2.4), also when no address is primary."""
        name = unique()
        not_primary = [{"value": f"{name}@example.com", "type": "work", "primary": False}]
        primary = [{**not_primary[0], "primary": True}]
        created = client.ok("POST", "/Users", user_body(name, emails=not_primary))
        path = "/Users/" + created["id"]
        assert created["emails"] == not_primary
        for emails in (primary, not_primary):
            replaced = client.patch(path, {"op": "replace", "path": "emails", "value": emails})
            assert dict(replaced.body or {})["emails"] == emails
            assert client.ok("GET", path)["emails"] == emails
        # Two addresses, the second one primary: the backend may reorder, never re-flag.
        other = {"value": f"{name}.2@example.com", "type": "work", "primary": True}
        client.patch(path, {"op": "add", "path": "emails", "value": [other]})
        stored = {(e["value"], e["primary"]) for e in client.ok("GET", path)["emails"]}
        assert stored == {(not_primary[0]["value"], False), (other["value"], True)}

    def test_manager_forms(self, client: Client) -> None:
        """``manager`` takes an id or ``{value: id}``; unknown ids are 400."""
        boss = client.ok("POST", "/Users", user_body())
        worker = client.ok("POST", "/Users", user_body())
        path = "/Users/" + worker["id"]
        extension = ENTERPRISE_URN
        for value in (boss["id"], {"value": boss["id"]}):
            response = client.patch(path, {"op": "replace", "path": "manager", "value": value})
            assert dict(response.body or {})[extension]["manager"]["value"] == boss["id"]
        removed = client.patch(path, {"op": "remove", "path": f'manager[value eq "{boss["id"]}"]'})
        assert "manager" not in dict(removed.body or {}).get(extension, {})
        unknown = client.patch(
            path, {"op": "replace", "path": "manager", "value": str(uuid.uuid4())}
        )
        assert unknown.status == 400

    def test_stale_etag_is_412(self, client: Client) -> None:
        """``If-Match`` with the current version succeeds; a stale one is 412."""
        created = client.ok("POST", "/Users", user_body())
        path = "/Users/" + created["id"]
        version = created["meta"]["version"]
        changed = client.patch(
            path, {"op": "replace", "path": "title", "value": "A"}, if_match=version
        )
        assert changed.status == 200
        stale = client.patch(
            path, {"op": "replace", "path": "title", "value": "B"}, if_match=version
        )
        assert stale.status == 412

    def test_put_replaces_and_renames(self, client: Client) -> None:
        """PUT replaces all writable attributes, may rename, and is repeatable."""
        created = client.ok("POST", "/Users", user_body(title="Engineer"))
        new_name = unique()
        replaced = client.ok("PUT", "/Users/" + created["id"], user_body(new_name))
        assert replaced["id"] == created["id"]
        assert replaced["userName"] == new_name and "title" not in replaced
        again = client.ok("PUT", "/Users/" + created["id"], user_body(new_name))
        assert again["meta"]["version"] == replaced["meta"]["version"]

    def test_rename_onto_a_taken_name_is_409(self, client: Client) -> None:
        """Renaming a user onto another user's userName is 409."""
        first = client.ok("POST", "/Users", user_body())
        second = client.ok("POST", "/Users", user_body())
        response = client.patch(
            "/Users/" + second["id"],
            {"op": "replace", "path": "userName", "value": first["userName"]},
        )
        assert response.status == 409

    def test_delete(self, client: Client) -> None:
        """DELETE answers 204; afterwards GET and DELETE of that id are 404."""
        created = client.ok("POST", "/Users", user_body())
        path = "/Users/" + created["id"]
        assert client.call("DELETE", path).status == 204
        assert client.call("GET", path).status == 404
        assert client.call("DELETE", path).status == 404

    # ------------------------------------------------------------- groups

    def test_group_create_get_and_conflict(self, client: Client) -> None:
        """A group's id is its displayName; creating a taken name is 409."""
        name = unique("Group ")
        created = client.ok("POST", "/Groups", {"displayName": name})
        assert created["id"] == name and created["displayName"] == name
        assert created.get("members", []) == []
        assert client.ok("GET", "/Groups/" + name)["displayName"] == name
        assert client.call("POST", "/Groups", {"displayName": name}).status == 409
        assert client.call("POST", "/Groups", {"members": []}).status == 400

    def test_group_membership_is_idempotent(self, client: Client) -> None:
        """Membership PATCH adds and removes value by value, idempotently."""
        users = [client.ok("POST", "/Users", user_body()) for _ in range(3)]
        ids = [u["id"] for u in users]
        name = unique("g")
        client.ok("POST", "/Groups", {"displayName": name, "members": [{"value": ids[0]}]})
        path = "/Groups/" + name
        add = {"op": "add", "path": "members", "value": [{"value": ids[1]}, {"value": ids[2]}]}
        for _ in range(2):
            members = client.patch(path, add).body or {}
            assert sorted(m["value"] for m in dict(members)["members"]) == sorted(ids)
        remove = {"op": "remove", "path": f'members[value eq "{ids[0]}"]'}
        for _ in range(2):
            assert client.patch(path, remove).status == 200
        listed = {"op": "remove", "path": "members", "value": [{"value": ids[1]}]}
        client.patch(path, listed)
        after = client.ok("GET", path)
        assert [m["value"] for m in after["members"]] == [ids[2]]
        assert after["members"][0]["$ref"].endswith("/Users/" + ids[2])

    def test_last_member_removed_leaves_an_empty_group(self, client: Client) -> None:
        """Removing the last member leaves an empty group."""
        user = client.ok("POST", "/Users", user_body())
        name = unique("g")
        client.ok("POST", "/Groups", {"displayName": name, "members": [{"value": user["id"]}]})
        client.patch(
            "/Groups/" + name, {"op": "remove", "path": "members", "value": [{"value": user["id"]}]}
        )
        assert client.ok("GET", "/Groups/" + name).get("members", []) == []

    def test_unknown_member_is_400_and_changes_nothing(self, client: Client) -> None:
        """An unknown member id is 400, and no other member is added."""
        user = client.ok("POST", "/Users", user_body())
        name = unique("g")
        client.ok("POST", "/Groups", {"displayName": name})
        response = client.patch(
            "/Groups/" + name,
            {
                "op": "add",
                "path": "members",
                "value": [{"value": user["id"]}, {"value": str(uuid.uuid4())}],
            },
        )
        assert response.status == 400
        assert client.ok("GET", "/Groups/" + name).get("members", []) == []

    def test_full_replace_and_okta_pathless_replace(self, client: Client) -> None:
        """A path-less replace sets members; a new displayName renames the group (its id and
        members stay), or is 400 ``mutability`` where the backend cannot rename."""
        users = [client.ok("POST", "/Users", user_body()) for _ in range(2)]
        name = unique("g")
        client.ok("POST", "/Groups", {"displayName": name, "members": [{"value": users[0]["id"]}]})
        response = client.patch(
            "/Groups/" + name,
            {
                "op": "replace",
                "value": {"id": name, "displayName": name, "members": [{"value": users[1]["id"]}]},
            },
        )
        assert [m["value"] for m in dict(response.body or {})["members"]] == [users[1]["id"]]
        new_name = name + " Renamed"
        rename = client.patch(
            "/Groups/" + name, {"op": "replace", "path": "displayName", "value": new_name}
        )
        if rename.status == 400:
            assert dict(rename.body or {}).get("scimType") == "mutability"
            return
        renamed = dict(rename.body or {})
        assert (rename.status, renamed["id"], renamed["displayName"]) == (200, name, new_name)
        assert [m["value"] for m in renamed["members"]] == [users[1]["id"]]
        for shown, ids in ((new_name.upper(), [name]), (name, [])):
            query = {"filter": f'displayName eq "{shown}"'}
            found = client.ok("GET", "/Groups", query=query)
            assert [g["id"] for g in found["Resources"]] == ids
        taken = client.call("POST", "/Groups", {"displayName": new_name})
        assert dict(taken.body or {}).get("scimType") == "uniqueness"

    def test_deleted_user_leaves_every_group(self, client: Client) -> None:
        """Deleting a user removes it from every group."""
        user = client.ok("POST", "/Users", user_body())
        other = client.ok("POST", "/Users", user_body())
        name = unique("g")
        members = [{"value": user["id"]}, {"value": other["id"]}]
        client.ok("POST", "/Groups", {"displayName": name, "members": members})
        client.call("DELETE", "/Users/" + user["id"])
        assert [m["value"] for m in client.ok("GET", "/Groups/" + name)["members"]] == [other["id"]]

    def test_group_filter_and_excluded_members(self, client: Client) -> None:
        """``displayName eq`` finds a group; members can be excluded."""
        user = client.ok("POST", "/Users", user_body())
        name = unique("g")
        client.ok("POST", "/Groups", {"displayName": name, "members": [{"value": user["id"]}]})
        found = client.ok(
            "GET",
            "/Groups",
            query={"filter": f'displayName eq "{name}"', "excludedAttributes": "members"},
        )
        assert found["totalResults"] == 1
        assert found["Resources"][0]["id"] == name and "members" not in found["Resources"][0]
        full = client.ok("GET", "/Groups", query={"filter": f'displayName eq "{name}"'})
        assert [m["value"] for m in full["Resources"][0]["members"]] == [user["id"]]

    def test_group_put_and_delete_are_501(self, client: Client) -> None:
        """PUT and DELETE on /Groups/{id} are 501 and change nothing."""
        name = unique("g")
        client.ok("POST", "/Groups", {"displayName": name})
        for target in (name, unique("missing")):
            assert client.call("PUT", "/Groups/" + target, {"displayName": target}).status == 501
            assert client.call("DELETE", "/Groups/" + target).status == 501
        assert client.ok("GET", "/Groups/" + name)["id"] == name
