"""Writes to a user entry: one guarded modify, and passwords with the lock kept as asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ldap3 import BASE, MODIFY_ADD, MODIFY_REPLACE, Connection
from ldap3.core.exceptions import LDAPOperationResult, LDAPSASLPrepError

from scim_core.backend import Resource
from scim_core.backends.ldap import operations
from scim_core.backends.ldap.controls import parse_post_read
from scim_core.backends.ldap.directory import Directory, after_a_write, log
from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.operations import Search
from scim_core.backends.ldap.profiles import Change
from scim_core.backends.ldap.results import (
    ASSERTION_FAILED,
    CONSTRAINT_VIOLATION,
    VALUE_EXISTS,
    scim_error,
)
from scim_core.backends.ldap.values import all_values
from scim_core.errors import DirectoryUnavailable, InvalidValue, ScimError, VersionConflict
from scim_core.secret import Secret

__all__ = ["UserWrites", "password_refused"]


def password_refused(error: LDAPOperationResult) -> ScimError:
    """A refused password: the client's when the site's policy rejects the value, else the
    directory's (TLS missing, no right to set it). The text never carries the password."""
    if error.result in (CONSTRAINT_VIOLATION, 21):
        log.info("directory refused the password with result %s", error.result)
        return InvalidValue("The directory's password policy refused the password.")
    return scim_error(error, "the password")


class UserWrites(Directory):
    """Guarded modifies and password changes of user entries."""

    def _set_password(self, dn: str, password: Secret) -> None:
        """Set the password the profile's way: RFC 3062, or a replace of the password
        attribute (AD's ``unicodePwd``: the server needs an encrypted connection)."""
        attribute = self.profile.password_attribute

        def operation(connection: Connection) -> None:
            with password.exposed() as value:
                if attribute is None:
                    operations.set_password(connection, dn, value)
                else:
                    octets = self.profile.password_value(value)
                    operations.modify(connection, dn, {attribute: [(MODIFY_REPLACE, [octets])]})

        try:
            self.connections.run(operation, retry=False)
        except LDAPOperationResult as error:
            # The directory's text may quote policy details but never the password; keep ours.
            raise password_refused(error) from None
        except LDAPSASLPrepError:
            # ldap3 prepares passwords with RFC 4013; its message would quote the character.
            raise InvalidValue("The password holds characters RFC 4013 does not allow.") from None

    def _write_with_password(
        self,
        dn: str,
        current: Resource,
        desired: Resource,
        changes: dict[str, list[Change]],
        password: Secret,
    ) -> Mapping[str, Any] | None:
        """The password first (RFC 3062): it is what a directory refuses (its policy), and a
        refused one must leave the entry as it was. Then the other changes, with the disable
        marker written as asked (a password change may have lifted it). Where it does, the
        profile's bind guard holds binds shut from before the password until the marker is
        back, so a disabled user cannot bind at any instant."""
        guard = self.profile.bind_guard
        disabled = not current.get("active", True) or not desired.get("active", True)
        guarded = guard is not None and disabled
        if guard is not None and guarded:
            self._modify_user(
                dn, {guard[0]: [(MODIFY_REPLACE, [guard[1]])]}, self._version_guard(current)
            )
        try:
            self._set_password(dn, password)
        except ScimError as error:
            if isinstance(error, DirectoryUnavailable):
                # The password may be in, and the lock gone with it: the guard stays on (the
                # user reads as disabled) until the client's retry completes the change.
                error.partial = True
                raise
            if guard is not None and guarded:
                with after_a_write():
                    self._modify_user(dn, {guard[0]: [(MODIFY_REPLACE, [])]}, [])
            raise
        final = {**changes, **self._lock_after_password(dn, bool(desired.get("active", True)))}
        if guard is not None and guarded:
            final[guard[0]] = [(MODIFY_REPLACE, [])]
        # The version moved with the password, so this modify asserts nothing; the version
        # was compared before (the guard's modify, or the read the plan was made from).
        with after_a_write():
            return self._modify_user(dn, final, [])

    def _version_guard(self, resource: Resource) -> list[tuple[str, bool, bytes | None]]:
        version = str(resource.get("meta", {}).get("version", ""))
        value = version.removeprefix("W/").strip('"')
        return self._guard(f"({self.profile.version_attribute}={filter_value(value)})")

    def _stamp_guard(self, pending: str, stamp: str) -> list[tuple[str, bool, bytes | None]]:
        """An assertion that the entry still carries ``stamp``: the create is ours."""
        return self._guard(f"({pending}={filter_value(stamp)})")

    def _modify_user(
        self,
        dn: str,
        changes: dict[str, list[Change]],
        guard: list[Any],
        *,
        password: Secret | None = None,
    ) -> Mapping[str, Any] | None:
        """One modify under ``guard`` (the version assertion); returns the entry's attributes
        after it when the directory answered the post-read control, else ``None``.

        :param password: replace the profile's password attribute in the same modify, so the
            directory takes or refuses the password with the rest. Such a modify is not sent
            again on a new connection: a password history would refuse a password the first
            attempt had set.
        """
        controls = [*guard, *filter(None, [self._read_back])]

        def send(
            connection: Connection, changes: Mapping[str, Sequence[tuple[str, Sequence[Any]]]]
        ) -> dict[str, Any]:
            try:
                return operations.modify(connection, dn, changes, controls, self.binary)
            except LDAPOperationResult as error:
                # An auxiliary class (externalId, email flag, a site's) may be there already:
                # add only the ones the entry lacks.
                if error.result != VALUE_EXISTS or "objectClass" not in changes:
                    raise
                entries, _ = operations.search(
                    connection, Search(dn, "(objectClass=*)", BASE, ["objectClass"])
                )
                present = {
                    str(c).lower()
                    for e in entries
                    for c in all_values(e["attributes"], "objectClass")
                }
                rest = {k: v for k, v in changes.items() if k != "objectClass"}
                wanted = [c for _, added in changes["objectClass"] for c in added]
                missing = [c for c in wanted if str(c).lower() not in present]
                if missing:
                    rest["objectClass"] = [(MODIFY_ADD, missing)]
                return operations.modify(connection, dn, rest, controls, self.binary)

        def modify(connection: Connection) -> Mapping[str, Any] | None:
            if password is None:
                return parse_post_read(send(connection, changes).get("controls"))
            attribute = str(self.profile.password_attribute)
            with password.exposed() as value:
                octets = self.profile.password_value(value)
                result = send(connection, {**changes, attribute: [(MODIFY_REPLACE, [octets])]})
            return parse_post_read(result.get("controls"))

        try:
            return self.connections.run(modify, retry=password is None)
        except LDAPOperationResult as error:
            if error.result == ASSERTION_FAILED:
                raise VersionConflict("The user changed concurrently.") from None
            raise scim_error(error, "the change") from None

    def _lock_state(self, current: Resource, dn: str) -> dict[str, list[str]]:
        """The lock attributes as the profile needs them to compute an active change: read
        where the marker is a bit field (AD), or where a disabled user may hold the bind
        guard (only that value of its attribute is removed on enable, never a site's own)."""
        active = current.get("active", True)
        if self.profile.lock_value is not None and (active or self.profile.bind_guard is None):
            return {} if active else {self.profile.lock_attribute: [self.profile.lock_value]}
        names = list(self.profile.lock_attributes)
        entries, _ = self._search(dn, "(objectClass=*)", names, scope=BASE)
        return dict(entries[0]["attributes"]) if entries else {}

    def _lock_after_password(self, dn: str, active: bool) -> dict[str, list[Change]]:
        """The lock state written explicitly: OpenLDAP's ppolicy removes the lock when a
        password is set, so the entry as read before no longer tells what is there (the
        bind guard, where one was set, is removed by the caller that set it)."""
        if self.profile.lock_value is not None:
            lock = {self.profile.lock_attribute: [self.profile.lock_value]}
        else:
            lock = self._lock_state({"active": False}, dn)
        return self.profile.active_changes(lock, active, force=True)
