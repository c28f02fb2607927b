"""SCIM resources <-> LDAP entries, as tables and pure functions.

Reading turns an entry's attributes into a canonical SCIM resource; writing turns a resource
into the LDAP attribute values it implies, so an update is the difference between the values
of the current and the desired resource, attribute by attribute.
"""

from __future__ import annotations

import base64
import functools
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ldap3 import MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE
from ldap3.utils.dn import safe_dn

from scim_core.backend import Resource
from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.profiles import Change, DirectoryProfile
from scim_core.backends.ldap.sitemap import MappedAttribute, default_mapping
from scim_core.backends.ldap.syntaxes import from_ldap, to_ldap
from scim_core.errors import InvalidValue
from scim_core.normalize import Normalizer, normalize_username
from scim_core.schemas.resources import ENTERPRISE_URN

__all__ = [
    "UserMapping",
    "all_values",
    "dn_key",
    "extension_resource",
    "extension_values",
    "first",
    "generalized_to_iso",
    "ldap_values",
    "reference_id",
    "scim_value",
]

Attributes = Mapping[str, Sequence[Any]]


class _Folded(dict[str, Any]):
    """An entry's attributes keyed in lower case: a lookup is one dictionary access, also for
    the many mapped attributes an entry does not have."""


def _lower_keyed(attributes: Attributes) -> _Folded:
    if isinstance(attributes, _Folded):
        return attributes
    return _Folded((name.lower(), values) for name, values in attributes.items())


def _values_of(attributes: Attributes, name: str) -> Any:
    if isinstance(attributes, _Folded):
        return attributes.get(name.lower())
    values = attributes.get(name)
    if values is None:
        lowered = name.lower()
        values = next((v for k, v in attributes.items() if k.lower() == lowered), None)
    return values


def first(attributes: Attributes, name: str) -> Any:
    """The first value of ``name`` in a case-insensitively keyed attribute map, or ``None``."""
    values = _values_of(attributes, name)
    if isinstance(values, (list, tuple)):
        return values[0] if values else None
    return values


def _is_true(value: Any) -> bool:
    """An RFC 4517 Boolean value, as ldap3 returns it (``True`` with schema info, else text)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value is True or (isinstance(value, str) and value.strip().upper() == "TRUE")


def all_values(attributes: Attributes, name: str) -> list[Any]:
    """Every value of ``name`` in a case-insensitively keyed attribute map (``[]`` if none)."""
    values = _values_of(attributes, name)
    if values is None:
        return []
    return list(values) if isinstance(values, (list, tuple)) else [values]


def dn_key(dn: str) -> str:
    """A comparable form of a DN (case and spacing folded, RFC 4514 escapes kept)."""
    try:
        return str(safe_dn(dn)).lower()
    except Exception:
        return dn.lower()


def generalized_to_iso(value: Any) -> str | None:
    """``20261121214500Z`` (RFC 4517 GeneralizedTime) -> ``2026-11-21T21:45:00Z``."""
    if value is None:
        return None
    if hasattr(value, "strftime"):
        return str(value.strftime("%Y-%m-%dT%H:%M:%SZ"))
    text = str(value)
    if len(text) < 14:
        return None
    return f"{text[0:4]}-{text[4:6]}-{text[6:8]}T{text[8:10]}:{text[10:12]}:{text[12:14]}Z"


def _folded(text: str) -> str:
    """``text`` as the uid rule compares it before anything but case changes."""
    return unicodedata.normalize("NFKC", text.strip()).casefold()


def _boolean_text(value: Any) -> str:
    return "TRUE" if value is True else "FALSE"


def _iso_to_generalized(value: Any) -> str:
    """``2026-11-21T21:45:00Z`` (or with an offset) -> ``20261121214500Z`` (RFC 4517)."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InvalidValue("A dateTime attribute needs an xsd:dateTime value.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y%m%d%H%M%SZ")


def _base64_octets(value: Any) -> bytes:
    """Base64 text (checked when the request was read) -> the octets LDAP holds."""
    return base64.b64decode(str(value), validate=True)


def _base64_text(raw: Any) -> str:
    octets = raw if isinstance(raw, bytes) else str(raw).encode("utf-8")
    return base64.b64encode(octets).decode("ascii")


def _integer_of(raw: Any) -> int | None:
    try:
        return int(str(raw))
    except ValueError:
        return None  # not ours to interpret: left out of the resource


#: SCIM types whose values an LDAP string holds as they are (a reference is a URI).
_TEXT_TYPES = frozenset({"string", "reference"})

#: A mapped attribute's value in its LDAP form (RFC 4517 syntaxes), and back.
_TO_LDAP: Mapping[str, Callable[[Any], str | bytes]] = {
    "boolean": _boolean_text,
    "integer": str,
    "dateTime": _iso_to_generalized,
    "binary": _base64_octets,
}
_FROM_LDAP: Mapping[str, Callable[[Any], Any]] = {
    "boolean": _is_true,
    "integer": _integer_of,
    "dateTime": generalized_to_iso,
    "binary": _base64_text,
}


def _element_of(
    elements: list[dict[str, Any]], mapped: MappedAttribute, *, create: bool
) -> dict[str, Any] | None:
    """The element of ``mapped``'s type (case aside; the first one if a client sent several),
    made when ``create`` and there is none."""
    wanted = str(mapped.element_type).casefold()
    for element in elements:
        if isinstance(element, dict) and str(element.get("type", "")).casefold() == wanted:
            return element
    if not create:
        return None
    element = {"type": mapped.element_type}
    elements.append(element)
    return element


def ldap_values(mapped: MappedAttribute, value: Any) -> list[Any]:
    """The LDAP values of a mapped attribute's SCIM value: none for an unassigned one, a
    string in its LDAP syntax, another type converted (RFC 4517).

    :raises InvalidValue: a value the attribute's LDAP syntax cannot hold.
    """
    items = value if isinstance(value, list) and mapped.multi_valued else [value]
    found: list[Any] = []
    for item in items:
        if item is None or item == "":
            continue
        converted: str | bytes
        if mapped.type in _TEXT_TYPES:
            converted = to_ldap(mapped.syntax, mapped.filter_name, str(item))
        else:
            converted = _TO_LDAP[mapped.type](item)
        if converted not in found:  # an LDAP attribute holds a value once
            found.append(converted)
    return found


def scim_value(mapped: MappedAttribute, raw: Any) -> Any:
    """A mapped attribute's SCIM value from one LDAP value (``None``: not usable)."""
    if raw is None:
        return None
    if mapped.type in _TEXT_TYPES:
        return from_ldap(mapped.syntax, str(raw))
    return _FROM_LDAP[mapped.type](raw)


def reference_id(resource: Mapping[str, Any], mapped: MappedAttribute) -> str | None:
    """The user id a resource's reference ``mapped`` names (``{"value": id}``), if any."""
    value = _get(resource, mapped.path)
    named = value.get("value") if isinstance(value, Mapping) else value
    return str(named) if named else None


def extension_values(
    mapped: Sequence[MappedAttribute], resource: Mapping[str, Any]
) -> dict[str, list[Any]]:
    """LDAP attribute -> values, for the attributes of a site's extensions ``resource`` has."""
    return {m.ldap: ldap_values(m, _get(resource, m.path)) for m in mapped}


def extension_resource(
    mapped: Sequence[MappedAttribute],
    attributes: Attributes,
    resource: dict[str, Any],
    ids: Mapping[str, str] | None = None,
) -> None:
    """Set in ``resource`` the value of each attribute of ``mapped`` the entry holds.

    :param ids: DN (lower case) -> user id, for the users its references name; a DN that
        names nobody (a user since deleted) is left out.
    """
    for attribute in mapped:
        if attribute.points_to is not None:
            dn = first(attributes, attribute.ldap)
            named = (ids or {}).get(str(dn).lower()) if dn is not None else None
            if named is not None:
                _set(resource, attribute.path, {"value": named})
            continue
        if attribute.multi_valued:
            values = [scim_value(attribute, v) for v in all_values(attributes, attribute.ldap)]
            values = [v for v in values if v is not None]
            if values:
                _set(resource, attribute.path, values)
            continue
        value = scim_value(attribute, first(attributes, attribute.ldap))
        if value is not None:
            _set(resource, attribute.path, value)


def _get(resource: Mapping[str, Any], path: Sequence[str]) -> Any:
    current: Any = resource
    for key in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current


def _set(resource: dict[str, Any], path: Sequence[str], value: Any) -> None:
    current = resource
    for key in path[:-1]:
        current = current.setdefault(key, {})
    current[path[-1]] = value


@dataclass(frozen=True)
class UserMapping:
    """How users are stored: the directory profile plus the site's choices.

    :param profile: the directory flavour.
    :param users_base: the DN users live under, one level deep.
    :param external_id_attribute: where ``externalId`` lives, or ``None`` if unmapped.
    :param external_id_object_class: the auxiliary class that allows that attribute and
        ``no_primary_email_attribute``.
    :param no_primary_email_attribute: a BOOLEAN attribute that is ``TRUE`` when none of the
        user's emails is primary, or ``None`` if unmapped (the first ``mail`` is then always
        reported as primary).
    :param user_name_attribute: where the userName is kept as the client wrote it, or ``None``
        (the uid only: then only userNames the uid can give back, case aside, are allowed).
    :param normalize: userName -> uid, the RDN value of a new user.
    :param mapped: the attributes the mapping files map (the profile's, extended by the
        site's): plain strings, other types, elements of multi-valued attributes; ``None``:
        the profile's own mapping file alone.
    """

    profile: DirectoryProfile
    users_base: str
    external_id_attribute: str | None = "scimExternalId"
    external_id_object_class: str | None = "scimPerson"
    no_primary_email_attribute: str | None = "scimNoPrimaryEmail"
    user_name_attribute: str | None = "scimUserName"
    normalize: Normalizer = normalize_username
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
        return tuple(m for m in self._mapped if m.type in _TEXT_TYPES and m.element_type is None)

    @functools.cached_property
    def strings(self) -> tuple[tuple[tuple[str, ...], str], ...]:
        """(SCIM location, LDAP attribute) of every single-valued string stored."""
        return tuple((m.path, m.ldap) for m in self.plain)

    @functools.cached_property
    def typed(self) -> tuple[MappedAttribute, ...]:
        """The site's attributes of another type than string (converted both ways)."""
        return tuple(m for m in self._mapped if m.type not in _TEXT_TYPES and m.points_to is None)

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

    # ----------------------------------------------------------------- userName

    @property
    def user_name_attributes(self) -> list[str]:
        """What a read needs to tell an entry's userName."""
        kept = self.user_name_attribute
        return [self.profile.user_name_attribute, *([kept] if kept else [])]

    def user_name(self, attributes: Attributes) -> str:
        """An entry's userName: as kept, else the lookup attribute's (entries of other tools)."""
        kept = first(attributes, self.user_name_attribute) if self.user_name_attribute else None
        if kept is None:
            kept = first(attributes, self.profile.user_name_attribute)
        return str(kept)

    def uid(self, user_name: str) -> str:
        """The normalized, directory-safe form of ``user_name``: a new user's RDN value.

        :raises InvalidValue: when nothing usable remains, or when no attribute keeps the
            userName and normalizing it changes more than its case (``Jane+X`` would come back
            as ``jane-x`` and share an entry with that name).
        """
        uid = self.normalize(user_name)
        if self.user_name_attribute is None and uid != _folded(user_name):
            raise InvalidValue(
                "userName may hold only letters a-z (any case), digits and . _ - @, beginning "
                "and ending with a letter, digit, _ or @."
            )
        return uid

    def naming_values(self, user_name: str) -> dict[str, list[str]]:
        """The attributes naming a new user: the uid in the RDN, the userName as sent."""
        uid = self.uid(user_name)
        values = {self.profile.user_naming: [uid]}
        if self.user_name_attribute:
            values[self.user_name_attribute] = [user_name]
        values.setdefault(self.profile.user_name_attribute, [uid])
        return values

    def lookup_value(self, user_name: str) -> str:
        """The value of the lookup attribute (:attr:`DirectoryProfile.user_name_attribute`)
        that a user named ``user_name`` has."""
        if self.profile.user_name_attribute == self.user_name_attribute:
            return user_name
        return self.uid(user_name)

    def user_name_filter(self, user_name: str) -> str:
        """A raw filter matching the one user whose userName equals ``user_name``, case aside.

        Where the userName is kept apart from the uid, the uid narrows the search (it is
        indexed) but the kept userName decides: two userNames that share a uid never reach
        each other's entry. An entry without a kept userName (made by another tool) answers
        to its uid as written.
        """
        lookup = self.profile.user_name_attribute
        kept = self.user_name_attribute
        as_written = f"({lookup}={filter_value(user_name)})"
        if kept is None or lookup == kept:
            return as_written
        tool_made = f"(&{as_written}(!({kept}=*)))"
        try:
            uid = self.normalize(user_name)
        except InvalidValue:
            return tool_made
        return f"(|(&({lookup}={filter_value(uid)})({kept}={filter_value(user_name)})){tool_made})"

    def is_plain(self, user_name: str) -> bool:
        """Whether normalizing ``user_name`` changes nothing but its case (then its uid is the
        only name an entry of another tool could answer to it by)."""
        try:
            return self.normalize(user_name) == _folded(user_name)
        except InvalidValue:
            return False

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
        attributes = _lower_keyed(attributes)
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
            raw = first(attributes, mapped.ldap)
            if raw is not None:
                element = _element_of(resource.setdefault(mapped.name, []), mapped, create=True)
                if element is not None:
                    element[str(mapped.sub)] = scim_value(mapped, raw)
        mails = all_values(attributes, "mail")
        if mails:
            # mail has no "primary": the first value is the primary address, unless the flag
            # records that the client wrote none as primary (entries written by other tools
            # never carry it, so for them the first stays primary, as identity providers expect).
            flag = self.no_primary_email_attribute
            no_primary = bool(flag) and _is_true(first(attributes, str(flag)))
            resource["emails"] = [
                {"value": str(mail), "type": "work", "primary": index == 0 and not no_primary}
                for index, mail in enumerate(mails)
            ]
        resource["active"] = self.profile.is_active(attributes)
        if manager_id:
            resource.setdefault(ENTERPRISE_URN, {})["manager"] = {"value": manager_id}
        meta: dict[str, Any] = {}
        created = generalized_to_iso(first(attributes, "createTimestamp"))
        modified = generalized_to_iso(first(attributes, "modifyTimestamp"))
        version = first(attributes, self.profile.version_attribute)
        if created:
            meta["created"] = created
        if modified:
            meta["lastModified"] = modified
        if version is not None:
            meta["version"] = f'W/"{version}"'
        resource["meta"] = meta
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
        values: dict[str, list[Any]] = {}
        values.update(extension_values((*self.plain, *self.typed), resource))
        for mapped in self.references:
            dn = (references or {}).get(mapped.ldap)
            values[mapped.ldap] = [dn] if dn else []
        for mapped in self.elements:
            element = _element_of(resource.get(mapped.name) or [], mapped, create=False)
            value = element.get(str(mapped.sub)) if element is not None else None
            values[mapped.ldap] = ldap_values(mapped, value)
        if "cn" in values and not values["cn"]:
            given = _get(resource, ("name", "givenName")) or ""
            family = _get(resource, ("name", "familyName")) or ""
            values["cn"] = [f"{given} {family}".strip() or str(resource.get("userName", ""))]
        emails = list(resource.get("emails") or ())
        emails.sort(key=lambda e: not e.get("primary", False))
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
        values["manager"] = [manager_dn] if manager_dn else []
        if self.external_id_attribute:
            external_id = resource.get("externalId")
            values[self.external_id_attribute] = [str(external_id)] if external_id else []
        return values

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
        before = self.to_attributes(current, current_manager_dn, current_references)
        after = self.to_attributes(desired, desired_manager_dn, desired_references)
        if desired.get("userName") != current.get("userName"):
            # The kept userName is modified; the uid, the RDN, is the backend's modrdn.
            renamed = self.naming_values(str(desired["userName"]))
            renamed.pop(self.profile.user_naming)
            after.update(renamed)
        changes: dict[str, list[Change]] = {}
        # A multi-valued attribute's values have no order: the same ones are no change.
        unordered = {m.ldap for m in self._mapped if m.multi_valued}
        for name, values in after.items():
            previous = before.get(name, [])
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
        present = {str(c).lower() for c in all_values(current_attributes, "objectClass")}
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
        manager = _get(resource, (ENTERPRISE_URN, "manager", "value"))
        return str(manager) if manager else None
