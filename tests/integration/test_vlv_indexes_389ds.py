"""389-DS's VLV indexes on a real 389 Directory Server: with the indexes the launcher makes,
list pages are read from them and stay right through creates and deletes between pages; the
LDIF ``scim-ldap schema --vlv-indexes`` prints loads into a running instance without them and
serves its lists.

That an index served a search is read from the index's own counter, ``vlvUses`` of its
``vlvIndex`` entry (389-DS counts every search it answers from the index; a search it has to
sort leaves it alone), never from timings. The expected order is read with a plain search as
the Directory Manager and sorted here, case aside, as the index orders ``uid`` and ``cn``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
from ldap3 import LEVEL, SUBTREE
from scim_http import as_admin, settings_for

from scim_core.backend import Query
from scim_core.backends.ldap import LdapBackend
from scim_core.testing.dirsrv import DirsrvInstance

CONFIG = "cn=userRoot,cn=ldbm database,cn=plugins,cn=config"
#: The index serving each list search: index pages of users, user walks, groups (both).
BY_USER_NAME = "scim users by uid"
BY_USER_ID = "scim users by nsUniqueId"
BY_GROUP_NAME = "scim groups by cn"
USERS = "(|(objectClass=inetOrgPerson)(objectClass=nsPerson))"


def indexes(directory: DirsrvInstance) -> dict[str, tuple[str, int]]:
    """Each VLV index of the backend: name -> (vlvEnabled, vlvUses)."""
    with as_admin(directory) as manager:
        manager.search(
            CONFIG, "(objectClass=vlvIndex)", SUBTREE, attributes=["cn", "vlvEnabled", "vlvUses"]
        )
        return {
            str(entry["attributes"]["cn"][0]): (
                str(entry["attributes"]["vlvEnabled"][0]),
                int(entry["attributes"]["vlvUses"][0]),
            )
            for entry in manager.response
        }


def uses(directory: DirsrvInstance) -> dict[str, int]:
    return {name: used for name, (_, used) in indexes(directory).items()}


def user_names(directory: DirsrvInstance) -> list[str]:
    """Every user's uid, in the order of the uid index (case aside)."""
    with as_admin(directory) as manager:
        manager.search(directory.users_base, USERS, LEVEL, attributes=["uid"])
        names = [str(entry["attributes"]["uid"][0]) for entry in manager.response]
    return sorted(names, key=str.casefold)


def walk(
    backend: LdapBackend, find: str, count: int, between: Callable[[int], None] | None = None
) -> tuple[list[str], int]:
    """(the ids of a whole cursor walk, its number of pages); ``between(page)`` after each."""
    ids: list[str] = []
    after: str | None = None
    pages = 0
    while True:
        page = getattr(backend, find)(Query(count=count, keyset=True, after=after))
        ids += [str(r["id"]) for r in page.resources]
        pages += 1
        if page.next_position is None:
            return ids, pages
        after = page.next_position
        if between is not None:
            between(pages)


def add_user(backend: LdapBackend, name: str) -> str:
    user = {
        "userName": name,
        "name": {"givenName": "V", "familyName": "L"},
        "emails": [{"value": f"{name}@example.org", "primary": True}],
        "active": True,
    }
    return str(backend.create_user(user, None)["id"])


def add_group(backend: LdapBackend, name: str) -> str:
    return str(backend.create_group({"displayName": name, "members": []})["id"])


@pytest.fixture(scope="module")
def indexed() -> Iterator[DirsrvInstance]:
    """A fresh seeded 389-DS of its own, with the launcher's VLV indexes: the orders compared
    are this module's users only."""
    with DirsrvInstance() as directory:
        yield directory


@pytest.fixture
def backend(indexed: DirsrvInstance) -> Iterator[LdapBackend]:
    backend = LdapBackend(settings_for(indexed))
    yield backend
    backend.close()


def scim_ldap(*args: str, directory: DirsrvInstance) -> subprocess.CompletedProcess[str]:
    """``scim-ldap ARGS`` with the directory's service environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SCIM_")}
    return subprocess.run(
        [sys.executable, "-m", "scim_flask.cli", *args],
        env={**clean, **directory.service_settings()},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def vlv_check(directory: DirsrvInstance) -> str:
    """The ``VLV indexes`` line of ``scim-ldap check``."""
    result = scim_ldap("check", directory=directory)
    assert result.returncode == 0, result.stdout + result.stderr
    return next(line for line in result.stdout.splitlines() if line.startswith("VLV indexes"))


def test_the_launcher_builds_an_index_for_each_list_search(indexed: DirsrvInstance) -> None:
    found = indexes(indexed)
    assert set(found) == {BY_USER_NAME, BY_USER_ID, BY_GROUP_NAME}
    assert all(enabled == "1" for enabled, _ in found.values()), found
    assert vlv_check(indexed).split()[2] == "ok"


def test_index_pages_are_windows_of_the_order_of_the_moment_through_writes(
    indexed: DirsrvInstance, backend: LdapBackend
) -> None:
    ids = [add_user(backend, f"page-{n:02d}") for n in range(20)]
    before = uses(indexed)
    pages = 0
    for start in range(1, 30, 5):
        if pages % 2:  # one user more before the window, one fewer after it
            add_user(backend, f"a-page-{pages}")
            backend.delete_user(ids.pop())
        expected = user_names(indexed)
        page = backend.find_users(Query(start_index=start, count=5))
        pages += 1
        assert page.total_results == len(expected)
        assert [r["userName"] for r in page.resources] == expected[start - 1 : start + 4]
    assert uses(indexed)[BY_USER_NAME] - before[BY_USER_NAME] == pages, "a page was sorted"


def test_a_user_walk_lists_every_lasting_user_once_through_writes(
    indexed: DirsrvInstance, backend: LdapBackend
) -> None:
    lasting = {add_user(backend, f"walk-{n:02d}") for n in range(30)}
    doomed = [add_user(backend, f"gone-{n:02d}") for n in range(6)]
    created: list[str] = []

    def write(page: int) -> None:
        created.append(add_user(backend, f"new-{page:02d}"))
        if doomed:
            backend.delete_user(doomed.pop())

    everyone = {str(r["id"]) for r in backend.find_users(Query(count=1000)).resources}
    before = uses(indexed)
    ids, pages = walk(backend, "find_users", 4, write)
    assert uses(indexed)[BY_USER_ID] - before[BY_USER_ID] == pages, "a page was sorted"
    assert len(ids) == len(set(ids)), "a user was listed twice"
    assert lasting <= set(ids) <= everyone | set(created)
    assert ids == sorted(ids, key=str.lower), "the walk is in id order"


def test_a_group_walk_lists_every_lasting_group_once_through_writes(
    indexed: DirsrvInstance, backend: LdapBackend
) -> None:
    lasting = {add_group(backend, f"walkgroup-{n:02d}") for n in range(10)}
    doomed = [add_group(backend, f"gonegroup-{n:02d}") for n in range(3)]
    created: list[str] = []

    def write(page: int) -> None:
        created.append(add_group(backend, f"newgroup-{page:02d}"))
        if doomed:  # the service deletes no group: its id is its cn
            with as_admin(indexed) as manager:
                manager.delete(f"cn={doomed.pop()},{indexed.groups_base}")

    everyone = {str(g["id"]) for g in backend.find_groups(Query(count=1000)).resources}
    before = uses(indexed)
    ids, pages = walk(backend, "find_groups", 3, write)
    assert uses(indexed)[BY_GROUP_NAME] - before[BY_GROUP_NAME] == pages, "a page was sorted"
    assert len(ids) == len(set(ids)), "a group was listed twice"
    assert lasting <= set(ids) <= everyone | set(created)
    assert ids == sorted(ids, key=str.casefold), "the walk is in cn order"


def test_the_printed_indexes_load_into_a_running_389ds_and_serve_its_lists() -> None:
    with DirsrvInstance(vlv_indexes=False) as bare:
        assert indexes(bare) == {}
        missing = vlv_check(bare)
        assert missing.split()[2] == "warning" and BY_USER_NAME in missing, missing
        printed = scim_ldap("schema", "--dialect", "389ds", "--vlv-indexes", directory=bare)
        assert printed.returncode == 0, printed.stderr
        added = subprocess.run(
            ["ldapadd", "-x", "-H", bare.ldap_url, "-D", bare.admin_dn,
             "-w", bare.admin_password],
            input=printed.stdout,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )  # fmt: skip
        assert added.returncode == 0, added.stdout + added.stderr
        deadline = time.monotonic() + 60  # the task the LDIF ends with builds them
        while {enabled for enabled, _ in indexes(bare).values()} != {"1"}:
            assert time.monotonic() < deadline, indexes(bare)
            time.sleep(0.1)
        backend = LdapBackend(settings_for(bare))
        try:
            page = backend.find_users(Query(count=10))
            users, user_pages = walk(backend, "find_users", 2)
            groups, group_pages = walk(backend, "find_groups", 2)
        finally:
            backend.close()
        assert [r["userName"] for r in page.resources] == ["alice", "bob", "carol"]
        assert len(users) == 3 and users == sorted(users, key=str.lower)
        assert len(groups) == 1
        assert uses(bare) == {BY_USER_NAME: 1, BY_USER_ID: user_pages, BY_GROUP_NAME: group_pages}
        assert vlv_check(bare).split()[2] == "ok"
