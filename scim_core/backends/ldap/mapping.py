"""SCIM resources <-> LDAP entries, as tables and pure functions.

Reading turns an entry's attributes into a canonical SCIM resource; writing turns a resource
into the LDAP attribute values it implies, so an update is the difference between the values
of the current and the desired resource, attribute by attribute.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ldap3 import MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE

from scim_core.backend import Resource
from scim_core.backends.ldap.mapped import MappedAttribute
from scim_core.backends.ldap.profiles import Change
from scim_core.backends.ldap.sitemap import default_mapping
from scim_core.backends.ldap.user_names import UserNaming
from scim_core.backends.ldap.values import (
    TEXT_TYPES,
    Attributes,
    all_values,
    element_of,
    entry_meta,
    extension_resource,
    extension_values,
    first,
    is_true,
    ldap_values,
    lower_keyed,
    reference_id,
    scim_value,
    value_at,
)
from scim_core.errors import InvalidValue
from scim_core.schemas.resources import ENTERPRISE_URN

__all__ = ["UserMapping"]


@dataclass(frozen=True)
class UserMapping(UserNaming):
    """How users are stored: the directory profile plus the site's choices; how a userName
    names an entry is :class:`UserNaming`'s (``profile``, ``user_name_attribute``,
    ``normalize``).

    :param external_id_attribute: where ``externalId`` lives, or ``None`` if unmapped.
    :param external_id_object_class: the auxiliary class that allows that attribute and
        ``no_primary_email_attribute``.
    :param no_primary_email_attribute: a BOOLEAN attribute that is ``TRUE`` when none of the
        user's emails is primary, or ``None`` if unmapped (the first ``mail`` is then always
        reported as primary).
    :param mapped: the attributes the mapping files map (the profile's, extended by the
        site's): plain strings, other types, elements of multi-valued attributes; ``None``:
        the profile's own mapping file alone.
    """

    external_id_attribute: str | None = "scimExternalId"
    external_id_object_class: str | None = "scimPerson"
    no_primary_email_attribute: str | None = "scimNoPrimaryEmail"
    mapped: tuple[MappedAttribute, ...] | None = None

    def __post_init__(self) -> None:
        if self.mapped is None:
            object.__setattr__(self, "mapped", default_mapping(self.profile.name).users)

    @property
    def _mapped(self) -> tuple[MappedAttribute, ...]:
        return self.mapped or ()

    @functools.cached_property
    def plain(self) -> tuple[MappedAttribute, ...]:
        """Every single-valued string stored (held as written, in its LDAP syntax)."""
        return tuple(m for m in self._mapped if m.type in TEXT_TYPES and m.element_type is None)

    @functools.cached_property
    def strings(self) -> tuple[tuple[tuple[str, ...], str], ...]:
        """(SCIM location, LDAP attribute) of every single-valued string stored."""
        return tuple((m.path, m.ldap) for m in self.plain)

    @functools.cached_property
    def typed(self) -> tuple[MappedAttribute, ...]:
        """The site's attributes of another type than string (converted both ways)."""
        return tuple(m for m in self._mapped if m.type not in TEXT_TYPES and m.points_to is None)

    @functools.cached_property
    def references(self) -> tuple[MappedAttribute, ...]:
        """The site's references to other users: an id in SCIM, a DN in LDAP."""
        return tuple(m for m in self._mapped if m.points_to is not None)

    def reference_ids(self, resource: Mapping[str, Any]) -> dict[str, str | None]:
        """LDAP attribute -> the id of the user each reference of ``resource`` names."""
        return {mapped.ldap: reference_id(resource, mapped) for mapped in self.references}

    @functools.cached_property
    def elements(self) -> tuple[MappedAttribute, ...]:
        """The site's elements of multi-valued attributes, one type and sub-attribute each."""
        return tuple(m for m in self._mapped if m.element_type is not None)

    # ----------------------------------------------------------------- reading

    @functools.cached_property
    def read_attributes(self) -> list[str]:
        """Every attribute a full user read asks for (and nothing else; not to be changed:
        it is worked out once)."""
        names = [
            self.profile.id_attribute,
            *self.user_name_attributes,
            *(ldap for _, ldap in self.strings),
            *(m.ldap for m in self.typed),
            *(m.ldap for m in self.references),
            *(m.ldap for m in self.elements),
            "mail",
            "manager",
            *self.profile.lock_attributes,
            "createTimestamp",
            "modifyTimestamp",
            self.profile.version_attribute,
            "objectClass",
        ]
        if self.external_id_attribute:
            names.append(self.external_id_attribute)
        if self.no_primary_email_attribute:
            names.append(self.no_primary_email_attribute)
        return names

    @functools.cached_property
    def list_attributes(self) -> list[str]:
        """What a user in a list page is read with: :attr:`read_attributes` but the object
        classes, which only a write needs."""
        return [name for name in self.read_attributes if name != "objectClass"]

    def object_classes(
        self, with_external_id: bool, values: Mapping[str, Sequence[Any]] | None = None
    ) -> list[str]:
        """The object classes of a new user entry.

        :param with_external_id: the entry gets an externalId.
        :param values: the entry's other attribute values (from :meth:`to_attributes`); the
            no-primary-email flag among them needs the auxiliary class too.
        """
        classes = list(self.profile.user_classes)
        auxiliary = (self.no_primary_email_attribute, self.user_name_attribute)
        with_more = any(a and values and values.get(a) for a in auxiliary)
        if (with_external_id or with_more) and self.external_id_object_class:
            classes.append(self.external_id_object_class)
        for mapped in self._mapped:
            needed = mapped.object_class
            if needed and values and values.get(mapped.ldap) and needed not in classes:
                classes.append(needed)
        return classes

    def to_resource(
        self,
        attributes: Attributes,
        manager_id: str | None,
        ids: Mapping[str, str] | None = None,
    ) -> Resource:
        """A canonical SCIM User from an entry's attributes.

        :param manager_id: the id of the manager it names, resolved.
        :param ids: DN (lower case) -> user id, for the users its references name; a DN
            that is not there (a user since deleted) is left out.
        """
        attributes = lower_keyed(attributes)
        resource: Resource = {
            "id": self.profile.format_id(first(attributes, self.profile.id_attribute)),
            "userName": self.user_name(attributes),
        }
        if self.external_id_attribute:
            external_id = first(attributes, self.external_id_attribute)
            if external_id is not None:
                resource["externalId"] = str(external_id)
        extension_resource((*self.plain, *self.typed, *self.references), attributes, resource, ids)
        for mapped in self.elements:
            raw = first(attributes, mapped.ldap_key)
            if raw is not None:
                element = element_of(resource.setdefault(mapped.name, []), mapped, create=True)
                if element is not None:
                    element[str(mapped.sub)] = scim_value(mapped, raw)
        mails = all_values(attributes, "mail")  # pragma: no mutate - a name in any case
        if mails:
            # mail has no "primary": the first value is the primary address, unless the flag
            # records that the client wrote none as primary (entries written by other tools
            # never carry it, so for them the first stays primary, as identity providers expect).
            flag = self.no_primary_email_attribute
            no_primary = bool(flag) and is_true(first(attributes, str(flag)))
            resource["emails"] = [
                {"value": str(mail), "type": "work", "primary": index == 0 and not no_primary}
                for index, mail in enumerate(mails)
            ]
        resource["active"] = self.profile.is_active(attributes)
        if manager_id:
            resource.setdefault(ENTERPRISE_URN, {})["manager"] = {"value": manager_id}
        resource["meta"] = entry_meta(attributes, self.profile.version_attribute)
        return resource

    # ----------------------------------------------------------------- writing

    def to_attributes(
        self,
        resource: Mapping[str, Any],
        manager_dn: str | None,
        references: Mapping[str, str | None] | None = None,
    ) -> dict[str, list[Any]]:
        """The LDAP values a resource implies (userName and active excluded: naming and profile).

        ``cn`` is required by inetOrgPerson: it defaults to "givenName familyName".

        :param manager_dn: the DN of the manager it names, resolved.
        :param references: LDAP attribute -> the DN each reference names (resolved from
            :meth:`reference_ids`), or ``None`` where it names nobody.

        :raises InvalidValue: for several emails where the directory holds one (AD's mail),
            an address outside ASCII where ``mail`` is an IA5String (RFC 4524), or a value
            outside its mapped LDAP syntax: refused before any write.
        """
        return self._attributes(resource, manager_dn, references, None)

    def _attributes(
        self,
        resource: Mapping[str, Any],
        manager_dn: str | None,
        references: Mapping[str, str | None] | None,
        keys: frozenset[str] | None,
    ) -> dict[str, list[Any]]:
        """:meth:`to_attributes`, only for the values that lie under the top-level ``keys``
        (all where ``None``); the manager and the references, given as DNs, always."""
        values: dict[str, list[Any]] = {}
        stored = self._stored if keys is None else self._stored_under(keys)
        values.update(extension_values(stored, resource))
        for mapped in self.references:
            dn = (references or {}).get(mapped.ldap)
            values[mapped.ldap] = [dn] if dn else []
        for mapped in self.elements:
            if keys is not None and mapped.name not in keys:
                continue
            listed = resource.get(mapped.name) or []
            element = element_of(listed, mapped, create=False)  # pragma: no mutate - None: False
            value = element.get(str(mapped.sub)) if element is not None else None
            values[mapped.ldap] = ldap_values(mapped, value)
        if "cn" in values and not values["cn"]:
            given = value_at(resource, ("name", "givenName")) or ""
            family = value_at(resource, ("name", "familyName")) or ""
            # pragma below: a User always has a userName (required); the default is never read.
            user_name = str(resource.get("userName", ""))  # pragma: no mutate
            values["cn"] = [f"{given} {family}".strip() or user_name]
        if keys is None or "emails" in keys:
            self._mail_values(resource, values)
        values["manager"] = [manager_dn] if manager_dn else []
        if self.external_id_attribute and (keys is None or "externalId" in keys):
            external_id = resource.get("externalId")
            values[self.external_id_attribute] = [str(external_id)] if external_id else []
        return values

    def _mail_values(self, resource: Mapping[str, Any], values: dict[str, list[Any]]) -> None:
        """Set ``mail`` (the primary address first) and the no-primary flag from the emails."""
        emails = list(resource.get("emails") or ())
        emails.sort(key=lambda e: not e.get("primary"))
        mails: list[str] = []
        for email in emails:
            mail = str(email.get("value", ""))
            if mail and mail.casefold() not in (m.casefold() for m in mails):
                mails.append(mail)
        if len(mails) > 1 and not self.profile.multiple_mail:
            raise InvalidValue("This directory holds one email address per user.")
        if self.profile.ascii_mail and not all(m.isascii() for m in mails):
            # Refused here, before any write: the directory would refuse it only in the
            # modify that follows a password change, when the password is in already.
            raise InvalidValue("This directory holds email addresses in ASCII only.")
        values["mail"] = mails
        if self.no_primary_email_attribute:
            # Stored only when it says something the order of mail cannot: addresses, none of
            # them primary. Absent otherwise, so untouched entries keep "the first is primary".
            primary = any(e.get("primary") is True and e.get("value") for e in emails)
            no_primary = bool(mails) and not primary
            values[self.no_primary_email_attribute] = ["TRUE"] if no_primary else []

    @functools.cached_property
    def _stored(self) -> tuple[MappedAttribute, ...]:
        """The mapped attributes held as values (strings and other types)."""
        return (*self.plain, *self.typed)

    def _stored_under(self, keys: frozenset[str]) -> tuple[MappedAttribute, ...]:
        """Those of :attr:`_stored` whose value lies under one of the top-level ``keys``; the
        ``cn`` also where the name or the userName it defaults to is among them."""
        defaults = "name" in keys or "userName" in keys
        return tuple(
            m for m in self._stored if m.path[0] in keys or (defaults and m.ldap.lower() == "cn")
        )

    def changes(
        self,
        current: Mapping[str, Any],
        desired: Mapping[str, Any],
        current_manager_dn: str | None,
        desired_manager_dn: str | None,
        current_attributes: Attributes,
        current_references: Mapping[str, str | None] | None = None,
        desired_references: Mapping[str, str | None] | None = None,
    ) -> dict[str, list[Change]]:
        """The modify list from ``current`` to ``desired``: only attributes whose values differ.

        The DNs given for the manager and the references need only differ where the ids do
        (an unchanged one may stand for itself on both sides).

        :raises InvalidValue: for a new userName the directory cannot hold (see :meth:`uid`).
        """
        # Only the attributes under a top-level key that differs can differ: the others give
        # the same values on both sides (what the request did not touch is as stored).
        keys = frozenset(
            k for k in current.keys() | desired.keys() if current.get(k) != desired.get(k)
        )
        before = self._attributes(current, current_manager_dn, current_references, keys)
        after = self._attributes(desired, desired_manager_dn, desired_references, keys)
        if desired.get("userName") != current.get("userName"):
            # The kept userName is modified; the uid, the RDN, is the backend's modrdn.
            renamed = self.naming_values(str(desired["userName"]))
            renamed.pop(self.profile.user_naming)
            after.update(renamed)
        changes: dict[str, list[Change]] = {}
        # A multi-valued attribute's values have no order: the same ones are no change.
        unordered = {m.ldap for m in self._mapped if m.multi_valued}
        for name, values in after.items():
            # pragma below: what only ``after`` holds is a new userName, never empty.
            previous = before.get(name, [])  # pragma: no mutate
            if values == previous or (name in unordered and set(values) == set(previous)):
                continue
            changes[name] = [(MODIFY_REPLACE, values)] if values else [(MODIFY_DELETE, [])]
        # Writing an attribute of the auxiliary class needs the class on the entry; the
        # backend drops this part of the modify when the class is there already.
        auxiliary = (
            self.external_id_attribute,
            self.no_primary_email_attribute,
            self.user_name_attribute,
        )
        needed = []
        if any(a and after.get(a) and after[a] != before.get(a) for a in auxiliary):
            needed.append(self.external_id_object_class)
        for mapped in self._mapped:
            if after.get(mapped.ldap) and after[mapped.ldap] != before.get(mapped.ldap):
                needed.append(mapped.object_class)
        classes = all_values(current_attributes, "objectClass")  # pragma: no mutate - any case
        present = {str(c).lower() for c in classes}
        missing = [c for c in dict.fromkeys(filter(None, needed)) if c.lower() not in present]
        if missing:
            changes["objectClass"] = [(MODIFY_ADD, missing)]
        if desired.get("active", True) != current.get("active", True):
            changes.update(
                self.profile.active_changes(current_attributes, bool(desired.get("active", True)))
            )
        return changes

    def manager_id(self, resource: Mapping[str, Any]) -> str | None:
        """The manager's user id a resource names, if any."""
        manager = value_at(resource, (ENTERPRISE_URN, "manager", "value"))
        return str(manager) if manager else None
