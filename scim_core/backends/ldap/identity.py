"""Which directory this is: its kind and version, from the rootDSE (and OpenLDAP's
``cn=Monitor`` where it can be read), for ``scim-ldap check``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["IDENTITY_ATTRIBUTES", "Identity", "RootDse", "identify", "root_values"]

_VENDOR_NAME: Final = "vendorName"
_VENDOR_VERSION: Final = "vendorVersion"
_AD_LEVEL: Final = "domainControllerFunctionality"
#: rootDSE attributes that tell the directory's kind and version, beside the capabilities.
IDENTITY_ATTRIBUTES: Final = (
    "objectClass",
    _VENDOR_NAME,
    _VENDOR_VERSION,
    "supportedCapabilities",
    _AD_LEVEL,
    "subschemaSubentry",
    "dnsHostName",
)
#: LDAP_CAP_ACTIVE_DIRECTORY_OID: the server is an Active Directory domain controller.
_AD_CAPABILITY: Final = "1.2.840.113556.1.4.800"
#: domainControllerFunctionality -> the Windows Server functional level it names.
_AD_LEVELS: Final = {
    "0": "2000",
    "1": "2003 interim",
    "2": "2003",
    "3": "2008",
    "4": "2008 R2",
    "5": "2012",
    "6": "2012 R2",
    "7": "2016",
    "10": "2025",
}
_VERSION = re.compile(r"(\d+(?:\.\d+)+)")

RootDse = Mapping[str, Sequence[str]]


def root_values(entry: RootDse, name: str) -> list[str]:
    """The values of attribute ``name`` (in any case) of a rootDSE-like entry, as text."""
    found = next((v for k, v in entry.items() if k.lower() == name.lower()), None)
    return [str(v) for v in found or ()]


def _first_version(texts: Sequence[str]) -> str | None:
    for text in texts:
        if found := _VERSION.search(text):
            return found[1]
    return None


def _ad_version(entry: RootDse, monitor: str | None) -> str | None:
    vendor = _first_version(root_values(entry, _VENDOR_VERSION))  # Samba says its own
    if vendor:
        return vendor
    levels = root_values(entry, _AD_LEVEL)
    level = _AD_LEVELS.get(levels[0]) if levels else None
    return f"functional level Windows Server {level}" if level else None


@dataclass(frozen=True)
class _Flavour:
    """One kind of directory: how its rootDSE shows it and where its version is."""

    name: str
    profile: str
    recognised: Callable[[RootDse], bool]
    version: Callable[[RootDse, str | None], str | None]


#: The kinds of directory the service has a profile for, tried in order.
_FLAVOURS: Final = (
    _Flavour(
        "Active Directory",
        "ad",
        lambda dse: _AD_CAPABILITY in root_values(dse, "supportedCapabilities"),
        _ad_version,
    ),
    _Flavour(
        "389-DS",
        "389ds",
        lambda dse: any(
            "389" in v for v in root_values(dse, _VENDOR_NAME) + root_values(dse, _VENDOR_VERSION)
        ),
        lambda dse, _monitor: _first_version(root_values(dse, _VENDOR_VERSION)),
    ),
    _Flavour(
        "OpenLDAP",
        "openldap",
        lambda dse: "openldaprootdse" in {v.lower() for v in root_values(dse, "objectClass")},
        lambda _dse, monitor: _first_version([monitor]) if monitor else None,
    ),
)


@dataclass(frozen=True)
class Identity:
    """What the rootDSE (and ``cn=Monitor`` where readable) says the directory is.

    :param name: ``OpenLDAP``, ``389-DS``, ``Active Directory`` (``Samba`` added where the
        vendor says so), or ``unknown``.
    :param profile: the ``SCIM_LDAP_DIALECT`` for it (``None``: unknown).
    :param version: the version found, or ``None``.
    """

    name: str
    profile: str | None
    version: str | None

    def __str__(self) -> str:
        return f"{self.name} {self.version or '(version unknown)'}"


def identify(root_dse: RootDse, monitor: str | None = None) -> Identity:
    """Name the directory from its rootDSE attributes (and OpenLDAP's ``monitoredInfo``).

    :param root_dse: attribute -> values, names in any case.
    :param monitor: ``cn=Monitor``'s ``monitoredInfo`` where it could be read.
    """
    vendor = " ".join(root_values(root_dse, _VENDOR_NAME))
    for flavour in _FLAVOURS:
        if flavour.recognised(root_dse):
            name = f"{flavour.name} (Samba)" if "samba" in vendor.lower() else flavour.name
            return Identity(name, flavour.profile, flavour.version(root_dse, monitor))
    version = _first_version(root_values(root_dse, _VENDOR_VERSION))
    return Identity(vendor or "unknown", None, version)
