"""The app over HTTP (Flask's test client) on the session's real slapd."""

from __future__ import annotations

import pytest
from ldap3 import Connection, Server
from scim_http import INTEGRATION_TOKEN, Http, make_app

TOKEN = INTEGRATION_TOKEN


@pytest.fixture(scope="session")
def app(ldap_backend):
    return make_app(ldap_backend, TOKEN)


@pytest.fixture
def http(app):
    return Http(app.test_client(), TOKEN)


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
