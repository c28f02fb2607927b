"""A user's names in the directory: the userName as the client wrote it, the uid it gives the
entry (its RDN value), and the filter that finds the one user a userName names."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.profiles import DirectoryProfile
from scim_core.backends.ldap.values import Attributes, first
from scim_core.errors import InvalidValue
from scim_core.normalize import Normalizer, normalize_username

__all__ = ["UserNaming"]


def _folded(text: str) -> str:
    """``text`` as the uid rule compares it before anything but case changes."""
    return unicodedata.normalize("NFKC", text.strip()).casefold()


@dataclass(frozen=True)
class UserNaming:
    """How a userName names a user entry.

    :param profile: the directory flavour.
    :param user_name_attribute: where the userName is kept as the client wrote it, or ``None``
        (the uid only: then only userNames the uid can give back, case aside, are allowed).
    :param normalize: userName -> uid, the RDN value of a new user.
    """

    profile: DirectoryProfile
    user_name_attribute: str | None = "scimUserName"
    normalize: Normalizer = normalize_username

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
