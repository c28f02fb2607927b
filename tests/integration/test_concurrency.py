"""Concurrent requests over real HTTP with many directory connections at once.

The app is served on 127.0.0.1 by a pool of 20 request threads, each with its own directory
connection; 20 client threads wait on a barrier and then send their request together.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from reliability import (
    Result,
    Served,
    group_members,
    make_app,
    patch_body,
    read_users,
    run_threads,
    scale,
    serve,
    unique,
    user_body,
)

from scim_core.backends.ldap import LdapBackend, LdapSettings
from scim_core.testing.slapd import SlapdInstance

pytestmark = pytest.mark.slapd

CLIENTS = 20
ROUNDS = scale(3, 30)


@pytest.fixture(scope="module")
def served(ldap_settings: LdapSettings) -> Iterator[Served]:
    backend = LdapBackend(ldap_settings)
    with serve(make_app(backend), backend, threads=CLIENTS) as served:
        yield served
    backend.close()


def together(count: int, request: Callable[[int], Result], timeout: float = 60) -> list[Result]:
    """Send ``request(i)`` from ``count`` threads released at once; the results by index."""
    barrier = threading.Barrier(count)
    results: list[Result | None] = [None] * count

    def client(index: int) -> None:
        barrier.wait(timeout=timeout)
        results[index] = request(index)

    run_threads(count, client, timeout=timeout)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def statuses(results: list[Result]) -> list[int]:
    return sorted(r.status for r in results)


def create_user(served: Served, name: str) -> dict[str, Any]:
    result = served.call("POST", "/Users", user_body(name))
    assert result.status == 201, result.describe()
    body: dict[str, Any] = result.body
    return body


def test_identical_creates_give_one_201_and_409s(slapd: SlapdInstance, served: Served) -> None:
    for _ in range(ROUNDS):
        name = unique("twin")
        # The same user, spelled the ways an identity provider might: all normalize to one uid.
        spellings = [name, name.upper(), f"  {name} ", name.title()]
        results = together(
            CLIENTS,
            lambda i, spellings=spellings: served.call(
                "POST", "/Users", user_body(spellings[i % 4])
            ),
        )
        assert statuses(results) == [201] + [409] * (CLIENTS - 1), [r.describe() for r in results]
        assert all(r.body["scimType"] == "uniqueness" for r in results if r.status == 409)
        assert list(read_users(slapd, name)) == [name]


def test_membership_adds_of_different_users_all_land(slapd: SlapdInstance, served: Served) -> None:
    group = unique("crowd")
    assert served.call("POST", "/Groups", {"displayName": group}).status == 201
    users = [create_user(served, unique(f"member{i}")) for i in range(CLIENTS)]
    group_dn = f"cn={group},{slapd.groups_base}"

    def change(op: str) -> Callable[[int], Result]:
        def request(index: int) -> Result:
            operation = {"op": op, "path": "members", "value": [{"value": users[index]["id"]}]}
            return served.call("PATCH", f"/Groups/{group}", patch_body(operation))

        return request

    for _ in range(ROUNDS):
        added = together(CLIENTS, change("add"))
        assert statuses(added) == [200] * CLIENTS, [r.describe() for r in added]
        expected = {f"uid={u['userName']},{slapd.users_base}".lower() for u in users}
        assert group_members(slapd, group_dn) == expected  # the placeholder went out
        listed = served.call("GET", f"/Groups/{group}")
        assert {m["value"] for m in listed.body["members"]} == {u["id"] for u in users}

        removed = together(CLIENTS, change("remove"))
        assert statuses(removed) == [200] * CLIENTS, [r.describe() for r in removed]
        # The last one out leaves the placeholder, so the groupOfNames stays valid.
        assert group_members(slapd, group_dn) == {slapd.placeholder_dn.lower()}


def test_identical_group_creates_give_one_201_and_409s(served: Served) -> None:
    for _ in range(ROUNDS):
        name = unique("team")
        results = together(
            CLIENTS, lambda _, name=name: served.call("POST", "/Groups", {"displayName": name})
        )
        assert statuses(results) == [201] + [409] * (CLIENTS - 1), [r.describe() for r in results]


def test_patches_with_the_same_if_match_give_one_success_and_412s(served: Served) -> None:
    user = create_user(served, unique("etag"))
    path = f"/Users/{user['id']}"
    for round_number in range(ROUNDS):
        current = served.call("GET", path)
        version = current.headers["etag"]

        def request(index: int, round_number: int = round_number, version: str = version) -> Result:
            operation = {"op": "replace", "path": "title", "value": f"t{round_number}-{index}"}
            return served.call("PATCH", path, patch_body(operation), headers={"If-Match": version})

        results = together(CLIENTS, request)
        assert statuses(results) == [200] + [412] * (CLIENTS - 1), [r.describe() for r in results]
        winner = next(r for r in results if r.status == 200)
        assert served.call("GET", path).body["title"] == winner.body["title"]


def test_concurrent_patches_without_if_match_lose_no_update(served: Served) -> None:
    """Each PATCH adds its own e-mail address: every one answered 200 is kept."""
    user = create_user(served, unique("merge"))
    path = f"/Users/{user['id']}"

    def request(index: int) -> Result:
        operation = {"op": "add", "path": "emails", "value": [{"value": f"e{index}@example.org"}]}
        return served.call("PATCH", path, patch_body(operation))

    results = together(CLIENTS, request)
    # A PATCH that keeps losing the race answers 409 (retry) after a few re-plans.
    assert set(statuses(results)) <= {200, 409}, [r.describe() for r in results]
    kept = {e["value"] for e in served.call("GET", path).body["emails"]}
    acknowledged = {f"e{i}@example.org" for i, r in enumerate(results) if r.status == 200}
    assert acknowledged <= kept
    assert len(acknowledged) >= 1
    print(
        f"\n[merge] {CLIENTS} concurrent PATCHes: {statuses(results).count(200)} x 200, "
        f"{statuses(results).count(409)} x 409, {len(kept)} addresses kept"
    )
