"""Directory profiles: what each directory flavour needs, as data (one record per flavour).

A profile says how users and groups are named and classed in that directory, what a new
entry must carry, which attribute is the stable id (and how it is encoded), which one
versions the entry, how an enforced disable and a password are written, and which optional
parts of the service's own schema extension the directory has by default. The backend reads
these records and holds no ``if flavour == ...``; what a particular *server* supports
(controls, extended operations) is read from its rootDSE instead (see
:mod:`scim_core.backends.ldap.capabilities`). Which LDAP attribute holds which plain SCIM
attribute (``name.givenName`` -> ``givenName``, ...) is each profile's mapping file,
``mappings/<profile>.toml`` (:func:`~scim_core.backends.ldap.sitemap.default_mapping`).

=================  ======================  ======================  =========================
                   OpenLDAP (``openldap``)  389-DS (``389ds``)      Active Directory (``ad``)
=================  ======================  ======================  =========================
new user           inetOrgPerson           inetOrgPerson           user
uid (RDN)          uid                     uid                     CN; sAMAccountName
userName as sent   scimUserName            scimUserName            userPrincipalName
id                 entryUUID               nsUniqueId              objectGUID (binary)
version (ETag)     entryCSN                entryUSN                uSNChanged
disable            ppolicy lock time       nsAccountLock           userAccountControl bit 2
password           RFC 3062                RFC 3062 (TLS)          unicodePwd replace (TLS)
new group          groupOfNames            groupOfNames            group, global security
empty group        placeholder member      allowed                 allowed
sort rule          caseIgnoreOrderingMatch  attribute's own         attribute's own
=================  ======================  ======================  =========================
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from ldap3 import MODIFY_REPLACE

from scim_core.backends.ldap.values import all_values

__all__ = [
    "ACTIVE_DIRECTORY",
    "DS389",
    "OPENLDAP",
    "PROFILES",
    "Change",
    "DirectoryProfile",
    "SchemaExtension",
]

Change = tuple[str, list[str]]
"""One ldap3 modify change: (operation, values)."""

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_NSUNIQUEID = re.compile(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{8}){3}$")
_AD_DISABLED: Final = 0x2
_AD_NORMAL_ACCOUNT: Final = 0x200
_AD_GLOBAL_SECURITY_GROUP: Final = "-2147483646"  # 0x80000002: global scope, security enabled


@dataclass(frozen=True)
class SchemaExtension:
    """The service's optional auxiliary schema (``scim_core/testing/scim.schema``) as a profile
    offers it by default; each part can be overridden or turned off by a setting.

    :param object_class: the auxiliary class allowing the attributes below.
    :param external_id: where ``externalId`` lives.
    :param no_primary_email: BOOLEAN flag: the client wrote emails none of which is primary.
    :param pending: stamp of a create waiting for its password.
    :param user_name: where the userName is kept as the client wrote it (the uid holds its
        normalized form); AD has a place of its own for it, ``userPrincipalName``.
    :param group_object_class: the auxiliary class a group needs for its display name.
    :param group_display_name: where a group's display name lives apart from its cn (its id),
        so a group can be renamed.
    """

    object_class: str | None = None
    external_id: str | None = None
    no_primary_email: str | None = None
    pending: str | None = None
    user_name: str | None = None
    group_object_class: str | None = None
    group_display_name: str | None = None


_SCIM_SCHEMA = SchemaExtension(
    object_class="scimPerson",
    external_id="scimExternalId",
    no_primary_email="scimNoPrimaryEmail",
    pending="scimPendingSince",
    user_name="scimUserName",
    group_object_class="scimGroup",
    group_display_name="displayName",
)


def _text_id(raw: object) -> str:
    if not isinstance(raw, bytes):
        return str(raw)
    return raw.decode(
        "ascii",  # pragma: no mutate (codec names ignore case: "ASCII" is the same codec)
        "replace",
    )


def _guid_text(raw: object) -> str:
    """objectGUID octets (a little-endian GUID) -> the usual text form."""
    if isinstance(raw, bytes) and len(raw) == 16:
        return str(uuid.UUID(bytes_le=raw))
    return str(raw)


def _guid_octets(text: str) -> bytes:
    return uuid.UUID(text).bytes_le


@dataclass(frozen=True)
class DirectoryProfile:
    """How one directory flavour stores what SCIM needs.

    :param name: the ``SCIM_LDAP_DIALECT`` value.
    :param user_classes: object classes of a new user entry.
    :param user_filter: the raw RFC 4515 filter telling user entries from others.
    :param user_naming: the RDN attribute of a new user (its value: the normalized userName,
        the uid).
    :param user_name_attribute: what users are looked up and ordered by: the uid where it is
        the RDN, else the userName itself (AD's ``userPrincipalName``).
    :param account_name: AD's ``sAMAccountName``: derived from userName on create (at most
        20 characters, unique in the domain); ``None`` where there is no such attribute.
    :param multiple_mail: whether ``mail`` holds several addresses (AD: one).
    :param group_classes: object classes of a new group.
    :param group_filter: the raw filter telling group entries from others.
    :param group_extra: attributes a new group needs beside cn and members, from its name.
    :param group_needs_member: the group class requires a member (a placeholder keeps an
        emptied group valid).
    :param member_of: the user attribute listing the groups it belongs to.
    :param id_attribute: the stable, never-reassigned id (RFC 7643 §3.1).
    :param id_pattern: what a well-formed id looks like (others are 404 without a query).
    :param id_text: the id's wire value -> the SCIM id.
    :param id_value: the SCIM id -> the value a filter compares (bytes for binary ids).
    :param binary: attributes whose values are octets, never text.
    :param version_attribute: changes on every write; the ETag is made from it.
    :param lock_attribute: the attribute carrying the disable marker.
    :param lock_value: the value meaning "disabled by an administrator" (None: a bit flag).
    :param password_attribute: ``None``: set passwords with the RFC 3062 operation; else the
        attribute a replace sets (AD's ``unicodePwd``, the quoted password in UTF-16LE).
    :param ordering_rule: the ordering rule named in sort requests (``None``: the
        attribute's own; 389-DS refuses ``caseIgnoreOrderingMatch``).
    :param dn_attribute: an attribute holding the entry's own DN, to resolve manager DNs to
        ids in one search (``None``: the RDN is the userName, read from the DN itself).
    :param schema: the parts of the service's schema extension the directory has by default.
    :param bind_guard: (attribute, value) that stops binds and survives a password change,
        held while a password is set where setting one lifts the disable marker (OpenLDAP's
        ppolicy deletes ``pwdAccountLockedTime``; its ``pwdEndTime`` in the past stays);
        ``None`` where the marker survives a password change (389-DS, AD). An entry holding
        it reads as disabled, and enabling it removes the guard with the marker.
    :param ascii_mail: ``mail`` holds ASCII only (RFC 4524 IA5String; AD's is Unicode): the
        service refuses other addresses itself, before it writes anything.
    """

    name: str
    user_classes: tuple[str, ...]
    user_filter: str
    user_naming: str
    user_name_attribute: str
    group_classes: tuple[str, ...]
    group_filter: str
    id_attribute: str
    id_pattern: re.Pattern[str]
    version_attribute: str
    lock_attribute: str
    lock_value: str | None
    account_name: str | None = None
    multiple_mail: bool = True
    group_extra: Callable[[str], Mapping[str, list[str]]] = field(default=lambda _name: {})
    group_needs_member: bool = False
    member_of: str = "memberOf"
    id_text: Callable[[object], str] = _text_id
    id_value: Callable[[str], str | bytes] = str
    binary: frozenset[str] = frozenset()
    password_attribute: str | None = None
    ordering_rule: str | None = None
    dn_attribute: str | None = None
    schema: SchemaExtension = SchemaExtension()
    bind_guard: tuple[str, str] | None = None
    ascii_mail: bool = False

    # ----------------------------------------------------------------- ids

    def is_valid_id(self, ident: str) -> bool:
        """Whether ``ident`` could be an id of this directory."""
        return bool(self.id_pattern.match(ident))

    def format_id(self, raw: object) -> str:
        """The SCIM id for the id attribute's value as read."""
        return self.id_text(raw)

    # ----------------------------------------------------------------- active

    @property
    def lock_attributes(self) -> tuple[str, ...]:
        """The attributes :meth:`is_active` reads: the marker, and the bind guard if any."""
        guard = (self.bind_guard[0],) if self.bind_guard is not None else ()
        return (self.lock_attribute, *guard)

    def is_active(self, attributes: Mapping[str, Sequence[object]]) -> bool:
        """Read ``active`` from an entry: only the administrator's marker disables.

        A temporary lockout (OpenLDAP ppolicy sets a real timestamp) leaves the user active.
        The bind guard disables too: it is there only while a disabled user's password
        changes, or after an outage cut such a change short, and then no bind succeeds.
        """
        values = [str(v) for v in all_values(attributes, self.lock_attribute)]
        if self.lock_value is None:
            return not (values and int(values[0]) & _AD_DISABLED)
        if self._guarded(attributes):
            return False
        return not any(v.upper() == self.lock_value.upper() for v in values)

    def _guarded(self, attributes: Mapping[str, Sequence[object]]) -> bool:
        """Whether the entry holds the bind guard (its value, not a site's own)."""
        if self.bind_guard is None:
            return False
        attribute, value = self.bind_guard
        return any(str(v).upper() == value.upper() for v in all_values(attributes, attribute))

    def active_changes(
        self, attributes: Mapping[str, Sequence[object]], active: bool, *, force: bool = False
    ) -> dict[str, list[Change]]:
        """The modify list taking the entry to ``active`` (empty when it is there already).

        :param force: write the state even when ``attributes`` show it: OpenLDAP's ppolicy
            removes ``pwdAccountLockedTime`` when a password is set, so after a password change
            the entry read before it no longer tells. Enabling replaces with no values, which
            RFC 4511 §4.6 makes a no-op on an absent attribute.
        """
        if self.is_active(attributes) == active and not force:
            return {}
        if self.lock_value is None:
            flags = int(str((all_values(attributes, self.lock_attribute) or ["512"])[0]))
            flags = flags & ~_AD_DISABLED if active else flags | _AD_DISABLED
            return {self.lock_attribute: [(MODIFY_REPLACE, [str(flags)])]}
        changes = {self.lock_attribute: [(MODIFY_REPLACE, [] if active else [self.lock_value])]}
        guard = self.bind_guard
        if active and guard is not None and self._guarded(attributes):
            changes[guard[0]] = [(MODIFY_REPLACE, [])]
        return changes

    def initial_attributes(self, active: bool) -> dict[str, list[str]]:
        """What a new entry carries for ``active`` (AD accounts need their flags set)."""
        if self.lock_value is None:
            flags = _AD_NORMAL_ACCOUNT | (0 if active else _AD_DISABLED)
            return {self.lock_attribute: [str(flags)]}
        return {} if active else {self.lock_attribute: [self.lock_value]}

    def active_filter(self, active: bool) -> str:
        """A raw RFC 4515 filter (trusted, not client text) matching active or disabled users."""
        if self.lock_value is None:
            disabled = f"({self.lock_attribute}:1.2.840.113556.1.4.803:={_AD_DISABLED})"
        else:
            disabled = f"({self.lock_attribute}={self.lock_value})"
        if self.bind_guard is not None:
            disabled = f"(|{disabled}({self.bind_guard[0]}={self.bind_guard[1]}))"
        return f"(!{disabled})" if active else disabled

    # ----------------------------------------------------------------- names

    def account_names(self, user_name: str) -> list[str]:
        """Candidates for AD's ``sAMAccountName`` of ``user_name`` (already normalized), best
        first: the part before ``@`` when it fits in 20 characters, then a shortened form made
        unique by a digest of the whole name (the same every time, so a retry picks the same).
        """
        local = user_name.partition("@")[0].strip(".") or user_name
        digest = uuid.uuid5(uuid.NAMESPACE_URL, user_name).hex[:4]
        shortened = f"{local[:15].rstrip('.')}-{digest}"
        return [local, shortened] if len(local) <= 20 else [shortened]

    def password_value(self, password: str) -> bytes:
        """What a replace of :attr:`password_attribute` carries: AD wants the password in
        double quotes, encoded UTF-16LE."""
        # Codec names ignore case: "UTF-16-LE" is the same codec.
        return f'"{password}"'.encode("utf-16-le")  # pragma: no mutate


OPENLDAP = DirectoryProfile(
    name="openldap",
    user_classes=("top", "person", "organizationalPerson", "inetOrgPerson"),
    user_filter="(objectClass=inetOrgPerson)",
    user_naming="uid",
    user_name_attribute="uid",
    group_classes=("top", "groupOfNames"),
    group_filter="(objectClass=groupOfNames)",
    group_needs_member=True,
    id_attribute="entryUUID",
    id_pattern=_UUID,
    version_attribute="entryCSN",
    lock_attribute="pwdAccountLockedTime",
    lock_value="000001010000Z",
    ordering_rule="caseIgnoreOrderingMatch",  # uid and cn have no ordering rule of their own
    schema=_SCIM_SCHEMA,
    bind_guard=("pwdEndTime", "19700101000000Z"),
    ascii_mail=True,
)
DS389 = replace(
    OPENLDAP,
    name="389ds",
    # Entries made by 389's own dsidm are nsPerson/nsAccount, not inetOrgPerson.
    user_filter="(|(objectClass=inetOrgPerson)(objectClass=nsPerson))",
    group_needs_member=False,  # member is optional in 389's groupOfNames
    id_attribute="nsUniqueId",
    id_pattern=_NSUNIQUEID,
    version_attribute="entryUSN",
    lock_attribute="nsAccountLock",
    lock_value="TRUE",
    ordering_rule=None,  # 389-DS refuses caseIgnoreOrderingMatch in a sort request
    dn_attribute="entrydn",
    bind_guard=None,  # a password change leaves nsAccountLock alone
)
ACTIVE_DIRECTORY = DirectoryProfile(
    name="ad",
    user_classes=("top", "person", "organizationalPerson", "user"),
    user_filter="(&(objectClass=user)(!(objectClass=computer)))",
    user_naming="cn",
    user_name_attribute="userPrincipalName",
    account_name="sAMAccountName",
    multiple_mail=False,
    group_classes=("top", "group"),
    group_filter="(objectClass=group)",
    group_extra=lambda name: {
        "sAMAccountName": [name],
        "groupType": [_AD_GLOBAL_SECURITY_GROUP],
    },
    id_attribute="objectGUID",
    id_pattern=_UUID,
    id_text=_guid_text,
    id_value=_guid_octets,
    binary=frozenset({"objectguid"}),
    version_attribute="uSNChanged",
    lock_attribute="userAccountControl",
    lock_value=None,
    password_attribute="unicodePwd",
    dn_attribute="distinguishedName",
    schema=SchemaExtension(user_name="userPrincipalName", group_display_name="displayName"),
)
PROFILES: Mapping[str, DirectoryProfile] = {p.name: p for p in (OPENLDAP, DS389, ACTIVE_DIRECTORY)}
