"""The in-process reference backend: the contract in its plainest form.

Library users embed it, and the contract suite runs against it next to the LDAP plugin, so both
must behave alike. Not persistent; one lock guards every operation.
"""

from __future__ import annotations

import copy
import threading
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from scim_core.backend import Page, Query, Resource
from scim_core.errors import InvalidValue, Uniqueness, VersionConflict
from scim_core.filter.evaluate import evaluate
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, GROUP_DISPLAY_NAME, GROUP_URN
from scim_core.secret import Secret
from scim_core.urns import ENTERPRISE_URN

__all__ = ["MemoryBackend", "create_backend"]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class MemoryBackend:
    """Users and groups in dictionaries; ids are random UUIDs, versions a counter."""

    #: A group's displayName changes apart from its id here (see :meth:`update_group`).
    schemas = DEFAULT_SCHEMAS.with_attributes("Group", GROUP_URN, (GROUP_DISPLAY_NAME,))
    #: Cursor walks page by id (see :meth:`_page`).
    keyset_paging = True

    def __init__(self) -> None:
        self._users: dict[str, Resource] = {}
        self._passwords: dict[str, Secret] = {}
        self._groups: dict[str, Resource] = {}
        self._lock = threading.RLock()
        self._clock = 0

    # ----------------------------------------------------------------- helpers

    def _stamp(self, resource: Resource) -> None:
        """A change: a new ``lastModified`` and ``version`` (a new resource's ``created`` is
        its first ``lastModified``)."""
        self._clock += 1
        meta = resource.setdefault("meta", {})
        meta["lastModified"] = _now()
        meta.setdefault("created", meta["lastModified"])
        meta["version"] = f'W/"{self._clock}"'

    def _user_by_name(self, user_name: str) -> Resource | None:
        folded = user_name.casefold()
        return next((u for u in self._users.values() if u["userName"].casefold() == folded), None)

    def _check_manager(self, user: Resource) -> None:
        extension = user.get(ENTERPRISE_URN, {})
        manager = (extension.get("manager") or {}).get("value")
        if manager and manager not in self._users:
            raise InvalidValue(f"manager {manager} is not a known user id.")

    def _page(self, items: list[Resource], query: Query, key: str) -> Page:
        matches = [r for r in items if query.filter is None or evaluate(query.filter, r)]
        if query.keyset:
            return self._keyset_page(matches, query)
        matches.sort(key=lambda r: str(r[key]).casefold())
        start = query.start_index - 1
        window = matches[start : start + query.count]
        return Page(len(matches), [copy.deepcopy(r) for r in window])

    @staticmethod
    def _keyset_page(matches: list[Resource], query: Query) -> Page:
        """A cursor page: the matches ordered by id (which a resource keeps for life, so a
        rename never moves it in the walk), those after the position ``query.after`` (the id
        the previous page ended with, deleted since or not)."""
        matches.sort(key=lambda r: str(r["id"]))
        after = query.after
        following = [r for r in matches if after is None or str(r["id"]) > after]
        window = following[: query.count]
        more = len(following) > len(window) and bool(window)
        return Page(
            len(matches),
            [copy.deepcopy(r) for r in window],
            str(window[-1]["id"]) if more else None,
        )

    # ----------------------------------------------------------------- users

    def check_ready(self) -> None:
        """Always ready."""

    def get_user(self, user_id: str, attributes: frozenset[str] | None = None) -> Resource | None:
        """The user with this id, or ``None``."""
        with self._lock:
            return copy.deepcopy(self._users.get(user_id))

    def find_users(self, query: Query) -> Page:
        """Users matching ``query``, ordered by userName."""
        with self._lock:
            return self._page(list(self._users.values()), query, "userName")

    def create_user(self, user: Resource, password: Secret | None) -> Resource:
        """Store a new user; 409 if the userName is taken."""
        with self._lock:
            if self._user_by_name(user["userName"]):
                raise Uniqueness("This userName is taken.")
            self._check_manager(user)
            stored = copy.deepcopy(user)
            stored["id"] = str(uuid.uuid4())
            stored.setdefault("active", True)
            self._stamp(stored)
            self._users[stored["id"]] = stored
            if password is not None:
                self._passwords[stored["id"]] = password
            return copy.deepcopy(stored)

    def update_user(
        self, user_id: str, current: Resource, desired: Resource, password: Secret | None
    ) -> Resource:
        """Replace the stored user with ``desired``; 409 if the new userName is taken."""
        with self._lock:
            held = self._users.get(user_id)
            if held is None or held["meta"]["version"] != current["meta"]["version"]:
                raise VersionConflict(f"User {user_id} changed concurrently.")
            other = self._user_by_name(desired["userName"])
            if other is not None and other["id"] != user_id:
                raise Uniqueness("This userName is taken.")
            self._check_manager(desired)
            stored = copy.deepcopy(desired)
            stored["id"] = user_id
            stored["meta"] = dict(held["meta"])
            self._stamp(stored)
            self._users[user_id] = stored
            if password is not None:
                self._passwords[user_id] = password
            return copy.deepcopy(stored)

    def delete_user(self, user_id: str) -> bool:
        """Delete the user and remove it from every group."""
        with self._lock:
            if self._users.pop(user_id, None) is None:
                return False
            # Ids are never reused: a password left behind would only be kept, never matched.
            self._passwords.pop(user_id, None)  # pragma: no mutate
            for group in self._groups.values():
                before = len(group["members"])
                group["members"] = [m for m in group["members"] if m["value"] != user_id]
                if len(group["members"]) != before:
                    self._stamp(group)
            return True

    def check_password(self, user_id: str, password: str) -> bool:
        """Whether ``password`` is the user's and the user is active (a bind, in LDAP terms)."""
        with self._lock:
            user = self._users.get(user_id)
            secret = self._passwords.get(user_id)
            return bool(user and user.get("active", True) and secret == Secret(password))

    # ----------------------------------------------------------------- groups

    def _group(self, group_id: str) -> Resource | None:
        folded = group_id.casefold()
        return next((g for k, g in self._groups.items() if k.casefold() == folded), None)

    def _members(self, group: Resource, members: bool) -> Resource:
        result = copy.deepcopy(group)
        if not members:
            del result["members"]
            return result
        result["members"] = [
            {"value": m["value"], "display": self._users[m["value"]]["userName"], "type": "User"}
            for m in group["members"]
            if m["value"] in self._users
        ]
        return result

    def get_group(self, group_id: str, members: bool = True) -> Resource | None:
        """The group named ``group_id`` (case-insensitive, like a cn)."""
        with self._lock:
            group = self._group(group_id)
            return self._members(group, members) if group else None

    def find_groups(self, query: Query) -> Page:
        """Groups matching ``query``, ordered by displayName."""
        with self._lock:
            wanted = query.attributes is None or "members" in query.attributes
            groups = [self._members(g, wanted) for g in self._groups.values()]
            return self._page(groups, query, "displayName")

    def _known(self, ids: Iterable[str]) -> list[str]:
        ids = list(dict.fromkeys(ids))
        unknown = [i for i in ids if i not in self._users]
        if unknown:
            raise InvalidValue(f"No user has the member ids sent ({len(unknown)} unknown).")
        return ids

    def create_group(self, group: Resource) -> Resource:
        """Store a new group named by its displayName; 409 if the name is taken."""
        with self._lock:
            name = group["displayName"]
            if self._group(name) or self._shown_as(name):
                raise Uniqueness("A group with this displayName exists already.")
            members = self._known(m["value"] for m in group.get("members", []))
            stored: Resource = {
                "id": name,
                "displayName": name,
                "members": [{"value": i} for i in members],
            }
            self._stamp(stored)
            self._groups[name] = stored
            return self._members(stored, True)

    def _shown_as(self, name: str) -> Resource | None:
        folded = name.casefold()
        return next(
            (g for g in self._groups.values() if g["displayName"].casefold() == folded), None
        )

    def update_group(self, group_id: str, changes: Mapping[str, str | None]) -> bool:
        """Give the group a new displayName (its id and members stay; 409 if another group is
        displayed so); an externalId is not kept. ``False`` if there is no such group."""
        with self._lock:
            group = self._group(group_id)
            if group is None:
                return False
            display_name = changes.get("displayName")
            if display_name is None:
                return True
            other = self._shown_as(display_name)
            if other is not None and other is not group:
                raise Uniqueness("A group with this displayName exists already.")
            group["displayName"] = display_name
            self._stamp(group)
            return True

    def change_members(
        self, group_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> bool:
        """Add and remove members one value at a time."""
        with self._lock:
            group = self._group(group_id)
            if group is None:
                return False
            adding = self._known(add)
            removing = set(remove)
            current = [m["value"] for m in group["members"]]
            changed = [i for i in current if i not in removing]
            changed += [i for i in adding if i not in changed]
            if changed != current:
                group["members"] = [{"value": i} for i in changed]
                self._stamp(group)
            return True

    def close(self) -> None:
        """Nothing to release."""


def create_backend(settings: Mapping[str, Any] | None = None) -> MemoryBackend:
    """Entry point ``scim_core.backends: memory``; takes no settings."""
    return MemoryBackend()
