"""The directory goes away and comes back: 503 with Retry-After, readiness, recovery."""

import hashlib
import time

import pytest

from scim_core.backends.ldap import LdapBackend, LdapSettings
from scim_core.config import ServiceConfig
from scim_core.testing.slapd import SlapdInstance
from scim_flask import AppSettings, create_app
from scim_flask.auth import parse_tokens

TOKEN = "outage-token"


@pytest.fixture(scope="module")
def own_slapd():
    instance = SlapdInstance()
    instance.start()
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def client(own_slapd):
    backend = LdapBackend(
        LdapSettings(
            urls=(own_slapd.url,),
            bind_dn=own_slapd.service_dn,
            bind_password=own_slapd.service_password,
            users_base=own_slapd.users_base,
            groups_base=own_slapd.groups_base,
            connect_timeout=2,
            timeout=5,
        )
    )
    settings = AppSettings(
        service=ServiceConfig(),
        tokens=parse_tokens(hashlib.sha256(TOKEN.encode()).hexdigest()),
        backend="ldap",
        log_level="INFO",
    )
    yield create_app(settings=settings, backend=backend).test_client()
    backend.close()


def users(client):
    return client.get("/scim/v2/Users", headers={"Authorization": f"Bearer {TOKEN}"})


def test_readiness_and_503_follow_the_directory(client, own_slapd):
    assert client.get("/readyz").status_code == 200
    assert users(client).status_code == 200
    own_slapd.stop()
    try:
        started = time.monotonic()
        response = users(client)
        elapsed = time.monotonic() - started
        assert response.status_code == 503
        assert response.headers["Retry-After"].isdigit()
        assert response.get_json(force=True)["status"] == "503"
        assert elapsed < 10
        ready = client.get("/readyz")
        assert ready.status_code == 503
    finally:
        own_slapd.start()
    assert users(client).status_code == 200
    assert client.get("/readyz").status_code == 200
