"""scim_sqlite: an example SCIM backend plugin storing users and groups in SQLite.

Installed, it registers itself under the entry-point group ``scim_core.backends`` as
``sqlite`` (see ``pyproject.toml``), so the service finds it by name::

    SCIM_BACKEND=sqlite SCIM_SQLITE_PATH=/var/lib/scim/scim.sqlite3 scim-ldap serve

It uses the standard library and :mod:`scim_core` only, and passes the backend contract suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scim_core import Setting, read_settings
from scim_sqlite.backend import SqliteBackend

__all__ = ["SQLITE_SETTINGS", "SqliteBackend", "create_backend"]

SQLITE_SETTINGS: tuple[Setting[Any], ...] = (
    Setting(
        "SCIM_SQLITE_PATH",
        str,
        None,
        "The SQLite database file, created when missing (`:memory:` for a throwaway store).",
        required=True,
    ),
)


def create_backend(settings: Mapping[str, str]) -> SqliteBackend:
    """Entry point ``scim_core.backends: sqlite``: a backend from ``SCIM_SQLITE_*`` settings.

    :raises scim_core.ConfigError: naming a missing or malformed setting.
    """
    values = read_settings(SQLITE_SETTINGS, settings)
    return SqliteBackend(values["SCIM_SQLITE_PATH"])
