"""Shared fixtures: one throwaway directory of each kind for the whole test session.

OpenLDAP (``slapd``) serves most tests; 389-DS (``dirsrv``) and a Samba AD domain controller
(``samba_dc``) start only when a test asks for them. Each fails, never skips, when its server
cannot start.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings
from scim_http import settings_for

from scim_core.backends.ldap import LdapBackend, LdapSettings
from scim_core.testing.slapd import SlapdInstance

# Speed is the benchmarks' business: no property test fails for being slow on a busy machine.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")

#: The directories every cross-directory test runs on, by profile name; SCIM_TEST_DIRECTORIES
#: (comma-separated) narrows them, e.g. `openldap,389ds` runs no Samba AD test at all.
DIRECTORIES = tuple(
    name.strip()
    for name in (os.environ.get("SCIM_TEST_DIRECTORIES") or "openldap,389ds,ad").split(",")
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without `ad` in SCIM_TEST_DIRECTORIES, deselect the tests that start a Samba DC."""
    if "ad" in DIRECTORIES:
        return
    samba = [
        item
        for item in items
        if "samba_dc" in getattr(item, "fixturenames", ()) or "samba" in item.nodeid.lower()
    ]
    if samba:
        config.hook.pytest_deselected(items=samba)
        items[:] = [item for item in items if item not in samba]


def _started(instance: Any, what: str) -> Iterator[Any]:
    try:
        instance.start()
    except BaseException as error:
        instance.close()
        if isinstance(error, Exception) and type(error).__name__.endswith("NotFoundError"):
            pytest.fail(f"the {what} tests need a real {what}: {error}", pytrace=False)
        raise
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture
def far_from_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The server's own time zone far from UTC: it must not leak into a value."""
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="session")
def slapd() -> Iterator[SlapdInstance]:
    """Yield a started, seeded :class:`SlapdInstance` (fails, never skips, without OpenLDAP)."""
    yield from _started(SlapdInstance(), "OpenLDAP slapd")


@pytest.fixture(scope="session")
def dirsrv() -> Iterator[Any]:
    """A started, seeded throwaway 389 Directory Server."""
    from scim_core.testing.dirsrv import DirsrvInstance

    yield from _started(DirsrvInstance(), "389 Directory Server")


@pytest.fixture(scope="session")
def samba_dc() -> Iterator[Any]:
    """A started, seeded throwaway Samba Active Directory domain controller."""
    from scim_core.testing.samba import SambaDcInstance

    yield from _started(SambaDcInstance(), "Samba AD domain controller")


@pytest.fixture(scope="session", params=DIRECTORIES)
def directory(request: pytest.FixtureRequest) -> Any:
    """Each kind of directory in turn (session-scoped: each starts once)."""
    fixture = {"openldap": "slapd", "389ds": "dirsrv", "ad": "samba_dc"}[request.param]
    return request.getfixturevalue(fixture)


@pytest.fixture(scope="session")
def directory_backend(directory: Any) -> Iterator[LdapBackend]:
    """The LDAP plugin on :func:`directory`, in that directory's profile."""
    backend = LdapBackend(settings_for(directory))
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def ldap_settings(slapd: SlapdInstance) -> LdapSettings:
    """Settings for the LDAP plugin on the session's slapd, as the service account."""
    return settings_for(slapd)


@pytest.fixture(scope="session")
def ldap_backend(ldap_settings: LdapSettings) -> Iterator[LdapBackend]:
    """One LDAP backend for the session (its connections are per thread)."""
    backend = LdapBackend(ldap_settings)
    yield backend
    backend.close()
