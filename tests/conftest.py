"""Shared fixtures: one throwaway slapd for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scim_core.testing.slapd import SlapdInstance, SlapdNotFoundError


@pytest.fixture(scope="session")
def slapd() -> Iterator[SlapdInstance]:
    """Yield a started, seeded :class:`SlapdInstance` (fails, never skips, without OpenLDAP)."""
    instance = SlapdInstance()
    try:
        instance.start()
    except SlapdNotFoundError as error:
        instance.close()
        pytest.fail(f"the LDAP tests need a real slapd: {error}", pytrace=False)
    except BaseException:
        instance.close()
        raise
    try:
        yield instance
    finally:
        instance.close()
