"""The contract suite as a pytest plugin: a team overrides one fixture and gets every clause."""

import inspect

from scim_core.testing.contract import BackendContract

pytest_plugins = ["pytester"]

CLAUSES = sorted(
    name for name, _ in inspect.getmembers(BackendContract) if name.startswith("test_")
)

PLUGIN = 'pytest_plugins = ["scim_core.testing.plugin"]\n'
MEMORY_FACTORY = """
import pytest
from scim_core.backends.memory import MemoryBackend

@pytest.fixture
def scim_backend_factory():
    return MemoryBackend
"""


def test_overriding_the_factory_runs_every_clause(pytester):
    pytester.makeconftest(PLUGIN + MEMORY_FACTORY)
    result = pytester.runpytest("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(CLAUSES))
    result.stdout.fnmatch_lines(["*conftest.py::ScimBackendContract::test_create_then_get PASSED*"])


def test_a_failing_clause_names_itself_and_the_backend(pytester, monkeypatch):
    pytester.makeconftest(
        PLUGIN
        + MEMORY_FACTORY.replace("return MemoryBackend", "return Unfiltered")
        + """
from dataclasses import replace

class Unfiltered(MemoryBackend):
    def find_users(self, query):
        return super().find_users(replace(query, filter=None))
"""
    )
    # In a subprocess, as a team runs it: the contract's asserts are rewritten there.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=len(CLAUSES) - 1)
    result.stdout.fnmatch_lines(
        [
            "E       assert (5, 25, 1) == (1, 25, 1)",
            "*- SCIM backend contract -*",
            "clause:  Pages follow ``startIndex``/``count`` in userName order; ``count=0`` counts.",
            "test:    scim_core.testing.contract.BackendContract.test_paging_is_stable_and_bounded",
            "backend: conftest.Unfiltered",
            "FAILED conftest.py::ScimBackendContract::test_paging_is_stable_and_bounded*",
        ]
    )


def test_a_factory_building_no_backend_is_told_what_is_missing(pytester):
    pytester.makeconftest(
        PLUGIN
        + """
import pytest

class Half:
    def check_ready(self): pass
    def close(self): pass

@pytest.fixture
def scim_backend_factory():
    return Half
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=len(CLAUSES))
    result.stdout.fnmatch_lines(
        ["*scim_backend_factory() returned a Half, which lacks the Backend methods get_user*"]
    )


def test_the_suite_runs_only_where_the_factory_is_overridden(pytester):
    pytester.makeconftest(PLUGIN)
    pytester.mkpydir("plain").joinpath("test_other.py").write_text(
        "def test_unrelated():\n    pass\n"
    )
    pytester.mkpydir("scim").joinpath("conftest.py").write_text(MEMORY_FACTORY)
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    collected = [line for line in result.outlines if "::" in line]
    assert len(collected) == len(CLAUSES) + 1
    assert "plain/test_other.py::test_unrelated" in collected
    assert f"scim/conftest.py::ScimBackendContract::{CLAUSES[0]}" in collected


def test_without_an_override_the_fixtures_say_what_to_do(pytester):
    pytester.makeconftest(PLUGIN)
    pytester.makepyfile(
        test_mine="""
def test_uses_the_client(scim_client):
    assert scim_client.ok("GET", "/ServiceProviderConfig")
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*override the `scim_backend_factory` fixture in your conftest.py*"]
    )
