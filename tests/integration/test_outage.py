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


def _echo_peer(listener, stop):
    """Answers every connection by sending its bytes back, as a socket connected to itself
    does: the bind request comes back where the bind response should be."""
    listener.settimeout(0.2)
    while not stop.is_set():
        try:
            peer, _ = listener.accept()
        except OSError:
            continue
        with peer:
            peer.settimeout(2)
            try:
                while data := peer.recv(4096):
                    peer.sendall(data)
            except OSError:
                pass


def test_a_peer_that_is_no_directory_is_503_not_500(own_slapd):
    """What answers on the directory's port is not LDAP (a socket looped onto itself while
    slapd was down, found by the kill soak): 503 with Retry-After, like an outage."""
    import socket
    import threading

    stop = threading.Event()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"ldap://127.0.0.1:{listener.getsockname()[1]}"
        thread = threading.Thread(target=_echo_peer, args=(listener, stop), daemon=True)
        thread.start()
        backend = LdapBackend(settings_for(own_slapd, url, connect_timeout=2, timeout=2))
        try:
            response = users(make_app(backend, TOKEN).test_client())
        finally:
            stop.set()
            thread.join(timeout=5)
            backend.close()
    assert response.status_code == 503, response.get_json(force=True)
    assert response.headers["Retry-After"]
    assert response.get_json(force=True)["status"] == "503"


def test_a_socket_connected_to_itself_is_refused():
    """The check behind it: a connect that looped onto its own port is not a connection."""
    import socket
    from types import SimpleNamespace

    from ldap3.core.exceptions import LDAPSocketOpenError

    from scim_core.backends.ldap.connection import _refuse_self_connection

    with socket.socket() as looped:
        looped.bind(("127.0.0.1", 0))
        looped.connect(looped.getsockname())  # TCP simultaneous open with itself
        with pytest.raises(LDAPSocketOpenError, match="itself"):
            _refuse_self_connection(SimpleNamespace(socket=looped))
    with socket.socket() as listener, socket.socket() as client:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client.connect(listener.getsockname())
        _refuse_self_connection(SimpleNamespace(socket=client))  # a real peer: accepted
