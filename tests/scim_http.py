"""Shared by the HTTP-level test folders: the app on the real slapd and a token-sending client.

A plain module, not a conftest: pytest puts ``tests/`` on ``sys.path`` (its conftest lives
there), so ``from scim_http import ...`` works from the source tree and from the wheel alike.
"""

from __future__ import annotations

import hashlib

from scim_core.config import ServiceConfig
from scim_flask import AppSettings, create_app
from scim_flask.auth import parse_tokens

INTEGRATION_TOKEN = "integration-token"


def make_app(backend, token, *, log_level="INFO"):
    """The Flask app over ``backend``, accepting ``token`` (audit name ``idp``)."""
    settings = AppSettings(
        service=ServiceConfig(),
        tokens=parse_tokens("idp=" + hashlib.sha256(token.encode()).hexdigest()),
        backend="ldap",
        log_level=log_level,
    )
    return create_app(settings=settings, backend=backend)


class Http:
    """Flask's test client under ``/scim/v2``, sending the bearer token."""

    def __init__(self, client, token):
        self.client = client
        self.token = token

    def __call__(self, method, path, json=None, token=..., **kwargs):
        token = self.token if token is ... else token
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.open(
            "/scim/v2" + path, method=method, json=json, headers=headers, **kwargs
        )
