"""The WSGI entry point for gunicorn: ``gunicorn scim_flask.wsgi:app``.

A bad setting stops start-up with one line naming it (exit status 2), not a traceback.
"""

from __future__ import annotations

import sys

from scim_core.config import ConfigError
from scim_flask.app import create_app

try:
    app = create_app()
except ConfigError as _error:
    print(f"scim-ldap: configuration error: {_error}", file=sys.stderr)
    raise SystemExit(2) from None
