"""The Backend protocol: what the service needs from a store of users and groups.

Backends speak canonical SCIM resources (RFC 7643 JSON as ``dict``) with ``id`` and
``meta.created`` / ``meta.lastModified`` / ``meta.version``; the service adds ``schemas``,
``meta.location`` and ``meta.resourceType``. Backends raise :mod:`scim_core.errors` classes
(:class:`~scim_core.errors.Uniqueness`, :class:`~scim_core.errors.DirectoryUnavailable`, ...).
Backends are found by name through the entry-point group ``scim_core.backends``.

A backend whose store holds more User attributes than the defaults (the LDAP plugin, with a
mapping file) has a ``schemas`` attribute, a :class:`~scim_core.schemas.attributes.SchemaSet`:
the service then advertises, accepts and returns those attributes; its ``filter_forms``
((resource type, attribute, operator) each) extend the filter policy.

A backend that can change a group's attributes other than its members has a method
``update_group(group_id, changes) -> bool``: ``changes`` maps ``displayName`` (a rename: the id
stays), ``externalId`` and, where its ``schemas`` add a Group extension, each of its attributes
by URN-qualified name (``None`` clears one) to new values; ``False``: no such group; it
raises :class:`~scim_core.errors.Uniqueness` when another group is displayed so. Without one,
a PATCH of a group's ``displayName`` to another name is 400 ``mutability``. Its ``schemas``
say which of them it keeps (a readWrite ``displayName`` and ``externalId`` on Group).

A backend that can page by position has a true ``keyset_paging`` attribute: the service then
offers cursor-based paging (RFC 9865) over it, passing :attr:`Query.keyset` and
:attr:`Query.after`. Its walk order must be by something a resource keeps for life (its id),
so that every resource that exists from a walk's first page to its last is listed exactly
once, whatever is created, deleted or renamed in between.

A backend that plans its writes instead of making them (the LDAP plugin's dry run) says so with
a true ``dry_run`` attribute; the service then marks every answer to a write
(:data:`~scim_core.service.DRY_RUN_HEADER`) and every audit line. Without one it writes. Such a
backend may offer ``plan_scope()``, a context manager the service holds around each whole
request, so that the reads which build an answer after a write see the write as planned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from scim_core.filter import Filter
from scim_core.secret import Secret

__all__ = ["Backend", "BackendFactory", "Page", "Query", "Resource", "load_backend"]

Resource = dict[str, Any]
"""A canonical SCIM resource as JSON-compatible data."""

ENTRY_POINT_GROUP = "scim_core.backends"


@dataclass(frozen=True)
class Query:
    """A list request after parsing and policy checks (RFC 7644 §3.4.2).

    :param filter: the parsed filter, already allowed by the policy, or ``None`` for all.
    :param start_index: 1-based index of the first result.
    :param count: the page size; ``0`` asks only for ``totalResults``.
    :param attributes: the top-level attribute names the response needs (lower case), or
        ``None`` for all; a backend may return more, never fewer.
    :param keyset: page by position (a cursor walk) instead of by ``start_index``: the
        resources come in the backend's walk order, and the page says where the next one
        starts (:attr:`Page.next_position`).
    :param after: in a keyset walk, the position the previous page ended at (``None``: the
        walk's first page). The backend made it; the service returns it unchanged.
    """

    filter: Filter | None = None
    start_index: int = 1
    count: int = 100
    attributes: frozenset[str] | None = None
    keyset: bool = False
    after: str | None = None


@dataclass(frozen=True)
class Page:
    """One page of results in a stable order, with the total number of matches.

    :param next_position: in a keyset walk, where the next page starts, as an opaque string
        the backend reads back from :attr:`Query.after`; ``None`` on the last page.
    """

    total_results: int
    resources: Sequence[Resource] = field(default_factory=tuple)
    next_position: str | None = None


@runtime_checkable
class Backend(Protocol):
    """A store of users and groups the service can drive."""

    def check_ready(self) -> None:
        """Return if the store answers; raise :class:`~scim_core.errors.DirectoryUnavailable`."""

    def get_user(self, user_id: str, attributes: frozenset[str] | None = None) -> Resource | None:
        """The user with this id, or ``None``."""

    def find_users(self, query: Query) -> Page:
        """Users matching ``query`` ordered by ``userName``."""

    def create_user(self, user: Resource, password: Secret | None) -> Resource:
        """Store a new user; raise :class:`~scim_core.errors.Uniqueness` on a taken userName."""

    def update_user(
        self, user_id: str, current: Resource, desired: Resource, password: Secret | None
    ) -> Resource:
        """Write the difference between ``current`` and ``desired`` (and a new password).

        The write must be conditional on the stored version still being
        ``current["meta"]["version"]``; otherwise raise
        :class:`~scim_core.errors.VersionConflict` and write nothing.
        """

    def delete_user(self, user_id: str) -> bool:
        """Delete the user and its group memberships; ``False`` if there was no such user."""

    def get_group(
        self,
        group_id: str,
        members: bool = True,  # pragma: no mutate (documentation: each backend has its own)
    ) -> Resource | None:
        """The group with this id (its ``displayName``), members included when asked."""

    def find_groups(self, query: Query) -> Page:
        """Groups matching ``query`` ordered by ``displayName``."""

    def create_group(self, group: Resource) -> Resource:
        """Store a new group; raise :class:`~scim_core.errors.Uniqueness` if the name is taken."""

    def change_members(
        self, group_id: str, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> bool:
        """Add and remove member user ids value by value; ``False`` if there is no such group.

        Adding a present member or removing an absent one is not an error. Unknown user ids in
        ``add`` raise :class:`~scim_core.errors.InvalidValue` naming them, and nothing changes.
        """

    def close(self) -> None:
        """Release connections."""


class BackendFactory(Protocol):
    """What an entry point in ``scim_core.backends`` loads: settings in, a backend out."""

    def __call__(self, settings: Mapping[str, str]) -> Backend: ...


def load_backend(name: str) -> BackendFactory:
    """Find the backend factory registered under ``name`` in the ``scim_core.backends`` group.

    :raises LookupError: when no installed distribution registers that name.
    """
    found = entry_points(group=ENTRY_POINT_GROUP, name=name)
    for entry_point in found:
        factory: BackendFactory = entry_point.load()
        return factory
    known = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    raise LookupError(f"no SCIM backend named {name!r}; installed: {', '.join(known) or 'none'}")
