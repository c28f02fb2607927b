"""The LDAP plugin's ``SCIM_LDAP_*`` settings, declared once."""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from scim_core.backends.ldap.bases import parse_bases, settled_bases
from scim_core.backends.ldap.mapped import SiteMapping
from scim_core.backends.ldap.profiles import PROFILES
from scim_core.backends.ldap.sitemap import default_mapping, load_mapping
from scim_core.config import (
    Setting,
    parse_bool,
    parse_int,
    parse_list,
    read_settings,
)

__all__ = ["DEFAULT", "LDAP_SETTINGS", "LdapSettings"]


def _url_list(text: str) -> tuple[str, ...]:
    urls = parse_list(text)
    for url in urls:
        if not url.lower().startswith(("ldap://", "ldaps://")):
            raise ValueError(f"{url} is not an ldap:// or ldaps:// URL")
    return urls


def _ca_file(text: str) -> str:
    """A file of PEM CA certificates, loaded once now so a bad one stops start-up."""
    try:
        ssl.create_default_context(cafile=text)
    except ssl.SSLError as error:
        raise ValueError(f"no CA certificate could be read from it ({error.reason})") from None
    except OSError as error:
        raise ValueError(error.strerror or type(error).__name__) from None
    return text


def _dialect(text: str) -> str:
    if text.lower() not in PROFILES:
        raise ValueError("expected one of " + ", ".join(sorted(PROFILES)))
    return text.lower()


def _scope(text: str) -> str:
    if text.strip().lower() not in ("one", "sub"):
        raise ValueError("expected one (entries right under the base) or sub (the whole subtree)")
    return text.strip().lower()


DEFAULT: Final = "default"
"""A schema-extension setting left to the directory profile's default."""


LDAP_SETTINGS: tuple[Setting[Any], ...] = (
    Setting(
        "SCIM_LDAP_URL",
        _url_list,
        None,
        "Directory URL(s), comma-separated; later ones are used when earlier ones fail.",
        required=True,
    ),
    Setting("SCIM_LDAP_BIND_DN", str, None, "The service's own account.", required=True),
    Setting(
        "SCIM_LDAP_BIND_PASSWORD",
        str,
        None,
        "That account's password (or SCIM_LDAP_BIND_PASSWORD_FILE naming a file holding it).",
        required=True,
        secret=True,
    ),
    Setting(
        "SCIM_LDAP_USERS_BASE",
        parse_bases,
        None,
        "Where users live: one DN, or several separated by `;` (none inside another; a `;` "
        "in a value is escaped, `\\;` or `\\3B`).",
        required=True,
    ),
    Setting(
        "SCIM_LDAP_GROUPS_BASE",
        parse_bases,
        None,
        "Where groups live: one DN or several, as SCIM_LDAP_USERS_BASE.",
        required=True,
    ),
    Setting(
        "SCIM_LDAP_USERS_SCOPE",
        _scope,
        "one",
        "`one`: users are the entries right under each SCIM_LDAP_USERS_BASE; `sub`: anywhere "
        "below one (users in several OUs, and moved between them).",
    ),
    Setting(
        "SCIM_LDAP_GROUPS_SCOPE",
        _scope,
        "one",
        "`one` or `sub`, as SCIM_LDAP_USERS_SCOPE, for groups under SCIM_LDAP_GROUPS_BASE.",
    ),
    Setting(
        "SCIM_LDAP_NEW_USERS_BASE",
        str,
        None,
        "Where new users are created (default: the first SCIM_LDAP_USERS_BASE; another of "
        "them, or with scope `sub` any entry below one).",
    ),
    Setting(
        "SCIM_LDAP_NEW_GROUPS_BASE",
        str,
        None,
        "Where new groups are created (default: the first SCIM_LDAP_GROUPS_BASE; another of "
        "them, or with scope `sub` any entry below one).",
    ),
    Setting(
        "SCIM_LDAP_DIALECT",
        _dialect,
        "openldap",
        "The directory's profile: openldap, 389ds (also FreeIPA) or ad (Active Directory, "
        "Samba AD).",
    ),
    Setting("SCIM_LDAP_START_TLS", parse_bool, False, "Upgrade ldap:// connections with StartTLS."),
    Setting(
        "SCIM_LDAP_CA_FILE", _ca_file, None, "CA bundle for verifying the directory's certificate."
    ),
    Setting("SCIM_LDAP_CONNECT_TIMEOUT", parse_int(1), 3, "Seconds to wait for a connection."),
    Setting("SCIM_LDAP_TIMEOUT", parse_int(1), 10, "Seconds to wait for one operation."),
    Setting(
        "SCIM_LDAP_FAST_PATH",
        parse_bool,
        True,
        "Encode searches and modifies and decode their answers with the plugin's own BER "
        "(faster, bounded against hostile answers); `off` leaves every operation to ldap3.",
    ),
    Setting(
        "SCIM_LDAP_SESSION_LOG",
        parse_bool,
        True,
        "Where slapo-syncprov keeps a session log (`syncprov-sessionlog`, OpenLDAP; asked "
        "first, with a search that matches nothing): an index page after writes asks it what "
        "changed and keeps its sorted snapshot instead of sorting every user again. `off`: "
        "never ask (each index page after a write sorts afresh).",
    ),
    Setting(
        "SCIM_LDAP_CHANGE_LOG",
        str,
        DEFAULT,
        "The suffix of slapo-accesslog's database logging deletes and renames (`logops "
        "delete modrdn`, or `writes`), readable by the bind DN: index pages after users or "
        "groups are deleted or renamed then keep their sorted snapshot too (entries named by "
        "their sort key: uid, cn). Default: the one the directory names (`auditContext`); "
        "`none`: no log.",
    ),
    Setting(
        "SCIM_LDAP_EXTERNAL_ID_ATTRIBUTE",
        str,
        DEFAULT,
        "Attribute holding externalId (`none` leaves it unmapped and unadvertised; default: "
        "scimExternalId on openldap and 389ds, none on ad).",
    ),
    Setting(
        "SCIM_LDAP_EXTERNAL_ID_OBJECT_CLASS",
        str,
        DEFAULT,
        "Auxiliary object class that allows the externalId attribute, the no-primary-email "
        "flag and the pending stamp; added to an entry when one is written (`none`: none "
        "needed; default: scimPerson on openldap and 389ds, none on ad).",
    ),
    Setting(
        "SCIM_LDAP_NO_PRIMARY_EMAIL_ATTRIBUTE",
        str,
        DEFAULT,
        "BOOLEAN attribute set to TRUE when a client writes emails none of which is primary "
        "(without it the first mail is reported as primary); `none` leaves it unmapped "
        "(default: scimNoPrimaryEmail on openldap and 389ds, none on ad).",
    ),
    Setting(
        "SCIM_LDAP_USER_NAME_ATTRIBUTE",
        str,
        DEFAULT,
        "Attribute keeping the userName exactly as the client wrote it (the uid holds its "
        "normalized form); `none` keeps the uid only, and then a userName whose normalization "
        "changes more than its case is refused (default: scimUserName on openldap and 389ds, "
        "userPrincipalName on ad).",
    ),
    Setting(
        "SCIM_LDAP_GROUP_DISPLAY_NAME_ATTRIBUTE",
        str,
        DEFAULT,
        "Attribute holding a group's display name apart from its cn (the id), so a group can be "
        "renamed; `none`: the display name is the cn and a rename is refused (default: "
        "displayName).",
    ),
    Setting(
        "SCIM_LDAP_GROUP_OBJECT_CLASS",
        str,
        DEFAULT,
        "Auxiliary object class a group needs for that attribute, added on a rename (`none`: "
        "none needed; default: scimGroup on openldap and 389ds, none on ad).",
    ),
    Setting(
        "SCIM_MAPPING_FILE",
        str,
        None,
        "A TOML file mapping more User attributes (RFC 7643 ones the profile leaves out, or the "
        "site's own extension schema) to LDAP attributes; checked at start-up.",
    ),
    Setting(
        "SCIM_LDAP_PASSWORD_ON_ADD",
        parse_bool,
        False,
        "Send a new user's password in the add itself (atomic) instead of RFC 3062 afterwards; "
        "only for directories that hash cleartext userPassword on add (OpenLDAP: "
        "ppolicy_hash_cleartext).",
    ),
    Setting(
        "SCIM_LDAP_PENDING_ATTRIBUTE",
        str,
        DEFAULT,
        "Attribute (in the auxiliary class) stamping a new user whose password is not set yet: "
        "it stays disabled until the password is in, and a retry of a create cut in between "
        "completes it; `none` turns this off (default: scimPendingSince on openldap and 389ds, "
        "none on ad).",
    ),
    Setting(
        "SCIM_LDAP_VLV_PER_CONNECTION",
        parse_int(1),
        5,
        "Sorted (VLV) searches per directory connection before it is renewed; at most the "
        "server's limit (OpenLDAP `sssvlv-maxperconn`, default 5).",
    ),
    Setting(
        "SCIM_LDAP_MAX_MEMBERS",
        parse_int(1),
        250_000,
        "Most members a response lists (one group, or the groups of a list page together); a "
        "larger group is 400 tooMany, read with excludedAttributes=members instead.",
    ),
    Setting(
        "SCIM_LDAP_GROUP_PLACEHOLDER_DN",
        str,
        None,
        "Member DN kept in groups that would otherwise be empty (default: the bind DN).",
    ),
    Setting(
        "SCIM_LDAP_DRY_RUN",
        parse_bool,
        False,
        "Plan every write against the directory as it is and answer as it would be, but write "
        "nothing: each request's changes are logged as LDIF (passwords left out) on the "
        "scim.dryrun logger. Reads stay live.",
    ),
    Setting(
        "SCIM_LDAP_DRY_RUN_LDIF",
        str,
        None,
        "With SCIM_LDAP_DRY_RUN, also append the planned changes to this file (one block per "
        "request; `ldapmodify -c -f` applies it).",
    ),
)


#: The settings whose field is not their name without ``SCIM_LDAP_``, lower-case.
_FIELDS: Final = {
    "SCIM_LDAP_URL": "urls",
    "SCIM_LDAP_USERS_BASE": "users_bases",
    "SCIM_LDAP_GROUPS_BASE": "groups_bases",
    "SCIM_LDAP_GROUP_PLACEHOLDER_DN": "placeholder_dn",
}


@dataclass(frozen=True)
class LdapSettings:
    """Validated LDAP plugin settings (``mapping``: the site's mapping file, which extends
    the profile's own, :func:`~scim_core.backends.ldap.sitemap.default_mapping`).

    ``users_bases`` and ``groups_bases`` are every base, ``users_base`` and ``groups_base``
    the first of them; given only the first, it is the only one.
    """

    urls: tuple[str, ...]
    bind_dn: str
    bind_password: str
    users_base: str
    groups_base: str
    dialect: str = "openldap"
    users_scope: str = "one"
    groups_scope: str = "one"
    new_users_base: str | None = None
    new_groups_base: str | None = None
    start_tls: bool = False
    ca_file: str | None = None
    connect_timeout: int = 3
    timeout: int = 10
    fast_path: bool = True
    session_log: bool = True
    change_log: str | None = DEFAULT
    external_id_attribute: str | None = DEFAULT
    external_id_object_class: str | None = DEFAULT
    no_primary_email_attribute: str | None = DEFAULT
    placeholder_dn: str | None = None
    vlv_per_connection: int = 5
    max_members: int = 250_000
    password_on_add: bool = False
    pending_attribute: str | None = DEFAULT
    user_name_attribute: str | None = DEFAULT
    group_display_name_attribute: str | None = DEFAULT
    group_object_class: str | None = DEFAULT
    dry_run: bool = False
    dry_run_ldif: str | None = None
    mapping: SiteMapping = field(default_factory=SiteMapping)
    users_bases: tuple[str, ...] = ()
    groups_bases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Schema-extension parts left to the profile take its default; "none" turns one off.
        schema = PROFILES[self.dialect].schema
        defaults = {
            "external_id_attribute": schema.external_id,
            "external_id_object_class": schema.object_class,
            "no_primary_email_attribute": schema.no_primary_email,
            "pending_attribute": schema.pending,
            "user_name_attribute": schema.user_name,
            "group_display_name_attribute": schema.group_display_name,
            "group_object_class": schema.group_object_class,
        }
        for kind in ("users", "groups"):
            self._settle_bases(kind)
        if self.change_log is not None and self.change_log.lower() == "none":
            object.__setattr__(self, "change_log", None)
        for name, default in defaults.items():
            value = getattr(self, name)
            if value == DEFAULT:
                object.__setattr__(self, name, default)
            elif value is not None and value.lower() == "none":
                object.__setattr__(self, name, None)

    def _settle_bases(self, kind: str) -> None:
        """Fill in ``<kind>_bases`` and ``new_<kind>_base`` (see :func:`settled_bases`)."""
        bases, new_base = settled_bases(
            kind,
            getattr(self, f"{kind}_base"),
            getattr(self, f"{kind}_bases"),
            getattr(self, f"new_{kind}_base"),
            subtree=getattr(self, f"{kind}_scope") == "sub",
        )
        object.__setattr__(self, f"{kind}_bases", bases)
        object.__setattr__(self, f"new_{kind}_base", new_base)

    def __repr__(self) -> str:
        return f"LdapSettings(urls={self.urls!r}, bind_dn={self.bind_dn!r}, ...)"

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> LdapSettings:
        """Read ``SCIM_LDAP_*``; :class:`~scim_core.config.ConfigError` names a bad one."""
        values = read_settings(LDAP_SETTINGS, environ)
        mapping_file = values.pop("SCIM_MAPPING_FILE")
        base = default_mapping(values["SCIM_LDAP_DIALECT"])
        mapping = load_mapping(mapping_file, base) if mapping_file else SiteMapping()
        # Each SCIM_LDAP_X is the field x, but for the names in _FIELDS.
        given = {
            _FIELDS.get(name, name.removeprefix("SCIM_LDAP_").lower()): value
            for name, value in values.items()
        }
        users_base, groups_base = given["users_bases"][0], given["groups_bases"][0]
        return cls(mapping=mapping, users_base=users_base, groups_base=groups_base, **given)
