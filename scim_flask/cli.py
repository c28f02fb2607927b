"""``scim-server``: validate the configuration, then serve the app under gunicorn.

It runs the service's own gunicorn worker (``scim_flask.worker.ScimWorker``) with the settings
``examples/gunicorn.conf.py`` gives it; a ``--config`` file may change them.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from gunicorn.app.base import BaseApplication

from scim_core.backend import load_backend
from scim_core.config import ConfigError
from scim_flask.app import create_app
from scim_flask.settings import AppSettings

__all__ = ["main"]

#: What the shipped worker is made for: gunicorn's default sync worker would let two idle
#: connections starve the service, and answer errors in HTML naming itself.
_WORKER_SETTINGS: dict[str, Any] = {
    "worker_class": "scim_flask.worker.ScimWorker",
    "threads": 1,  # requests reach the thread complete: more threads only contend for the GIL
    "worker_connections": 1000,
    "limit_request_line": 0,  # gunicorn's 1 MiB; the worker refuses a line past 32 KiB itself
    "keepalive": 5,
}


class _Server(BaseApplication):  # type: ignore[misc]
    def __init__(self, options: dict[str, Any], config_file: str | None) -> None:
        self._options = options
        self._config_file = config_file
        super().__init__()

    def load_config(self) -> None:
        for key, value in _WORKER_SETTINGS.items():
            self.cfg.set(key, value)
        if self._config_file:
            self.load_config_from_file(self._config_file)
        for key, value in self._options.items():
            if value is not None:
                self.cfg.set(key, value)

    def load(self) -> Any:
        return create_app()


def main(argv: list[str] | None = None) -> int:
    """Run the service; exit status 2 with one line on a configuration error."""
    parser = argparse.ArgumentParser(prog="scim-server", description=__doc__)
    parser.add_argument("--bind", default=None, help="address:port (default 127.0.0.1:8080)")
    parser.add_argument("--workers", type=int, default=None, help="gunicorn worker processes")
    parser.add_argument("--config", default=None, help="a gunicorn configuration file")
    args = parser.parse_args(argv)
    try:
        settings = AppSettings.from_environ(os.environ)
        # The backend's own settings (an LDAP mapping file among them) are checked here too,
        # so a wrong one is this one line, not a worker's traceback.
        load_backend(settings.backend)(os.environ).close()
    except ConfigError as error:
        print(f"scim-server: configuration error: {error}", file=sys.stderr)
        return 2
    bind = args.bind or (None if args.config else "127.0.0.1:8080")
    options = {"bind": bind, "workers": args.workers}
    _Server(options, args.config).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
