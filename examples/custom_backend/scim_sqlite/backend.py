"""Users and groups in SQLite, through the :class:`scim_core.Backend` protocol.

Resources are stored as canonical SCIM JSON, next to the few columns lookups need: the
case-folded ``userName`` (unique, and the list order), ``active``, the case-folded e-mail
values, and group members. A list request first narrows the rows with a cheap SQL prefilter
derived from the filter's AST, then :func:`scim_core.filter.evaluate` gives the exact SCIM
answer; when the prefilter is exact already (no filter, or ``active eq``), counting and paging
happen in SQL. Only the standard library and :mod:`scim_core` are used.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from scim_core import (
    DirectoryUnavailable,
    Filter,
    InvalidValue,
    Page,
    Query,
    Resource,
    Secret,
    Uniqueness,
    VersionConflict,
)
from scim_core.filter import And, Compare, Or, evaluate

__all__ = ["SqliteBackend"]

ENTERPRISE_URN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:Group"
PBKDF2_ROUNDS = 200_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY,
    user_name TEXT NOT NULL,
    user_name_key TEXT NOT NULL UNIQUE,
    active INTEGER NOT NULL,
    resource TEXT NOT NULL,
    password_hash TEXT,
    created TEXT NOT NULL,
    last_modified TEXT NOT NULL,
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS user_emails (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    value_key TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS user_emails_value ON user_emails (value_key);
CREATE TABLE IF NOT EXISTS groups (
    id TEXT PRIMARY KEY,
    name_key TEXT NOT NULL UNIQUE,
    created TEXT NOT NULL,
    last_modified TEXT NOT NULL,
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS members (
    group_id TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (group_id, user_id)
);
"""

_USER_COLUMNS = "id, resource, created, last_modified, version"
_GROUP_COLUMNS = "id, created, last_modified, version"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _hash_password(password: Secret) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.reveal().encode(), salt, PBKDF2_ROUNDS)
    return f"pbkdf2_sha256${PBKDF2_ROUNDS}${salt.hex()}${digest.hex()}"


def _password_matches(stored: str, password: str) -> bool:
    _, rounds, salt, digest = stored.split("$")
    offered = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), int(rounds))
    return hmac.compare_digest(offered, bytes.fromhex(digest))


def _etag(version: int) -> str:
    return f'W/"{version}"'


def _meta(created: str, last_modified: str, version: int) -> dict[str, str]:
    return {"created": created, "lastModified": last_modified, "version": _etag(version)}


def _email_keys(user: Resource) -> list[str]:
    emails = user.get("emails") or []
    return sorted(
        {str(e["value"]).casefold() for e in emails if isinstance(e, dict) and e.get("value")}
    )


# ---------------------------------------------------------------------------- filter -> SQL


def _names(node: Compare, schema: str, *names: str) -> bool:
    in_schema = node.path.schema is None or node.path.schema.lower() == schema.lower()
    return in_schema and node.path.key() in names


def _user_prefilter(node: Filter) -> tuple[str, list[Any], bool] | None:
    """SQL narrowing the users ``node`` can match: (condition, parameters, exact), or ``None``.

    Exact means the condition alone is the SCIM answer. Text conditions are not exact
    (:func:`evaluate` also compares date-times as instants), so those rows are checked again.
    """
    if isinstance(node, Compare) and node.op == "eq":
        if _names(node, USER_URN, "username") and isinstance(node.value, str):
            return "user_name_key = ?", [node.value.casefold()], False
        if _names(node, USER_URN, "emails.value", "email") and isinstance(node.value, str):
            condition = "id IN (SELECT user_id FROM user_emails WHERE value_key = ?)"
            return condition, [node.value.casefold()], False
        if _names(node, USER_URN, "active") and isinstance(node.value, bool):
            return "active = ?", [int(node.value)], True
    if isinstance(node, And):
        parts = [p for p in (_user_prefilter(node.left), _user_prefilter(node.right)) if p]
        if len(parts) == 1:  # the other operand is left to evaluate()
            return parts[0][0], parts[0][1], False
        if len(parts) == 2:
            (left, left_params, left_exact), (right, right_params, right_exact) = parts
            return f"({left}) AND ({right})", left_params + right_params, left_exact and right_exact
    if isinstance(node, Or):
        left_part, right_part = _user_prefilter(node.left), _user_prefilter(node.right)
        if left_part is not None and right_part is not None:
            (left, left_params, left_exact), (right, right_params, right_exact) = (
                left_part,
                right_part,
            )
            return f"({left}) OR ({right})", left_params + right_params, left_exact and right_exact
    return None


def _group_prefilter(node: Filter) -> tuple[str, list[Any]] | None:
    if (
        isinstance(node, Compare)
        and node.op == "eq"
        and isinstance(node.value, str)
        and _names(node, GROUP_URN, "displayname")
    ):
        return "name_key = ?", [node.value.casefold()]
    return None


# ---------------------------------------------------------------------------- the backend


class SqliteBackend:
    """A :class:`scim_core.Backend` over one SQLite database file (or ``":memory:"``).

    One connection serves every thread, guarded by a lock; each operation is one transaction.

    :param path: the database file; created with its tables when missing.
    """

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.executescript(_SCHEMA)
        self._lock = threading.RLock()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._db:
            yield self._db

    # ------------------------------------------------------------------ helpers

    def _user_row(self, row: Sequence[Any]) -> Resource:
        user_id, resource, created, last_modified, version = row
        user: Resource = {"id": user_id, **json.loads(resource)}
        user["meta"] = _meta(created, last_modified, version)
        return user

    def _check_user_name(self, db: sqlite3.Connection, user_name: str, user_id: str) -> None:
        row = db.execute(
            "SELECT id FROM users WHERE user_name_key = ?", (user_name.casefold(),)
        ).fetchone()
        if row is not None and row[0] != user_id:
            raise Uniqueness("This userName is taken.")

    def _check_manager(self, db: sqlite3.Connection, user: Resource) -> None:
        manager = ((user.get(ENTERPRISE_URN) or {}).get("manager") or {}).get("value")
        if manager and not db.execute("SELECT 1 FROM users WHERE id = ?", (manager,)).fetchone():
            raise InvalidValue(f"manager {manager} is not a known user id.")

    def _write_user(self, db: sqlite3.Connection, user_id: str, user: Resource) -> bool:
        """Store ``user`` (``active`` defaults to true); ``False`` if nothing changed."""
        stored = {k: v for k, v in user.items() if k not in {"id", "meta", "password"}}
        stored.setdefault("active", True)
        before = db.execute("SELECT resource FROM users WHERE id = ?", (user_id,)).fetchone()
        if before is not None and json.loads(before[0]) == stored:
            return False
        db.execute(
            "UPDATE users SET user_name = ?, user_name_key = ?, active = ?, resource = ?"
            " WHERE id = ?",
            (
                stored["userName"],
                stored["userName"].casefold(),
                int(bool(stored["active"])),
                json.dumps(stored, ensure_ascii=False),
                user_id,
            ),
        )
        db.execute("DELETE FROM user_emails WHERE user_id = ?", (user_id,))
        db.executemany(
            "INSERT INTO user_emails (user_id, value_key) VALUES (?, ?)",
            [(user_id, key) for key in _email_keys(stored)],
        )
        return True

    def _touch_groups(self, db: sqlite3.Connection, group_ids: Iterable[str]) -> None:
        db.executemany(
            "UPDATE groups SET version = version + 1, last_modified = ? WHERE id = ?",
            [(_now(), group_id) for group_id in group_ids],
        )

    def _page(
        self,
        db: sqlite3.Connection,
        query: Query,
        source: tuple[str, str, str],
        prefilter: tuple[str, list[Any], bool] | None,
        load: Callable[[Sequence[Any]], Resource],
    ) -> Page:
        """One page of ``source`` = (table, columns, order) rows matching ``query``.

        Only constants of this module are formatted into SQL; values are always parameters.
        """
        table, columns, order = source
        condition, params, exact = prefilter or ("1 = 1", [], query.filter is None)
        select = f"SELECT {columns} FROM {table} WHERE {condition} ORDER BY {order}"
        offset = query.start_index - 1
        if exact:
            counted = db.execute(f"SELECT COUNT(*) FROM {table} WHERE {condition}", params)
            total = int(counted.fetchone()[0])
            if query.count == 0:
                return Page(total)
            rows = db.execute(select + " LIMIT ? OFFSET ?", [*params, query.count, offset])
            return Page(total, [load(row) for row in rows.fetchall()])
        assert query.filter is not None
        loaded = (load(row) for row in db.execute(select, params).fetchall())
        matches = [resource for resource in loaded if evaluate(query.filter, resource)]
        return Page(len(matches), matches[offset : offset + query.count] if query.count else [])

    # ------------------------------------------------------------------ health

    def check_ready(self) -> None:
        """Return if the database answers; raise ``DirectoryUnavailable`` otherwise."""
        try:
            with self._lock:
                self._db.execute("SELECT 1").fetchone()
        except sqlite3.Error as error:
            raise DirectoryUnavailable(f"The user store is unavailable ({error}).") from None

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ users

    def get_user(self, user_id: str, attributes: frozenset[str] | None = None) -> Resource | None:
        """The user with this id, or ``None`` (every attribute is returned)."""
        with self._transaction() as db:
            row = db.execute(
                f"SELECT {_USER_COLUMNS} FROM users WHERE id = ?",
                (user_id,),
            ).fetchone()
            return self._user_row(row) if row else None

    def find_users(self, query: Query) -> Page:
        """Users matching ``query``, ordered by userName (case-folded)."""
        prefilter = _user_prefilter(query.filter) if query.filter is not None else None
        with self._transaction() as db:
            return self._page(
                db, query, ("users", _USER_COLUMNS, "user_name_key"), prefilter, self._user_row
            )

    def create_user(self, user: Resource, password: Secret | None) -> Resource:
        """Store a new user; ``Uniqueness`` if the userName is taken."""
        user_id = str(uuid.uuid4())
        now = _now()
        with self._transaction() as db:
            self._check_user_name(db, user["userName"], user_id)
            self._check_manager(db, user)
            db.execute(
                "INSERT INTO users (id, user_name, user_name_key, active, resource,"
                " password_hash, created, last_modified, version)"
                " VALUES (?, '', ?, 1, '{}', ?, ?, ?, 1)",
                (user_id, user_id, _hash_password(password) if password else None, now, now),
            )
            self._write_user(db, user_id, user)
        created = self.get_user(user_id)
        assert created is not None
        return created

    def update_user(
        self, user_id: str, current: Resource, desired: Resource, password: Secret | None
    ) -> Resource:
        """Replace the stored user with ``desired`` (and set a new password, if given).

        The write happens only if the stored version is still ``current``'s, in the same
        transaction; otherwise ``VersionConflict``. A change to nothing writes nothing: the
        version (ETag) stays.
        """
        with self._transaction() as db:
            row = db.execute("SELECT version FROM users WHERE id = ?", (user_id,)).fetchone()
            if row is None or _etag(row[0]) != current.get("meta", {}).get("version"):
                raise VersionConflict(f"User {user_id} changed concurrently.")
            self._check_user_name(db, desired["userName"], user_id)
            self._check_manager(db, desired)
            if self._write_user(db, user_id, desired) or password is not None:
                db.execute(
                    "UPDATE users SET version = version + 1, last_modified = ? WHERE id = ?",
                    (_now(), user_id),
                )
            if password is not None:
                db.execute(
                    "UPDATE users SET password_hash = ? WHERE id = ?",
                    (_hash_password(password), user_id),
                )
        updated = self.get_user(user_id)
        assert updated is not None
        return updated

    def delete_user(self, user_id: str) -> bool:
        """Delete the user; its group memberships go with it (the groups' versions change)."""
        with self._transaction() as db:
            groups = [
                row[0]
                for row in db.execute("SELECT group_id FROM members WHERE user_id = ?", (user_id,))
            ]
            if not db.execute("DELETE FROM users WHERE id = ?", (user_id,)).rowcount:
                return False
            self._touch_groups(db, groups)
            return True

    def check_password(self, user_id: str, password: str) -> bool:
        """Whether ``password`` is the user's and the user is active."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT password_hash, active FROM users WHERE id = ?", (user_id,)
            ).fetchone()
        return bool(row and row[0] and row[1] and _password_matches(row[0], password))

    # ------------------------------------------------------------------ groups

    def _group_row(self, db: sqlite3.Connection, row: Sequence[Any], members: bool) -> Resource:
        group_id, created, last_modified, version = row
        group: Resource = {"id": group_id, "displayName": group_id}
        if members:
            group["members"] = [
                {"value": user_id, "display": user_name, "type": "User"}
                for user_id, user_name in db.execute(
                    "SELECT u.id, u.user_name FROM members m JOIN users u ON u.id = m.user_id"
                    " WHERE m.group_id = ? ORDER BY m.position",
                    (group_id,),
                )
            ]
        group["meta"] = _meta(created, last_modified, version)
        return group

    def _find_group(self, db: sqlite3.Connection, group_id: str) -> Sequence[Any] | None:
        row: Sequence[Any] | None = db.execute(
            f"SELECT {_GROUP_COLUMNS} FROM groups WHERE name_key = ?",
            (group_id.casefold(),),
        ).fetchone()
        return row

    def _known_users(self, db: sqlite3.Connection, ids: Iterable[str]) -> list[str]:
        wanted = list(dict.fromkeys(ids))
        unknown = [
            i for i in wanted if not db.execute("SELECT 1 FROM users WHERE id = ?", (i,)).fetchone()
        ]
        if unknown:
            raise InvalidValue(f"No user has the member ids sent ({len(unknown)} unknown).")
        return wanted

    def get_group(self, group_id: str, members: bool = True) -> Resource | None:
        """The group named ``group_id`` (case-insensitive), with members when asked."""
        with self._transaction() as db:
            row = self._find_group(db, group_id)
            return self._group_row(db, row, members) if row else None

    def find_groups(self, query: Query) -> Page:
        """Groups matching ``query``, ordered by displayName (case-folded)."""
        members = query.attributes is None or "members" in query.attributes
        found = _group_prefilter(query.filter) if query.filter is not None else None
        prefilter = (found[0], found[1], False) if found else None
        with self._transaction() as db:
            return self._page(
                db,
                query,
                ("groups", _GROUP_COLUMNS, "name_key"),
                prefilter,
                lambda row: self._group_row(db, row, members),
            )

    def create_group(self, group: Resource) -> Resource:
        """Store a new group named by its displayName; ``Uniqueness`` if the name is taken."""
        name = group["displayName"]
        now = _now()
        with self._transaction() as db:
            if self._find_group(db, name):
                raise Uniqueness("A group with this displayName exists already.")
            members = self._known_users(db, (m["value"] for m in group.get("members") or ()))
            db.execute(
                "INSERT INTO groups (id, name_key, created, last_modified, version)"
                " VALUES (?, ?, ?, ?, 1)",
                (name, name.casefold(), now, now),
            )
            db.executemany(
                "INSERT INTO members (group_id, user_id, position) VALUES (?, ?, ?)",
                [(name, user_id, position) for position, user_id in enumerate(members)],
            )
            row = self._find_group(db, name)
            assert row is not None
            return self._group_row(db, row, True)

    def change_members(
        self, group_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> bool:
        """Add and remove members value by value; ``False`` if there is no such group."""
        with self._transaction() as db:
            row = self._find_group(db, group_id)
            if row is None:
                return False
            stored_id = row[0]
            adding = self._known_users(db, add)
            removing = set(remove)
            current = [
                r[0]
                for r in db.execute(
                    "SELECT user_id FROM members WHERE group_id = ? ORDER BY position",
                    (stored_id,),
                )
            ]
            wanted = [i for i in current if i not in removing]
            wanted += [i for i in adding if i not in wanted]
            if wanted != current:
                db.execute("DELETE FROM members WHERE group_id = ?", (stored_id,))
                db.executemany(
                    "INSERT INTO members (group_id, user_id, position) VALUES (?, ?, ?)",
                    [(stored_id, user_id, n) for n, user_id in enumerate(wanted)],
                )
                self._touch_groups(db, [stored_id])
            return True
