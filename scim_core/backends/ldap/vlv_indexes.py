"""389-DS's VLV indexes for the service's list searches (``scim-ldap schema --vlv-indexes``).

389-DS keeps no sorted result between searches: a sorted search sorts every match, so without
an index every list page, index or cursor, costs a sort of all users. A VLV index (a
``vlvSearch`` entry under the backend's configuration, a ``vlvIndex`` child per sort) keeps
the entries one search matches in one order, and every write keeps it current. 389-DS answers
a sorted VLV search from it only when the search is the index's exactly: the same base and
scope, the same filter *text* (compared as text, case aside: ``(&(a)(b))`` is not
``(&(b)(a))``) and the same sort keys (attribute, ordering rule, direction). So the indexes
below serve the searches the service sends for a list without a client filter, per base:
users by their userName attribute (index pages), users by their id (cursor walks) and groups
by cn (both). A filtered list still has its matches sorted.

389-DS also checks that the searching account may read the ``vlvSearch`` entry, and refuses a
search matching it (insufficient access) when it may not: each entry lets every bound account
read it, since any account sending that search (the service's, a read-only one of
``scim-ldap check``, another tool's) would be refused otherwise. The entry tells only the
search it serves. A one-level ``vlvSearch`` must be added once its base exists (389-DS looks
the base up when the entry is added, and on a start). The LDIF ends with the task that builds
the indexes from the entries already there. ``scim-ldap check`` says whether they are there
and built (:func:`vlv_index_report`), reading them as the service account.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scim_core.backends.ldap.escape import dn_value
from scim_core.backends.ldap.filter import list_filter
from scim_core.backends.ldap.keyset import KEYSET_DIALECTS
from scim_core.backends.ldap.ldif import ldif_line
from scim_core.backends.ldap.profiles import PROFILES
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.backends.ldap.values import dn_key, first
from scim_core.checks import OK, WARNING, Step

__all__ = [
    "REINDEX_TASK_DN",
    "VLV_ATTRIBUTES",
    "VLV_CONFIGURATION",
    "VLV_DIALECTS",
    "VLV_ENTRIES",
    "VlvSearch",
    "vlv_index_ldif",
    "vlv_index_report",
    "vlv_searches",
]

#: The directory profiles that have VLV indexes.
VLV_DIALECTS = frozenset({"389ds"})
#: The entry of the task that builds the indexes (the LDIF's last record).
REINDEX_TASK_DN = "cn=scim-ldap vlv indexes,cn=index,cn=tasks,cn=config"

#: Where 389-DS keeps its databases' configuration, each one's VLV entries under it.
VLV_CONFIGURATION = "cn=ldbm database,cn=plugins,cn=config"
#: The VLV entries under :data:`VLV_CONFIGURATION` (a subtree search's filter).
VLV_ENTRIES = "(|(objectClass=vlvSearch)(objectClass=vlvIndex))"
#: What :func:`vlv_index_report` reads of them.
VLV_ATTRIBUTES = ("vlvBase", "vlvScope", "vlvFilter", "vlvSort", "vlvEnabled")
_BASE, _SCOPE, _FILTER, _SORT, _ENABLED = VLV_ATTRIBUTES

_SCOPES = {"one": 1, "sub": 2}


@dataclass(frozen=True)
class VlvSearch:
    """One ``vlvSearch`` entry: the search it serves and the sorts it keeps (``vlvIndex``).

    :param name: its ``cn``; each sort's index is named ``<name> by <attribute>``.
    :param base: the search base.
    :param scope: ``one`` or ``sub`` (``SCIM_LDAP_*_SCOPE``).
    :param search_filter: the filter exactly as the service sends it.
    :param sorts: the sort attributes, one index each.
    """

    name: str
    base: str
    scope: str
    search_filter: str
    sorts: tuple[str, ...]

    def index_name(self, sort: str) -> str:
        """The ``cn`` of the ``vlvIndex`` child keeping ``sort``."""
        return f"{self.name} by {sort}"


def vlv_searches(settings: LdapSettings) -> list[VlvSearch]:
    """The searches a list without a client filter sends under ``settings``, one per base.

    The filters are the ones every list builds with no condition
    (:func:`~scim_core.backends.ldap.filter.list_filter`).

    :raises ValueError: for a dialect without VLV indexes.
    """
    if settings.dialect not in VLV_DIALECTS:
        raise ValueError(f"VLV indexes are 389-DS's; the dialect is {settings.dialect}")
    profile = PROFILES[settings.dialect]
    user_sorts = (profile.user_name_attribute, KEYSET_DIALECTS[profile.name][0])
    kinds = (
        ("users", settings.users_bases, settings.users_scope, profile.user_filter, user_sorts),
        ("groups", settings.groups_bases, settings.groups_scope, profile.group_filter, ("cn",)),
    )
    return [
        VlvSearch(
            f"scim {kind}" + (f" {number}" if len(bases) > 1 else ""),
            base,
            scope,
            list_filter(kind_filter),
            sorts,
        )
        for kind, bases, scope, kind_filter, sorts in kinds
        for number, base in enumerate(bases, 1)
    ]


def _record(dn: str, *pairs: tuple[str, str]) -> str:
    return "\n".join([ldif_line("dn", dn), *(ldif_line(a, v) for a, v in pairs)]) + "\n"


#: Every bound account may read the entry (and so use the index).
_ACI = (
    '(targetattr="*")(version 3.0; acl "VLV index of the SCIM service\'s lists"; '
    'allow (read, search, compare) userdn="ldap:///all";)'
)


def vlv_index_ldif(settings: LdapSettings, backend: str = "userRoot") -> str:
    """The LDIF a 389-DS administrator adds (as the Directory Manager) for :func:`vlv_searches`:
    the ``vlvSearch`` and ``vlvIndex`` entries under ``backend`` (the backend holding the
    bases), each search readable by every bound account, then the task building every index.

    :raises ValueError: for a dialect without VLV indexes.
    """
    searches = vlv_searches(settings)
    parent = f"cn={backend},{VLV_CONFIGURATION}"
    records = [
        "# VLV indexes for the SCIM service's list searches on 389 Directory Server, for its\n"
        "# bases and scopes as configured (SCIM_LDAP_*). Add it as the Directory Manager once\n"
        "# the bases exist (ldapadd -x -D 'cn=Directory Manager' -W -H ldap://HOST -f vlv.ldif);\n"
        "# its last entry starts the task that builds the indexes. Then\n"
        f"# `dsconf INSTANCE backend vlv-index list {backend}` shows vlvEnabled: 1 for each.\n"
    ]
    task: list[tuple[str, str]] = []
    for search in searches:
        dn = f"cn={dn_value(search.name)},{parent}"
        records.append(
            _record(
                dn,
                ("objectClass", "top"),
                ("objectClass", "vlvSearch"),
                ("cn", search.name),
                ("vlvBase", search.base),
                ("vlvScope", str(_SCOPES[search.scope])),
                ("vlvFilter", search.search_filter),
                ("aci", _ACI),
            )
        )
        for sort in search.sorts:
            name = search.index_name(sort)
            records.append(
                _record(
                    f"cn={dn_value(name)},{dn}",
                    ("objectClass", "top"),
                    ("objectClass", "vlvIndex"),
                    ("cn", name),
                    ("vlvSort", sort),
                )
            )
            task.append(("nsIndexVLVAttribute", name))
    records.append(
        _record(
            REINDEX_TASK_DN,
            ("objectClass", "top"),
            ("objectClass", "extensibleObject"),
            ("cn", REINDEX_TASK_DN.split(",")[0].removeprefix("cn=")),
            ("nsInstance", backend),
            *task,
        )
    )
    return "\n".join(records)


def _text(entry: Mapping[str, Any], attribute: str) -> str:
    value = first(entry["attributes"], attribute)
    if value is None:
        # No base, scope, filter or sort is any text standing for an absent one.
        return ""  # pragma: no mutate
    return str(value).strip()


def vlv_index_report(settings: LdapSettings, entries: Iterable[Mapping[str, Any]]) -> list[Step]:
    """``scim-ldap check``'s line on 389-DS: whether each index :func:`vlv_searches` needs is
    among ``entries`` (as 389-DS matches a search: base, scope, filter text and sort, case
    aside) and built; none on other directories. A missing or unbuilt index is a warning: its
    lists work, sorting every match.

    :param entries: the ``vlvSearch`` and ``vlvIndex`` entries under :data:`VLV_CONFIGURATION`
        the searching account may read, as a search returns them (``dn``, ``attributes``:
        :data:`VLV_ATTRIBUTES`, found by :data:`VLV_ENTRIES`).
    """
    if settings.dialect not in VLV_DIALECTS:
        return []
    entries = list(entries)  # each search looks through them all
    missing, unbuilt = [], []
    for search in vlv_searches(settings):
        parents = [
            dn_key(str(e["dn"]))
            for e in entries
            if dn_key(_text(e, _BASE)) == dn_key(search.base)
            and _text(e, _SCOPE) == str(_SCOPES[search.scope])
            and _text(e, _FILTER).lower() == search.search_filter.lower()
        ]
        for sort in search.sorts:
            name = search.index_name(sort)
            index = next(
                (
                    e
                    for e in entries
                    if _text(e, _SORT).lower() == sort.lower()
                    and dn_key(str(e["dn"])).partition(",")[2] in parents
                ),
                None,
            )
            if index is None:
                missing.append(f"{name} ({search.base})")
            elif _text(index, _ENABLED) != "1":
                unbuilt.append(f"{name} ({search.base})")
    if not missing and not unbuilt:
        return [Step("VLV indexes", OK, "every list without a filter reads its index")]
    problems = [f"missing: {', '.join(missing)}"] if missing else []
    problems += [f"not built: {', '.join(unbuilt)}"] if unbuilt else []
    return [
        Step(
            "VLV indexes",
            WARNING,
            "; ".join(problems) + ": those lists sort every match on every page; "
            "`scim-ldap schema --dialect 389ds --vlv-indexes` prints them",
        )
    ]
