"""List pages on a directory big enough for sorted-snapshot reuse (3,000 users, slapadd)."""

import json
import time
import uuid

import pytest
from scim_http import settings_for

from scim_core.backend import Query
from scim_core.backends.ldap import LdapBackend, index_refresh
from scim_core.backends.ldap.vlv import SortedSearch
from scim_core.config import ServiceConfig
from scim_core.filter import parse_filter
from scim_core.messages import ScimRequest
from scim_core.service import ScimService
from scim_core.testing.slapd import SlapdInstance, slapadd

USERS = 3000


def created_at(index):
    """Creation times spread over 37 seconds in an order unlike the uids', the first 600
    users in one second (more than a part of the walks below holds); their last change then
    too, long before the tests' own (as in a directory not loaded a moment ago: the changes
    since a snapshot are found by the second they were made in)."""
    second = 0 if index < 600 else 1 + index * 7 % 37
    return f"2020010100{second // 60:02d}{second % 60:02d}Z"


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
                f"uid: {uid}\ncn: P {index}\nsn: P\nmail: {uid}@example.com\n"
                f"createTimestamp: {created_at(index)}\n"
                f"entryCSN: {created_at(index)[:-1]}.000000Z#000000#000#000000\n\n"
            )
    slapadd(instance, ldif)
    yield instance
    instance.close()


def logged(big):
    """The default settings: this slapd keeps a session log (found by asking it) and logs
    deletes and renames (found by its ``auditContext``)."""
    return settings_for(big, vlv_per_connection=3)


@pytest.fixture
def backend(big):
    backend = LdapBackend(logged(big))
    yield backend
    backend.close()


@pytest.fixture
def plain(big):
    """A backend told not to ask the session log: it never does."""
    backend = LdapBackend(settings_for(big, vlv_per_connection=3, session_log=False))
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
    window = SortedSearch.window

    def recording(self, query, start, count, attributes, context, value=None):
        sent_contexts.append(context)  # the context id echoed, None for a fresh sort
        return window(self, query, start, count, attributes, context, value)

    monkeypatch.setattr(SortedSearch, "window", recording)
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


# ------------------------------------------------------- writes merged into a reused snapshot


@pytest.fixture
def admin(big):
    from ldap3 import Connection, Server

    connection = Connection(Server(big.url), big.admin_dn, big.admin_password, auto_bind=True)
    yield connection
    connection.unbind()


@pytest.fixture
def merges_kept(monkeypatch):
    """Reading the changes never costs too much here: the snapshot is always merged with
    them (on a loaded machine a merge may take longer than the share of a sort allowed)."""
    from scim_core.backends.ldap import paging

    monkeypatch.setattr(paging, "_MERGE_FLOOR", 3600.0)


@pytest.fixture
def contexts_sent(backend, monkeypatch):
    """The context id each sorted search echoed (``None``: a fresh sort), in order, per list
    (sort key and filter)."""
    sent = {}
    window = SortedSearch.window

    def recording(self, query, start, count, attributes, context, value=None):
        sent.setdefault((query.sort_attribute, query.search_filter), []).append(context)
        return window(self, query, start, count, attributes, context, value)

    monkeypatch.setattr(SortedSearch, "window", recording)
    return sent


def sorted_once_each(contexts_sent):
    """Each list was sorted once, by its first search, and reused by every later one."""
    return contexts_sent and all(
        sent[0] is None and all(isinstance(c, bytes) for c in sent[1:])
        for sent in contexts_sent.values()
    )


def current_names(admin, big):
    admin.search(big.users_base, "(objectClass=inetOrgPerson)", attributes=["uid"])
    return {str(entry.uid) for entry in admin.entries}


def index_walk(backend, count=250):
    listed, total, start = [], None, 1
    while total is None or start <= total:
        page = backend.find_users(Query(start_index=start, count=count))
        total = page.total_results
        listed += names(page)
        start += count
    return listed, total


def write_a_little_of_everything(admin, big, tag, victim):
    """A create, a modify, a delete and a rename under the users base: (created, deleted,
    renamed from, renamed to) uids. ``victim`` (below 400) picks the deleted and renamed."""
    base = big.users_base
    created, new = f"page01000{tag}", f"page00001{tag}"
    deleted, old = f"page{2000 + victim:05d}", f"page{2500 + victim:05d}"
    assert admin.add(
        f"uid={created},{base}", ["inetOrgPerson"], {"uid": created, "cn": "C", "sn": "C"}
    ), admin.result
    assert admin.modify(f"uid=page01234,{base}", {"title": [("MODIFY_REPLACE", [tag])]})
    assert admin.delete(f"uid={deleted},{base}"), admin.result
    assert admin.modify_dn(f"uid={old},{base}", f"uid={new}"), admin.result
    return created, deleted, old, new


def test_without_the_session_log_index_pages_after_writes_sort_again(
    plain, big, admin, contexts_sent
):
    """An index page is a window at an offset: after a write the list is sorted afresh, so
    the offsets are those of the directory as it is (never a snapshot's, which would drift
    with each user deleted since)."""
    plain.find_users(Query(start_index=1, count=10))  # the snapshot
    tag = uuid.uuid4().hex[:6]
    created, deleted, old, new = write_a_little_of_everything(admin, big, tag, 0)
    listed, total = index_walk(plain)
    (sent,) = contexts_sent.values()
    assert sent[0] is None and sent[1] is None, "the page after the writes reused the snapshot"
    assert all(isinstance(c, bytes) for c in sent[2:]), "a page without a write sorted again"
    now = current_names(admin, big)
    assert sorted(listed) == sorted(now) and total == len(now)
    assert created in listed and new in listed and deleted not in listed and old not in listed
    assert listed == sorted(listed, key=str.casefold)


def index_contexts(contexts_sent):
    """The context ids the index pages' searches echoed (``None``: a fresh sort)."""
    return next(sent for (key, _), sent in contexts_sent.items() if key == "uid")


def snapshot_then_next_second(backend, admin, big):
    """A write (so the snapshot's marker is in the directory's change log), the index
    snapshot, then the next second: a user created now is newer than the snapshot by its
    creation time, which has whole seconds only."""
    modify_titles(admin, big, ["page00002"])
    first = backend.find_users(Query(start_index=1, count=10))
    time.sleep(1.05 - time.time() % 1)
    return first


def add_user(admin, big, uid):
    assert admin.add(
        f"uid={uid},{big.users_base}", ["inetOrgPerson"], {"uid": uid, "cn": "C", "sn": "C"}
    ), admin.result


def test_index_pages_after_creates_and_modifies_reuse_the_snapshot(
    backend, big, admin, contexts_sent, merges_kept
):
    """Users created since the snapshot are put in their places in it, users modified come
    as they are now: no page sorts the directory again, and the walk lists everyone once, in
    order, with the right total."""
    first = snapshot_then_next_second(backend, admin, big)
    tag = uuid.uuid4().hex[:6]
    created = [f"page01000{tag}", f"page00000{tag}", f"page02999{tag}", f"zzz{tag}"]
    for uid in created:
        add_user(admin, big, uid)
    title = modify_titles(admin, big, ["page01234", "page01000"])
    listed, total = index_walk(backend, count=250)
    sent = index_contexts(contexts_sent)
    assert sent[0] is None and all(isinstance(c, bytes) for c in sent[1:]), sent
    now = current_names(admin, big)
    assert total == len(now) == first.total_results + len(created)
    assert listed == sorted(now, key=str.casefold)
    page = backend.find_users(Query(start_index=listed.index("page01234") + 1, count=1))
    assert names(page) == ["page01234"] and page.resources[0]["title"] == title


def test_index_pages_of_workers_with_snapshots_of_other_ages_agree(
    backend, big, admin, merges_kept
):
    """A worker whose snapshot predates the creates and one that sorted after them give the
    same pages: a walk served by both in turn lists everyone once."""
    snapshot_then_next_second(backend, admin, big)
    tag = uuid.uuid4().hex[:6]
    for index in range(0, 3000, 300):
        add_user(admin, big, f"page{index:05d}{tag}")
    fresh = LdapBackend(logged(big))
    try:
        listed, start, total = [], 1, None
        for turn in range(100):
            worker = backend if turn % 2 else fresh
            page = worker.find_users(Query(start_index=start, count=137))
            assert total in (None, page.total_results)
            total = page.total_results
            listed += names(page)
            start += 137
            if start > total:
                break
    finally:
        fresh.close()
    assert listed == sorted(current_names(admin, big), key=str.casefold)


def test_without_the_session_log_an_index_page_after_a_create_sorts_again(
    big, admin, contexts_sent, merges_kept
):
    """Told not to ask (`SCIM_LDAP_SESSION_LOG=off`): the directory is not asked what
    changed, and the page after a write sorts afresh."""
    plain = LdapBackend(settings_for(big, vlv_per_connection=3, session_log=False))
    try:
        first = snapshot_then_next_second(plain, admin, big)
        add_user(admin, big, f"page01500{uuid.uuid4().hex[:6]}")
        after = plain.find_users(Query(start_index=1, count=5))
    finally:
        plain.close()
    assert index_contexts(contexts_sent) == [None, None]
    assert after.total_results == first.total_results + 1
    assert names(after) == names(first)[:5]


def test_index_pages_after_deletes_and_renames_reuse_the_snapshot(
    backend, big, admin, contexts_sent, merges_kept
):
    """Users deleted and renamed since the snapshot (their places in it found from the DNs
    the change log gives; one renamed into the name of one deleted), created and modified:
    no page sorts the directory again, and the walk lists everyone once, in order, with the
    right total."""
    first = snapshot_then_next_second(backend, admin, big)
    tag = uuid.uuid4().hex[:6]
    created, deleted, old, new = write_a_little_of_everything(admin, big, tag, 7)
    for index in (2210, 2211, 2213):
        assert admin.delete(f"uid=page{index:05d},{big.users_base}"), admin.result
    assert admin.modify_dn(f"uid=page02212,{big.users_base}", f"uid=zz{tag}"), admin.result
    # Renamed into the name of a user deleted: the snapshot's place of that name gives it.
    assert admin.delete(f"uid=page02214,{big.users_base}"), admin.result
    assert admin.modify_dn(f"uid=page02215,{big.users_base}", "uid=page02214"), admin.result
    listed, total = index_walk(backend, count=250)
    sent = index_contexts(contexts_sent)
    assert sent[0] is None and all(isinstance(c, bytes) for c in sent[1:]), sent
    now = current_names(admin, big)
    assert total == len(now) == first.total_results - 4
    assert listed == sorted(now, key=str.casefold)
    assert created in listed and new in listed and f"zz{tag}" in listed
    assert deleted not in listed and old not in listed


LEAVING = {"delete": 2100, "rename": 2101, "leave the filter": 2102, "join the filter": 2103}


def pages_after(backend, admin, big, change, victim_offset=0):
    """The whole filtered list after ``change`` to one user (``LEAVING``, plus
    ``victim_offset``), read in pages of 500 (the list was read once before it)."""
    query = Query(filter=parse_filter('title ne "left"'), start_index=1, count=100)
    victim = f"page{LEAVING[change] + victim_offset:05d}"
    dn = f"uid={victim},{big.users_base}"
    if change == "join the filter":
        assert admin.modify(dn, {"title": [("MODIFY_REPLACE", ["left"])]}), admin.result
    snapshot_then_next_second(backend, admin, big)
    backend.find_users(query)
    if change == "delete":
        assert admin.delete(dn), admin.result
    elif change == "rename":
        assert admin.modify_dn(dn, f"uid=a{victim}"), admin.result
    else:
        title = "left" if change == "leave the filter" else "back"
        assert admin.modify(dn, {"title": [("MODIFY_REPLACE", [title])]}), admin.result
    listed = []
    for start in range(1, 3200, 500):
        page = backend.find_users(Query(filter=query.filter, start_index=start, count=500))
        listed += names(page)
    admin.search(
        big.users_base, "(&(objectClass=inetOrgPerson)(!(title=left)))", attributes=["uid"]
    )
    assert listed == sorted((str(e.uid) for e in admin.entries), key=str.casefold)


def sorted_again(contexts_sent):
    sent = [c for (key, _), sents in contexts_sent.items() if key == "uid" for c in sents]
    return None in sent[2:]


@pytest.mark.parametrize("change", ["leave the filter", "join the filter"])
def test_index_pages_sort_again_after_a_user_left_or_joined_the_filter(
    backend, big, admin, contexts_sent, merges_kept, change
):
    """A user no longer matching or matching now: no log says where it was in the snapshot
    (or that it had no place), so the next page sorts afresh."""
    pages_after(backend, admin, big, change)
    assert sorted_again(contexts_sent), "no page sorted again after the change"


@pytest.mark.parametrize("change", ["delete", "rename"])
def test_index_pages_keep_the_snapshot_after_a_delete_or_rename_the_log_names(
    backend, big, admin, contexts_sent, merges_kept, change
):
    pages_after(backend, admin, big, change)
    assert not sorted_again(contexts_sent), "a page sorted again"


@pytest.mark.parametrize("change", ["delete", "rename"])
def test_without_the_change_log_index_pages_sort_again_after_a_delete_or_rename(
    big, admin, contexts_sent, merges_kept, change
):
    """Told not to read the change log (`SCIM_LDAP_CHANGE_LOG=none`): where the user was in
    the snapshot is not known."""
    unlogged = LdapBackend(settings_for(big, vlv_per_connection=3, change_log="none"))
    try:
        pages_after(unlogged, admin, big, change, victim_offset=10)
    finally:
        unlogged.close()
    assert sorted_again(contexts_sent), "no page sorted again after the change"


def test_a_walk_with_writes_between_pages_reuses_the_snapshot(
    backend, big, admin, contexts_sent, merges_kept
):
    """Every user that exists for the whole walk is listed once, no page after a write sorts
    the directory again, and one created or deleted meanwhile is listed at most once."""
    before = current_names(admin, big)
    seen, after, pages = [], "", 0
    changed = None
    while True:
        page = backend.find_users(Query(count=400, keyset=True, after=after or None))
        seen += names(page)
        pages += 1
        if pages == 2:
            changed = write_a_little_of_everything(admin, big, uuid.uuid4().hex[:6], 1)
        if page.next_position is None:
            break
        after = page.next_position
    now = current_names(admin, big)
    assert pages > 2 and changed is not None
    assert len(seen) == len(set(seen)), "a user was listed twice"
    assert (before & now) - {changed[2]} <= set(seen), "a lasting user was not listed"
    assert set(seen) <= before | now
    assert sorted_once_each(contexts_sent), "a page after the writes sorted the directory again"


def walk_contexts(contexts_sent):
    """The context ids the walk's pages by id echoed (``None``: a fresh sort)."""
    return next(sent for (key, _), sent in contexts_sent.items() if key == "entryUUID")


def modify_titles(admin, big, uids):
    tag = uuid.uuid4().hex[:6]
    for uid in uids:
        assert admin.modify(
            f"uid={uid},{big.users_base}", {"title": [("MODIFY_REPLACE", [tag])]}
        ), admin.result
    return tag


def test_where_reading_the_changes_costs_too_much_the_list_is_sorted_again(
    backend, big, admin, contexts_sent, monkeypatch
):
    from scim_core.backends.ldap import paging

    monkeypatch.setattr(paging, "_MERGE_FLOOR", 0.0)
    monkeypatch.setattr(paging, "_MERGE_SHARE", 0.0)  # any merge costs too much
    first = backend.find_users(Query(count=10, keyset=True))
    tag = modify_titles(admin, big, ["page00003"])
    merged = backend.find_users(Query(count=10, keyset=True))  # merged, then given up
    again = backend.find_users(Query(count=10, keyset=True))
    sent = walk_contexts(contexts_sent)
    assert sent[0] is None and isinstance(sent[1], bytes) and sent[2] is None, sent
    assert names(merged) == names(again) == names(first)
    everyone = backend.find_users(Query(count=5000, keyset=True)).resources
    assert [r.get("title") for r in everyone if r["userName"] == "page00003"] == [tag]


def test_past_the_delta_limit_the_list_is_sorted_again(
    backend, big, admin, contexts_sent, merges_kept
):
    from scim_core.backends.ldap.markers import delta_limit

    first = backend.find_users(Query(count=10, keyset=True))
    modify_titles(admin, big, ["page00001"])
    merged = backend.find_users(Query(count=10, keyset=True))
    modify_titles(admin, big, [f"page{i:05d}" for i in range(delta_limit(first.total_results) + 1)])
    again = backend.find_users(Query(count=10, keyset=True))
    sent = walk_contexts(contexts_sent)
    assert sent[0] is None and isinstance(sent[1], bytes) and sent[-1] is None, sent
    assert names(again) == names(merged) == names(first)  # the same ids first, by id
    assert merged.total_results == first.total_results + 1  # the changed user, counted twice
    assert again.total_results == first.total_results  # exact again: sorted afresh


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of about 250 users (3,000 users: a dozen parts, the first of 600 created in one
    second)."""
    from scim_core.backends.ldap import keyset

    monkeypatch.setattr(keyset, "PART_SIZE", 250)


def walk_users(backend, count, between=None):
    """(each page's resources, the position each page gave) of a whole walk."""
    pages, positions, after = [], [], None
    while True:
        page = backend.find_users(Query(count=count, keyset=True, after=after))
        pages.append(list(page.resources))
        if page.next_position is None:
            return pages, positions
        positions.append(page.next_position)
        after = page.next_position
        if between is not None:
            between(len(pages))


def test_a_walk_in_parts_lists_everyone_once_each_page_in_id_order(
    backend, big, admin, small_parts
):
    pages, positions = walk_users(backend, 200)
    names = [r["userName"] for page in pages for r in page]
    assert sorted(names) == sorted(current_names(admin, big))
    for page in pages:
        ids = [r["id"].lower() for r in page]
        assert ids == sorted(ids)
    lows = [p.split("~")[0] for p in positions]
    assert len(set(lows)) >= 8, positions
    # A part is at least a second: the 600 users created in the first one are one part.
    first_part = [p for p in positions if p.startswith("~20200101000000Z~")]
    assert len(first_part) >= 2, positions
    assert pages[-1], "the walk ends on a page with users"


def current_ids(admin, big):
    admin.search(big.users_base, "(objectClass=inetOrgPerson)", attributes=["entryUUID"])
    return {str(entry.entryUUID).lower() for entry in admin.entries}


def test_a_walk_in_parts_with_writes_between_pages(backend, big, admin, small_parts):
    """Created, deleted, renamed and modified users between pages: each user that exists
    for the whole walk is listed once (by id: a renamed one under either name)."""
    before = current_ids(admin, big)
    changed = []

    def between(number):
        if number in (2, 9):
            changed.append(write_a_little_of_everything(admin, big, uuid.uuid4().hex[:6], number))

    pages, _ = walk_users(backend, 150, between)
    seen = [r["id"].lower() for page in pages for r in page]
    now = current_ids(admin, big)
    assert len(changed) == 2
    assert len(seen) == len(set(seen)), "a user was listed twice"
    assert before & now <= set(seen), "a user that existed throughout was not listed"
    assert set(seen) <= before | now
    assert len(before - now) == 2 and len(now - before) == 2  # the two deleted, two created


def test_a_cursor_position_of_another_shape_is_invalid(backend, small_parts):
    from scim_core.errors import InvalidCursor

    with pytest.raises(InvalidCursor):
        backend.find_users(Query(count=10, keyset=True, after="5f0c-not-a-position"))


def test_users_without_a_creation_time_are_in_the_walks_last_part(backend, big, admin, small_parts):
    """A directory that keeps no creation time for some entries (written with lastmod off):
    they are listed once, in the last part."""
    from ldap3 import MODIFY_DELETE

    relax = ("1.3.6.1.4.1.4203.666.5.12", True, None)  # lets the rootdn drop it
    undated = [f"page{index:05d}" for index in (5, 1700, 2999)]
    for uid in undated:
        dn = f"uid={uid},{big.users_base}"
        assert admin.modify(dn, {"createTimestamp": [(MODIFY_DELETE, [])]}, controls=[relax]), (
            admin.result
        )
    pages, _ = walk_users(backend, 200)
    names = [r["userName"] for page in pages for r in page]
    assert sorted(names) == sorted(current_names(admin, big))
    assert set(undated) <= set(names)


# ------------------------------------------------------------ a slapd without a session log


@pytest.fixture(scope="module")
def unlogged_slapd(tmp_path_factory):
    """1,200 users (enough for a kept snapshot) on a slapd whose syncprov keeps no log."""
    instance = SlapdInstance(session_log=False)
    instance.start()
    ldif = tmp_path_factory.mktemp("unlogged") / "users.ldif"
    ldif.write_text(
        "".join(
            f"dn: uid=plain{index:04d},{instance.users_base}\nobjectClass: inetOrgPerson\n"
            f"uid: plain{index:04d}\ncn: P\nsn: P\n\n"
            for index in range(1200)
        ),
        encoding="utf-8",
    )
    slapadd(instance, ldif)
    yield instance
    instance.close()


@pytest.fixture
def refreshes(monkeypatch):
    """The filter of each content synchronization the plugin sends, in order."""
    from scim_core.backends.ldap import operations

    sent = []
    refresh = operations.refresh

    def recording(connection, request):
        sent.append(request.search_filter)
        return refresh(connection, request)

    monkeypatch.setattr(operations, "refresh", recording)
    return sent


def test_without_a_session_log_only_the_probe_asks_and_the_page_sorts_again(
    unlogged_slapd, refreshes, contexts_sent, merges_kept
):
    """By default the directory is asked first with a filter no entry matches: without a log
    it says so at no cost, and the list's own filter (the directory would name every entry
    in it) is never sent."""
    from ldap3 import Connection, Server

    directory = unlogged_slapd
    admin = Connection(
        Server(directory.url), directory.admin_dn, directory.admin_password, auto_bind=True
    )
    backend = LdapBackend(settings_for(directory, vlv_per_connection=3))
    try:
        dn = f"uid=plain0002,{directory.users_base}"
        assert admin.modify(dn, {"title": [("MODIFY_REPLACE", ["t"])]}), admin.result
        first = backend.find_users(Query(start_index=1, count=10))
        time.sleep(1.05 - time.time() % 1)
        add_user(admin, directory, f"plain0500{uuid.uuid4().hex[:6]}")
        after = backend.find_users(Query(start_index=1, count=5))
    finally:
        backend.close()
        admin.unbind()
    assert refreshes == [index_refresh.NO_ENTRY], refreshes
    assert index_contexts(contexts_sent)[-1] is None, "the page after the write reused the sort"
    assert after.total_results == first.total_results + 1


def test_with_a_session_log_the_probe_comes_first(backend, big, admin, refreshes, merges_kept):
    snapshot_then_next_second(backend, admin, big)
    add_user(admin, big, f"page01600{uuid.uuid4().hex[:6]}")
    backend.find_users(Query(start_index=1, count=5))
    assert refreshes[0] == index_refresh.NO_ENTRY and len(refreshes) == 2, refreshes
    assert refreshes[1] != index_refresh.NO_ENTRY
