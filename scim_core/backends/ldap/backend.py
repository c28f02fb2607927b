"""The LDAP backend: the Backend protocol over ldap3, one request -> few directory operations.

Costs per request, by design: a lookup by id or filter is one search (one per base where
users or groups live under several); a list page is one sorted VLV search (plus one batched
search for managers or members; over several bases, one window per base and one read of the
page per base); a PATCH that changes nothing is one search and no write, one that changes
something a search and a modify whose post-read control (RFC 4527) brings the result back;
membership changes check only the values in question (RFC 3876 ValuesReturnFilter), write
single values and never read the member list.

The backend is put together from one part per concern, each a module of this package:
:mod:`~.directory` (settings, connections, searches and writes every part makes),
:mod:`~.listing` (sorted pages), :mod:`~.members` (group membership), :mod:`~.writes`
(guarded modifies and passwords of a user), :mod:`~.users` (user reads, updates, deletes),
:mod:`~.creates` (user creates) and :mod:`~.groups`.
"""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager, nullcontext

from scim_core.backends.ldap import keyset
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.creates import UserCreates
from scim_core.backends.ldap.dryrun import Planner
from scim_core.backends.ldap.groups import Groups
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.normalize import Normalizer, normalize_username
from scim_core.schemas.attributes import (
    DEFAULT_SCHEMAS,
    GROUP_DISPLAY_NAME,
    GROUP_EXTERNAL_ID,
    GROUP_URN,
    Attribute,
    SchemaSet,
)

__all__ = ["LdapBackend"]


def _group_schema(settings: LdapSettings, schemas: SchemaSet) -> SchemaSet:
    """The Group schema as this directory keeps it: a display name that changes apart from
    the id where the profile has a place for it, and an externalId where groups have one."""
    kept: list[Attribute] = []
    if settings.group_display_name_attribute is not None:
        kept.append(GROUP_DISPLAY_NAME)
    if settings.group_object_class is not None and settings.external_id_attribute is not None:
        kept.append(GROUP_EXTERNAL_ID)
    return schemas.with_attributes("Group", GROUP_URN, tuple(kept)) if kept else schemas


class LdapBackend(UserCreates, Groups):
    """Users and groups in an LDAP directory (OpenLDAP, 389-DS or AD, by profile).

    :param settings: validated ``SCIM_LDAP_*`` settings.
    :param connections: a connection factory; built from ``settings`` when omitted.
    :param normalize: userName -> uid, the RDN value of a new user (the default rule unless
        a site replaces it).
    """

    def __init__(
        self,
        settings: LdapSettings,
        connections: ConnectionFactory | None = None,
        normalize: Normalizer = normalize_username,
    ):
        super().__init__(settings, connections, normalize)
        mapping = self.mapping
        if settings.dry_run:
            self.connections.planner = Planner(
                id_attribute=self.profile.id_attribute,
                new_id=lambda: self.profile.id_value(str(uuid.uuid4())),
                password_attributes=(
                    "userPassword",
                    *filter(None, [self.profile.password_attribute]),
                ),
                binary=self.binary,
                ldif_file=settings.dry_run_ldif,
            )
        self.schemas: SchemaSet = _group_schema(settings, mapping.schema_set(DEFAULT_SCHEMAS))
        #: (resource type, attribute, operator) a filter may use beyond the policy's own.
        self.filter_forms: frozenset[tuple[str, str, str]] = frozenset(
            (m.resource_type, m.filter_name, "eq")
            for m in (*mapping.users, *mapping.groups)
            if m.filterable
        )

    @property
    def keyset_paging(self) -> bool:
        """Whether cursor walks are offered on this directory (see :mod:`.keyset`)."""
        return self.settings.dialect in keyset.KEYSET_DIALECTS

    @property
    def dry_run(self) -> bool:
        """Whether writes are planned (logged as LDIF) instead of made."""
        return self.connections.planner is not None

    def plan_scope(self) -> AbstractContextManager[None]:
        """In a dry run, one plan for everything until it ends: the service holds it around a
        whole request, so the reads that answer it see its writes as planned."""
        plan = self.connections.planner
        return plan.request() if plan is not None else nullcontext()
