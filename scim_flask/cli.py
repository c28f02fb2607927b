"""``scim-ldap``: the administrator's command.

- ``scim-ldap check`` and ``scim-ldap schema``: the directory commands
  (:mod:`scim_flask.directory_cli`).
- ``scim-ldap serve`` validates the configuration, then serves the app under gunicorn with the
  shipped configuration (:mod:`scim_flask.gunicorn_conf`: the service's own worker, where it
  listens and HTTPS from ``SCIM_*``); ``--config`` adds a gunicorn configuration file on top.

``scim-server`` is the same as ``scim-ldap serve``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any

from scim_core.backend import load_backend
from scim_core.config import ConfigError
from scim_flask.directory_cli import add_commands, fail

__all__ = ["main", "serve_main"]

#: The shipped gunicorn configuration, as gunicorn names a module.
SHIPPED_CONFIG = "python:scim_flask.gunicorn_conf"


def _serve(args: argparse.Namespace) -> int:
    needs_extra = "serving needs the [server] extra (pip install 'scim-ldap[server]')"
    try:
        from gunicorn.app.base import Application

        from scim_flask.settings import AppSettings
    except ImportError as error:
        return fail(f"{needs_extra}: {error}")
    try:
        settings = AppSettings.from_environ(os.environ)
        # The backend's own settings (an LDAP mapping file among them) are checked here too,
        # so a wrong one is this one line, not a worker's traceback.
        load_backend(settings.backend)(os.environ).close()
    except ConfigError as error:
        return fail(f"configuration error: {error}")
    try:
        # Before the app: it reads the server settings (one line on a bad one) and sets up the
        # metrics folder the workers share, which prometheus_client looks for when imported.
        import_module(SHIPPED_CONFIG.removeprefix("python:"))
        from scim_flask.app import create_app
    except ImportError as error:
        return fail(f"{needs_extra}: {error}")

    class Server(Application):  # type: ignore[misc]  # gunicorn has no type information
        def load_config(self) -> None:
            self.load_config_from_module_name_or_filename(SHIPPED_CONFIG)
            if args.config:
                self.load_config_from_file(args.config)
            for key, value in {"bind": args.bind, "workers": args.workers}.items():
                if value is not None:
                    self.cfg.set(key, value)

        def load(self) -> Any:
            return create_app()

    Server().run()
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scim-ldap", description="The SCIM 2.0 provisioning service for LDAP directories."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser(
        "serve", help="serve SCIM under gunicorn (HTTPS with SCIM_TLS_CERT_FILE)"
    )
    serve.add_argument(
        "--bind", default=None, help="address:port (default SCIM_BIND, else 127.0.0.1:8080)"
    )
    serve.add_argument("--workers", type=int, default=None, help="worker processes")
    serve.add_argument("--config", default=None, help="a gunicorn configuration file on top")
    serve.set_defaults(run=_serve)
    add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``scim-ldap``; exit status 2 with one line on a configuration error."""
    args = _parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)


def serve_main(argv: Sequence[str] | None = None) -> int:
    """``scim-server``: ``scim-ldap serve`` under its earlier name."""
    return main(["serve", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
