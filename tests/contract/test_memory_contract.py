"""The contract suite against the in-process reference backend."""

import pytest

from scim_core.backends.memory import MemoryBackend
from scim_core.testing.contract import BackendContract


class TestMemoryBackend(BackendContract):
    @pytest.fixture
    def backend(self):
        return MemoryBackend()
