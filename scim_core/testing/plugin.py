"""The backend contract suite as a pytest plugin: one fixture to override, the whole suite to run.

Load the plugin in the top-level ``conftest.py`` and override ``scim_backend_factory`` in the
``conftest.py`` of the folder where the suite should run (it may be the same file)::

    # tests/conftest.py
    import pytest

    pytest_plugins = ["scim_core.testing.plugin"]

    @pytest.fixture
    def scim_backend_factory(tmp_path):
        return lambda: MyBackend(tmp_path / "store")

Every :class:`~scim_core.testing.contract.BackendContract` test then runs against that
backend, collected as ``tests/conftest.py::ScimBackendContract::test_...``. The factory is
called once per test, and ``close()`` is called on what it built afterwards. A failing test
names the contract clause it checks and the backend it ran on.

The fixtures ``scim_backend`` (the backend of the current test) and ``scim_client`` (a
:class:`~scim_core.testing.contract.Client` over the service on it) serve a team's own tests.
Subclassing :class:`~scim_core.testing.contract.BackendContract` works as well, without the
plugin.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

if "scim_core.testing.contract" not in sys.modules:  # plain asserts there show their values
    pytest.register_assert_rewrite("scim_core.testing.contract")

from scim_core.backend import Backend
from scim_core.service import ScimService
from scim_core.testing.contract import BackendContract, Client

__all__ = ["FACTORY_FIXTURE", "ScimBackendContract"]

FACTORY_FIXTURE = "scim_backend_factory"
"""The fixture a conftest.py overrides to run the contract suite beside it."""

_BACKEND_METHODS = tuple(
    name for name in vars(Backend) if not name.startswith("_") and callable(vars(Backend)[name])
)
_SECTION = "SCIM backend contract"


@pytest.fixture
def scim_backend_factory() -> Callable[[], Backend]:
    """Override: a callable without arguments building the backend under test."""
    pytest.fail(
        f"override the `{FACTORY_FIXTURE}` fixture in your conftest.py: it returns a callable "
        "building the backend under test (scim_core.testing.plugin)",
        pytrace=False,
    )


@pytest.fixture
def scim_backend(scim_backend_factory: Callable[[], Any]) -> Iterator[Backend]:
    """The backend of the current test, built by ``scim_backend_factory``, closed afterwards."""
    backend = scim_backend_factory()
    missing = [name for name in _BACKEND_METHODS if not callable(getattr(backend, name, None))]
    if missing:
        pytest.fail(
            f"{FACTORY_FIXTURE}() returned a {type(backend).__qualname__}, which lacks the "
            f"Backend methods {', '.join(missing)} (see scim_core.Backend)",
            pytrace=False,
        )
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture
def scim_client(scim_backend: Backend) -> Client:
    """A :class:`~scim_core.testing.contract.Client` over a default service on the backend."""
    return Client(ScimService(scim_backend))


class ScimBackendContract(BackendContract):
    """The contract suite over the ``scim_backend`` fixture (collected by this plugin)."""

    @pytest.fixture
    def backend(self, scim_backend: Backend) -> Backend:
        """The backend built by ``scim_backend_factory``."""
        return scim_backend


class _ContractModule(pytest.Module):
    """The suite, collected next to the conftest.py that overrides the factory fixture."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType("scim_core.testing.plugin.suite")
        module.ScimBackendContract = ScimBackendContract  # type: ignore[attr-defined]
        return module

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        return [pytest.Class.from_parent(self, name="ScimBackendContract")]


def _overrides_factory(config: pytest.Config, conftest_path: Path) -> bool:
    wanted = conftest_path.resolve()
    for plugin in config.pluginmanager.get_plugins():
        module_file = getattr(plugin, "__file__", None) or ""
        is_module = isinstance(plugin, types.ModuleType) and bool(module_file)
        if is_module and Path(module_file).resolve() == wanted:
            return hasattr(plugin, FACTORY_FIXTURE)
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Add the contract suite beside each conftest.py that overrides the factory fixture."""
    if file_path.name == "conftest.py" and _overrides_factory(parent.config, file_path):
        module: pytest.Collector = _ContractModule.from_parent(parent, path=file_path)
        return module
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """On a failed contract test, say which clause failed and on which backend."""
    report = yield
    test = getattr(item, "obj", None)
    if report.failed and isinstance(getattr(item, "instance", None), BackendContract):
        funcargs: dict[str, Any] = getattr(item, "funcargs", {})
        backend = funcargs.get("backend", funcargs.get("scim_backend"))
        built = "(not built)" if backend is None else type(backend).__module__ + "."
        built += "" if backend is None else type(backend).__qualname__
        clause = (getattr(test, "__doc__", None) or item.name).strip().splitlines()[0]
        report.sections.append(
            (
                _SECTION,
                f"clause:  {clause}\n"
                f"test:    scim_core.testing.contract.BackendContract.{item.name.split('[')[0]}\n"
                f"backend: {built}\n"
                f"phase:   {report.when}",
            )
        )
    return report
