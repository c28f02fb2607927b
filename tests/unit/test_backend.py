"""The Backend protocol's module: backends found by name, and the list request and page
types every backend reads and returns."""

import dataclasses

import pytest

from scim_core.backend import Page, Query, load_backend
from scim_core.backends import ldap, memory


def test_a_backend_is_found_by_its_registered_name():
    assert load_backend("memory") is memory.create_backend
    assert load_backend("ldap") is ldap.create_backend
    assert load_backend("memory")({}).find_users(Query()).total_results == 0


def test_an_unknown_name_is_refused_naming_it_and_the_installed_ones():
    with pytest.raises(LookupError) as refused:
        load_backend("postgres")
    assert str(refused.value) == "no SCIM backend named 'postgres'; installed: ldap, memory"


def test_only_backends_are_found_not_the_other_entry_points_of_the_distribution():
    with pytest.raises(LookupError, match="'scim-ldap'"):
        load_backend("scim-ldap")


def test_names_are_matched_exactly():
    for near in ("Memory", "memory ", "mem"):
        with pytest.raises(LookupError, match=repr(near)):
            load_backend(near)


def test_a_query_without_arguments_lists_everything_from_the_first_result():
    query = Query()
    assert query.filter is None
    assert query.start_index == 1
    assert query.count == 100
    assert query.attributes is None
    assert query.keyset is False
    assert query.after is None


def test_a_page_holds_no_resources_and_no_next_position_unless_given():
    page = Page(7)
    assert page.total_results == 7
    assert tuple(page.resources) == ()
    assert page.next_position is None
    assert Page(1, [{"id": "a"}], "next").next_position == "next"


def test_queries_and_pages_cannot_change_once_made():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Query().count = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Page(0).total_results = 1  # type: ignore[misc]
    assert Query(count=5) == Query(count=5) and hash(Query()) == hash(Query())
