"""The service's TLS context (``scim_flask.tls.server_context``): what it offers a client."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from scim_core.testing.slapd import TlsFiles, make_tls_files
from scim_flask.tls import server_context


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls_files(tmp_path_factory.mktemp("tls"), ["127.0.0.1"])


def test_tls12_suites_are_forward_secret_aead_only(files: TlsFiles) -> None:
    context = server_context(str(files.cert_file), str(files.key_file))
    tls12 = [c for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"]
    assert tls12, "TLS 1.2 must stay offered"
    assert {c["kea"] for c in tls12} == {"kx-ecdhe"}, tls12
    assert all(c["aead"] for c in tls12), tls12
    assert context.minimum_version is ssl.TLSVersion.TLSv1_2
    assert context.maximum_version is ssl.TLSVersion.MAXIMUM_SUPPORTED
    assert context.verify_mode is ssl.CERT_NONE


def test_a_client_ca_makes_client_certificates_required(files: TlsFiles) -> None:
    context = server_context(str(files.cert_file), str(files.key_file), str(files.ca_file))
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert [c["subject"] for c in context.get_ca_certs()] != []


def test_a_key_that_does_not_match_is_refused(files: TlsFiles, tmp_path: Path) -> None:
    other = make_tls_files(tmp_path, ["127.0.0.1"])
    with pytest.raises(ssl.SSLError):
        server_context(str(files.cert_file), str(other.key_file))
