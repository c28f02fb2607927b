"""``scim-ldap check`` and ``scim-ldap schema``: the directory commands of ``scim-ldap``.

- ``check`` runs the LDAP plugin's preflight (:mod:`scim_core.backends.ldap.preflight`) with
  the ``SCIM_LDAP_*`` / ``SCIM_MAPPING_FILE`` environment the service reads, and prints a
  table of step, result and detail; exit status 0 when provisioning would work (fallbacks and
  warnings included), 1 when a step failed or the directory cannot be reached (then one line),
  2 on a configuration error.
- ``schema`` prints the service's schema extension in the form the selected directory's
  administrator loads (:mod:`scim_core.backends.ldap.extension`); with ``--vlv-indexes``, the
  389-DS VLV indexes of the service's list searches for its ``SCIM_LDAP_*`` settings
  (:mod:`scim_core.backends.ldap.vlv_indexes`).

The plugin is imported only when a command runs, so an installation without the ``ldap``
extra says what to install.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from scim_core.config import ConfigError

__all__ = ["EXIT_CONFIG", "add_commands", "fail"]

#: The exit status of a configuration error (or a missing extra), with one line on stderr.
EXIT_CONFIG = 2
_EXIT_UNREACHABLE = 1
_NEEDS_LDAP = "needs the [ldap] extra (pip install 'scim-ldap[ldap]')"


def fail(message: str, status: int = EXIT_CONFIG) -> int:
    """Say ``message`` on stderr as ``scim-ldap``'s one line; return the exit status."""
    print(f"scim-ldap: {message}", file=sys.stderr)
    return status


def _check(args: argparse.Namespace) -> int:
    try:
        from scim_core.backends.ldap.preflight import PreflightError, run_check
        from scim_core.backends.ldap.settings import LdapSettings
        from scim_core.checks import exit_status, render_table
    except ModuleNotFoundError as error:
        return fail(f"check {_NEEDS_LDAP}: {error}", EXIT_CONFIG)
    try:
        settings = LdapSettings.from_environ(os.environ)
    except ConfigError as error:
        return fail(f"configuration error: {error}", EXIT_CONFIG)
    try:
        steps = run_check(settings, write_test=args.write_test)
    except PreflightError as error:
        return fail(f"check failed: {error}", _EXIT_UNREACHABLE)
    sys.stdout.write(render_table(steps))
    return exit_status(steps)


def _schema(args: argparse.Namespace) -> int:
    try:
        from scim_core.backends.ldap.extension import schema_text
        from scim_core.backends.ldap.settings import LDAP_SETTINGS
    except ModuleNotFoundError as error:
        return fail(f"schema {_NEEDS_LDAP}: {error}", EXIT_CONFIG)
    dialect_setting = next(s for s in LDAP_SETTINGS if s.name == "SCIM_LDAP_DIALECT")
    text = args.dialect or os.environ.get(dialect_setting.name) or str(dialect_setting.default)
    try:
        dialect = dialect_setting.parse(text)
    except ValueError as error:
        return fail(f"configuration error: {dialect_setting.name}: {error}", EXIT_CONFIG)
    if args.vlv_indexes:
        return _vlv_indexes(dialect, args.backend)
    sys.stdout.write(schema_text(dialect))
    return 0


def _vlv_indexes(dialect: str, backend: str) -> int:
    from scim_core.backends.ldap.settings import LdapSettings
    from scim_core.backends.ldap.vlv_indexes import VLV_DIALECTS, vlv_index_ldif

    if dialect not in VLV_DIALECTS:
        return fail(f"--vlv-indexes: 389-DS has VLV indexes, {dialect} has none", EXIT_CONFIG)
    try:
        settings = LdapSettings.from_environ({**os.environ, "SCIM_LDAP_DIALECT": dialect})
    except ConfigError as error:
        return fail(f"configuration error: {error}", EXIT_CONFIG)
    sys.stdout.write(vlv_index_ldif(settings, backend))
    return 0


def add_commands(commands: Any) -> None:
    """Add ``check`` and ``schema`` to ``scim-ldap``'s subcommands (an argparse
    ``add_subparsers`` object)."""
    check = commands.add_parser(
        "check",
        help="preflight: bind, rootDSE, controls, bases, schema and search as the service account",
    )
    check.add_argument(
        "--write-test",
        action="store_true",
        help="also create, modify, disable, set a password on and delete a throwaway user "
        "and group (nothing is written without it)",
    )
    check.set_defaults(run=_check)
    schema = commands.add_parser(
        "schema", help="print the service's schema extension for the directory (or AD's mapping)"
    )
    schema.add_argument(
        "--dialect",
        default=None,
        help="openldap, 389ds or ad (default: SCIM_LDAP_DIALECT, else openldap)",
    )
    schema.add_argument(
        "--vlv-indexes",
        action="store_true",
        help="389ds: print the VLV indexes of the service's list searches instead, for the "
        "bases and scopes of its SCIM_LDAP_* environment",
    )
    schema.add_argument(
        "--backend",
        default="userRoot",
        help="with --vlv-indexes: the 389-DS backend holding the bases (default: userRoot)",
    )
    schema.set_defaults(run=_schema)
