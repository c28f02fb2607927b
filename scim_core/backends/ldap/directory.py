"""The directory as the LDAP backend's parts share it: settings, connections, where users
and groups live, and the searches and writes every part makes.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ldap3 import BASE, LEVEL, SUBTREE, Connection
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap import operations
from scim_core.backends.ldap.capabilities import Capabilities
from scim_core.backends.ldap.connection import ConnectionFactory
from scim_core.backends.ldap.controls import Control, assertion, post_read
from scim_core.backends.ldap.escape import dn_value, filter_value
from scim_core.backends.ldap.filter import kind_classes, lookup_filter
from scim_core.backends.ldap.mapped import MappedAttribute
from scim_core.backends.ldap.mapping import UserMapping
from scim_core.backends.ldap.paging import SortedPager
from scim_core.backends.ldap.profiles import PROFILES, DirectoryProfile
from scim_core.backends.ldap.results import NO_SUCH_OBJECT, OTHER, scim_error
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.backends.ldap.sitemap import default_mapping
from scim_core.backends.ldap.values import all_values, dn_key, first, first_rdn
from scim_core.backends.ldap.wire import Keep, Search
from scim_core.errors import InvalidValue, ScimError
from scim_core.normalize import Normalizer, normalize_username

__all__ = [
    "META_ATTRIBUTES",
    "Directory",
    "Place",
    "after_a_write",
    "log",
    "naming_error",
    "one_change",
]

log = logging.getLogger("scim.ldap")


META_ATTRIBUTES = ("createTimestamp", "modifyTimestamp")


_USER_KEYS = frozenset({"id", "username"})  # what the directory keeps unique, per type


_GROUP_KEYS = frozenset({"id", "displayname"})


@dataclass(frozen=True)
class Place:
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


@contextmanager
def after_a_write() -> Iterator[None]:
    """Mark a failure inside as partial: an earlier step of the same change is written."""
    try:
        yield
    except ScimError as error:
        error.partial = True
        raise


def naming_error(error: LDAPOperationResult, what: str) -> ScimError:
    """For an add or a rename: OpenLDAP answers "other" (80) to an RDN it cannot index (too
    long), which is the client's name at fault, not an outage."""
    if error.result == OTHER:
        return InvalidValue(f"The directory cannot hold {what} under this name (too long?).")
    return scim_error(error, what)


def one_change(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A public write: in a dry run, its operations are planned together as one block."""

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def planned(self: Directory, *args: Any, **kwargs: Any) -> Any:
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


class Directory:
    """The state and plumbing shared by the backend's parts."""

    def __init__(
        self,
        settings: LdapSettings,
        connections: ConnectionFactory | None = None,
        normalize: Normalizer = normalize_username,
    ):
        self.settings = settings
        self.profile: DirectoryProfile = PROFILES[settings.dialect]
        self._user_classes = kind_classes(self.profile.user_filter)
        self.connections = connections or ConnectionFactory(settings)
        mapping = default_mapping(settings.dialect).extended_by(settings.mapping)
        self.users = UserMapping(
            profile=self.profile,
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
        # ldap3 decodes a post-read entry itself, and text that is not UTF-8 as Latin-1: an
        # entry with mapped octets is read back with a search instead.
        self._read_back: Control | None = (
            None if mapped_octets else post_read(self.users.read_attributes)
        )
        #: The profile's own mapping extended by the site's.
        self.mapping = mapping
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
        self._user_place = Place(
            settings.users_bases,
            self.user_scope,
            self.profile.user_name_attribute,
            self.profile.id_attribute,
            _USER_KEYS,
        )
        self._group_place = Place(settings.groups_bases, self.group_scope, "cn", "cn", _GROUP_KEYS)
        self.pager = SortedPager(
            self.connections,
            settings.vlv_per_connection,
            self.profile.ordering_rule,
            self.binary,
            change_log=settings.change_log,
        )
        #: The pager of cursor walks over users, made on the first (see :mod:`.keyset`).
        self.keyset_pager: SortedPager | None = None
        #: The pager of the list by creation time that cuts walks into parts (:mod:`.keyset`).
        self.parts_pager: SortedPager | None = None

    def _search(
        self,
        base: str,
        search_filter: str,
        attributes: Sequence[str],
        *,
        scope: str = LEVEL,
        controls: Sequence[Any] | None = None,
        size_limit: int = 0,
        keep: Keep | None = None,
    ) -> tuple[list[Any], dict[str, Any]]:
        """One search; ``keep`` makes what is kept of each entry as it arrives."""
        request = Search(
            base, search_filter, scope, attributes, controls, self.binary, size_limit, keep
        )

        def operation(connection: Connection) -> tuple[list[Any], dict[str, Any]]:
            try:
                # Encoded and decoded without pyasn1 (see wire.py).
                return operations.search(connection, request)
            except LDAPOperationResult as error:
                # No such base: nothing matches.
                if error.result == NO_SUCH_OBJECT:
                    return [], dict(connection.result or {})
                raise

        try:
            return self.connections.run(operation)
        except LDAPOperationResult as error:
            raise scim_error(error, "the search") from None

    def _search_in(
        self,
        place: Place,
        search_filter: str,
        attributes: Sequence[str],
        *,
        first_match: bool = False,
        size_limit: int = 0,
        keep: Keep | None = None,
    ) -> tuple[list[Any], dict[str, Any]]:
        """One search per base of ``place``, in its scope, the entries concatenated (the bases
        never overlap, so no entry comes twice); ``first_match`` stops at the first base that
        has any, for a lookup by a value only one entry holds; ``size_limit`` (0: none) bounds
        the entries in all."""
        found: list[Any] = []
        result: dict[str, Any] = {}
        for base in place.bases:
            left = size_limit - len(found) if size_limit else 0
            entries, result = self._search(
                base, search_filter, attributes, scope=place.scope, size_limit=left, keep=keep
            )
            found += entries
            if (first_match and found) or (size_limit and len(found) >= size_limit):
                break
        return found, result

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

    def group_dn(self, group_id: str) -> str | None:
        """The DN of the group whose cn is ``group_id``: derived where groups live right under
        one base, else searched (``None``: no such group, or several with that cn)."""
        if self._groups_in_one_place:
            return f"cn={dn_value(group_id)},{self.settings.groups_base}"
        entries, _ = self._search_in(
            self._group_place,
            lookup_filter(self.profile.group_filter, f"(cn={filter_value(group_id)})"),
            ["1.1"],
        )
        if len(entries) > 1:
            log.warning("several groups have one cn under the groups bases; none is answered")
        return str(entries[0]["dn"]) if len(entries) == 1 else None

    def _id_filter(self, ident: str) -> str:
        value = filter_value(self.profile.id_value(ident))
        return f"({self.profile.id_attribute}={value})"

    def _ids_filter(self, ids: Iterable[str]) -> str:
        return "(|" + "".join(self._id_filter(i) for i in ids) + ")"

    def _users_named(
        self, names: str, attributes: Sequence[str], *, first_match: bool = False
    ) -> list[dict[str, Any]]:
        """The users among the entries ``names`` picks out (ids, DN values); ``first_match``:
        see :meth:`_search_in`. Where users are the entries of a few object classes (OpenLDAP,
        389-DS), the search names the entries alone (with the class, slapd would read its index
        list, every user's id: 117 against 70 us a lookup at 100,000 users, ``python -m
        bench.slapd_work``), and one is a user when its objectClass values name such a class.
        Those whose values name none (another kind, a site's subclass, classes the service may
        not read) the directory settles in one more search, however many. AD's kind excludes
        computers: it stays in the search."""
        classes = self._user_classes
        if classes is None:
            entries, _ = self._search_in(
                self._user_place,
                lookup_filter(self.profile.user_filter, names),
                attributes,
                first_match=first_match,
            )
            return entries
        wanted = [a for a in attributes if a != "1.1"]
        if not any(a.lower() == "objectclass" for a in wanted):
            wanted.append("objectClass")
        entries, _ = self._search_in(self._user_place, names, wanted, first_match=first_match)
        undecided = {
            dn_key(e["dn"])
            for e in entries
            if not classes & {str(c).lower() for c in all_values(e["attributes"], "objectClass")}
        }
        if undecided:
            users, _ = self._search_in(
                self._user_place, lookup_filter(self.profile.user_filter, names), ["1.1"]
            )
            undecided -= {dn_key(e["dn"]) for e in users}
        return [e for e in entries if dn_key(e["dn"]) not in undecided]

    def _dns_for_ids(self, ids: Sequence[str]) -> dict[str, str]:
        """user id -> DN for the ids that exist, in one search."""
        valid = [i for i in dict.fromkeys(ids) if self.profile.is_valid_id(i)]
        if not valid:
            return {}
        entries = self._users_named(self._ids_filter(valid), [self.profile.id_attribute])
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

    def _named_user_ids(
        self,
        entries: Sequence[dict[str, Any]],
        holders: Sequence[str] | None = None,
        *,
        known: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """DN (lower case) -> user id, for every user ``entries`` name in ``holders`` (by
        default a user's manager and mapped references) but those ``known`` already, in one
        search: by the profile's own-DN attribute, else by the userName in the RDN."""
        if holders is None:
            holders = ["manager", *(m.ldap for m in self.users.references)]
        if not holders:
            return {}
        managers = {
            str(dn).lower()
            for e in entries
            for holder in holders
            if (dn := first(e["attributes"], holder)) and str(dn).lower() not in (known or ())
        }
        if not managers:
            return {}
        parts = self._dns_filter(managers)
        if not parts:
            return {}
        found, _ = self._search_in(self._user_place, f"(|{parts})", [self.profile.id_attribute])
        by_dn = {
            dn_key(e["dn"]): self.profile.format_id(
                first(e["attributes"], self.profile.id_attribute)
            )
            for e in found
        }
        return {dn: by_dn[dn_key(dn)] for dn in managers if dn_key(dn) in by_dn}

    def _dns_filter(self, dns: Iterable[str]) -> str:
        """Filter items matching the users at ``dns`` (and maybe others; entries are to be
        told apart by DN): by the profile's own-DN attribute, else by the userName in the RDN
        (empty: no DN names a user that way)."""
        dn_attribute = self.profile.dn_attribute
        if dn_attribute:
            return "".join(f"({dn_attribute}={filter_value(dn)})" for dn in dns)
        names = set()
        for dn in dns:
            rdn = first_rdn(dn)  # the value, not its escaped text in the DN
            if rdn is None:
                log.debug("a value naming a user is not a DN of one value; left unresolved")
            elif rdn[0].lower() == self.profile.user_naming.lower():
                names.add(rdn[1])
        naming = self.profile.user_naming
        return "".join(f"({naming}={filter_value(n)})" for n in sorted(names))

    def _guard(self, ldap_filter: str) -> list[tuple[str, bool, bytes | None]]:
        """An RFC 4528 assertion on ``ldap_filter`` where the server has the control; none
        where it has not (the weaker guarantee is documented: the version and the pending
        stamp are then compared in the read before the write, not in the write itself)."""
        return [assertion(ldap_filter)] if self._capabilities().assertion else []

    def check_ready(self) -> None:
        """Bind-level check on this worker's connection: a Who am I?, or a read of the
        rootDSE where the server has no Who am I? (Samba)."""
        if self._capabilities().who_am_i:

            def operation(connection: Connection) -> None:
                connection.extend.standard.who_am_i()

            self._write("the readiness check", operation)
        else:
            self._search("", "(objectClass=*)", ["1.1"], scope=BASE)

    def close(self) -> None:
        """Close this thread's connection."""
        self.connections.close()
