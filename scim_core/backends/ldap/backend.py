"""The LDAP backend: the Backend protocol over ldap3, one request -> few directory operations.

Costs per request, by design: a lookup by id or filter is one search (one per base where
users or groups live under several); a list page is one sorted VLV search (plus one batched
search for managers or members; over several bases, one window per base and one read of the
page per base); a PATCH that changes nothing is one search and no write, one that changes
something a search and a modify whose post-read control (RFC 4527) brings the result back;
membership changes check only the values in question (RFC 3876 ValuesReturnFilter), write
single values and never read the member list.
Searches and modifies take the pyasn1-free path of :mod:`scim_core.backends.ldap.wire`.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ldap3 import (
    BASE,
    LEVEL,
    MODIFY_ADD,
    MODIFY_DELETE,
    MODIFY_REPLACE,
    SUBTREE,
    Connection,
)
from ldap3.core.exceptions import LDAPInvalidDnError, LDAPOperationResult, LDAPSASLPrepError
from ldap3.utils.dn import parse_dn, to_dn

from scim_core.backend import Page, Query, Resource
from scim_core.backends.ldap import keyset, operations
from scim_core.backends.ldap.capabilities import Capabilities
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.controls import (
    Control,
    assertion,
    parse_post_read,
    post_read,
    values_return_filter,
)
from scim_core.backends.ldap.dryrun import Planner
from scim_core.backends.ldap.escape import dn_value, filter_value
from scim_core.backends.ldap.filter import FilterMapping, to_ldap
from scim_core.backends.ldap.mapping import (
    UserMapping,
    all_values,
    dn_key,
    extension_resource,
    extension_values,
    first,
    generalized_to_iso,
    ldap_values,
    reference_id,
)
from scim_core.backends.ldap.paging import SortedPager, Window
from scim_core.backends.ldap.profiles import PROFILES, Change, DirectoryProfile
from scim_core.backends.ldap.results import (
    ALREADY_EXISTS,
    ASSERTION_FAILED,
    CONSTRAINT_VIOLATION,
    NO_SUCH_ATTRIBUTE,
    NO_SUCH_OBJECT,
    OBJECT_CLASS_VIOLATION,
    OTHER,
    VALUE_EXISTS,
    scim_error,
)
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.backends.ldap.sitemap import MappedAttribute, default_mapping
from scim_core.errors import (
    DirectoryUnavailable,
    InvalidValue,
    Mutability,
    NotFound,
    ScimError,
    Uniqueness,
    VersionConflict,
)
from scim_core.filter import Compare, Filter
from scim_core.normalize import Normalizer, normalize_username
from scim_core.schemas.attributes import (
    DEFAULT_SCHEMAS,
    GROUP_DISPLAY_NAME,
    GROUP_EXTERNAL_ID,
    GROUP_URN,
    Attribute,
    SchemaSet,
)
from scim_core.schemas.resources import ENTERPRISE_URN
from scim_core.secret import InFlightSecretFilter, Secret

__all__ = ["PENDING_CREATE_GRACE", "LdapBackend"]

log = logging.getLogger("scim.ldap")
# ldap3 dumps request payloads at its EXTENDED log level, password-modify included.
logging.getLogger("ldap3").addFilter(InFlightSecretFilter())

_META = ("createTimestamp", "modifyTimestamp")
_PREVIOUS = "\x00previous"  # stands for the current manager DN in a diff; never written
_MEMBER_WRITE_ATTEMPTS = 3

#: Seconds a pending create (cut between its add and its password) is left to the request that
#: made it before a retry may take it over: far above the milliseconds between the two steps,
#: below the Retry-After the client was given.
PENDING_CREATE_GRACE = 2.0


@contextmanager
def _after_a_write() -> Iterator[None]:
    """Mark a failure inside as partial: an earlier step of the same change is written."""
    try:
        yield
    except ScimError as error:
        error.partial = True
        raise


def _pending_stamp() -> str:
    """Now, as the generalized time a pending entry carries (UTC, microseconds)."""
    return datetime.now(UTC).strftime("%Y%m%d%H%M%S.%fZ")


def _password_refused(error: LDAPOperationResult) -> ScimError:
    """A refused password: the client's when the site's policy rejects the value, else the
    directory's (TLS missing, no right to set it). The text never carries the password."""
    if error.result in (CONSTRAINT_VIOLATION, 21):
        log.info("directory refused the password with result %s", error.result)
        return InvalidValue("The directory's password policy refused the password.")
    return scim_error(error, "the password")


def _pending_expired(stamp: str) -> bool:
    try:
        since = datetime.strptime(stamp, "%Y%m%d%H%M%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return True  # not ours to interpret: a stale marker
    return (datetime.now(UTC) - since).total_seconds() >= PENDING_CREATE_GRACE


# SCIM top-level attribute -> the LDAP attributes it needs (for attributes= projections),
# beside those of the mapping's strings.
_PROJECTED = {
    "emails": ("mail",),
    ENTERPRISE_URN.lower(): ("manager",),
}
_USER_KEYS = frozenset({"id", "username"})  # what the directory keeps unique, per type
_GROUP_KEYS = frozenset({"id", "displayname"})


def _group_schema(settings: LdapSettings, schemas: SchemaSet) -> SchemaSet:
    """The Group schema as this directory keeps it: a display name that changes apart from
    the id where the profile has a place for it, and an externalId where groups have one."""
    kept: list[Attribute] = []
    if settings.group_display_name_attribute is not None:
        kept.append(GROUP_DISPLAY_NAME)
    if settings.group_object_class is not None and settings.external_id_attribute is not None:
        kept.append(GROUP_EXTERNAL_ID)
    return schemas.with_attributes("Group", GROUP_URN, tuple(kept)) if kept else schemas


@dataclass(frozen=True)
class _Place:
    """Where one resource type lives and how a list of it is ordered.

    :param bases: the bases searched, none inside another.
    :param scope: ``LEVEL`` or ``SUBTREE``, under each base.
    :param sort_attribute: what a list is ordered by.
    :param key_attribute: a value one entry alone holds (its id), to read entries again.
    :param unique_keys: SCIM attributes whose ``eq`` lookup matches one entry at most.
    """

    bases: tuple[str, ...]
    scope: str
    sort_attribute: str
    key_attribute: str
    unique_keys: frozenset[str]


def _in_order(sort_attribute: str) -> Callable[[dict[str, Any]], tuple[bool, str, str]]:
    """A list's order for entries merged or sorted here: the sort attribute compared case
    aside, as the directory's ordering rule does, entries without it last (RFC 2891 §1.1),
    then the DN, so the order is total."""

    def key(entry: dict[str, Any]) -> tuple[bool, str, str]:
        value = first(entry["attributes"], sort_attribute)
        return value is None, str(value or "").casefold(), str(entry["dn"]).casefold()

    return key


def _filter_key(path: Sequence[str]) -> str:
    """A SCIM location as :class:`FilterMapping` keys it: dotted, an extension's URN-qualified."""
    if path[0].lower().startswith("urn:"):
        return f"{path[0]}:{'.'.join(path[1:])}".lower()
    return ".".join(path).lower()


def _unique_lookup(node: Filter, keys: frozenset[str]) -> bool:
    """``userName eq`` or ``id eq`` (users), ``displayName eq`` (groups): one entry at most."""
    return (
        isinstance(node, Compare)
        and node.op == "eq"
        and node.path.sub_attr is None
        and node.path.attr.lower() in keys
        and isinstance(node.value, str)
    )


def _naming_error(error: LDAPOperationResult, what: str) -> ScimError:
    """For an add or a rename: OpenLDAP answers "other" (80) to an RDN it cannot index (too
    long), which is the client's name at fault, not an outage."""
    if error.result == OTHER:
        return InvalidValue(f"The directory cannot hold {what} under this name (too long?).")
    return scim_error(error, what)


def _one_change(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A public write: in a dry run, its operations are planned together as one block."""

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def planned(self: LdapBackend, *args: Any, **kwargs: Any) -> Any:
            plan = self.connections.planner
            if plan is None:
                return method(self, *args, **kwargs)
            # Names the entry for a reader of the plan: an id, or a new resource's name.
            first_argument = args[0] if args else ""
            subject = (
                first_argument
                if isinstance(first_argument, str)
                else first_argument.get("userName") or first_argument.get("displayName") or ""
            )
            with plan.request(f"{what} {subject}".strip()):
                return method(self, *args, **kwargs)

        return planned

    return decorate


class LdapBackend:
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
        self.settings = settings
        self.profile: DirectoryProfile = PROFILES[settings.dialect]
        self.connections = connections or ConnectionFactory(settings)
        mapping = default_mapping(settings.dialect).extended_by(settings.mapping)
        self.users = UserMapping(
            profile=self.profile,
            users_base=settings.users_base,
            external_id_attribute=settings.external_id_attribute,
            external_id_object_class=settings.external_id_object_class,
            no_primary_email_attribute=settings.no_primary_email_attribute,
            user_name_attribute=settings.user_name_attribute,
            normalize=normalize,
            mapped=mapping.users,
        )
        mapped_octets = {m.ldap.lower() for m in mapping.users if m.type == "binary"}
        #: Attributes read as octets: the profile's and the mapping's binary ones.
        self.binary: frozenset[str] = self.profile.binary | mapped_octets
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
        # ldap3 decodes a post-read entry itself, and text that is not UTF-8 as Latin-1: an
        # entry with mapped octets is read back with a search instead.
        self._read_back: Control | None = (
            None if mapped_octets else post_read(self.users.read_attributes)
        )
        self.schemas: SchemaSet = _group_schema(settings, mapping.schema_set(DEFAULT_SCHEMAS))
        #: (resource type, attribute, operator) a filter may use beyond the policy's own.
        self.filter_forms: frozenset[tuple[str, str, str]] = frozenset(
            (m.resource_type, m.filter_name, "eq")
            for m in (*mapping.users, *mapping.groups)
            if m.filterable
        )
        #: The attributes of a site's Group extension, each an attribute of the group entry.
        self.group_mapped: tuple[MappedAttribute, ...] = mapping.groups
        self.placeholder_dn = (
            (settings.placeholder_dn or settings.bind_dn)
            if self.profile.group_needs_member
            else None
        )
        self.user_scope = SUBTREE if settings.users_scope == "sub" else LEVEL
        self.group_scope = SUBTREE if settings.groups_scope == "sub" else LEVEL
        # Right under one base an entry's RDN tells its DN; anywhere else it must be searched.
        self._users_in_one_place = self.user_scope == LEVEL and len(settings.users_bases) == 1
        self._groups_in_one_place = self.group_scope == LEVEL and len(settings.groups_bases) == 1
        self._user_place = _Place(
            settings.users_bases,
            self.user_scope,
            self.profile.user_name_attribute,
            self.profile.id_attribute,
            _USER_KEYS,
        )
        self._group_place = _Place(settings.groups_bases, self.group_scope, "cn", "cn", _GROUP_KEYS)
        self.pager = SortedPager(
            self.connections, settings.vlv_per_connection, self.profile.ordering_rule, self.binary
        )
        attributes = {
            "id": self.profile.id_attribute,
            "username": self.profile.user_name_attribute,
            "email": "mail",
            "emails": "mail",
            "emails.value": "mail",
            **{_filter_key(path): ldap for path, ldap in self.users.strings},
            **{_filter_key(m.path): m.ldap for m in self.users.typed},
        }
        if settings.external_id_attribute:
            attributes["externalid"] = settings.external_id_attribute
        self.user_filters = FilterMapping(
            attributes=attributes,
            value_transforms={"id": self.profile.id_value},
            equalities={"username": self.users.user_name_filter},
            booleans={
                "active": (self.profile.active_filter(True), self.profile.active_filter(False))
            },
        )
        self.group_filters = FilterMapping(
            attributes={
                "id": "cn",
                "displayname": "cn",
                **{_filter_key(m.path): m.ldap for m in mapping.groups if m.filterable},
            },
            equalities={"displayname": self._group_name_filter},
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

    # ================================================================= plumbing

    def _search(
        self,
        base: str,
        search_filter: str,
        attributes: Sequence[str],
        *,
        scope: str = LEVEL,
        controls: Sequence[Any] | None = None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:

        def operation(connection: Connection) -> tuple[list[dict[str, Any]], dict[str, Any]]:
            try:
                # Encoded and decoded without pyasn1 (see wire.py).
                return operations.search(
                    connection,
                    base,
                    search_filter,
                    scope,
                    attributes,
                    controls,
                    self.binary,
                )
            except LDAPOperationResult as error:
                # No such base: nothing matches.
                if error.result == NO_SUCH_OBJECT:
                    return [], dict(connection.result or {})
                raise

        try:
            return self.connections.run(operation)
        except LDAPOperationResult as error:
            raise scim_error(error, "the search") from None

    def _search_bases(
        self,
        bases: Sequence[str],
        scope: str,
        search_filter: str,
        attributes: Sequence[str],
        *,
        first_match: bool = False,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """One search per base, the entries concatenated (the bases never overlap, so no entry
        comes twice); ``first_match`` stops at the first base that has any, for a lookup by a
        value only one entry holds."""
        found: list[dict[str, Any]] = []
        result: dict[str, Any] = {}
        for base in bases:
            entries, result = self._search(base, search_filter, attributes, scope=scope)
            found += entries
            if first_match and found:
                break
        return found, result

    def _search_users(
        self, search_filter: str, attributes: Sequence[str], *, first_match: bool = False
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """A search where users live: under each users base, in the configured scope."""
        return self._search_bases(
            self.settings.users_bases,
            self.user_scope,
            search_filter,
            attributes,
            first_match=first_match,
        )

    def _search_groups(
        self, search_filter: str, attributes: Sequence[str]
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """A search where groups live: under each groups base, in the configured scope."""
        return self._search_bases(
            self.settings.groups_bases, self.group_scope, search_filter, attributes
        )

    def _write(self, what: str, operation: Any, *, retry: bool = True) -> Any:
        try:
            return self.connections.run(operation, retry=retry)
        except LDAPOperationResult as error:
            raise scim_error(error, what) from None

    def _capabilities(self) -> Capabilities:
        try:
            return self.connections.capabilities()
        except LDAPOperationResult as error:
            raise scim_error(error, "the rootDSE read") from None

    def user_dn(self, uid: str) -> str:
        """The DN of a new user whose normalized userName is ``uid``: the profile's RDN."""
        return f"{self.profile.user_naming}={dn_value(uid)},{self.settings.new_users_base}"

    def _dn_of(self, current: Resource) -> str:
        """The DN of a user read before: derived from its userName where that tells the RDN
        for certain, else found by its id (entries other tools make are named as they like).

        The userName of an entry is either kept as written, with the uid its normalized form,
        or the uid itself: when normalizing changes nothing but case, both give one DN.
        """
        # Right under one base (the new users' base, then) a uid tells the DN.
        if (
            self._users_in_one_place
            and self.profile.user_naming == self.profile.user_name_attribute
        ):
            name = str(current["userName"])
            try:
                uid = self.users.normalize(name)
            except InvalidValue:
                uid = ""
            if uid and uid == name.casefold():
                return self.user_dn(uid)
        entry = self._user_entry(current["id"], ["1.1"])
        if entry is None:
            raise VersionConflict("The user is gone.")
        return str(entry["dn"])

    def group_dn(self, group_id: str) -> str | None:
        """The DN of the group whose cn is ``group_id``: derived where groups live right under
        one base, else searched (``None``: no such group, or several with that cn)."""
        if self._groups_in_one_place:
            return f"cn={dn_value(group_id)},{self.settings.groups_base}"
        entries, _ = self._search_groups(
            f"(&{self.profile.group_filter}(cn={filter_value(group_id)}))", ["1.1"]
        )
        if len(entries) > 1:
            log.warning("several groups have one cn under the groups bases; none is answered")
        return str(entries[0]["dn"]) if len(entries) == 1 else None

    def _id_filter(self, ident: str) -> str:
        value = filter_value(self.profile.id_value(ident))
        return f"({self.profile.id_attribute}={value})"

    def _ids_filter(self, ids: Iterable[str]) -> str:
        return "(|" + "".join(self._id_filter(i) for i in ids) + ")"

    def _dns_for_ids(self, ids: Sequence[str]) -> dict[str, str]:
        """user id -> DN for the ids that exist, in one search."""
        valid = [i for i in dict.fromkeys(ids) if self.profile.is_valid_id(i)]
        if not valid:
            return {}
        entries, _ = self._search_users(
            f"(&{self.profile.user_filter}{self._ids_filter(valid)})",
            [self.profile.id_attribute],
        )
        return {
            self.profile.format_id(first(e["attributes"], self.profile.id_attribute)): e["dn"]
            for e in entries
        }

    def _existing_dns(self, ids: Sequence[str], what: str) -> list[str]:
        found = self._dns_for_ids(ids)
        unknown = [i for i in dict.fromkeys(ids) if i not in found]
        if unknown:
            # The ids are not quoted back: a client may have put anything there.
            raise InvalidValue(f"No user has the {what} sent ({len(unknown)} unknown).")
        return [found[i] for i in dict.fromkeys(ids)]

    # ================================================================= users

    def check_ready(self) -> None:
        """Bind-level check on this worker's connection: a Who am I?, or a read of the
        rootDSE where the server has no Who am I? (Samba)."""
        if self._capabilities().who_am_i:

            def operation(connection: Connection) -> None:
                connection.extend.standard.who_am_i()

            self._write("the readiness check", operation)
        else:
            self._search("", "(objectClass=*)", ["1.1"], scope=BASE)

    def _user_attributes(self, wanted: frozenset[str] | None) -> list[str]:
        if wanted is None:
            return self.users.read_attributes
        names = [
            self.profile.id_attribute,
            *self.users.user_name_attributes,
            self.profile.version_attribute,
            *_META,
        ]
        for scim_name in wanted:
            names += _PROJECTED.get(scim_name, ())
            names += [
                m.ldap
                for m in self.users.mapped or ()
                if scim_name in (m.path[0].lower(), m.filter_name.lower())
            ]
            if scim_name == "active":
                names += self.profile.lock_attributes
            elif scim_name == "externalid" and self.settings.external_id_attribute:
                names.append(self.settings.external_id_attribute)
            elif scim_name == "emails" and self.settings.no_primary_email_attribute:
                # Which address is primary depends on the flag as much as on mail's order.
                names.append(self.settings.no_primary_email_attribute)
        return list(dict.fromkeys(names))

    def _named_user_ids(
        self, entries: Sequence[dict[str, Any]], holders: Sequence[str] | None = None
    ) -> dict[str, str]:
        """DN (lower case) -> user id, for every user ``entries`` name in ``holders`` (by
        default a user's manager and mapped references), in one search: by the profile's
        own-DN attribute, else by the userName in the RDN."""
        if holders is None:
            holders = ["manager", *(m.ldap for m in self.users.references)]
        if not holders:
            return {}
        managers = {
            str(dn).lower()
            for e in entries
            for holder in holders
            if (dn := first(e["attributes"], holder))
        }
        if not managers:
            return {}
        dn_attribute = self.profile.dn_attribute
        if dn_attribute:
            parts = "".join(f"({dn_attribute}={filter_value(dn)})" for dn in managers)
        else:
            names = set()
            for manager in managers:
                try:
                    rdn = parse_dn(manager)[0]
                except LDAPInvalidDnError:
                    log.debug("manager value is not a DN; left unresolved")
                    continue
                if rdn[0].lower() == self.profile.user_naming.lower():
                    names.add(rdn[1])
            if not names:
                return {}
            naming = self.profile.user_naming
            parts = "".join(f"({naming}={filter_value(n)})" for n in names)
        found, _ = self._search_users(f"(|{parts})", [self.profile.id_attribute])
        by_dn = {
            dn_key(e["dn"]): self.profile.format_id(
                first(e["attributes"], self.profile.id_attribute)
            )
            for e in found
        }
        return {dn: by_dn[dn_key(dn)] for dn in managers if dn_key(dn) in by_dn}

    def _to_users(self, entries: Sequence[dict[str, Any]]) -> list[Resource]:
        ids = self._named_user_ids(entries)
        resources = []
        for entry in entries:
            manager = first(entry["attributes"], "manager")
            manager_id = ids.get(str(manager).lower()) if manager else None
            resources.append(self.users.to_resource(entry["attributes"], manager_id, ids))
        return resources

    def _references(
        self, current: Resource | None, desired: Resource
    ) -> tuple[dict[str, str | None], dict[str, str | None]]:
        """The DNs of the users ``desired``'s references name, for a diff from ``current``:
        a reference that names the same user on both sides stands for itself (no lookup),
        a new one is looked up (an unknown id is 400)."""
        before = self.users.reference_ids(current) if current is not None else {}
        after = self.users.reference_ids(desired)
        current_dns: dict[str, str | None] = {}
        desired_dns: dict[str, str | None] = {}
        for mapped in self.users.references:
            named, previous = after[mapped.ldap], before.get(mapped.ldap)
            current_dns[mapped.ldap] = _PREVIOUS if previous else None
            if named == previous:
                desired_dns[mapped.ldap] = current_dns[mapped.ldap]
            else:
                found = self._existing_dns([named], mapped.name) if named else [None]
                desired_dns[mapped.ldap] = found[0]
        return current_dns, desired_dns

    def _user_entry(self, user_id: str, attributes: Sequence[str]) -> dict[str, Any] | None:
        if not self.profile.is_valid_id(user_id):
            return None
        entries, _ = self._search_users(
            f"(&{self.profile.user_filter}{self._id_filter(user_id)})",
            attributes,
            first_match=True,
        )
        return entries[0] if entries else None

    def get_user(self, user_id: str, attributes: frozenset[str] | None = None) -> Resource | None:
        """The user with this id; a malformed id is ``None`` without a directory query."""
        entry = self._user_entry(user_id, self._user_attributes(attributes))
        return self._to_users([entry])[0] if entry else None

    def _sorted_page(
        self, place: _Place, search_filter: str, query: Query, attributes: list[str]
    ) -> tuple[int, list[dict[str, Any]]]:
        """One window of a server-side sorted result with its total (sort + VLV controls).

        A lookup by a value the directory keeps unique (userName, cn, the id) matches at most
        one entry: it is a plain search, without the sort and VLV session that would cost the
        server a sort context and us a connection renewal every few requests. A server
        without sort and VLV has every match read and sorted here (documented: the cost of a
        page then grows with the number of matches). Several bases are merged here
        (:meth:`_merged_page`).
        """
        unique = query.filter is not None and _unique_lookup(query.filter, place.unique_keys)
        if unique or not self._capabilities().sorted_windows:
            entries, _ = self._search_bases(place.bases, place.scope, search_filter, attributes)
            entries.sort(key=_in_order(place.sort_attribute))
            start = query.start_index - 1
            return len(entries), entries[start : start + query.count] if query.count else []
        if len(place.bases) > 1:
            return self._merged_page(place, search_filter, query, attributes)
        window = self._window(
            place, place.bases[0], search_filter, query.start_index, query.count, attributes
        )
        return window.total, window.entries

    def _window(
        self,
        place: _Place,
        base: str,
        search_filter: str,
        start: int,
        count: int,
        attributes: Sequence[str],
    ) -> Window:
        """One sorted VLV window under ``base``, a refusal translated."""
        try:
            return self.pager.window(
                base, search_filter, place.sort_attribute, start, count, attributes, place.scope
            )
        except LDAPOperationResult as error:
            raise scim_error(error, "the search") from None

    def _merged_page(
        self, place: _Place, search_filter: str, query: Query, attributes: list[str]
    ) -> tuple[int, list[dict[str, Any]]]:
        """A page across several bases, in the order one base would give.

        The page's entries are among the first ``startIndex + count - 1`` of some base, so each
        base gives those, sort and id only, in one sorted window; they are merged here
        (:func:`_in_order`), the page cut out, and its entries read in full. The total is the
        sum of the bases' totals. Cost: the first pass reads up to ``startIndex + count - 1``
        short entries from every base, so it grows with startIndex times the number of bases
        (one base costs one window whatever the start).
        """
        end = query.start_index - 1 + query.count
        keys = [place.sort_attribute, place.key_attribute]
        order = _in_order(place.sort_attribute)
        total = 0
        heads: list[tuple[tuple[bool, str, str], str, dict[str, Any]]] = []
        for base in place.bases:
            window = self._window(place, base, search_filter, 1, end if query.count else 0, keys)
            total += window.total
            heads += [(order(entry), base, entry) for entry in window.entries]
        heads.sort()  # the keys end with the DN: never equal, so never a dict compared
        page = heads[query.start_index - 1 : end]
        return total, self._read_in_full(place, search_filter, page, attributes)

    def _read_in_full(
        self,
        place: _Place,
        search_filter: str,
        page: Sequence[tuple[Any, str, dict[str, Any]]],
        attributes: list[str],
    ) -> list[dict[str, Any]]:
        """The page's entries (key, base, entry with its keys only) read with ``attributes``,
        in the page's order: one search per base, for the key values of its entries. An
        entry deleted since the first pass is left out."""
        wanted: dict[str, list[Any]] = {}
        for _, base, entry in page:
            value = first(entry["attributes"], place.key_attribute)
            if value is not None:
                wanted.setdefault(base, []).append(value)
        found: dict[str, dict[str, Any]] = {}
        for base, values in wanted.items():
            parts = "".join(f"({place.key_attribute}={filter_value(v)})" for v in values)
            entries, _ = self._search(
                base, f"(&{search_filter}(|{parts}))", attributes, scope=place.scope
            )
            found.update((str(e["dn"]).lower(), e) for e in entries)
        return [e for _, _, head in page if (e := found.get(str(head["dn"]).lower())) is not None]

    def find_users(self, query: Query) -> Page:
        """A page of users in userName order; one sorted VLV search (plus one for managers)."""
        if query.keyset:
            return keyset.find_users(self, query)
        condition = to_ldap(query.filter, self.user_filters) if query.filter else ""
        total, entries = self._sorted_page(
            self._user_place,
            f"(&{self.profile.user_filter}{condition})",
            query,
            self._user_attributes(query.attributes),
        )
        return Page(total, self._to_users(entries))

    def _manager_dn(self, resource: Resource) -> str | None:
        manager_id = self.users.manager_id(resource)
        if manager_id is None:
            return None
        return self._existing_dns([manager_id], "manager id")[0]

    def _read_user_by_dn(self, dn: str, written: Mapping[str, Any] | None = None) -> Resource:
        """The user at ``dn`` as the write left it: from the write's post-read control when
        it brought the entry (``written``), else read afresh."""
        if written is not None:
            return self._to_users([{"dn": dn, "attributes": written}])[0]
        entries, _ = self._search(dn, "(objectClass=*)", self.users.read_attributes, scope=BASE)
        if not entries:
            raise DirectoryUnavailable("The directory did not return the written user; retry.")
        return self._to_users(entries)[0]

    def _set_password(self, dn: str, password: Secret) -> None:
        """Set the password the profile's way: RFC 3062, or a replace of the password
        attribute (AD's ``unicodePwd``: the server needs an encrypted connection)."""
        attribute = self.profile.password_attribute

        def operation(connection: Connection) -> None:
            with password.exposed() as value:
                if attribute is None:
                    operations.set_password(connection, dn, value)
                else:
                    octets = self.profile.password_value(value)
                    operations.modify(connection, dn, {attribute: [(MODIFY_REPLACE, [octets])]})

        try:
            self.connections.run(operation, retry=False)
        except LDAPOperationResult as error:
            # The directory's text may quote policy details but never the password; keep ours.
            raise _password_refused(error) from None
        except LDAPSASLPrepError:
            # ldap3 prepares passwords with RFC 4013; its message would quote the character.
            raise InvalidValue("The password holds characters RFC 4013 does not allow.") from None

    @_one_change("create user")
    def create_user(self, user: Resource, password: Secret | None) -> Resource:
        """Add the entry and set its password; a refused password leaves no entry behind.

        By default the password is set with RFC 3062 after the add. Between the
        two the entry is *pending*: born disabled and stamped in ``SCIM_LDAP_PENDING_ATTRIBUTE``
        until the password is in, so an outage between the steps leaves a user nobody can log
        in as, and the client's retry of the same POST (after :data:`PENDING_CREATE_GRACE`)
        takes the entry over and completes it. A refused password deletes the entry again.
        The password travels in the add itself, one atomic operation, where the profile sets
        it as an attribute (AD's ``unicodePwd``) and with ``SCIM_LDAP_PASSWORD_ON_ADD`` (for
        directories that hash and quality-check cleartext ``userPassword`` on add, e.g.
        OpenLDAP with ``ppolicy_hash_cleartext``).
        """
        name = user["userName"]
        naming = self.users.naming_values(name)
        uid = naming[self.profile.user_naming][0]
        dn = self.user_dn(uid)
        manager_dn = self._manager_dn(user)
        references = self._references(None, user)[1]
        values = {
            k: v for k, v in self.users.to_attributes(user, manager_dn, references).items() if v
        }
        values.update(naming)
        # The RDN is unique in its OU; a name found otherwise needs a search first.
        looked_up = (
            self.profile.user_naming != self.profile.user_name_attribute
            or not self._users_in_one_place  # a uid is unique in one OU only
        )
        if (looked_up or not self.users.is_plain(name)) and self._name_taken(name):
            raise Uniqueness("This userName is taken.")
        if self.profile.account_name:
            values[self.profile.account_name] = [self._free_account_name(uid)]
        external = bool(self.settings.external_id_attribute and user.get("externalId"))
        values["objectClass"] = self.users.object_classes(external, values)
        active = bool(user.get("active", True))
        in_add = password is not None and (
            self.settings.password_on_add or self.profile.password_attribute is not None
        )
        # A password set after the add: the entry is born disabled and enabled (if asked)
        # once the password is in, so no instant has an enabled user without it.
        password_after = password is not None and not in_add
        values.update(self.profile.initial_attributes(active and not password_after))
        bind_guard = self.profile.bind_guard if password_after else None
        if bind_guard is not None:
            # The password lifts the lock the entry is born with; this holds binds shut
            # until the create is finished, whatever the client asked for.
            values[bind_guard[0]] = [bind_guard[1]]
        pending = self.settings.pending_attribute if password_after else None
        stamp = _pending_stamp() if pending else ""
        if pending:
            values[pending] = [stamp]
            values["objectClass"] = self.users.object_classes(True)
        # The new entry comes back with the add (post-read) unless a password is set after it,
        # which changes the version again.
        read = [self._read_back] if self._read_back and (password is None or in_add) else None

        def add(connection: Connection) -> Mapping[str, Any] | None:
            if password is not None and in_add:
                attribute = self.profile.password_attribute
                with password.exposed() as secret:
                    value = self.profile.password_value(secret) if attribute else secret
                    with_password = {**values, attribute or "userPassword": [value]}
                    result = operations.add(connection, dn, with_password, read)
            else:
                result = operations.add(connection, dn, values, read)
            return parse_post_read(result.get("controls"))

        current: Resource | None = None
        written: Mapping[str, Any] | None = None
        try:
            written = self.connections.run(add, retry=False)
        except LDAPOperationResult as error:
            taken = error.result == ALREADY_EXISTS or (
                error.result == CONSTRAINT_VIOLATION and "unique" in str(error.message).lower()
            )
            if taken and pending:
                current = self._take_over_pending(dn, pending, stamp)
            if taken and current is None:
                raise Uniqueness("This userName is taken.") from None
            if in_add and error.result == CONSTRAINT_VIOLATION:
                raise _password_refused(error) from None
            if not taken:
                raise _naming_error(error, "the user") from None
        if password_after:
            assert password is not None
            try:
                self._set_password(dn, password)
            except ScimError as error:
                if pending and isinstance(error, DirectoryUnavailable):
                    # The pending entry stays, disabled; the client's retry completes it.
                    error.partial = True
                    raise
                guard = self._stamp_guard(pending, stamp) if pending else []
                with _after_a_write():
                    self._write(
                        "the rollback",
                        lambda c: operations.delete(c, dn, guard or None),
                        retry=True,
                    )
                raise
            try:
                written = self._finish_create(dn, pending, stamp, current, user, manager_dn)
            except Uniqueness:
                raise  # another retry of this create completed it
            except ScimError as error:
                error.partial = True  # the entry and its password are in, disabled
                raise
        return self._read_user_by_dn(dn, written)

    def _take_over_pending(self, dn: str, pending: str, stamp: str) -> Resource | None:
        """The entry at ``dn`` if it is a create cut before its password, now stamped ours.

        ``None`` (the name is simply taken) when it is not pending, or pending for less than
        :data:`PENDING_CREATE_GRACE` (a create still in flight), or another retry won it.
        """
        entries, _ = self._search(
            dn, "(objectClass=*)", [*self.users.read_attributes, pending], scope=BASE
        )
        if not entries:
            return None
        previous = first(entries[0]["attributes"], pending)
        if previous is None or not _pending_expired(str(previous)):
            return None
        try:
            self._modify_user(
                dn,
                {pending: [(MODIFY_REPLACE, [stamp])]},
                self._stamp_guard(pending, str(previous)),
            )
        except VersionConflict:
            return None
        return self._to_users(entries)[0]

    def _finish_create(
        self,
        dn: str,
        pending: str | None,
        stamp: str,
        current: Resource | None,
        user: Resource,
        manager_dn: str | None,
    ) -> Mapping[str, Any] | None:
        """After the password: clear the pending stamp and set the lock as asked (the password
        change may have cleared it), conditional on the stamp still being ours; an entry taken
        over from a cut create also gets the attributes of the request that completes it."""
        active = bool(user.get("active", True))
        changes: dict[str, list[Change]] = {}
        if current is not None:
            previous_manager: str | None = manager_dn
            if self.users.manager_id(current) != self.users.manager_id(user):
                previous_manager = _PREVIOUS if self.users.manager_id(current) else None
            same_state = {**user, "active": current.get("active", True)}
            before, after = self._references(current, same_state)
            changes.update(
                self.users.changes(
                    current, same_state, previous_manager, manager_dn, {}, before, after
                )
            )
            changes.pop("objectClass", None)  # the class came with the stamp
        changes.update(self._lock_after_password(dn, active))
        if self.profile.bind_guard is not None:
            changes[self.profile.bind_guard[0]] = [(MODIFY_REPLACE, [])]
        guard = []
        if pending:
            changes[pending] = [(MODIFY_REPLACE, [])]
            guard = self._stamp_guard(pending, stamp)
        try:
            return self._modify_user(dn, changes, guard)
        except VersionConflict:
            # Another retry of the same create took the entry over and answers for it.
            raise Uniqueness("This userName is taken.") from None

    @_one_change("update user")
    def update_user(
        self, user_id: str, current: Resource, desired: Resource, password: Secret | None
    ) -> Resource:
        """Write only what differs: one modify, a new userName (a modrdn where it is the RDN),
        a password.

        All or nothing for what the client sent: where the profile sets the
        password as an attribute (AD) it goes in the one modify with everything else; where
        it is an RFC 3062 operation it goes first, since the directory's policy may refuse
        it, then the modify (values the directory would refuse were refused before either,
        see :class:`~scim_core.backends.ldap.mapping.UserMapping`); a rename goes last, after
        a check that the new name is free. A failure after a first write (an outage, a name
        taken in between) is marked :attr:`~scim_core.errors.ScimError.partial`.
        """
        dn = self._dn_of(current)
        current_manager_dn = desired_manager_dn = None
        if self.users.manager_id(current) != self.users.manager_id(desired):
            desired_manager_dn = self._manager_dn(desired)
            # Only "some other value" matters for the diff; the old DN itself is not needed.
            current_manager_dn = _PREVIOUS if self.users.manager_id(current) else None
        lock_state = self._lock_state(current, dn)
        before, after = self._references(current, desired)
        changes = self.users.changes(
            current, desired, current_manager_dn, desired_manager_dn, lock_state, before, after
        )
        # The attribute modify is conditional on the version read (RFC 4528 assertion): a
        # concurrent change makes it fail and the service plans again on a fresh read. It
        # goes before a rename because slapo-unique runs its own search under the
        # operation's controls and so refuses any modrdn that carries an assertion.
        new_rdn = None
        if desired["userName"] != current["userName"]:
            # A new name only in case, or one sharing the uid, is still this user's own.
            if self._name_taken(desired["userName"], dn):
                raise Uniqueness("The new userName is taken.")
            if self.profile.user_naming == self.profile.user_name_attribute:
                uid = self.users.uid(desired["userName"])
                new_rdn = f"{self.profile.user_naming}={dn_value(uid)}"
                if dn_key(new_rdn) == dn_key(to_dn(dn)[0]):
                    new_rdn = None
        modrdn = new_rdn is not None
        written = None
        if password is not None and self.profile.password_attribute is not None:
            written = self._modify_user(
                dn, changes, self._version_guard(current), password=password
            )
        elif password is not None:
            written = self._write_with_password(dn, current, desired, changes, password)
        elif changes:
            written = self._modify_user(dn, changes, self._version_guard(current))
        if modrdn:
            wrote = bool(changes) or password is not None
            with _after_a_write() if wrote else nullcontext():
                dn = self._rename(dn, str(new_rdn))
            written = None  # a new DN (and version): read it
        return self._read_user_by_dn(dn, written)

    def _write_with_password(
        self,
        dn: str,
        current: Resource,
        desired: Resource,
        changes: dict[str, list[Change]],
        password: Secret,
    ) -> Mapping[str, Any] | None:
        """The password first (RFC 3062): it is what a directory refuses (its policy), and a
        refused one must leave the entry as it was. Then the other changes, with the disable
        marker written as asked (a password change may have lifted it). Where it does, the
        profile's bind guard holds binds shut from before the password until the marker is
        back, so a disabled user cannot bind at any instant."""
        guard = self.profile.bind_guard
        disabled = not current.get("active", True) or not desired.get("active", True)
        guarded = guard is not None and disabled
        if guard is not None and guarded:
            self._modify_user(
                dn, {guard[0]: [(MODIFY_REPLACE, [guard[1]])]}, self._version_guard(current)
            )
        try:
            self._set_password(dn, password)
        except ScimError as error:
            if isinstance(error, DirectoryUnavailable):
                # The password may be in, and the lock gone with it: the guard stays on (the
                # user reads as disabled) until the client's retry completes the change.
                error.partial = True
                raise
            if guard is not None and guarded:
                with _after_a_write():
                    self._modify_user(dn, {guard[0]: [(MODIFY_REPLACE, [])]}, [])
            raise
        final = {**changes, **self._lock_after_password(dn, bool(desired.get("active", True)))}
        if guard is not None and guarded:
            final[guard[0]] = [(MODIFY_REPLACE, [])]
        # The version moved with the password, so this modify asserts nothing; the version
        # was compared before (the guard's modify, or the read the plan was made from).
        with _after_a_write():
            return self._modify_user(dn, final, [])

    def _guard(self, ldap_filter: str) -> list[tuple[str, bool, bytes | None]]:
        """An RFC 4528 assertion on ``ldap_filter`` where the server has the control; none
        where it has not (the weaker guarantee is documented: the version and the pending
        stamp are then compared in the read before the write, not in the write itself)."""
        return [assertion(ldap_filter)] if self._capabilities().assertion else []

    def _version_guard(self, resource: Resource) -> list[tuple[str, bool, bytes | None]]:
        version = str(resource.get("meta", {}).get("version", ""))
        value = version.removeprefix("W/").strip('"')
        return self._guard(f"({self.profile.version_attribute}={filter_value(value)})")

    def _stamp_guard(self, pending: str, stamp: str) -> list[tuple[str, bool, bytes | None]]:
        """An assertion that the entry still carries ``stamp``: the create is ours."""
        return self._guard(f"({pending}={filter_value(stamp)})")

    def _modify_user(
        self,
        dn: str,
        changes: dict[str, list[Change]],
        guard: list[Any],
        *,
        password: Secret | None = None,
    ) -> Mapping[str, Any] | None:
        """One modify under ``guard`` (the version assertion); returns the entry's attributes
        after it when the directory answered the post-read control, else ``None``.

        :param password: replace the profile's password attribute in the same modify, so the
            directory takes or refuses the password with the rest. Such a modify is not sent
            again on a new connection: a password history would refuse a password the first
            attempt had set.
        """
        controls = [*guard, *filter(None, [self._read_back])]

        def send(
            connection: Connection, changes: Mapping[str, Sequence[tuple[str, Sequence[Any]]]]
        ) -> dict[str, Any]:
            try:
                return operations.modify(connection, dn, changes, controls)
            except LDAPOperationResult as error:
                # An auxiliary class (externalId, email flag, a site's) may be there already:
                # add only the ones the entry lacks.
                if error.result != VALUE_EXISTS or "objectClass" not in changes:
                    raise
                entries, _ = operations.search(
                    connection, dn, "(objectClass=*)", BASE, ["objectClass"], None
                )
                present = {
                    str(c).lower()
                    for e in entries
                    for c in all_values(e["attributes"], "objectClass")
                }
                rest = {k: v for k, v in changes.items() if k != "objectClass"}
                wanted = [c for _, added in changes["objectClass"] for c in added]
                missing = [c for c in wanted if str(c).lower() not in present]
                if missing:
                    rest["objectClass"] = [(MODIFY_ADD, missing)]
                return operations.modify(connection, dn, rest, controls)

        def modify(connection: Connection) -> Mapping[str, Any] | None:
            if password is None:
                return parse_post_read(send(connection, changes).get("controls"))
            attribute = str(self.profile.password_attribute)
            with password.exposed() as value:
                octets = self.profile.password_value(value)
                result = send(connection, {**changes, attribute: [(MODIFY_REPLACE, [octets])]})
            return parse_post_read(result.get("controls"))

        try:
            return self.connections.run(modify, retry=password is None)
        except LDAPOperationResult as error:
            if error.result == ASSERTION_FAILED:
                raise VersionConflict("The user changed concurrently.") from None
            raise scim_error(error, "the change") from None

    def _lock_state(self, current: Resource, dn: str) -> dict[str, list[str]]:
        """The lock attributes as the profile needs them to compute an active change: read
        where the marker is a bit field (AD), or where a disabled user may hold the bind
        guard (only that value of its attribute is removed on enable, never a site's own)."""
        active = current.get("active", True)
        if self.profile.lock_value is not None and (active or self.profile.bind_guard is None):
            return {} if active else {self.profile.lock_attribute: [self.profile.lock_value]}
        names = list(self.profile.lock_attributes)
        entries, _ = self._search(dn, "(objectClass=*)", names, scope=BASE)
        return dict(entries[0]["attributes"]) if entries else {}

    def _lock_after_password(self, dn: str, active: bool) -> dict[str, list[Change]]:
        """The lock state written explicitly: OpenLDAP's ppolicy removes the lock when a
        password is set, so the entry as read before no longer tells what is there (the
        bind guard, where one was set, is removed by the caller that set it)."""
        if self.profile.lock_value is not None:
            lock = {self.profile.lock_attribute: [self.profile.lock_value]}
        else:
            lock = self._lock_state({"active": False}, dn)
        return self.profile.active_changes(lock, active, force=True)

    def _name_taken(self, name: str, own_dn: str | None = None) -> bool:
        """Whether another user than the one at ``own_dn`` has ``name`` (case aside) or
        the lookup value a user of that name gets (its uid)."""
        attribute = self.profile.user_name_attribute
        value = self.users.lookup_value(name)
        entries, _ = self._search_users(
            f"(|({attribute}={filter_value(value)}){self.users.user_name_filter(name)})",
            ["1.1"],
        )
        return any(own_dn is None or dn_key(e["dn"]) != dn_key(own_dn) for e in entries)

    def _free_account_name(self, name: str) -> str:
        """AD's sAMAccountName for a new user: the first candidate nobody in the domain has."""
        attribute = str(self.profile.account_name)
        domain = self._capabilities().default_naming_context or self.settings.users_base
        candidates = self.profile.account_names(name)
        parts = "".join(f"({attribute}={filter_value(c)})" for c in candidates)
        entries, _ = self._search(domain, f"(|{parts})", [attribute], scope=SUBTREE)
        taken = {str(first(e["attributes"], attribute)).lower() for e in entries}
        for candidate in candidates:
            if candidate.lower() not in taken:
                return candidate
        raise Uniqueness("This userName is taken (its account name is in use).")

    def _rename(self, dn: str, new_rdn: str) -> str:
        """modrdn to ``new_rdn`` (a new uid, same parent); group memberships follow (value by
        value, idempotently)."""
        new_dn = ",".join([new_rdn, *to_dn(dn)[1:]])

        def modrdn(connection: Connection) -> None:
            operations.rename(connection, dn, new_rdn)

        try:
            self.connections.run(modrdn, retry=False)
        except LDAPOperationResult as error:
            if error.result in (ALREADY_EXISTS, CONSTRAINT_VIOLATION):
                raise Uniqueness("This userName is taken.") from None
            raise _naming_error(error, "the user") from None
        with _after_a_write():
            for group_dn in self._groups_with_member(dn):
                self._write_members(group_dn, add=[new_dn], remove=[dn])
        return new_dn

    def _groups_with_member(self, member_dn: str) -> list[str]:
        entries, _ = self._search_groups(
            f"(&{self.profile.group_filter}(member={filter_value(member_dn)}))",
            ["1.1"],
        )
        return [e["dn"] for e in entries]

    @_one_change("delete user")
    def delete_user(self, user_id: str) -> bool:
        """Remove the user from every group, then delete the entry."""
        entry = self._user_entry(user_id, ["1.1"])
        if entry is None:
            return False
        dn = entry["dn"]
        for group_dn in self._groups_with_member(dn):
            self._write_members(group_dn, add=[], remove=[dn])
        try:
            self._write("the user", lambda c: operations.delete(c, dn))
        except NotFound:
            return False
        return True

    # ================================================================= groups

    def _group_name_filter(self, name: str) -> str:
        """A raw filter for the groups displayed as ``name`` (case aside): by the display name
        where a rename wrote one, else by the cn."""
        attribute = self.settings.group_display_name_attribute
        value = filter_value(name)
        if attribute is None:
            return f"(cn={value})"
        return f"(|({attribute}={value})(&(cn={value})(!({attribute}=*))))"

    def _group_name_taken(self, name: str, own_dn: str | None = None) -> bool:
        """Whether a group other than the one at ``own_dn`` is displayed as ``name``."""
        cn = f"(cn={filter_value(name)})"
        entries, _ = self._search_groups(
            f"(&{self.profile.group_filter}(|{self._group_name_filter(name)}{cn}))", ["1.1"]
        )
        return any(own_dn is None or dn_key(e["dn"]) != dn_key(own_dn) for e in entries)

    def _to_group(
        self,
        entry: dict[str, Any],
        members: list[dict[str, str]] | None,
        ids: Mapping[str, str] | None = None,
    ) -> Resource:
        attributes = entry["attributes"]
        name = str(first(attributes, "cn"))
        attribute = self.settings.group_display_name_attribute
        shown = first(attributes, attribute) if attribute else None
        group: Resource = {"id": name, "displayName": name if shown is None else str(shown)}
        external = first(attributes, self._group_external_id) if self._group_external_id else None
        if external is not None:
            group["externalId"] = str(external)
        extension_resource(self.group_mapped, attributes, group, ids)
        if members is not None:
            group["members"] = members
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
        group["meta"] = meta
        return group

    def _members_of(self, group_dns: Sequence[str]) -> dict[str, list[dict[str, str]]]:
        """group DN (lower case) -> its user members, in one search through memberOf."""
        result: dict[str, list[dict[str, str]]] = {dn.lower(): [] for dn in group_dns}
        if not group_dns:
            return result
        member_of = self.profile.member_of
        parts = "".join(f"({member_of}={filter_value(dn)})" for dn in group_dns)
        several = len(group_dns) > 1
        # For one group every entry found is its member: memberOf (all of a user's groups)
        # would only cost transfer and decoding, so it is read only to sort out several.
        attributes = [
            self.profile.id_attribute,
            *self.users.user_name_attributes,
            *([member_of] if several else []),
        ]
        entries, _ = self._search_users(f"(&{self.profile.user_filter}(|{parts}))", attributes)
        for entry in entries:
            values = entry["attributes"]
            member = {
                "value": self.profile.format_id(first(values, self.profile.id_attribute)),
                "display": self.users.user_name(values),
                "type": "User",
            }
            groups = values.get(member_of) or () if several else group_dns
            for group_dn in groups:
                if str(group_dn).lower() in result:
                    result[str(group_dn).lower()].append(member)
        for members in result.values():
            members.sort(key=lambda m: m["display"])
        return result

    def _group_attributes(self) -> list[str]:
        optional = [self.settings.group_display_name_attribute, self._group_external_id]
        return [
            "cn",
            *filter(None, optional),
            *(m.ldap for m in self.group_mapped),
            self.profile.version_attribute,
            *_META,
        ]

    def get_group(self, group_id: str, members: bool = True) -> Resource | None:
        """The group whose cn is ``group_id``; members resolved through memberOf when asked."""
        if not group_id:
            return None
        dn = self.group_dn(group_id)
        if dn is None:
            return None
        entries, _ = self._search(
            dn, self.profile.group_filter, self._group_attributes(), scope=BASE
        )
        if not entries:
            return None
        entry = entries[0]
        member_list = self._members_of([entry["dn"]])[entry["dn"].lower()] if members else None
        return self._to_group(entry, member_list, self._group_named_ids([entry]))

    def find_groups(self, query: Query) -> Page:
        """A page of groups in cn order; one sorted VLV search plus one for members."""
        if query.keyset:
            return keyset.find_groups(self, query)
        condition = to_ldap(query.filter, self.group_filters) if query.filter else ""
        total, entries = self._sorted_page(
            self._group_place,
            f"(&{self.profile.group_filter}{condition})",
            query,
            self._group_attributes(),
        )
        with_members = query.attributes is None or "members" in query.attributes
        members = self._members_of([e["dn"] for e in entries]) if with_members else {}
        ids = self._group_named_ids(entries)
        return Page(
            total,
            [
                self._to_group(e, members.get(e["dn"].lower()) if with_members else None, ids)
                for e in entries
            ],
        )

    @_one_change("create group")
    def create_group(self, group: Resource) -> Resource:
        """Add a group of the profile's class; where that class needs a member (groupOfNames
        on OpenLDAP), an empty group holds the placeholder member."""
        name = group["displayName"]
        member_ids = [m["value"] for m in group.get("members") or ()]
        member_dns = self._existing_dns(member_ids, "member ids") if member_ids else []
        dn = f"cn={dn_value(name)},{self.settings.new_groups_base}"
        members = member_dns or ([self.placeholder_dn] if self.placeholder_dn else [])
        if self._group_name_taken(name):
            # A group renamed to this name holds it, or one in another OU has this cn.
            raise Uniqueness("A group with this displayName exists already.")
        values = {
            "objectClass": list(self.profile.group_classes),
            "cn": [name],
            **self.profile.group_extra(name),
            **({"member": members} if members else {}),
        }
        external = group.get("externalId")
        if external and self._group_external_id:
            values[self._group_external_id] = [str(external)]
            values["objectClass"].append(str(self.settings.group_object_class))
        for attribute, found in extension_values(self._group_values, group).items():
            if found:
                values[attribute] = found
        for mapped in self._group_references:
            named = reference_id(group, mapped)
            if named:
                values[mapped.ldap] = self._existing_dns([named], mapped.name)
        values["objectClass"] += self._group_classes_for(values, values["objectClass"])

        def add(connection: Connection) -> None:
            operations.add(connection, dn, values)

        try:
            self.connections.run(add, retry=False)
        except LDAPOperationResult as error:
            if error.result == ALREADY_EXISTS:
                raise Uniqueness("A group with this displayName exists already.") from None
            raise _naming_error(error, "the group") from None
        created = self.get_group(name)
        if created is None:
            raise DirectoryUnavailable("The directory did not return the new group; retry.")
        return created

    @_one_change("update group")
    def update_group(self, group_id: str, changes: Mapping[str, Any]) -> bool:
        """Set the group's ``displayName`` (its id, the cn, and its members stay),
        ``externalId`` and the attributes of the site's Group extension (keyed by their
        URN-qualified name; ``None`` clears one), in one modify of their attributes
        (``SCIM_LDAP_GROUP_DISPLAY_NAME_ATTRIBUTE``, ``SCIM_LDAP_EXTERNAL_ID_ATTRIBUTE``, with
        the auxiliary class where the entry lacks it), after a check that no other group is
        displayed so. An externalId where the directory has no place for one is not kept.

        :returns: ``False`` if there is no such group.
        :raises Mutability: a new display name where it is the cn (the attribute is ``none``).
        :raises Uniqueness: when another group has that display name.
        """
        shown = self.settings.group_display_name_attribute
        if "displayName" in changes and shown is None:
            raise Mutability("displayName is the group's id (its cn) here and cannot change.")
        if not group_id:
            return False
        dn = self.group_dn(group_id)
        if dn is None:
            return False
        entries, _ = self._search(dn, self.profile.group_filter, ["objectClass"], scope=BASE)
        if not entries:
            return False
        modify: dict[str, list[Change]] = {}
        display_name = changes.get("displayName")
        if shown is not None and display_name is not None:
            if self._group_name_taken(display_name, dn):
                raise Uniqueness("A group with this displayName exists already.")
            modify[shown] = [(MODIFY_REPLACE, [display_name])]
        external = self._group_external_id
        if external is not None and "externalId" in changes:
            value = changes["externalId"]
            modify[external] = [(MODIFY_REPLACE, [value] if value else [])]
        for mapped in self.group_mapped:
            if mapped.filter_name not in changes:
                continue
            value = changes[mapped.filter_name]
            if mapped.points_to is not None:
                named = reference_id({mapped.schema: {mapped.name: value}}, mapped)
                values = self._existing_dns([named], mapped.name) if named else []
            else:
                values = ldap_values(mapped, value)
            modify[mapped.ldap] = [(MODIFY_REPLACE, values)]
        if not modify:
            return True
        present = all_values(entries[0]["attributes"], "objectClass")
        extension = {m.ldap for m in self.group_mapped}
        needed = [self.settings.group_object_class] if set(modify) - extension else []
        written = {k: [v for _, vs in ops for v in vs] for k, ops in modify.items()}
        missing = [
            c
            for c in (*filter(None, needed), *self._group_classes_for(written, present))
            if c.lower() not in {str(p).lower() for p in present}
        ]
        if missing:
            modify["objectClass"] = [(MODIFY_ADD, list(dict.fromkeys(missing)))]
        self._write("the group", lambda c: operations.modify(c, dn, modify))
        return True

    @functools.cached_property
    def _group_values(self) -> tuple[MappedAttribute, ...]:
        """The Group extension's attributes held as values (converted, not looked up)."""
        return tuple(m for m in self.group_mapped if m.points_to is None)

    @functools.cached_property
    def _group_references(self) -> tuple[MappedAttribute, ...]:
        """The Group extension's references to users (an id in SCIM, a DN in LDAP)."""
        return tuple(m for m in self.group_mapped if m.points_to is not None)

    def _group_named_ids(self, entries: Sequence[dict[str, Any]]) -> dict[str, str]:
        """DN (lower case) -> user id for the users the groups' references name."""
        return self._named_user_ids(entries, [m.ldap for m in self._group_references])

    def _group_classes_for(
        self, values: Mapping[str, Sequence[Any]], present: Sequence[Any]
    ) -> list[str]:
        """The auxiliary classes the mapped attributes given a value need, not yet present."""
        have = {str(c).lower() for c in present}
        return [
            str(m.object_class)
            for m in self.group_mapped
            if m.object_class and values.get(m.ldap) and m.object_class.lower() not in have
        ]

    @property
    def _group_external_id(self) -> str | None:
        """Where a group's externalId lives: the users' attribute, on a group's auxiliary
        class (``None`` where groups have none, e.g. AD by default)."""
        if self.settings.group_object_class is None:
            return None
        return self.settings.external_id_attribute

    def _present_members(self, group_dn: str, dns: Sequence[str]) -> set[str] | None:
        """Which of ``dns`` the group has as members (DN keys), ``None`` if there is no group.

        One base search with a ValuesReturnFilter: the answer holds at most ``len(dns)``
        values however large the group is. A server without the control gets one base search
        per DN, filtered on that member, answering only whether the group matches.
        """
        if self._capabilities().values_return_filter:
            entries, _ = self._search(
                group_dn,
                self.profile.group_filter,
                ["member"],
                scope=BASE,
                controls=[values_return_filter("member", list(dns))],
            )
            if not entries:
                return None
            return {dn_key(str(v)) for v in entries[0]["attributes"].get("member") or ()}
        group, _ = self._search(group_dn, self.profile.group_filter, ["1.1"], scope=BASE)
        if not group:
            return None
        present = set()
        for dn in dict.fromkeys(dns):
            condition = f"(&{self.profile.group_filter}(member={filter_value(dn)}))"
            if self._search(group_dn, condition, ["1.1"], scope=BASE)[0]:
                present.add(dn_key(dn))
        return present

    def _write_members(self, group_dn: str, add: Sequence[str], remove: Sequence[str]) -> bool:
        """Add and delete member values, each only if needed; ``False`` if there is no group.

        Never a read-modify-write of the member list: the values in question are checked,
        then written one by one in a single modify. A concurrent writer changing the same
        values makes the modify fail (attribute or value exists / no such attribute), and the
        check runs again. groupOfNames must keep a member: the placeholder goes out when a
        real member comes in and comes in when the last real member goes.
        """
        placeholder = self.placeholder_dn
        for _ in range(_MEMBER_WRITE_ATTEMPTS):
            asked = [*add, *remove, *([placeholder] if placeholder else [])]
            present = self._present_members(group_dn, asked)
            if present is None:
                return False
            to_add = [dn for dn in add if dn_key(dn) not in present]
            to_remove = [dn for dn in remove if dn_key(dn) in present]
            changes: list[Change] = []
            if to_add:
                changes.append((MODIFY_ADD, to_add))
                if placeholder and dn_key(placeholder) in present:
                    changes.append((MODIFY_DELETE, [placeholder]))
            if to_remove:
                changes.append((MODIFY_DELETE, to_remove))
            if not changes:
                return True
            try:
                self._modify_members(group_dn, changes)
                return True
            except LDAPOperationResult as error:
                if error.result == OBJECT_CLASS_VIOLATION and placeholder and not to_add:
                    # That was the last member: the placeholder keeps the group valid.
                    changes.append((MODIFY_ADD, [placeholder]))
                    try:
                        self._modify_members(group_dn, changes)
                        return True
                    except LDAPOperationResult as retry_error:
                        error = retry_error
                if error.result == NO_SUCH_OBJECT:
                    return False
                # Someone else changed the same values: check again. Samba answers an add of
                # a present member with entryAlreadyExists rather than attributeOrValueExists.
                if error.result not in (NO_SUCH_ATTRIBUTE, VALUE_EXISTS, ALREADY_EXISTS):
                    raise scim_error(error, "the membership change") from None
        raise DirectoryUnavailable("Membership is changing concurrently; retry.", retry_after=1)

    def _modify_members(self, group_dn: str, changes: list[Change]) -> None:
        """One modify of the member attribute; LDAP refusals propagate to the caller."""
        self.connections.run(lambda c: operations.modify(c, group_dn, {"member": changes}))

    @_one_change("change the members of group")
    def change_members(
        self, group_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> bool:
        """Value-by-value membership writes; unknown ids to add are 400 and change nothing."""
        adding = list(dict.fromkeys(add))
        removing = [i for i in dict.fromkeys(remove) if i not in adding]
        if not group_id:
            return False
        add_dns = self._existing_dns(adding, "member ids") if adding else []
        remove_dns = list(self._dns_for_ids(removing).values()) if removing else []
        group_dn = self.group_dn(group_id)
        return group_dn is not None and self._write_members(group_dn, add_dns, remove_dns)

    def close(self) -> None:
        """Close this thread's connection."""
        self.connections.close()
