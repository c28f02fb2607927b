"""Creating a user: one add, or an add and a password with the entry pending in between."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ldap3 import BASE, MODIFY_REPLACE, SUBTREE, Connection
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backend import Resource
from scim_core.backends.ldap import operations
from scim_core.backends.ldap.controls import parse_post_read
from scim_core.backends.ldap.directory import after_a_write, naming_error, one_change
from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.profiles import Change
from scim_core.backends.ldap.results import ALREADY_EXISTS, CONSTRAINT_VIOLATION
from scim_core.backends.ldap.updates import PREVIOUS, UserUpdates
from scim_core.backends.ldap.values import first
from scim_core.backends.ldap.writes import password_refused
from scim_core.errors import DirectoryUnavailable, ScimError, Uniqueness, VersionConflict
from scim_core.secret import Secret

__all__ = ["PENDING_CREATE_GRACE", "UserCreates"]

#: Seconds a pending create (cut between its add and its password) is left to the request that
#: made it before a retry may take it over: far above the milliseconds between the two steps,
#: below the Retry-After the client was given.
PENDING_CREATE_GRACE = 2.0


def _pending_stamp() -> str:
    """Now, as the generalized time a pending entry carries (UTC, microseconds)."""
    return datetime.now(UTC).strftime("%Y%m%d%H%M%S.%fZ")


def _pending_expired(stamp: str) -> bool:
    try:
        since = datetime.strptime(stamp, "%Y%m%d%H%M%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return True  # not ours to interpret: a stale marker
    return (datetime.now(UTC) - since).total_seconds() >= PENDING_CREATE_GRACE


class UserCreates(UserUpdates):
    """The Backend protocol's user create."""

    @one_change("create user")
    def create_user(self, user: Resource, password: Secret | None) -> Resource:
        """Add the entry and set its password; a refused password leaves no entry behind.

        By default the password is set with RFC 3062 after the add. Between the
        two the entry is *pending*: born disabled and stamped in ``SCIM_LDAP_PENDING_ATTRIBUTE``
        until the password is in, so an outage between the steps leaves a user nobody can log
        in as, and the client's retry of the same POST (after :data:`PENDING_CREATE_GRACE`)
        takes the entry over and completes it. A refused password deletes the entry again.
        The password travels in the add itself, one atomic operation, where the profile sets
        it as an attribute (AD's ``unicodePwd``) and with ``SCIM_LDAP_PASSWORD_ON_ADD`` (for
        directories that hash and quality-check cleartext ``userPassword`` on add, e.g.
        OpenLDAP with ``ppolicy_hash_cleartext``).
        """
        name = user["userName"]
        naming = self.users.naming_values(name)
        uid = naming[self.profile.user_naming][0]
        dn = self.user_dn(uid)
        manager_dn = self._manager_dn(user)
        references = self._references(None, user)[1]
        values = {
            k: v for k, v in self.users.to_attributes(user, manager_dn, references).items() if v
        }
        values.update(naming)
        # The RDN is unique in its OU; a name found otherwise needs a search first.
        looked_up = (
            self.profile.user_naming != self.profile.user_name_attribute
            or not self._users_in_one_place  # a uid is unique in one OU only
        )
        if (looked_up or not self.users.is_plain(name)) and self._name_taken(name):
            raise Uniqueness("This userName is taken.")
        if self.profile.account_name:
            values[self.profile.account_name] = [self._free_account_name(uid)]
        external = bool(self.settings.external_id_attribute and user.get("externalId"))
        values["objectClass"] = self.users.object_classes(external, values)
        active = bool(user.get("active", True))
        in_add = password is not None and (
            self.settings.password_on_add or self.profile.password_attribute is not None
        )
        # A password set after the add: the entry is born disabled and enabled (if asked)
        # once the password is in, so no instant has an enabled user without it.
        password_after = password is not None and not in_add
        values.update(self.profile.initial_attributes(active and not password_after))
        bind_guard = self.profile.bind_guard if password_after else None
        if bind_guard is not None:
            # The password lifts the lock the entry is born with; this holds binds shut
            # until the create is finished, whatever the client asked for.
            values[bind_guard[0]] = [bind_guard[1]]
        pending = self.settings.pending_attribute if password_after else None
        stamp = _pending_stamp() if pending else ""
        if pending:
            values[pending] = [stamp]
            values["objectClass"] = self.users.object_classes(True)
        # The new entry comes back with the add (post-read) unless a password is set after it,
        # which changes the version again.
        read = [self._read_back] if self._read_back and (password is None or in_add) else None

        def add(connection: Connection) -> Mapping[str, Any] | None:
            if password is not None and in_add:
                attribute = self.profile.password_attribute
                with password.exposed() as secret:
                    value = self.profile.password_value(secret) if attribute else secret
                    with_password = {**values, attribute or "userPassword": [value]}
                    result = operations.add(connection, dn, with_password, read, self.binary)
            else:
                result = operations.add(connection, dn, values, read, self.binary)
            return parse_post_read(result.get("controls"))

        current: Resource | None = None
        written: Mapping[str, Any] | None = None
        try:
            written = self.connections.run(add, retry=False)
        except LDAPOperationResult as error:
            taken = error.result == ALREADY_EXISTS or (
                error.result == CONSTRAINT_VIOLATION and "unique" in str(error.message).lower()
            )
            if taken and pending:
                current = self._take_over_pending(dn, pending, stamp)
            if taken and current is None:
                raise Uniqueness("This userName is taken.") from None
            if in_add and error.result == CONSTRAINT_VIOLATION:
                raise password_refused(error) from None
            if not taken:
                raise naming_error(error, "the user") from None
        if password_after:
            assert password is not None
            try:
                self._set_password(dn, password)
            except ScimError as error:
                if pending and isinstance(error, DirectoryUnavailable):
                    # The pending entry stays, disabled; the client's retry completes it.
                    error.partial = True
                    raise
                guard = self._stamp_guard(pending, stamp) if pending else []
                with after_a_write():
                    self._write(
                        "the rollback",
                        lambda c: operations.delete(c, dn, guard or None),
                        retry=True,
                    )
                raise
            try:
                written = self._finish_create(dn, pending, stamp, current, user, manager_dn)
            except Uniqueness:
                raise  # another retry of this create completed it
            except ScimError as error:
                error.partial = True  # the entry and its password are in, disabled
                raise
        # The users the add names were looked up before it: no search resolves them again.
        return self._read_user_by_dn(dn, written, self._named(user, manager_dn, references))

    def _free_account_name(self, name: str) -> str:
        """AD's sAMAccountName for a new user: the first candidate nobody in the domain has."""
        attribute = str(self.profile.account_name)
        domain = self._capabilities().default_naming_context or self.settings.users_base
        candidates = self.profile.account_names(name)
        parts = "".join(f"({attribute}={filter_value(c)})" for c in candidates)
        entries, _ = self._search(domain, f"(|{parts})", [attribute], scope=SUBTREE)
        taken = {str(first(e["attributes"], attribute)).lower() for e in entries}
        for candidate in candidates:
            if candidate.lower() not in taken:
                return candidate
        raise Uniqueness("This userName is taken (its account name is in use).")

    def _take_over_pending(self, dn: str, pending: str, stamp: str) -> Resource | None:
        """The entry at ``dn`` if it is a create cut before its password, now stamped ours.

        ``None`` (the name is simply taken) when it is not pending, or pending for less than
        :data:`PENDING_CREATE_GRACE` (a create still in flight), or another retry won it.
        """
        entries, _ = self._search(
            dn, "(objectClass=*)", [*self.users.read_attributes, pending], scope=BASE
        )
        if not entries:
            return None
        previous = first(entries[0]["attributes"], pending)
        if previous is None or not _pending_expired(str(previous)):
            return None
        try:
            self._modify_user(
                dn,
                {pending: [(MODIFY_REPLACE, [stamp])]},
                self._stamp_guard(pending, str(previous)),
            )
        except VersionConflict:
            return None
        return self._to_users(entries)[0]

    def _finish_create(
        self,
        dn: str,
        pending: str | None,
        stamp: str,
        current: Resource | None,
        user: Resource,
        manager_dn: str | None,
    ) -> Mapping[str, Any] | None:
        """After the password: clear the pending stamp and set the lock as asked (the password
        change may have cleared it), conditional on the stamp still being ours; an entry taken
        over from a cut create also gets the attributes of the request that completes it."""
        active = bool(user.get("active", True))
        changes: dict[str, list[Change]] = {}
        if current is not None:
            previous_manager: str | None = manager_dn
            if self.users.manager_id(current) != self.users.manager_id(user):
                previous_manager = PREVIOUS if self.users.manager_id(current) else None
            same_state = {**user, "active": current.get("active", True)}
            before, after = self._references(current, same_state)
            changes.update(
                self.users.changes(
                    current, same_state, previous_manager, manager_dn, {}, before, after
                )
            )
            changes.pop("objectClass", None)  # the class came with the stamp
        changes.update(self._lock_after_password(dn, active))
        if self.profile.bind_guard is not None:
            changes[self.profile.bind_guard[0]] = [(MODIFY_REPLACE, [])]
        guard = []
        if pending:
            changes[pending] = [(MODIFY_REPLACE, [])]
            guard = self._stamp_guard(pending, stamp)
        try:
            return self._modify_user(dn, changes, guard)
        except VersionConflict:
            # Another retry of the same create took the entry over and answers for it.
            raise Uniqueness("This userName is taken.") from None
