"""Directory flavours as data: one frozen record per dialect (DESIGN §4, STYLE "tables").

A dialect says which attribute is the stable id, which carries the version, and how an
enforced disable is written, read and searched for.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ldap3 import MODIFY_REPLACE

__all__ = ["ACTIVE_DIRECTORY", "DIALECTS", "DS389", "OPENLDAP", "Change", "Dialect"]

Change = tuple[str, list[str]]
"""One ldap3 modify change: (operation, values)."""

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_NSUNIQUEID = re.compile(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{8}){3}$")
_AD_DISABLED: Final = 0x2


@dataclass(frozen=True)
class Dialect:
    """How one directory flavour stores what SCIM needs.

    :param name: the ``SCIM_LDAP_DIALECT`` value.
    :param id_attribute: the stable, never-reassigned id (RFC 7643 §3.1).
    :param id_pattern: what a well-formed id looks like (others are 404 without a query).
    :param version_attribute: changes on every write; the ETag is made from it.
    :param lock_attribute: the attribute carrying the disable marker.
    :param lock_value: the value meaning "disabled by an administrator" (None: a bit flag).
    :param member_of_attribute: the user attribute listing the groups it belongs to.
    """

    name: str
    id_attribute: str
    id_pattern: re.Pattern[str]
    version_attribute: str
    lock_attribute: str
    lock_value: str | None
    member_of_attribute: str = "memberOf"

    def is_valid_id(self, ident: str) -> bool:
        """Whether ``ident`` could be an id of this directory."""
        return bool(self.id_pattern.match(ident))

    def is_active(self, attributes: Mapping[str, Sequence[str]]) -> bool:
        """Read ``active`` from an entry: only the administrator's marker disables.

        A temporary lockout (OpenLDAP ppolicy sets a real timestamp) leaves the user active.
        """
        values = [str(v) for v in attributes.get(self.lock_attribute) or ()]
        if self.lock_value is None:
            return not (values and int(values[0]) & _AD_DISABLED)
        return not any(v.upper() == self.lock_value.upper() for v in values)

    def active_changes(
        self, attributes: Mapping[str, Sequence[str]], active: bool, *, force: bool = False
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
            flags = int(str((attributes.get(self.lock_attribute) or ["512"])[0]))
            flags = flags & ~_AD_DISABLED if active else flags | _AD_DISABLED
            return {self.lock_attribute: [(MODIFY_REPLACE, [str(flags)])]}
        return {self.lock_attribute: [(MODIFY_REPLACE, [] if active else [self.lock_value])]}

    def initial_attributes(self, active: bool) -> dict[str, list[str]]:
        """What a new entry carries for ``active`` (AD accounts need their flags set)."""
        if self.lock_value is None:
            return {self.lock_attribute: [str(512 | (0 if active else _AD_DISABLED))]}
        return {} if active else {self.lock_attribute: [self.lock_value]}

    def active_filter(self, active: bool) -> str:
        """A raw RFC 4515 filter (trusted, not client text) matching active or disabled users."""
        if self.lock_value is None:
            disabled = f"({self.lock_attribute}:1.2.840.113556.1.4.803:={_AD_DISABLED})"
        else:
            disabled = f"({self.lock_attribute}={self.lock_value})"
        return f"(!{disabled})" if active else disabled

    def format_id(self, raw: object) -> str:
        """The SCIM id text for the id attribute's value (AD's objectGUID is binary)."""
        if isinstance(raw, bytes):
            return str(uuid.UUID(bytes_le=raw))
        return str(raw)


OPENLDAP = Dialect(
    name="openldap",
    id_attribute="entryUUID",
    id_pattern=_UUID,
    version_attribute="entryCSN",
    lock_attribute="pwdAccountLockedTime",
    lock_value="000001010000Z",
)
DS389 = Dialect(
    name="389ds",
    id_attribute="nsUniqueId",
    id_pattern=_NSUNIQUEID,
    version_attribute="modifyTimestamp",
    lock_attribute="nsAccountLock",
    lock_value="TRUE",
)
ACTIVE_DIRECTORY = Dialect(
    name="ad",
    id_attribute="objectGUID",
    id_pattern=_UUID,
    version_attribute="uSNChanged",
    lock_attribute="userAccountControl",
    lock_value=None,
)
DIALECTS: Mapping[str, Dialect] = {d.name: d for d in (OPENLDAP, DS389, ACTIVE_DIRECTORY)}
