"""Pages of users and groups: one sorted window of the directory's, or several merged."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backend import Query
from scim_core.backends.ldap.directory import Directory, Place
from scim_core.backends.ldap.escape import filter_value
from scim_core.backends.ldap.filter import FilterMapping, list_filter, to_ldap
from scim_core.backends.ldap.results import scim_error
from scim_core.backends.ldap.values import case_ignored, first
from scim_core.backends.ldap.vlv import SortedWindow
from scim_core.filter import Compare, Filter

__all__ = ["Listing"]


def _in_order(sort_attribute: str) -> Callable[[dict[str, Any]], tuple[bool, str, str]]:
    """A list's order for entries merged or sorted here: the sort attribute compared as the
    directory's ordering rule does (case and insignificant spaces aside), entries without it
    last (RFC 2891 §1.1), then the DN, so the order is total."""

    def key(entry: dict[str, Any]) -> tuple[bool, str, str]:
        value = first(entry["attributes"], sort_attribute)
        return value is None, case_ignored(str(value or "")), str(entry["dn"]).casefold()

    return key


def _unique_lookup(node: Filter, keys: frozenset[str]) -> bool:
    """``userName eq`` or ``id eq`` (users), ``displayName eq`` (groups): one entry at most."""
    return (
        isinstance(node, Compare)
        and node.op == "eq"
        and node.path.sub_attr is None
        and node.path.attr.lower() in keys
        and isinstance(node.value, str)
    )


class Listing(Directory):
    """List pages in a stable order (server-side sort + VLV where offered)."""

    def _index_page(
        self,
        place: Place,
        object_filter: str,
        filters: FilterMapping,
        query: Query,
        attributes: list[str],
    ) -> tuple[int, list[dict[str, Any]]]:
        """The index page of the entries ``object_filter`` matches and the query's filter
        (made LDAP by ``filters``) selects, with the number of them (:meth:`_sorted_page`)."""
        condition = to_ldap(query.filter, filters) if query.filter else ""
        return self._sorted_page(place, list_filter(object_filter, condition), query, attributes)

    def _sorted_page(
        self, place: Place, search_filter: str, query: Query, attributes: list[str]
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
            entries, _ = self._search_in(place, search_filter, attributes)
            entries.sort(key=_in_order(place.sort_attribute))
            start = query.start_index - 1
            return len(entries), entries[start : start + query.count] if query.count else []
        if len(place.bases) > 1:
            return self._merged_page(place, search_filter, query, attributes)
        window = self._window(
            place,
            place.bases[0],
            search_filter,
            query.start_index,
            query.count,
            attributes,
            joins=self.settings.session_log,
        )
        return window.total, window.entries

    def _window(
        self,
        place: Place,
        base: str,
        search_filter: str,
        start: int,
        count: int,
        attributes: Sequence[str],
        joins: bool = False,
    ) -> SortedWindow:
        """One sorted VLV window under ``base``, a refusal translated.

        After a write the list is sorted afresh unless ``joins`` (the snapshot is not merged
        with the changes by key, as a cursor walk's is): an index page is a window at an
        offset, and the offsets of a reused snapshot drift with every user deleted since,
        which the window does not show. Workers holding snapshots of different ages would then
        disagree on where a user is, and a walk whose pages they share could miss one created
        before it began. With ``joins`` the directory's session log (and change log) say what
        changed, and the page accounts for each change or sorts afresh (:mod:`.joined`).
        """
        try:
            return self.pager.window(
                base,
                search_filter,
                place.sort_attribute,
                start,
                count,
                attributes,
                place.scope,
                joins=joins,
            )
        except LDAPOperationResult as error:
            raise scim_error(error, "the search") from None

    def _merged_page(
        self, place: Place, search_filter: str, query: Query, attributes: list[str]
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
        place: Place,
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
