"""Groups: read, listed, created and changed (name, externalId, extension, members)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ldap3 import BASE, MODIFY_ADD, MODIFY_REPLACE, Connection
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backend import Page, Query, Resource
from scim_core.backends.ldap import keyset, operations
from scim_core.backends.ldap.directory import META_ATTRIBUTES, naming_error, one_change
from scim_core.backends.ldap.escape import dn_value, filter_value
from scim_core.backends.ldap.filter import FilterMapping, filter_key, lookup_filter
from scim_core.backends.ldap.listing import Listing
from scim_core.backends.ldap.mapped import MappedAttribute
from scim_core.backends.ldap.members import Memberships
from scim_core.backends.ldap.profiles import Change
from scim_core.backends.ldap.results import ALREADY_EXISTS
from scim_core.backends.ldap.values import (
    all_values,
    dn_key,
    entry_meta,
    extension_resource,
    extension_values,
    first,
    ldap_values,
    reference_id,
)
from scim_core.errors import DirectoryUnavailable, Mutability, Uniqueness

__all__ = ["Groups"]


class Groups(Listing, Memberships):
    """The Backend protocol's group operations."""

    @functools.cached_property
    def group_filters(self) -> FilterMapping:
        """How a groups filter becomes LDAP: the cn, the display name, the mapped ones."""
        return FilterMapping(
            attributes={
                "id": "cn",
                "displayname": "cn",
                **{filter_key(m.path): m.ldap for m in self.group_mapped if m.filterable},
            },
            equalities={"displayname": self._group_name_filter},
        )

    def _group_name_filter(self, name: str) -> str:
        """A raw filter for the groups displayed as ``name`` (case aside): by the display name
        where a rename wrote one, else by the cn."""
        attribute = self.settings.group_display_name_attribute
        value = filter_value(name)
        if attribute is None:
            return f"(cn={value})"
        return f"(|({attribute}={value})(&(cn={value})(!({attribute}=*))))"

    def _group_name_taken(self, name: str, own_dn: str | None = None) -> bool:
        """Whether a group other than the one at ``own_dn`` is displayed as ``name``."""
        cn = f"(cn={filter_value(name)})"
        entries, _ = self._search_in(
            self._group_place,
            lookup_filter(self.profile.group_filter, f"(|{self._group_name_filter(name)}{cn})"),
            ["1.1"],
        )
        return any(own_dn is None or dn_key(e["dn"]) != dn_key(own_dn) for e in entries)

    def _to_group(
        self,
        entry: dict[str, Any],
        members: Sequence[dict[str, str]] | None,
        ids: Mapping[str, str] | None = None,
    ) -> Resource:
        attributes = entry["attributes"]
        name = str(first(attributes, "cn"))
        attribute = self.settings.group_display_name_attribute
        shown = first(attributes, attribute) if attribute else None
        group: Resource = {"id": name, "displayName": name if shown is None else str(shown)}
        external = first(attributes, self._group_external_id) if self._group_external_id else None
        if external is not None:
            group["externalId"] = str(external)
        extension_resource(self.group_mapped, attributes, group, ids)
        if members is not None:
            group["members"] = members
        group["meta"] = entry_meta(attributes, self.profile.version_attribute)
        return group

    def _group_attributes(self) -> list[str]:
        optional = [self.settings.group_display_name_attribute, self._group_external_id]
        return [
            "cn",
            *filter(None, optional),
            *(m.ldap for m in self.group_mapped),
            self.profile.version_attribute,
            *META_ATTRIBUTES,
        ]

    def get_group(self, group_id: str, members: bool = True) -> Resource | None:
        """The group whose cn is ``group_id``; members resolved through memberOf when asked."""
        if not group_id:
            return None
        dn = self.group_dn(group_id)
        if dn is None:
            return None
        entries, _ = self._search(
            dn, self.profile.group_filter, self._group_attributes(), scope=BASE
        )
        if not entries:
            return None
        entry = entries[0]
        member_list = self._member_list(entry["dn"]) if members else None
        return self._to_group(entry, member_list, self._group_named_ids([entry]))

    def find_groups(self, query: Query) -> Page:
        """A page of groups in cn order; one sorted VLV search plus one for members."""
        if query.keyset:
            return keyset.find_groups(self, query)
        total, entries = self._index_page(
            self._group_place,
            self.profile.group_filter,
            self.group_filters,
            query,
            self._group_attributes(),
        )
        with_members = query.attributes is None or "members" in query.attributes
        members = self._members_of([e["dn"] for e in entries]) if with_members else {}
        ids = self._group_named_ids(entries)
        return Page(
            total,
            [
                self._to_group(e, members.get(e["dn"].lower()) if with_members else None, ids)
                for e in entries
            ],
        )

    @one_change("create group")
    def create_group(self, group: Resource) -> Resource:
        """Add a group of the profile's class; where that class needs a member (groupOfNames
        on OpenLDAP), an empty group holds the placeholder member."""
        name = group["displayName"]
        member_ids = [m["value"] for m in group.get("members") or ()]
        member_dns = self._existing_dns(member_ids, "member ids") if member_ids else []
        dn = f"cn={dn_value(name)},{self.settings.new_groups_base}"
        members = member_dns or ([self.placeholder_dn] if self.placeholder_dn else [])
        if self._group_name_taken(name):
            # A group renamed to this name holds it, or one in another OU has this cn.
            raise Uniqueness("A group with this displayName exists already.")
        values = {
            "objectClass": list(self.profile.group_classes),
            "cn": [name],
            **self.profile.group_extra(name),
            **({"member": members} if members else {}),
        }
        external = group.get("externalId")
        if external and self._group_external_id:
            values[self._group_external_id] = [str(external)]
            values["objectClass"].append(str(self.settings.group_object_class))
        for attribute, found in extension_values(self._group_values, group).items():
            if found:
                values[attribute] = found
        for mapped in self._group_references:
            named = reference_id(group, mapped)
            if named:
                values[mapped.ldap] = self._existing_dns([named], mapped.name)
        values["objectClass"] += self._group_classes_for(values, values["objectClass"])

        def add(connection: Connection) -> None:
            operations.add(connection, dn, values)

        try:
            self.connections.run(add, retry=False)
        except LDAPOperationResult as error:
            if error.result == ALREADY_EXISTS:
                raise Uniqueness("A group with this displayName exists already.") from None
            raise naming_error(error, "the group") from None
        created = self.get_group(name)
        if created is None:
            raise DirectoryUnavailable("The directory did not return the new group; retry.")
        return created

    @one_change("update group")
    def update_group(self, group_id: str, changes: Mapping[str, Any]) -> bool:
        """Set the group's ``displayName`` (its id, the cn, and its members stay),
        ``externalId`` and the attributes of the site's Group extension (keyed by their
        URN-qualified name; ``None`` clears one), in one modify of their attributes
        (``SCIM_LDAP_GROUP_DISPLAY_NAME_ATTRIBUTE``, ``SCIM_LDAP_EXTERNAL_ID_ATTRIBUTE``, with
        the auxiliary class where the entry lacks it), after a check that no other group is
        displayed so. An externalId where the directory has no place for one is not kept.

        :returns: ``False`` if there is no such group.
        :raises Mutability: a new display name where it is the cn (the attribute is ``none``).
        :raises Uniqueness: when another group has that display name.
        """
        shown = self.settings.group_display_name_attribute
        if "displayName" in changes and shown is None:
            raise Mutability("displayName is the group's id (its cn) here and cannot change.")
        if not group_id:
            return False
        dn = self.group_dn(group_id)
        if dn is None:
            return False
        entries, _ = self._search(dn, self.profile.group_filter, ["objectClass"], scope=BASE)
        if not entries:
            return False
        modify: dict[str, list[Change]] = {}
        display_name = changes.get("displayName")
        if shown is not None and display_name is not None:
            if self._group_name_taken(display_name, dn):
                raise Uniqueness("A group with this displayName exists already.")
            modify[shown] = [(MODIFY_REPLACE, [display_name])]
        external = self._group_external_id
        if external is not None and "externalId" in changes:
            value = changes["externalId"]
            modify[external] = [(MODIFY_REPLACE, [value] if value else [])]
        for mapped in self.group_mapped:
            if mapped.filter_name not in changes:
                continue
            value = changes[mapped.filter_name]
            if mapped.points_to is not None:
                named = reference_id({mapped.schema: {mapped.name: value}}, mapped)
                values = self._existing_dns([named], mapped.name) if named else []
            else:
                values = ldap_values(mapped, value)
            modify[mapped.ldap] = [(MODIFY_REPLACE, values)]
        if not modify:
            return True
        present = all_values(entries[0]["attributes"], "objectClass")
        extension = {m.ldap for m in self.group_mapped}
        needed = [self.settings.group_object_class] if set(modify) - extension else []
        written = {k: [v for _, vs in ops for v in vs] for k, ops in modify.items()}
        missing = [
            c
            for c in (*filter(None, needed), *self._group_classes_for(written, present))
            if c.lower() not in {str(p).lower() for p in present}
        ]
        if missing:
            modify["objectClass"] = [(MODIFY_ADD, list(dict.fromkeys(missing)))]
        self._write("the group", lambda c: operations.modify(c, dn, modify))
        return True

    @functools.cached_property
    def _group_values(self) -> tuple[MappedAttribute, ...]:
        """The Group extension's attributes held as values (converted, not looked up)."""
        return tuple(m for m in self.group_mapped if m.points_to is None)

    @functools.cached_property
    def _group_references(self) -> tuple[MappedAttribute, ...]:
        """The Group extension's references to users (an id in SCIM, a DN in LDAP)."""
        return tuple(m for m in self.group_mapped if m.points_to is not None)

    def _group_named_ids(self, entries: Sequence[dict[str, Any]]) -> dict[str, str]:
        """DN (lower case) -> user id for the users the groups' references name."""
        return self._named_user_ids(entries, [m.ldap for m in self._group_references])

    def _group_classes_for(
        self, values: Mapping[str, Sequence[Any]], present: Sequence[Any]
    ) -> list[str]:
        """The auxiliary classes the mapped attributes given a value need, not yet present."""
        have = {str(c).lower() for c in present}
        return [
            str(m.object_class)
            for m in self.group_mapped
            if m.object_class and values.get(m.ldap) and m.object_class.lower() not in have
        ]

    @property
    def _group_external_id(self) -> str | None:
        """Where a group's externalId lives: the users' attribute, on a group's auxiliary
        class (``None`` where groups have none, e.g. AD by default)."""
        if self.settings.group_object_class is None:
            return None
        return self.settings.external_id_attribute

    @one_change("change the members of group")
    def change_members(
        self, group_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> bool:
        """Value-by-value membership writes; unknown ids to add are 400 and change nothing."""
        adding = list(dict.fromkeys(add))
        removing = [i for i in dict.fromkeys(remove) if i not in adding]
        if not group_id:
            return False
        add_dns = self._existing_dns(adding, "member ids") if adding else []
        remove_dns = list(self._dns_for_ids(removing).values()) if removing else []
        group_dn = self.group_dn(group_id)
        return group_dn is not None and self._write_members(group_dn, add_dns, remove_dns)
