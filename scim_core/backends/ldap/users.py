"""Users: read, listed and looked up (by id, by name, after a write)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from ldap3 import BASE

from scim_core.backend import Page, Query, Resource
from scim_core.backends.ldap import keyset
from scim_core.backends.ldap.directory import (
    META_ATTRIBUTES,
)
from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.filter import FilterMapping, filter_key
from scim_core.backends.ldap.listing import Listing
from scim_core.backends.ldap.members import Memberships
from scim_core.backends.ldap.values import dn_key, first, lower_keyed
from scim_core.backends.ldap.writes import UserWrites
from scim_core.errors import (
    DirectoryUnavailable,
)
from scim_core.schemas.resources import ENTERPRISE_URN

__all__ = ["ReadUser", "Users"]

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
    """The Backend protocol's user reads."""

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
            return self.users.list_attributes
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
        # Folded once: every lookup below is then one dictionary access, also for the many
        # attributes an entry does not have.
        entries = [{**e, "attributes": lower_keyed(e["attributes"])} for e in entries]
        ids = {**(known or {}), **self._named_user_ids(entries, known=known)}
        return [self._to_user(entry, ids) for entry in entries]

    def _to_user(self, entry: Mapping[str, Any], ids: Mapping[str, str]) -> Resource:
        attributes = lower_keyed(entry["attributes"])
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
        entries = self._users_named(
            f"(|{self._id_filter(user_id)}{parts})", self.users.read_attributes
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

    def _user_entry(self, user_id: str, attributes: Sequence[str]) -> dict[str, Any] | None:
        if not self.profile.is_valid_id(user_id):
            return None
        entries = self._users_named(self._id_filter(user_id), attributes, first_match=True)
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
        attributes = self._user_attributes(query.attributes)
        total, entries = self._index_page(
            self._user_place, self.profile.user_filter, self.user_filters, query, attributes
        )
        return Page(total, self._to_users(entries))

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

    def _name_taken(self, name: str, own_dn: str | None = None) -> bool:
        """Whether another user than the one at ``own_dn`` has ``name`` (case aside) or
        the lookup value a user of that name gets (its uid)."""
        attribute = self.profile.user_name_attribute
        value = self.users.lookup_value(name)
        entries, _ = self._search_in(
            self._user_place,
            f"(|({attribute}={filter_value(value)}){self.users.user_name_filter(name)})",
            ["1.1"],
        )
        return any(own_dn is None or dn_key(e["dn"]) != dn_key(own_dn) for e in entries)
