"""The contract suite against the example SQLite plugin (examples/custom_backend), subclassed."""

import sys
from pathlib import Path

import pytest

from scim_core.testing.contract import BackendContract

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "custom_backend"))

from scim_sqlite import SqliteBackend


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    return str(tmp_path_factory.mktemp("sqlite") / "scim.sqlite3")


class TestSqliteBackend(BackendContract):
    @pytest.fixture
    def backend(self, database):
        backend = SqliteBackend(database)
        yield backend
        backend.close()
