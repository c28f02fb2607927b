"""``scim-ldap schema``: the service's schema extension in the form a directory's admin loads.

The one source is the service's schema file, :data:`~scim_core.testing.slapd.SCIM_SCHEMA`
(``scim.schema``: ``scimPerson``, ``scimGroup`` and their attributes); each directory gets it
through the conversion its throwaway launcher uses:

- ``openldap``: a ``cn=config`` schema entry (:func:`~scim_core.testing.slapd.cn_config_ldif`),
  for ``ldapadd -Y EXTERNAL -H ldapi:/// -f``;
- ``389ds``: a schema file for the instance's ``schema`` folder
  (:func:`~scim_core.testing.dirsrv.scim_schema_ldif`, what the launcher loads at every start);
- ``ad``: nothing to load: the ``ad`` profile keeps everything in native attributes, and this
  prints which, from the profile and its mapping file (``mappings/ad.toml``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from scim_core.backends.ldap.profiles import PROFILES, DirectoryProfile
from scim_core.backends.ldap.sitemap import default_mapping
from scim_core.schemas.attributes import ENTERPRISE_URN
from scim_core.testing.dirsrv import scim_schema_ldif
from scim_core.testing.slapd import SCIM_SCHEMA, cn_config_ldif

__all__ = ["native_mapping", "schema_text"]

_OPENLDAP_HEAD: Final = """\
# The SCIM service's schema extension (scimPerson, scimGroup) for OpenLDAP's cn=config,
# generated from scim.schema. It needs the core, cosine and inetorgperson schemas. Load it as
# the configuration's administrator, e.g. as root on the server:
#   ldapadd -Y EXTERNAL -H ldapi:/// -f scim.ldif
"""
_DS389_HEAD: Final = """\
# The SCIM service's schema extension (scimPerson, scimGroup) for 389 Directory Server,
# generated from scim.schema. Save it as /etc/dirsrv/slapd-INSTANCE/schema/60scim.ldif, then
# `dsconf INSTANCE schema reload` (or restart the instance).
"""
_AD_HEAD: Final = """\
# Active Directory needs no schema extension: the ad profile keeps every attribute in AD's own
# schema. How it maps SCIM to AD (the profile and its mapping file, mappings/ad.toml; a site's
# SCIM_MAPPING_FILE extends it):
"""
_AD_DISABLED_BIT: Final = 2


def _own_user_attributes(profile: DirectoryProfile) -> list[tuple[str, str]]:
    """What the service maps itself on ``profile`` (not in the mapping file)."""
    schema = profile.schema
    naming = f"{profile.user_naming.upper()}= (the normalized userName)"
    account = (
        f", {profile.account_name} derived (at most 20 characters)" if profile.account_name else ""
    )
    disable = (
        f"{profile.lock_attribute} bit {_AD_DISABLED_BIT}"
        if profile.lock_value is None
        else f"{profile.lock_attribute}: {profile.lock_value}"
    )
    return [
        ("id", profile.id_attribute),
        ("userName", f"{schema.user_name or profile.user_name_attribute}; {naming}{account}"),
        ("emails", "mail" + ("" if profile.multiple_mail else " (one address)")),
        ("active", f"{disable} when false"),
        ("password", profile.password_attribute or "userPassword (RFC 3062)"),
        ("externalId", schema.external_id or "not stored"),
        ("enterprise manager", "manager"),
        ("meta.version (ETag)", profile.version_attribute),
    ]


def _short(name: str) -> str:
    """An attribute's name, the enterprise extension's URN shortened to ``enterprise``."""
    return name.replace(ENTERPRISE_URN + ":", "enterprise ")


def native_mapping(dialect: str = "ad") -> str:
    """The SCIM -> LDAP attribute table of ``dialect``'s profile and its own mapping file."""
    profile = PROFILES[dialect]
    mapping = default_mapping(dialect)
    users = [
        *_own_user_attributes(profile),
        *((_short(m.filter_name), m.ldap) for m in mapping.users),
    ]
    groups = [
        ("id", "cn"),
        # pragma below: every profile names where a group's display name lives.
        ("displayName", profile.schema.group_display_name or "cn"),  # pragma: no mutate
        ("members", "member"),
        # pragma below: no profile's own mapping file maps a Group attribute yet.
        *((_short(m.filter_name), m.ldap) for m in mapping.groups),  # pragma: no mutate
    ]
    sections = (
        (f"User (objectClass {', '.join(profile.user_classes)})", users),
        (f"Group (objectClass {', '.join(profile.group_classes)})", groups),
    )
    lines = []
    for title, pairs in sections:
        width = max(len(scim) for scim, _ in pairs)
        lines += [title, *(f"  {scim:<{width}}  {ldap}" for scim, ldap in pairs), ""]
    return "\n".join(lines)


#: ``SCIM_LDAP_DIALECT`` -> the text ``scim-ldap schema`` prints for it.
_TEXTS: Final[dict[str, Callable[[], str]]] = {
    "openldap": lambda: _OPENLDAP_HEAD + cn_config_ldif(SCIM_SCHEMA),
    "389ds": lambda: _DS389_HEAD + scim_schema_ldif(SCIM_SCHEMA, comment=None),
    "ad": lambda: _AD_HEAD + native_mapping("ad"),
}


def schema_text(dialect: str) -> str:
    """What ``scim-ldap schema`` prints for ``dialect`` (``openldap``, ``389ds`` or ``ad``)."""
    return _TEXTS[dialect]()
