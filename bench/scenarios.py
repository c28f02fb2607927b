"""The benchmark scenarios: what the service is asked, and what the floor does instead.

Each scenario is a list of requests the load generator cycles through (distinct users per
request where that matters), the floor's matching list, the number of connections, and a check
of the answer that runs once before the load so a benchmark of 404s cannot pass unnoticed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from bench.data import Dataset, User
from bench.load import Request

__all__ = ["ORDER", "SCIM", "Scenario", "build", "page_starts"]

SCIM = "/scim/v2"
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
NOOP_TITLE = "Bench steady title"
PAGE_COUNT = 100

Check = Callable[[int, Any], str | None]
"""(status, JSON body) -> None when the answer is right, else what is wrong."""

#: Every scenario key, in the order of the run (the export runs after ``page_deep``).
ORDER = (
    "filter_hit",
    "filter_miss",
    "get_by_id",
    "patch_noop",
    "page_first",
    "page_half",
    "page_deep",
    "group_get",
    "group_get_nomembers",
    "group_patch",
    "post_user",
    "patch_user",
    "put_user",
)


@dataclass(frozen=True)
class Scenario:
    """One measured scenario (service side, and the floor's counterpart if it has one)."""

    key: str
    label: str
    requests: list[Request]
    check: Check
    connections: int
    floor: list[Request] | None = None
    floor_check: Check | None = None
    floor_label: str = ""
    prime: bool = False  # send every request once before the load (the no-op PATCH)
    start_index: int | None = None


def _dumps(body: Any) -> str:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def _filter_path(user_name: str) -> str:
    return f"{SCIM}/Users?filter=" + quote(f'userName eq "{user_name}"', safe="")


def _expect(status: int) -> Check:
    def check(got: int, body: Any) -> str | None:
        return None if got == status else f"status {got}, expected {status}: {body}"

    return check


def _expect_total(total: int) -> Check:
    def check(got: int, body: Any) -> str | None:
        if got != 200 or not isinstance(body, dict):
            return f"status {got}: {body}"
        if body.get("totalResults") != total:
            return f"totalResults {body.get('totalResults')}, expected {total}"
        return None

    return check


def _expect_page(start: int, count: int, at_least: int) -> Check:
    def check(got: int, body: Any) -> str | None:
        if got != 200 or not isinstance(body, dict):
            return f"status {got}: {str(body)[:300]}"
        total = body.get("totalResults") or 0
        found = len(body.get("Resources") or ())
        if total < at_least or found != min(count, total - start + 1):
            return f"totalResults {total}, {found} resources"
        return None

    return check


def _expect_members(members: int | None) -> Check:
    def check(got: int, body: Any) -> str | None:
        if got != 200 or not isinstance(body, dict):
            return f"status {got}: {str(body)[:300]}"
        found = len(body.get("members") or ())
        if members is None:
            return None if "members" not in body else f"{found} members returned"
        return None if found == members else f"{found} members, expected {members}"

    return check


def page_starts(users: int) -> dict[str, int]:
    """startIndex of the three page scenarios: 1, half-way and 90 % into the users."""
    return {"page_first": 1, "page_half": users // 2, "page_deep": users * 9 // 10}


def _patch_title(value: str) -> str:
    return _dumps(
        {"schemas": [PATCH_URN], "Operations": [{"op": "replace", "path": "title", "value": value}]}
    )


def _put_body(user: User) -> str:
    return _dumps(
        {
            "schemas": [USER_URN],
            "userName": user.uid,
            "name": {"givenName": user.given, "familyName": user.family},
            "emails": [{"value": user.mail, "type": "work", "primary": True}],
            "title": "Put @SEQ@",
        }
    )


def build(data: Dataset, connections: int, latency_connections: int) -> dict[str, Scenario]:
    """Every scenario for ``data``; ``connections`` for throughput scenarios, the other for
    the latency-target scenarios (pages, the big group) that one client drives at a time."""
    pools = data.pools
    group = data.group_cn
    starts = page_starts(data.users)
    scenarios = [
        Scenario(
            "filter_hit",
            'GET /Users?filter=userName eq "…" (hit)',
            [("GET", _filter_path(u.uid), None) for u in pools.read],
            _expect_total(1),
            connections,
            floor=[("GET", f"/floor/users?uid={u.uid}", None) for u in pools.read],
            floor_check=_expect_total(1),
            floor_label="search (uid=…)",
        ),
        Scenario(
            "filter_miss",
            'GET /Users?filter=userName eq "…" (miss)',
            [("GET", _filter_path(f"nobody{i:06d}"), None) for i in range(len(pools.read))],
            _expect_total(0),
            connections,
            floor=[
                ("GET", f"/floor/users?uid=nobody{i:06d}", None) for i in range(len(pools.read))
            ],
            floor_check=_expect_total(0),
            floor_label="search (uid=…), no match",
        ),
        Scenario(
            "get_by_id",
            "GET /Users/{id}",
            [("GET", f"{SCIM}/Users/{u.id}", None) for u in pools.read],
            _expect(200),
            connections,
            floor=[("GET", f"/floor/users/{u.id}", None) for u in pools.read],
            floor_check=_expect(200),
            floor_label="search (entryUUID=…) alone",
        ),
        Scenario(
            "patch_noop",
            "PATCH /Users/{id} replayed (no change)",
            [("PATCH", f"{SCIM}/Users/{u.id}", _patch_title(NOOP_TITLE)) for u in pools.noop],
            _expect(200),
            connections,
            prime=True,
        ),
    ]
    for key, start in starts.items():
        scenarios.append(
            Scenario(
                key,
                f"GET /Users?startIndex={start}&count={PAGE_COUNT}",
                [("GET", f"{SCIM}/Users?startIndex={start}&count={PAGE_COUNT}", None)],
                _expect_page(start, PAGE_COUNT, data.users),
                latency_connections,
                floor=[("GET", f"/floor/page?startIndex={start}&count={PAGE_COUNT}", None)],
                floor_check=_expect_page(start, PAGE_COUNT, data.users),
                floor_label="sorted VLV search, sorted anew",
                start_index=start,
            )
        )
    toggle_service: list[Request] = []
    toggle_floor: list[Request] = []
    target = f"{SCIM}/Groups/{quote(group)}?excludedAttributes=members"
    for op in ("add", "remove"):
        for user in pools.toggle:
            if op == "add":
                operation = {"op": "add", "path": "members", "value": [{"value": user.id}]}
            else:
                operation = {"op": "remove", "path": f'members[value eq "{user.id}"]'}
            body = _dumps({"schemas": [PATCH_URN], "Operations": [operation]})
            toggle_service.append(("PATCH", target, body))
            toggle_floor.append(
                ("PATCH", f"/floor/groups/{quote(group)}", _dumps({"op": op, "member": user.id}))
            )
    scenarios += [
        Scenario(
            "group_get",
            f"GET /Groups/{{id}} ({data.members:,} members)",
            [("GET", f"{SCIM}/Groups/{quote(group)}", None)],
            _expect_members(data.members),
            latency_connections,
            floor=[("GET", f"/floor/groups/{quote(group)}", None)],
            floor_check=_expect_members(data.members),
            floor_label="group entry + memberOf search",
        ),
        Scenario(
            "group_get_nomembers",
            "GET /Groups/{id}?excludedAttributes=members",
            [("GET", f"{SCIM}/Groups/{quote(group)}?excludedAttributes=members", None)],
            _expect_members(None),
            latency_connections,
            floor=[("GET", f"/floor/groups/{quote(group)}?members=0", None)],
            floor_check=_expect_members(None),
            floor_label="group entry",
        ),
        Scenario(
            "group_patch",
            "PATCH /Groups/{id}?excludedAttributes=members (add/remove one member)",
            toggle_service,
            _expect(200),
            latency_connections,
            floor=toggle_floor,
            floor_check=_expect(200),
            floor_label="member by id, modify member, read group",
        ),
        Scenario(
            "post_user",
            "POST /Users",
            [
                (
                    "POST",
                    f"{SCIM}/Users",
                    _dumps(
                        {
                            "schemas": [USER_URN],
                            "userName": "bench-@SEQ@",
                            "name": {"givenName": "Bench", "familyName": "User @SEQ@"},
                            "emails": [{"value": "bench-@SEQ@@example.org", "primary": True}],
                        }
                    ),
                )
            ],
            _expect(201),
            connections,
            floor=[
                (
                    "POST",
                    "/floor/users",
                    _dumps(
                        {
                            "uid": "floor-@SEQ@",
                            "givenName": "Bench",
                            "sn": "User @SEQ@",
                            "mail": "floor-@SEQ@@example.org",
                        }
                    ),
                )
            ],
            floor_check=_expect(201),
            floor_label="add + read",
        ),
        Scenario(
            "patch_user",
            "PATCH /Users/{id} (title changes)",
            [("PATCH", f"{SCIM}/Users/{u.id}", _patch_title("Title @SEQ@")) for u in pools.patch],
            _expect(200),
            connections,
            floor=[
                ("PATCH", f"/floor/users/{u.id}", _dumps({"title": "Title @SEQ@"}))
                for u in pools.patch
            ],
            floor_check=_expect(200),
            floor_label="user by id, modify, read",
        ),
        Scenario(
            "put_user",
            "PUT /Users/{id} (title changes)",
            [("PUT", f"{SCIM}/Users/{u.id}", _put_body(u)) for u in pools.put],
            _expect(200),
            connections,
            floor=[
                ("PATCH", f"/floor/users/{u.id}", _dumps({"title": "Put @SEQ@"})) for u in pools.put
            ],
            floor_check=_expect(200),
            floor_label="user by id, modify, read",
        ),
    ]
    built = {s.key: s for s in scenarios}
    assert tuple(built) == ORDER, "ORDER and the scenario list disagree"
    return built
