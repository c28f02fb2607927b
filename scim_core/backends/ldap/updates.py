"""Changing a user: the users a write names looked up, then one modify, a rename, a
password; and deleting one."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext

from ldap3 import Connection
from ldap3.core.exceptions import LDAPOperationResult
from ldap3.utils.dn import to_dn

from scim_core.backend import Resource
from scim_core.backends.ldap import operations
from scim_core.backends.ldap.directory import after_a_write, naming_error, one_change
from scim_core.backends.ldap.escape import dn_value
from scim_core.backends.ldap.results import ALREADY_EXISTS, CONSTRAINT_VIOLATION
from scim_core.backends.ldap.users import ReadUser, Users
from scim_core.backends.ldap.values import dn_key
from scim_core.errors import InvalidValue, NotFound, Uniqueness, VersionConflict
from scim_core.secret import Secret

__all__ = ["PREVIOUS", "UserUpdates"]

PREVIOUS = "\x00previous"  # stands for the current manager DN in a diff; never written


class UserUpdates(Users):
    """The Backend protocol's user updates and deletes."""

    def _manager_dn(self, resource: Resource) -> str | None:
        manager_id = self.users.manager_id(resource)
        if manager_id is None:
            return None
        return self._existing_dns([manager_id], "manager id")[0]

    def _references(
        self, current: Resource | None, desired: Resource
    ) -> tuple[dict[str, str | None], dict[str, str | None]]:
        """The DNs of the users ``desired``'s references name, for a diff from ``current``:
        a reference that names the same user on both sides stands for itself (no lookup),
        a new one is looked up (an unknown id is 400)."""
        before = self.users.reference_ids(current) if current is not None else {}
        after = self.users.reference_ids(desired)
        current_dns: dict[str, str | None] = {}
        desired_dns: dict[str, str | None] = {}
        for mapped in self.users.references:
            named, previous = after[mapped.ldap], before.get(mapped.ldap)
            current_dns[mapped.ldap] = PREVIOUS if previous else None
            if named == previous:
                desired_dns[mapped.ldap] = current_dns[mapped.ldap]
            else:
                found = self._existing_dns([named], mapped.name) if named else [None]
                desired_dns[mapped.ldap] = found[0]
        return current_dns, desired_dns

    def _named(
        self, desired: Resource, manager_dn: str | None, references: Mapping[str, str | None]
    ) -> dict[str, str]:
        """DN (lower case) -> id of the users a write sets as ``desired``'s manager and
        references, looked up by id before it (``PREVIOUS``: left as it was, not looked up)."""
        ids = {"manager": self.users.manager_id(desired), **self.users.reference_ids(desired)}
        dns = {"manager": manager_dn, **references}
        return {
            str(dn).lower(): user_id
            for holder, dn in dns.items()
            if dn and dn != PREVIOUS and (user_id := ids.get(holder))
        }

    def _kept(self, current: Resource, desired: Resource, *, guarded: bool) -> dict[str, str]:
        """Attribute -> the id of the user the entry names there, for the manager and references
        a write leaves as they were: known from its post-read entry only when the write asserted
        the version read (no change came in between); otherwise looked up after it."""
        if not (guarded and self._capabilities().assertion):
            return {}
        pairs = {"manager": (self.users.manager_id(current), self.users.manager_id(desired))}
        before = self.users.reference_ids(current)
        for holder, now in self.users.reference_ids(desired).items():
            pairs[holder] = (before.get(holder), now)
        return {holder: now for holder, (was, now) in pairs.items() if now and was == now}

    def _dn_of(self, current: Resource) -> str:
        """The DN of a user read before: derived from its userName where that tells the RDN
        for certain, else found by its id (entries other tools make are named as they like).

        The userName of an entry is either kept as written, with the uid its normalized form,
        or the uid itself: when normalizing changes nothing but case, both give one DN.
        """
        # Right under one base (the new users' base, then) a uid tells the DN.
        if (
            self._users_in_one_place
            and self.profile.user_naming == self.profile.user_name_attribute
        ):
            name = str(current["userName"])
            try:
                uid = self.users.normalize(name)
            except InvalidValue:
                uid = ""
            if uid and uid == name.casefold():
                return self.user_dn(uid)
        entry = self._user_entry(current["id"], ["1.1"])
        if entry is None:
            raise VersionConflict("The user is gone.")
        return str(entry["dn"])

    @one_change("update user")
    def update_user(
        self, user_id: str, current: Resource, desired: Resource, password: Secret | None
    ) -> Resource:
        """Write only what differs: one modify, a new userName (a modrdn where it is the RDN),
        a password.

        All or nothing for what the client sent: where the profile sets the
        password as an attribute (AD) it goes in the one modify with everything else; where
        it is an RFC 3062 operation it goes first, since the directory's policy may refuse
        it, then the modify (values the directory would refuse were refused before either,
        see :class:`~scim_core.backends.ldap.mapping.UserMapping`); a rename goes last, after
        a check that the new name is free. A failure after a first write (an outage, a name
        taken in between) is marked :attr:`~scim_core.errors.ScimError.partial`.
        """
        read = current if isinstance(current, ReadUser) else None
        dn = read.dn if read is not None else self._dn_of(current)
        current_manager_dn = desired_manager_dn = None
        if self.users.manager_id(current) != self.users.manager_id(desired):
            desired_manager_dn = self._manager_dn(desired)
            # Only "some other value" matters for the diff; the old DN itself is not needed.
            current_manager_dn = PREVIOUS if self.users.manager_id(current) else None
        # The entry read tells the object classes and the lock state; a resource of another
        # origin has its lock state read (and the classes it needs added where missing).
        lock_state = read.attributes if read is not None else self._lock_state(current, dn)
        before, after = self._references(current, desired)
        changes = self.users.changes(
            current, desired, current_manager_dn, desired_manager_dn, lock_state, before, after
        )
        # The attribute modify is conditional on the version read (RFC 4528 assertion): a
        # concurrent change makes it fail and the service plans again on a fresh read. It
        # goes before a rename because slapo-unique runs its own search under the
        # operation's controls and so refuses any modrdn that carries an assertion.
        new_rdn = None
        if desired["userName"] != current["userName"]:
            # A new name only in case, or one sharing the uid, is still this user's own.
            if self._name_taken(desired["userName"], dn):
                raise Uniqueness("The new userName is taken.")
            if self.profile.user_naming == self.profile.user_name_attribute:
                uid = self.users.uid(desired["userName"])
                new_rdn = f"{self.profile.user_naming}={dn_value(uid)}"
                if dn_key(new_rdn) == dn_key(to_dn(dn)[0]):
                    new_rdn = None
        modrdn = new_rdn is not None
        written = None
        # The modify after an RFC 3062 password asserts nothing (the password moved the version).
        guarded = password is None or self.profile.password_attribute is not None
        if password is not None and self.profile.password_attribute is not None:
            written = self._modify_user(
                dn, changes, self._version_guard(current), password=password
            )
        elif password is not None:
            written = self._write_with_password(dn, current, desired, changes, password)
        elif changes:
            written = self._modify_user(dn, changes, self._version_guard(current))
        if modrdn:
            wrote = bool(changes) or password is not None
            with after_a_write() if wrote else nullcontext():
                dn = self._rename(dn, str(new_rdn))
            written = None  # a new DN (and version): read it
        named = self._named(desired, desired_manager_dn, after)
        kept = {} if read is not None else self._kept(current, desired, guarded=guarded)
        return self._read_user_by_dn(dn, written, named, kept, read)

    def _rename(self, dn: str, new_rdn: str) -> str:
        """modrdn to ``new_rdn`` (a new uid, same parent); group memberships follow (value by
        value, idempotently)."""
        new_dn = ",".join([new_rdn, *to_dn(dn)[1:]])

        def modrdn(connection: Connection) -> None:
            operations.rename(connection, dn, new_rdn)

        try:
            self.connections.run(modrdn, retry=False)
        except LDAPOperationResult as error:
            if error.result in (ALREADY_EXISTS, CONSTRAINT_VIOLATION):
                raise Uniqueness("This userName is taken.") from None
            raise naming_error(error, "the user") from None
        with after_a_write():
            for group_dn in self._groups_with_member(dn):
                self._write_members(group_dn, add=[new_dn], remove=[dn])
        return new_dn

    @one_change("delete user")
    def delete_user(self, user_id: str) -> bool:
        """Remove the user from every group, then delete the entry."""
        entry = self._user_entry(user_id, ["1.1"])
        if entry is None:
            return False
        dn = entry["dn"]
        for group_dn in self._groups_with_member(dn):
            self._write_members(group_dn, add=[], remove=[dn])
        try:
            self._write("the user", lambda c: operations.delete(c, dn))
        except NotFound:
            return False
        return True
