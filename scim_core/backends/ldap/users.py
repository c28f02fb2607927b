"""Users: read, looked up, updated (one modify, a rename, a password) and deleted."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any

from ldap3 import BASE, SUBTREE, Connection
from ldap3.core.exceptions import LDAPOperationResult
from ldap3.utils.dn import to_dn

from scim_core.backend import Page, Query, Resource
from scim_core.backends.ldap import keyset, operations
from scim_core.backends.ldap.directory import (
    META_ATTRIBUTES,
    after_a_write,
    naming_error,
    one_change,
)
from scim_core.backends.ldap.escape import dn_value, filter_value
from scim_core.backends.ldap.filter import FilterMapping, filter_key, to_ldap
from scim_core.backends.ldap.listing import Listing
from scim_core.backends.ldap.members import Memberships
from scim_core.backends.ldap.results import ALREADY_EXISTS, CONSTRAINT_VIOLATION
from scim_core.backends.ldap.values import dn_key, first
from scim_core.backends.ldap.writes import UserWrites
from scim_core.errors import (
    DirectoryUnavailable,
    InvalidValue,
    NotFound,
    Uniqueness,
    VersionConflict,
)
from scim_core.schemas.resources import ENTERPRISE_URN
from scim_core.secret import Secret

__all__ = ["PREVIOUS", "ReadUser", "Users"]

PREVIOUS = "\x00previous"  # stands for the current manager DN in a diff; never written

#: Users whose named DNs a backend keeps as hints for their next read (then it starts over).
_HINTS = 10_000


class ReadUser(dict[str, Any]):
    """A user as a full read gave it, still holding that read: the entry's DN and attributes,
    and DN (lower case) -> id of the users it names. An update of this very resource diffs
    against it and reads nothing more (the DN, the object classes and the lock state are
    there); the users it names need no search after the write while the DN is the same."""

    __slots__ = ("attributes", "dn", "ids")

    def __init__(
        self, resource: Resource, dn: str, attributes: Mapping[str, Any], ids: Mapping[str, str]
    ) -> None:
        super().__init__(resource)
        self.dn = dn
        self.attributes = attributes
        self.ids = ids

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        # A copy is a resource like any other: what it holds may change, the read cannot.
        return copy.deepcopy(dict(self), memo)


# SCIM top-level attribute -> the LDAP attributes it needs (for attributes= projections),
# beside those of the mapping's strings.
_PROJECTED = {
    "emails": ("mail",),
    ENTERPRISE_URN.lower(): ("manager",),
}


class Users(Listing, Memberships, UserWrites):
    """The Backend protocol's user reads, updates and deletes."""

    @functools.cached_property
    def user_filters(self) -> FilterMapping:
        """How a users filter becomes LDAP: the profile's attributes, the mapped ones."""
        attributes = {
            "id": self.profile.id_attribute,
            "username": self.profile.user_name_attribute,
            "email": "mail",
            "emails": "mail",
            "emails.value": "mail",
            **{filter_key(path): ldap for path, ldap in self.users.strings},
            **{filter_key(m.path): m.ldap for m in self.users.typed},
        }
        if self.settings.external_id_attribute:
            attributes["externalid"] = self.settings.external_id_attribute
        return FilterMapping(
            attributes=attributes,
            value_transforms={"id": self.profile.id_value},
            equalities={"username": self.users.user_name_filter},
            booleans={
                "active": (self.profile.active_filter(True), self.profile.active_filter(False))
            },
        )

    def _user_attributes(self, wanted: frozenset[str] | None) -> list[str]:
        if wanted is None:
            return self.users.read_attributes
        names = [
            self.profile.id_attribute,
            *self.users.user_name_attributes,
            self.profile.version_attribute,
            *META_ATTRIBUTES,
        ]
        for scim_name in wanted:
            names += _PROJECTED.get(scim_name, ())
            names += [
                m.ldap
                for m in self.users.mapped or ()
                if scim_name in (m.path[0].lower(), m.filter_name.lower())
            ]
            if scim_name == "active":
                names += self.profile.lock_attributes
            elif scim_name == "externalid" and self.settings.external_id_attribute:
                names.append(self.settings.external_id_attribute)
            elif scim_name == "emails" and self.settings.no_primary_email_attribute:
                # Which address is primary depends on the flag as much as on mail's order.
                names.append(self.settings.no_primary_email_attribute)
        return list(dict.fromkeys(names))

    def _to_users(
        self, entries: Sequence[dict[str, Any]], known: Mapping[str, str] | None = None
    ) -> list[Resource]:
        """The users of ``entries``, the users they name resolved in one search (DNs in
        ``known``, lower case -> id, need none)."""
        ids = {**(known or {}), **self._named_user_ids(entries, known=known)}
        return [self._to_user(entry, ids) for entry in entries]

    def _to_user(self, entry: Mapping[str, Any], ids: Mapping[str, str]) -> Resource:
        attributes = entry["attributes"]
        manager = first(attributes, "manager")
        manager_id = ids.get(str(manager).lower()) if manager else None
        user = self.users.to_resource(attributes, manager_id, ids)
        named = tuple(str(dn) for holder in self._holders if (dn := first(attributes, holder)))
        hints = self._named_hints
        if named:
            if len(hints) >= _HINTS:
                hints.clear()
            hints[user["id"]] = named
        else:
            hints.pop(user["id"], None)
        return user

    @functools.cached_property
    def _holders(self) -> tuple[str, ...]:
        """The attributes naming other users: the manager and the mapped references."""
        return ("manager", *(m.ldap for m in self.users.references))

    @functools.cached_property
    def _named_hints(self) -> dict[str, tuple[str, ...]]:
        """User id -> the DNs its entry named when last read here (a hint only: the next full
        read asks for those users in its own search, and takes one only where the entry
        still names its DN)."""
        return {}

    def _full_entry(self, user_id: str) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """The user's entry with every attribute a full read needs, and DN (lower case) -> id
        of the users it names that the same search brought: those it named when last read
        (under one users base: a search per base would stop at the first with any entry)."""
        hinted = self._named_hints.get(user_id, ())
        parts = self._dns_filter(hinted) if len(self.settings.users_bases) == 1 else ""
        if not parts or not self.profile.is_valid_id(user_id):
            return self._user_entry(user_id, self.users.read_attributes), {}
        entries, _ = self._search_users(
            f"(&{self.profile.user_filter}(|{self._id_filter(user_id)}{parts}))",
            self.users.read_attributes,
        )
        id_attribute = self.profile.id_attribute
        by_dn = {
            dn_key(e["dn"]): self.profile.format_id(first(e["attributes"], id_attribute))
            for e in entries
        }
        wanted = user_id.lower()
        entry = next((e for e in entries if by_dn[dn_key(e["dn"])].lower() == wanted), None)
        if entry is None:
            return None, {}
        known = {}
        for holder in self._holders:
            dn = first(entry["attributes"], holder)
            if dn and (named_id := by_dn.get(dn_key(str(dn)))) is not None:
                known[str(dn).lower()] = named_id
        return entry, known

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

    def _user_entry(self, user_id: str, attributes: Sequence[str]) -> dict[str, Any] | None:
        if not self.profile.is_valid_id(user_id):
            return None
        entries, _ = self._search_users(
            f"(&{self.profile.user_filter}{self._id_filter(user_id)})",
            attributes,
            first_match=True,
        )
        return entries[0] if entries else None

    def get_user(self, user_id: str, attributes: frozenset[str] | None = None) -> Resource | None:
        """The user with this id; a malformed id is ``None`` without a directory query. A full
        read (no ``attributes``) is a :class:`ReadUser`."""
        if attributes is not None:
            entry = self._user_entry(user_id, self._user_attributes(attributes))
            return self._to_users([entry])[0] if entry else None
        entry, known = self._full_entry(user_id)
        if entry is None:
            return None
        ids = {**known, **self._named_user_ids([entry], known=known)}
        return ReadUser(self._to_user(entry, ids), str(entry["dn"]), entry["attributes"], ids)

    def find_users(self, query: Query) -> Page:
        """A page of users in userName order; one sorted VLV search (plus one for managers)."""
        if query.keyset:
            return keyset.find_users(self, query)
        condition = to_ldap(query.filter, self.user_filters) if query.filter else ""
        total, entries = self._sorted_page(
            self._user_place,
            f"(&{self.profile.user_filter}{condition})",
            query,
            self._user_attributes(query.attributes),
        )
        return Page(total, self._to_users(entries))

    def _manager_dn(self, resource: Resource) -> str | None:
        manager_id = self.users.manager_id(resource)
        if manager_id is None:
            return None
        return self._existing_dns([manager_id], "manager id")[0]

    def _read_user_by_dn(
        self,
        dn: str,
        written: Mapping[str, Any] | None = None,
        named: Mapping[str, str] | None = None,
        kept: Mapping[str, str] | None = None,
        read: ReadUser | None = None,
    ) -> Resource:
        """The user at ``dn`` as the write left it: from the write's post-read control when
        it brought the entry (``written``), else read afresh.

        :param named: DN (lower case) -> id of the users the write looked up and set
            (:meth:`_named`): they need no search after it.
        :param kept: attribute -> the id of the user it names and the write left as read
            (:meth:`_kept`), known only from the post-read entry.
        :param read: the read the write was planned from: a user named by a DN it named is
            the one it named.
        """
        known = {**(read.ids if read is not None else {}), **(named or {})}
        if written is not None:
            for holder, user_id in (kept or {}).items():
                if value := first(written, holder):
                    known[str(value).lower()] = user_id
            return self._to_users([{"dn": dn, "attributes": written}], known)[0]
        entries, _ = self._search(dn, "(objectClass=*)", self.users.read_attributes, scope=BASE)
        if not entries:
            raise DirectoryUnavailable("The directory did not return the written user; retry.")
        return self._to_users(entries, known)[0]

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

    def _name_taken(self, name: str, own_dn: str | None = None) -> bool:
        """Whether another user than the one at ``own_dn`` has ``name`` (case aside) or
        the lookup value a user of that name gets (its uid)."""
        attribute = self.profile.user_name_attribute
        value = self.users.lookup_value(name)
        entries, _ = self._search_users(
            f"(|({attribute}={filter_value(value)}){self.users.user_name_filter(name)})",
            ["1.1"],
        )
        return any(own_dn is None or dn_key(e["dn"]) != dn_key(own_dn) for e in entries)

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
