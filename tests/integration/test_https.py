"""HTTPS in the service itself: ``scim-ldap serve`` with ``SCIM_TLS_*``, real TLS clients.

The service runs as shipped (gunicorn, the service's worker, one worker process) on a throwaway
slapd. Every client here is Python's ``ssl`` module talking over a real socket: TLS 1.3 and 1.2
handshakes succeed with forward-secret suites, TLS 1.1 is refused by the server, a
client certificate from another CA is refused when client certificates are required, and a
certificate renewed on disk is served after a graceful reload while requests keep succeeding.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest
from reliability import TOKEN, serve_environment, served, user_body, wait_until

from scim_core.testing.slapd import SlapdInstance, TlsFiles, find_free_port, make_tls_files

pytestmark = pytest.mark.slapd

#: What a client offers that the service must refuse at TLS 1.1: OpenSSL 3 disables the old
#: protocols below security level 1 on the client side too.
_LEGACY_CIPHERS = "DEFAULT:@SECLEVEL=0"


@dataclass(frozen=True)
class Https:
    """A running ``scim-ldap serve`` with HTTPS."""

    port: int
    files: TlsFiles
    process: subprocess.Popen[bytes]

    def context(self, **settings: object) -> ssl.SSLContext:
        """A client context trusting the service's CA; ``settings`` set attributes on it."""
        context = ssl.create_default_context(cafile=str(self.files.ca_file))
        for name, value in settings.items():
            setattr(context, name, value)
        return context

    def get(self, path: str, context: ssl.SSLContext) -> tuple[int, dict[str, str], bytes, str]:
        """One request on a new connection: status, headers, body, the negotiated version."""
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=context, timeout=5)
        try:
            connection.request("GET", path, headers={"Authorization": f"Bearer {TOKEN}"})
            response = connection.getresponse()
            body = response.read()
            version = connection.sock.version() if connection.sock else ""
            return response.status, dict(response.getheaders()), body, version or ""
        finally:
            connection.close()

    def post(
        self, path: str, body: Mapping[str, object], context: ssl.SSLContext
    ) -> tuple[int, dict[str, str], dict[str, object]]:
        """A POST of ``body`` as JSON on a new connection: status, headers, parsed body."""
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=context, timeout=5)
        try:
            connection.request(
                "POST",
                path,
                body=json.dumps(body),
                headers={
                    "Authorization": f"Bearer {TOKEN}",
                    "Content-Type": "application/scim+json",
                },
            )
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), json.loads(response.read())
        finally:
            connection.close()

    def peer_certificate(self, context: ssl.SSLContext) -> bytes:
        """The certificate the service presents to a new connection (DER)."""
        with tls_connection(self.port, context) as tls:
            certificate = tls.getpeercert(binary_form=True)
            assert certificate is not None
            return certificate


@contextmanager
def tls_connection(port: int, context: ssl.SSLContext) -> Iterator[ssl.SSLSocket]:
    """A TLS connection to the service on 127.0.0.1, through its handshake."""
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        yield tls


def client_certificate(files: TlsFiles, folder: Path) -> tuple[Path, Path]:
    """A client certificate (clientAuth) issued by the CA of ``files``."""
    folder.mkdir(parents=True, exist_ok=True)
    key, request, cert = folder / "client.key", folder / "client.csr", folder / "client.crt"
    extensions = folder / "client.cnf"
    extensions.write_text("extendedKeyUsage = clientAuth\nbasicConstraints = CA:FALSE\n")
    ca_key = files.ca_file.with_name("ca.key")
    commands = [
        [
            *("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"),
            *("-nodes", "-keyout", str(key), "-out", str(request), "-subj", "/CN=an IdP"),
        ],
        [
            *("openssl", "x509", "-req", "-in", str(request), "-CA", str(files.ca_file)),
            *("-CAkey", str(ca_key), "-CAcreateserial", "-days", "2", "-out", str(cert)),
            *("-extfile", str(extensions)),
        ],
    ]
    for command in commands:
        subprocess.run(command, check=True, capture_output=True)
    return cert, key


@contextmanager
def https_service(
    directory: SlapdInstance, files: TlsFiles, log: Path, **extra: str
) -> Iterator[Https]:
    port = find_free_port()
    environment = serve_environment(
        directory,
        port,
        SCIM_TLS_CERT_FILE=str(files.cert_file),
        SCIM_TLS_KEY_FILE=str(files.key_file),
        **extra,
    )
    probe = ssl.create_default_context(cafile=str(files.ca_file))
    if "SCIM_TLS_CLIENT_CA_FILE" in extra:
        probe.load_cert_chain(*client_certificate(files, log.parent / "probe"))

    def ready() -> bool:
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=probe, timeout=1)
        try:
            with suppress(OSError, http.client.HTTPException):
                connection.request("GET", "/healthz")
                return connection.getresponse().status == 200
            return False
        finally:
            connection.close()

    command = [sys.executable, "-m", "scim_flask.cli", "serve"]
    with served(command, environment, log, ready) as process:
        yield Https(port, files, process)


@pytest.fixture(scope="module")
def directory() -> Iterator[SlapdInstance]:
    with SlapdInstance() as instance:
        yield instance


@pytest.fixture(scope="module")
def service(directory: SlapdInstance, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Https]:
    folder = tmp_path_factory.mktemp("https")
    files = make_tls_files(folder / "tls", ["127.0.0.1", "localhost"])
    with https_service(directory, files, folder / "scim.log") as running:
        yield running


def test_a_tls13_client_is_served_and_urls_say_https(service: Https) -> None:
    context = service.context(minimum_version=ssl.TLSVersion.TLSv1_3)
    status, _, body, version = service.get("/scim/v2/Users?count=1", context)
    assert (status, version) == (200, "TLSv1.3"), body
    created = service.post(
        "/scim/v2/Users", user_body("tls13.person@example.org", password=None), context
    )
    assert created[0] == 201, created
    assert created[1]["Location"].startswith(f"https://127.0.0.1:{service.port}/scim/v2/Users/")
    assert created[2]["meta"]["location"] == created[1]["Location"]  # type: ignore[index]


def test_a_tls12_client_gets_a_forward_secret_suite(service: Https) -> None:
    context = service.context(maximum_version=ssl.TLSVersion.TLSv1_2)
    with tls_connection(service.port, context) as tls:
        assert tls.version() == "TLSv1.2"
        cipher = tls.cipher()
        assert cipher is not None and cipher[0].startswith("ECDHE-"), cipher
    status, _, _, version = service.get("/scim/v2/ServiceProviderConfig", context)
    assert (status, version) == (200, "TLSv1.2")


def _refused(service: Https, context: ssl.SSLContext) -> str:
    """The reason the server gave for ending the handshake (an alert it sent)."""
    with pytest.raises(ssl.SSLError) as refused, tls_connection(service.port, context) as tls:
        tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        tls.recv(1)  # TLS 1.3: a refused client certificate is told after the handshake
    return str(refused.value.reason)


def test_a_tls11_client_is_refused_by_the_server(service: Https) -> None:
    with warnings.catch_warnings():  # the client's protocol is deprecated: that is the point
        warnings.simplefilter("ignore", DeprecationWarning)
        context = service.context(
            minimum_version=ssl.TLSVersion.TLSv1_1, maximum_version=ssl.TLSVersion.TLSv1_1
        )
    context.set_ciphers(_LEGACY_CIPHERS)
    assert _refused(service, context) == "TLSV1_ALERT_PROTOCOL_VERSION"


def test_plain_http_on_the_https_port_gets_no_answer(service: Https) -> None:
    with socket.create_connection(("127.0.0.1", service.port), timeout=5) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        try:
            answer = raw.recv(4096)
        except ConnectionResetError:
            answer = b""
        assert not answer.startswith(b"HTTP"), answer
    assert service.get("/healthz", service.context())[0] == 200


def test_stalled_handshakes_hold_no_thread(service: Https) -> None:
    """One worker with one thread: connections that never finish their handshake wait in the
    worker's event loop, and a real client is served meanwhile."""
    stalled = [socket.create_connection(("127.0.0.1", service.port)) for _ in range(4)]
    try:
        for sock in stalled[:2]:
            sock.sendall(b"\x16\x03\x01\x02\x00")  # the start of a ClientHello, and no more
        status, _, _, _ = service.get("/healthz", service.context())
        assert status == 200
    finally:
        for sock in stalled:
            sock.close()


def test_client_certificates_from_another_ca_are_refused(
    directory: SlapdInstance, tmp_path: Path
) -> None:
    trusted = make_tls_files(tmp_path / "trusted", ["127.0.0.1"])
    other = make_tls_files(tmp_path / "other", ["127.0.0.1"])
    with https_service(
        directory, trusted, tmp_path / "scim.log", SCIM_TLS_CLIENT_CA_FILE=str(trusted.ca_file)
    ) as running:
        good = running.context()
        good.load_cert_chain(*client_certificate(trusted, tmp_path / "good"))
        assert running.get("/scim/v2/Users?count=1", good)[0] == 200

        # TLS 1.2: the server checks the client's certificate inside the handshake.
        foreign = running.context(maximum_version=ssl.TLSVersion.TLSv1_2)
        foreign.load_cert_chain(*client_certificate(other, tmp_path / "foreign"))
        assert _refused(running, foreign) == "TLSV1_ALERT_UNKNOWN_CA"
        # TLS 1.3: the client's handshake ends first; its request gets no answer.
        foreign13 = running.context(minimum_version=ssl.TLSVersion.TLSv1_3)
        foreign13.load_cert_chain(*client_certificate(other, tmp_path / "foreign"))
        for context in (foreign13, running.context()):  # another CA's certificate, or none
            with pytest.raises(OSError) as refused, tls_connection(running.port, context) as tls:
                tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                tls.recv(1)
            assert not isinstance(refused.value, TimeoutError)  # closed at once, not left waiting
        assert running.get("/healthz", good)[0] == 200


def test_a_renewed_certificate_is_served_after_a_graceful_reload(
    directory: SlapdInstance, tmp_path: Path
) -> None:
    files = make_tls_files(tmp_path / "tls", ["127.0.0.1"])
    with https_service(directory, files, tmp_path / "scim.log") as running:
        old_ca = files.ca_file.read_text()
        before = running.peer_certificate(running.context())
        # The renewal: a new key and certificate (from a new CA) written over the old files.
        renewed = make_tls_files(tmp_path / "renewed", ["127.0.0.1"])
        for name in ("ca_file", "cert_file", "key_file"):
            os.replace(getattr(renewed, name), getattr(files, name))
        # Clients that trust both CAs: every request must succeed, whichever worker serves it.
        both = ssl.create_default_context(cadata=old_ca + files.ca_file.read_text())
        statuses: list[int | str] = []
        stop = threading.Event()

        def load() -> None:
            deadline = time.monotonic() + 40
            while not stop.is_set() and time.monotonic() < deadline:
                try:
                    statuses.append(running.get("/scim/v2/Users?count=1", both)[0])
                except (OSError, http.client.HTTPException) as error:
                    statuses.append(type(error).__name__)

        loader = threading.Thread(target=load)
        loader.start()
        try:
            wait_until(lambda: len(statuses) >= 5, timeout=10)
            running.process.send_signal(signal.SIGHUP)
            assert wait_until(lambda: running.peer_certificate(both) != before, timeout=30)
            served_before = len(statuses)
            wait_until(lambda: len(statuses) >= served_before + 5, timeout=10)
        finally:
            stop.set()
            loader.join()
        assert len(statuses) >= served_before + 5 and set(statuses) == {200}, statuses
        # The old CA no longer vouches for what the service serves.
        with pytest.raises(ssl.SSLCertVerificationError):
            running.peer_certificate(ssl.create_default_context(cadata=old_ca))


def test_a_key_that_does_not_match_stops_start_up_with_one_line(
    directory: SlapdInstance, tmp_path: Path
) -> None:
    files = make_tls_files(tmp_path / "tls", ["127.0.0.1"])
    other = make_tls_files(tmp_path / "other", ["127.0.0.1"])
    environment = serve_environment(
        directory,
        find_free_port(),
        SCIM_TLS_CERT_FILE=str(files.cert_file),
        SCIM_TLS_KEY_FILE=str(other.key_file),
    )
    finished = subprocess.run(
        [sys.executable, "-m", "scim_flask.cli", "serve"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 2
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scim-ldap: configuration error: SCIM_TLS_"), (
        finished.stderr
    )
