"""The app over HTTP (Flask's test client) on the session's real slapd."""

from __future__ import annotations

import hashlib

import pytest
from ldap3 import Connection, Server

from scim_core.config import ServiceConfig
from scim_flask import AppSettings, create_app
from scim_flask.auth import parse_tokens

TOKEN = "integration-token"


@pytest.fixture(scope="session")
def app(ldap_backend):
    settings = AppSettings(
        service=ServiceConfig(),
        tokens=parse_tokens("idp=" + hashlib.sha256(TOKEN.encode()).hexdigest()),
        backend="ldap",
        log_level="INFO",
    )
    return create_app(settings=settings, backend=ldap_backend)


class Http:
    """A SCIM client over Flask's test client that sends the bearer token."""

    def __init__(self, client):
        self.client = client

    def __call__(self, method, path, json=None, token=TOKEN, **kwargs):
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.open(
            "/scim/v2" + path, method=method, json=json, headers=headers, **kwargs
        )


@pytest.fixture
def http(app):
    return Http(app.test_client())


@pytest.fixture
def admin(slapd):
    connection = Connection(Server(slapd.url), slapd.admin_dn, slapd.admin_password, auto_bind=True)
    yield connection
    connection.unbind()


def _can_bind(slapd, dn, password):
    connection = Connection(Server(slapd.url), dn, password)
    try:
        return bool(connection.bind())
    finally:
        connection.unbind()


@pytest.fixture
def can_bind():
    """``can_bind(slapd, dn, password)``: whether a simple bind as ``dn`` succeeds."""
    return _can_bind
