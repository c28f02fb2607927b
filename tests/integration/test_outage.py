"""The directory goes away and comes back: 503 with Retry-After, readiness, recovery."""

import time

import pytest
from scim_http import make_app, settings_for

from scim_core.backends.ldap import LdapBackend
from scim_core.testing.slapd import SlapdInstance

TOKEN = "outage-token"


@pytest.fixture(scope="module")
def own_slapd():
    instance = SlapdInstance()
    instance.start()
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def client(own_slapd):
    backend = LdapBackend(settings_for(own_slapd, connect_timeout=2, timeout=5))
    yield make_app(backend, TOKEN).test_client()
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
