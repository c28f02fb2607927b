"""The directory goes away between two operations of one change (OpenLDAP, RFC 3062).

A proxy in front of the real slapd forwards everything until it sees the password-modify
operation of a change, then cuts the connection at the next modify and refuses new ones, as an
outage in that instant would. What the service answers, what the audit line says, what the
entry holds meanwhile (a disabled user stays unable to bind) and that the client's retry of
the same request completes the change.
"""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from scim_http import Http, make_app, settings_for

from scim_core.backends.ldap import LdapBackend

TOKEN = "partial-token"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
PASSWORD = "Initial-Pa55word!"
NEW_PASSWORD = "Changed-Pa55word!"
_EXTENDED_REQUEST = 0x77
_MODIFY_REQUEST = 0x66


def _message_end(data: bytes) -> int | None:
    """Where the first whole BER element of ``data`` ends, if it is all there."""
    if len(data) < 2:
        return None
    length, pos = data[1], 2
    if length & 0x80:
        size = length & 0x7F
        if len(data) < pos + size:
            return None
        length, pos = int.from_bytes(data[pos : pos + size], "big"), pos + size
    return pos + length if pos + length <= len(data) else None


def _operation(message: bytes) -> int:
    """The protocolOp tag of one LDAPMessage (after its SEQUENCE header and messageID)."""
    pos = 2 + (message[1] & 0x7F if message[1] & 0x80 else 0)
    return message[pos + 2 + message[pos + 1]]


class CuttingProxy:
    """TCP proxy to the directory; :meth:`arm` makes it cut at the first modify that follows
    a password-modify operation, then refuse every connection until :meth:`heal`."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.armed = self.seen_password = self.down = False
        self.cuts = 0
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self) -> None:
        with self.lock:
            self.armed, self.seen_password = True, False

    def heal(self) -> None:
        with self.lock:
            self.armed = self.down = False

    def close(self) -> None:
        self.closing = True
        self.listener.close()
        self._drop()

    def _drop(self) -> None:
        with self.lock:
            sockets, self.sockets = self.sockets, []
        for sock in sockets:
            sock.close()

    def _accept(self) -> None:
        while not self.closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down:
                client.close()  # the directory is away
                continue
            server = socket.create_connection(self.target, timeout=10)
            server.settimeout(None)  # idle connections stay up, as they would to slapd
            with self.lock:
                self.sockets += [client, server]
            threading.Thread(target=self._requests, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def _requests(self, client: socket.socket, server: socket.socket) -> None:
        """Forward the client's messages one whole LDAPMessage at a time, watching their
        operations."""
        buffer = b""
        try:
            while data := client.recv(65536):
                buffer += data
                while (end := _message_end(buffer)) is not None:
                    message, buffer = buffer[:end], buffer[end:]
                    if self._cut_before(_operation(message)):
                        self._drop()
                        return
                    server.sendall(message)
        except OSError:
            pass

    def _cut_before(self, operation: int) -> bool:
        with self.lock:
            if not self.armed:
                return False
            if operation == _EXTENDED_REQUEST:
                self.seen_password = True
            elif operation == _MODIFY_REQUEST and self.seen_password:
                self.armed, self.down = False, True
                self.cuts += 1
                return True
            return False


@pytest.fixture(scope="module")
def proxy(slapd) -> Iterator[CuttingProxy]:
    cutting = CuttingProxy(slapd.host, slapd.port)
    yield cutting
    cutting.close()


@pytest.fixture(scope="module")
def backend(slapd, proxy) -> Iterator[LdapBackend]:
    through = settings_for(slapd, f"ldap://127.0.0.1:{proxy.port}", connect_timeout=2, timeout=5)
    ldap = LdapBackend(through)
    yield ldap
    ldap.close()


@pytest.fixture
def http(backend) -> Http:
    return Http(make_app(backend, TOKEN).test_client(), TOKEN)


def body_of(response) -> dict[str, Any]:
    return response.get_json(force=True)


def new_user(http, **extra) -> dict[str, Any]:
    name = "px" + uuid.uuid4().hex[:10] + "@example.org"
    body = {
        "userName": name,
        "name": {"givenName": "Part", "familyName": "Ial"},
        "emails": [{"value": name}],
        "password": PASSWORD,
        **extra,
    }
    response = http("POST", "/Users", json=body)
    assert response.status_code == 201, body_of(response)
    return body_of(response)


def dn_of(slapd, user) -> str:
    return f"uid={user['userName']},{slapd.users_base}"


def audit_records(caplog) -> list[dict[str, Any]]:
    return [r.audit for r in caplog.records if r.name == "scim.audit"]


def cut_change(http, proxy, caplog, path, operations):
    """Send the PATCH with the proxy armed: 503, audited as partial."""
    caplog.clear()
    proxy.arm()
    try:
        with caplog.at_level(logging.INFO, logger="scim.audit"):
            response = http("PATCH", path, json={"schemas": [PATCH_OP], "Operations": operations})
    finally:
        cuts = proxy.cuts
        proxy.heal()
    assert cuts, "the proxy never cut: the change took another path"
    assert response.status_code == 503, body_of(response)
    assert response.headers["Retry-After"].isdigit()
    (record,) = audit_records(caplog)
    assert (record["status"], record["result"], record.get("partial")) == (503, "failure", True)
    return response


def test_an_outage_after_the_password_is_audited_as_partial_and_the_retry_completes_it(
    http, proxy, slapd, caplog
):
    user = new_user(http, title="Before")
    path = "/Users/" + user["id"]
    operations = [
        {"op": "replace", "path": "title", "value": "After"},
        {"op": "replace", "path": "password", "value": NEW_PASSWORD},
    ]
    cut_change(http, proxy, caplog, path, operations)
    # What remains non-atomic: the password is in, the title is not.
    meanwhile = body_of(http("GET", path))
    assert meanwhile["title"] == "Before" and meanwhile["active"] is True
    assert slapd.can_bind(dn_of(slapd, user), NEW_PASSWORD)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="scim.audit"):
        retried = http("PATCH", path, json={"schemas": [PATCH_OP], "Operations": operations})
    assert retried.status_code == 200, body_of(retried)
    assert body_of(retried)["title"] == "After"
    assert slapd.can_bind(dn_of(slapd, user), NEW_PASSWORD)
    (record,) = audit_records(caplog)
    assert record["status"] == 200 and "partial" not in record


def markers(backend, dn) -> dict[str, list[str]]:
    names = ["pwdAccountLockedTime", "pwdEndTime"]
    entries, _ = backend._search(dn, "(objectClass=*)", names, scope="BASE")
    return {k: list(map(str, v)) for k, v in entries[0]["attributes"].items() if v}


def test_a_disabled_user_cut_between_its_password_and_its_lock_stays_unable_to_bind(
    http, proxy, slapd, backend, caplog
):
    """ppolicy lifted the lock with the password, the cut kept the lock from coming back:
    the bind guard is still there, so the user reads as disabled and no bind succeeds."""
    user = new_user(http, active=False)
    path = "/Users/" + user["id"]
    dn = dn_of(slapd, user)
    operations = [{"op": "replace", "path": "password", "value": NEW_PASSWORD}]
    cut_change(http, proxy, caplog, path, operations)
    assert markers(backend, dn) == {"pwdEndTime": ["19700101000000Z"]}  # the lock went
    assert not slapd.can_bind(dn, NEW_PASSWORD)
    assert body_of(http("GET", path))["active"] is False
    listed = http("GET", "/Users", query_string={"filter": "active eq false", "count": "200"})
    assert user["id"] in [r["id"] for r in body_of(listed)["Resources"]]
    retried = http("PATCH", path, json={"schemas": [PATCH_OP], "Operations": operations})
    assert retried.status_code == 200 and body_of(retried)["active"] is False
    assert markers(backend, dn) == {"pwdAccountLockedTime": ["000001010000Z"]}
    assert not slapd.can_bind(dn, NEW_PASSWORD)
    enabled = http(
        "PATCH",
        path,
        json={
            "schemas": [PATCH_OP],
            "Operations": [{"op": "replace", "path": "active", "value": True}],
        },
    )
    assert enabled.status_code == 200 and body_of(enabled)["active"] is True
    assert slapd.can_bind(dn, NEW_PASSWORD)


def test_a_guard_left_by_a_cut_goes_with_an_explicit_enable(http, proxy, slapd, backend, caplog):
    user = new_user(http, active=False)
    path = "/Users/" + user["id"]
    dn = dn_of(slapd, user)
    operations = [{"op": "replace", "path": "password", "value": NEW_PASSWORD}]
    cut_change(http, proxy, caplog, path, operations)
    enable = [{"op": "replace", "path": "active", "value": True}]
    enabled = http("PATCH", path, json={"schemas": [PATCH_OP], "Operations": enable})
    assert enabled.status_code == 200 and body_of(enabled)["active"] is True
    assert markers(backend, dn) == {}
    assert slapd.can_bind(dn, NEW_PASSWORD)  # the cut change had set it
