"""The backend contract suite, through the scim_core pytest plugin.

The plugin collects the whole suite beside this file once ``scim_backend_factory`` is
overridden here; ``pytest -q`` then shows one test per contract clause.
"""

import pytest
from scim_sqlite import create_backend

pytest_plugins = ["scim_core.testing.plugin"]


@pytest.fixture(scope="session")
def scim_backend_factory(tmp_path_factory):
    """Each test gets a backend over the same database file (the suite's names are unique)."""
    path = tmp_path_factory.mktemp("scim") / "scim.sqlite3"
    return lambda: create_backend({"SCIM_SQLITE_PATH": str(path)})
