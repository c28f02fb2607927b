"""What a directory server says it supports (its rootDSE), read once per server.

The service never sends a critical control or an extended operation the server does not
list. Each feature it uses has a fallback with a weaker guarantee, chosen here once per
server from ``supportedControl`` and ``supportedExtension``:

==========================  ===============================  ==================================
feature                     used for                         without it
==========================  ===============================  ==================================
assertion (RFC 4528)        If-Match and lost updates: the   the version is compared in the
                            write runs only on the version   read just before the write; a
                            read                             change in between is not seen
ValuesReturnFilter          which of some DNs a group has    one base search per DN in
(RFC 3876)                  as members, never its list       question, filtered on member
sort + VLV (RFC 2891,       list pages in order, any depth   the matches read whole and sorted
draft-ietf-ldapext-vlv)                                      here (cost grows with the list)
post-read (RFC 4527)        the entry a write left, in its   a search after the write
                            answer (never critical)
Who am I? (RFC 4532)        /readyz on the bound connection  a read of the rootDSE
==========================  ===============================  ==================================
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ASSERTION",
    "PASSWORD_MODIFY",
    "POST_READ",
    "ROOT_DSE_ATTRIBUTES",
    "SORT",
    "VALUES_RETURN_FILTER",
    "VLV",
    "WHO_AM_I",
    "Capabilities",
]

ASSERTION = "1.3.6.1.1.12"
VALUES_RETURN_FILTER = "1.2.826.0.1.3344810.2.3"
SORT = "1.2.840.113556.1.4.473"
VLV = "2.16.840.1.113730.3.4.9"
POST_READ = "1.3.6.1.1.13.2"
WHO_AM_I = "1.3.6.1.4.1.4203.1.11.3"
PASSWORD_MODIFY = "1.3.6.1.4.1.4203.1.11.1"

ROOT_DSE_ATTRIBUTES = (
    "supportedControl",
    "supportedExtension",
    "namingContexts",
    "defaultNamingContext",
)
"""What is read of the rootDSE (``defaultNamingContext`` is AD's domain)."""


@dataclass(frozen=True)
class Capabilities:
    """The controls and extended operations one server lists, and its naming contexts.

    :param controls: OIDs of ``supportedControl``.
    :param extensions: OIDs of ``supportedExtension``.
    :param naming_contexts: the server's suffixes.
    :param default_naming_context: AD's domain DN (``None`` elsewhere).
    """

    controls: frozenset[str]
    extensions: frozenset[str]
    naming_contexts: tuple[str, ...] = ()
    default_naming_context: str | None = None

    @classmethod
    def from_root_dse(cls, attributes: dict[str, Iterable[object]]) -> Capabilities:
        """Read the attributes of a rootDSE search (names as :data:`ROOT_DSE_ATTRIBUTES`)."""

        # Servers write the names in their own case (AD: supportedcontrol).
        by_name = {name.lower(): found for name, found in attributes.items()}

        def values(name: str) -> list[str]:
            return [str(v) for v in by_name.get(name) or ()]

        default = values("defaultnamingcontext")
        return cls(
            controls=frozenset(values("supportedcontrol")),
            extensions=frozenset(values("supportedextension")),
            naming_contexts=tuple(values("namingcontexts")),
            default_naming_context=default[0] if default else None,
        )

    @property
    def assertion(self) -> bool:
        """Writes can be made conditional on the entry's version (RFC 4528)."""
        return ASSERTION in self.controls

    @property
    def values_return_filter(self) -> bool:
        """A read can return just the matching values of an attribute (RFC 3876)."""
        return VALUES_RETURN_FILTER in self.controls

    @property
    def sorted_windows(self) -> bool:
        """Server-side sort and virtual list view are both offered."""
        return SORT in self.controls and VLV in self.controls

    @property
    def who_am_i(self) -> bool:
        """The Who am I? extended operation (RFC 4532)."""
        return WHO_AM_I in self.extensions

    @property
    def password_modify(self) -> bool:
        """The password modify extended operation (RFC 3062)."""
        return PASSWORD_MODIFY in self.extensions
