"""List pages on a directory big enough for sorted-snapshot reuse (3,000 users, slapadd)."""

import json
import uuid

import pytest
from scim_http import settings_for

from scim_core.backend import Query
from scim_core.backends.ldap import LdapBackend
from scim_core.config import ServiceConfig
from scim_core.filter import parse_filter
from scim_core.messages import ScimRequest
from scim_core.service import ScimService
from scim_core.testing.slapd import SlapdInstance, slapadd

USERS = 3000


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    instance = SlapdInstance()
    instance.start()
    ldif = tmp_path_factory.mktemp("paging") / "users.ldif"
    with ldif.open("w") as out:
        for index in range(USERS):
            uid = f"page{index:05d}"
            out.write(
                f"dn: uid={uid},{instance.users_base}\nobjectClass: inetOrgPerson\n"
                f"uid: {uid}\ncn: P {index}\nsn: P\nmail: {uid}@example.com\n\n"
            )
    slapadd(instance, ldif)
    yield instance
    instance.close()


@pytest.fixture
def backend(big):
    backend = LdapBackend(settings_for(big, vlv_per_connection=3))
    yield backend
    backend.close()


def names(page):
    return [r["userName"] for r in page.resources]


def test_deep_pages_are_windows_of_one_order(backend):
    first = backend.find_users(Query(start_index=1, count=50))
    deep = backend.find_users(Query(start_index=2951, count=50))
    beyond = backend.find_users(Query(start_index=USERS + 100, count=50))
    seeded = first.total_results - USERS
    assert first.total_results == deep.total_results == beyond.total_results
    assert names(deep)[-1] == f"page{USERS - 1:05d}" or seeded > 0
    assert names(first) == sorted(names(first))
    assert beyond.resources == []


def test_reused_snapshot_never_hides_a_new_user(backend, big):
    service = ScimService(backend, ServiceConfig())
    before = backend.find_users(Query(start_index=1500, count=10))
    again = backend.find_users(Query(start_index=1500, count=10))
    assert names(again) == names(before)
    assert backend.pager._state().contexts, "a large sorted result keeps its snapshot"
    name = "page01499a" + uuid.uuid4().hex[:4]  # sorts right after page01499
    body = json.dumps(
        {
            "userName": name,
            "name": {"givenName": "N", "familyName": "U"},
            "emails": [{"value": f"{name}@example.com"}],
        }
    )
    created = service.handle(
        ScimRequest("POST", "/Users", body=body.encode(), content_type="application/scim+json")
    )
    assert created.status == 201
    after = backend.find_users(Query(start_index=1, count=0))
    assert after.total_results == before.total_results + 1
    window = backend.find_users(Query(start_index=1, count=200))
    listed = [
        u
        for p in range(0, after.total_results, 200)
        for u in names(backend.find_users(Query(start_index=p + 1, count=200)))
    ]
    assert name in listed and len(listed) == after.total_results == len(set(listed))
    assert names(window) == sorted(names(window))


def test_many_different_sorted_searches_never_exhaust_sessions(backend):
    # Each filtered search opens a VLV session that the server keeps until the connection
    # closes (at most 8 here); with vlv_per_connection=3 the connection is renewed in time.
    for index in range(20):
        found = backend.find_users(
            Query(filter=parse_filter(f'userName eq "page{index:05d}"'), count=5)
        )
        assert names(found) == [f"page{index:05d}"]


def test_a_new_backends_second_page_reuses_the_first_pages_sort(backend, monkeypatch):
    """The first sorted search of a list already keeps its snapshot: a new worker (or a walk)
    sorts the directory once, not once more on its second page."""
    sent_contexts = []
    search = type(backend.pager)._search

    def recording(self, *args):
        sent_contexts.append(args[7])  # the context id echoed, None for a fresh sort
        return search(self, *args)

    monkeypatch.setattr(type(backend.pager), "_search", recording)
    first = backend.find_users(Query(start_index=1, count=50))
    second = backend.find_users(Query(start_index=51, count=50))
    assert len(set(names(first) + names(second))) == 100
    assert sent_contexts[0] is None and isinstance(sent_contexts[1], bytes), sent_contexts


def test_a_small_sorted_result_reads_the_change_marker_once(backend, monkeypatch):
    reads = []
    marker = type(backend.pager)._marker
    monkeypatch.setattr(
        type(backend.pager), "_marker", lambda self, base: reads.append(base) or marker(self, base)
    )
    small = Query(filter=parse_filter('userName sw "page0000"'), count=20)
    pages = [names(backend.find_users(small)) for _ in range(3)]
    assert pages[0] == [f"page{index:05d}" for index in range(10)] == pages[2]
    assert len(reads) == 1, reads
