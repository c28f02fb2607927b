"""Group membership: read through memberOf, written value by value, never the whole list."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ldap3 import BASE, MODIFY_ADD, MODIFY_DELETE
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap import operations
from scim_core.backends.ldap.controls import values_return_filter
from scim_core.backends.ldap.directory import Directory
from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.filter import lookup_filter
from scim_core.backends.ldap.profiles import Change
from scim_core.backends.ldap.results import (
    ALREADY_EXISTS,
    NO_SUCH_ATTRIBUTE,
    NO_SUCH_OBJECT,
    OBJECT_CLASS_VIOLATION,
    VALUE_EXISTS,
    scim_error,
)
from scim_core.backends.ldap.values import dn_key, first
from scim_core.backends.ldap.wire import Keep
from scim_core.errors import DirectoryUnavailable, TooMany
from scim_core.members import MemberList

__all__ = ["Memberships"]

_MEMBER_WRITE_ATTEMPTS = 3


class Memberships(Directory):
    """Who is in which group, and single-value membership writes."""

    def _groups_with_member(self, member_dn: str) -> list[str]:
        entries, _ = self._search_in(
            self._group_place,
            lookup_filter(self.profile.group_filter, f"(member={filter_value(member_dn)})"),
            ["1.1"],
        )
        return [e["dn"] for e in entries]

    def _member_search(
        self, group_dns: Sequence[str], attributes: Sequence[str], keep: Keep | None = None
    ) -> list[Any]:
        """The users who are members of any of ``group_dns``, in one search through memberOf,
        each as ``keep`` makes it.

        :raises TooMany: for more than ``SCIM_LDAP_MAX_MEMBERS`` users in all (the server stops
            sending at one more).
        """
        member_of = self.profile.member_of
        parts = "".join(f"({member_of}={filter_value(dn)})" for dn in group_dns)
        limit = self.settings.max_members
        entries, _ = self._search_in(
            self._user_place,
            lookup_filter(self.profile.user_filter, f"(|{parts})"),
            attributes,
            size_limit=limit + 1,
            keep=keep,
        )
        if len(entries) > limit:
            # Refused before the worker holds them all: past the timeouts and its memory.
            raise TooMany(
                f"More than {limit} members to list; read the group with "
                "excludedAttributes=members (members change by PATCH, one by one)."
            )
        return entries

    def _member_list(self, group_dn: str) -> MemberList:
        """One group's user members, as (userName, id) pairs kept as each entry arrives.

        Every entry found is a member: memberOf (all of a user's groups) would only cost
        transfer and decoding, so it is not read. 100,000 members take about 20 MB.
        """
        id_attribute = self.profile.id_attribute
        format_id = self.profile.format_id
        # The userName as kept, else the lookup attribute's (as UserMapping.user_name reads it).
        # Entries come keyed by the names asked for (ldap3's dict ignores case): no search.
        kept, lookup = self.users.user_name_attribute, self.profile.user_name_attribute

        def keep(entry: dict[str, Any]) -> tuple[str, str]:
            values = entry["attributes"]
            name = _one(values.get(kept)) if kept else None
            if name is None:
                name = _one(values.get(lookup))
            return str(name), format_id(_one(values.get(id_attribute)))

        attributes = [id_attribute, *self.users.user_name_attributes]
        return MemberList(self._member_search([group_dn], attributes, keep))

    def _members_of(self, group_dns: Sequence[str]) -> dict[str, list[dict[str, str]]]:
        """group DN (lower case) -> its user members, in one search through memberOf.

        :raises TooMany: for more than ``SCIM_LDAP_MAX_MEMBERS`` users in all (the server stops
            sending at one more).
        """
        result: dict[str, list[dict[str, str]]] = {dn.lower(): [] for dn in group_dns}
        if not group_dns:
            return result
        member_of = self.profile.member_of
        several = len(group_dns) > 1
        # For one group every entry found is its member: memberOf (all of a user's groups)
        # would only cost transfer and decoding, so it is read only to sort out several.
        attributes = [
            self.profile.id_attribute,
            *self.users.user_name_attributes,
            *([member_of] if several else []),
        ]
        for entry in self._member_search(group_dns, attributes):
            values = entry["attributes"]
            member = {
                "value": self.profile.format_id(first(values, self.profile.id_attribute)),
                "display": self.users.user_name(values),
                "type": "User",
            }
            groups = values.get(member_of) or () if several else group_dns
            for group_dn in groups:
                if str(group_dn).lower() in result:
                    result[str(group_dn).lower()].append(member)
        for members in result.values():
            members.sort(key=lambda m: m["display"])
        return result

    def _present_members(self, group_dn: str, dns: Sequence[str]) -> set[str] | None:
        """Which of ``dns`` the group has as members (DN keys), ``None`` if there is no group.

        One base search with a ValuesReturnFilter: the answer holds at most ``len(dns)``
        values however large the group is. A server without the control gets one base search
        per DN, filtered on that member, answering only whether the group matches.
        """
        if self._capabilities().values_return_filter:
            entries, _ = self._search(
                group_dn,
                self.profile.group_filter,
                ["member"],
                scope=BASE,
                controls=[values_return_filter("member", list(dns))],
            )
            if not entries:
                return None
            return {dn_key(str(v)) for v in entries[0]["attributes"].get("member") or ()}
        group, _ = self._search(group_dn, self.profile.group_filter, ["1.1"], scope=BASE)
        if not group:
            return None
        present = set()
        for dn in dict.fromkeys(dns):
            condition = f"(&{self.profile.group_filter}(member={filter_value(dn)}))"
            if self._search(group_dn, condition, ["1.1"], scope=BASE)[0]:
                present.add(dn_key(dn))
        return present

    def _write_members(self, group_dn: str, add: Sequence[str], remove: Sequence[str]) -> bool:
        """Add and delete member values, each only if needed; ``False`` if there is no group.

        Never a read-modify-write of the member list. First the values are written as asked,
        unread (:meth:`_write_as_asked`): that applies whole in the common case. Otherwise
        the values in question are checked, then written one by one in a single modify. A
        concurrent writer changing the same values makes the modify fail (attribute or value
        exists / no such attribute), and the check runs again. groupOfNames must keep a
        member: the placeholder goes out when a real member comes in and comes in when the
        last real member goes.
        """
        written = self._write_as_asked(group_dn, add, remove)
        if written is not None:
            return written
        placeholder = self.placeholder_dn
        for _ in range(_MEMBER_WRITE_ATTEMPTS):
            asked = [*add, *remove, *([placeholder] if placeholder else [])]
            present = self._present_members(group_dn, asked)
            if present is None:
                return False
            to_add = [dn for dn in add if dn_key(dn) not in present]
            to_remove = [dn for dn in remove if dn_key(dn) in present]
            changes: list[Change] = []
            if to_add:
                changes.append((MODIFY_ADD, to_add))
                if placeholder and dn_key(placeholder) in present:
                    changes.append((MODIFY_DELETE, [placeholder]))
            if to_remove:
                changes.append((MODIFY_DELETE, to_remove))
            if not changes:
                return True
            try:
                self._modify_members(group_dn, changes)
                return True
            except LDAPOperationResult as error:
                if error.result == OBJECT_CLASS_VIOLATION and placeholder and not to_add:
                    # That was the last member: the placeholder keeps the group valid.
                    changes.append((MODIFY_ADD, [placeholder]))
                    try:
                        self._modify_members(group_dn, changes)
                        return True
                    except LDAPOperationResult as retry_error:
                        error = retry_error
                if error.result == NO_SUCH_OBJECT:
                    return False
                # Someone else changed the same values: check again. Samba answers an add of
                # a present member with entryAlreadyExists rather than attributeOrValueExists.
                if error.result not in (NO_SUCH_ATTRIBUTE, VALUE_EXISTS, ALREADY_EXISTS):
                    raise scim_error(error, "the membership change") from None
        raise DirectoryUnavailable("Membership is changing concurrently; retry.", retry_after=1)

    def _write_as_asked(
        self, group_dn: str, add: Sequence[str], remove: Sequence[str]
    ) -> bool | None:
        """One modify of exactly these values, without checking them first.

        It applies when every value to add is absent and every value to remove present:
        ``True``. ``False``: no entry at ``group_dn``. ``None``: not tried, or refused as a
        whole (a value already in or already out, the last member leaving, not a group), the
        group as it was; the checked write decides then. This saves the check's read, which on
        a group of 100,000 members costs slapd three times a plain read of the entry (each
        value is matched against the values-return filter); a value already in costs a refused
        modify more.

        Where groups keep a placeholder, an add must take it out if it is in, so it goes
        first through a read that answers only whether the entry is a group without the
        placeholder (a filter; slapd with sorted values tests it by a binary search). Not an
        assertion on the modify: OpenLDAP's memberof overlay passes the request's controls on
        to its own writes of the members' ``memberOf``, some of which were then lost when
        several such modifies ran at once.
        """
        changes: list[Change] = []
        if add:
            changes.append((MODIFY_ADD, list(add)))
        if remove:
            changes.append((MODIFY_DELETE, list(remove)))
        if not changes:
            return None
        placeholder = self.placeholder_dn
        if add and placeholder:
            without = f"(&{self.profile.group_filter}(!(member={filter_value(placeholder)})))"
            if not self._search(group_dn, without, ["1.1"], scope=BASE)[0]:
                return None
        try:
            self._modify_members(group_dn, changes)
        except LDAPOperationResult as error:
            return False if error.result == NO_SUCH_OBJECT else None
        return True

    def _modify_members(self, group_dn: str, changes: list[Change]) -> None:
        """One modify of the member attribute; LDAP refusals propagate to the caller."""
        self.connections.run(lambda c: operations.modify(c, group_dn, {"member": changes}))


def _one(values: Any) -> Any:
    """The first value of a value list as a search returns it, or ``None``."""
    if isinstance(values, (list, tuple)):
        return values[0] if values else None
    return values
