"""TLS to the directory: StartTLS and ldaps:// with certificate and host name verification.

The launcher serves TLS with a certificate from a private CA (``SlapdInstance(tls=True)``).
A certificate the service cannot verify, or one for another name, must give 503 with a log
line saying why, never a 500 and never a connection that silently skips verification.
"""

from __future__ import annotations

import dataclasses
import logging
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from reliability import TOKEN, make_app
from scim_http import settings_for

from scim_core.backends.ldap import LdapBackend, LdapSettings
from scim_core.config import ConfigError
from scim_core.testing.slapd import SlapdInstance, make_tls_files

pytestmark = pytest.mark.slapd


@pytest.fixture(scope="module")
def tls_slapd() -> Iterator[SlapdInstance]:
    with SlapdInstance(tls=True) as instance:
        yield instance


def get_users(settings: LdapSettings) -> tuple[int, dict[str, str], dict[str, str], LdapBackend]:
    """GET /Users and /readyz through the app on ``settings`` (Flask test client, this thread)."""
    backend = LdapBackend(settings)
    client = make_app(backend).test_client()
    response = client.get("/scim/v2/Users?count=1", headers={"Authorization": f"Bearer {TOKEN}"})
    ready = client.get("/readyz")
    body = response.get_json(force=True)
    return (
        response.status_code,
        dict(response.headers),
        {
            "ready": str(ready.status_code),
            **{k: str(v) for k, v in body.items() if k in ("status", "detail")},
        },
        backend,
    )


def tls_version(backend: LdapBackend) -> str | None:
    """The TLS version of this thread's directory connection (None: not encrypted)."""
    sock = backend.connections.current().socket
    return sock.version() if isinstance(sock, ssl.SSLSocket) else None


def test_launcher_serves_starttls_and_ldaps(tls_slapd: SlapdInstance) -> None:
    files = tls_slapd.tls_files
    assert files is not None and tls_slapd.ca_file == files.ca_file
    assert all(p.is_file() for p in (files.ca_file, files.cert_file, files.key_file))
    assert tls_slapd.ldaps_url == f"ldaps://127.0.0.1:{tls_slapd.tls_port}"
    environment = tls_slapd.environment()
    assert environment["LDAP_LDAPS_URL"] == tls_slapd.ldaps_url
    assert environment["LDAP_CA_FILE"] == str(files.ca_file)
    # A restart keeps the CA: clients configured with it go on working.
    ca = files.ca_file.read_bytes()
    tls_slapd.restart()
    assert files.ca_file.read_bytes() == ca
    assert SlapdInstance(seed=False).tls_files is None


@pytest.mark.parametrize("start_tls", [True, False], ids=["starttls", "ldaps"])
def test_the_service_connects_over_verified_tls(tls_slapd: SlapdInstance, start_tls: bool) -> None:
    url = tls_slapd.url if start_tls else str(tls_slapd.ldaps_url)
    settings = settings_for(tls_slapd, url, start_tls=start_tls, ca_file=str(tls_slapd.ca_file))
    status, _, body, backend = get_users(settings)
    try:
        assert (status, body["ready"]) == (200, "200"), body
        assert tls_version(backend) in ("TLSv1.2", "TLSv1.3")
    finally:
        backend.close()


def test_a_dns_name_in_the_url_is_verified_too(tls_slapd: SlapdInstance) -> None:
    url = str(tls_slapd.ldaps_url).replace("127.0.0.1", "localhost")
    status, _, body, backend = get_users(
        settings_for(tls_slapd, url, ca_file=str(tls_slapd.ca_file))
    )
    backend.close()
    assert (status, body["ready"]) == (200, "200"), body


@pytest.mark.parametrize("start_tls", [True, False], ids=["starttls", "ldaps"])
@pytest.mark.parametrize("ca", ["other-ca", "system-cas"])
def test_an_unverifiable_certificate_is_503_with_a_log_line(
    tls_slapd: SlapdInstance,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    start_tls: bool,
    ca: str,
) -> None:
    ca_file = str(make_tls_files(tmp_path).ca_file) if ca == "other-ca" else None
    url = tls_slapd.url if start_tls else str(tls_slapd.ldaps_url)
    settings = settings_for(tls_slapd, url, start_tls=start_tls, ca_file=ca_file)
    with caplog.at_level(logging.WARNING, logger="scim.ldap"):
        status, headers, body, backend = get_users(settings)
    backend.close()
    assert (status, body["status"], body["ready"]) == (503, "503", "503"), body
    assert headers["Retry-After"].isdigit()
    lines = [r.getMessage() for r in caplog.records if r.name == "scim.ldap"]
    assert any(
        url in line and "certificate verification failed" in line and "verify failed" in line
        for line in lines
    ), lines


def test_a_certificate_for_another_name_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The certificate is valid for ``localhost`` only: 127.0.0.1 must not be accepted."""
    with SlapdInstance(tmp_path / "named", tls=True, tls_names=["localhost"]) as instance:
        settings = settings_for(instance, str(instance.ldaps_url), ca_file=str(instance.ca_file))
        with caplog.at_level(logging.WARNING, logger="scim.ldap"):
            status, _, body, backend = get_users(settings)
        backend.close()
        assert (status, body["ready"]) == (503, "503"), body
        lines = [r.getMessage() for r in caplog.records if r.name == "scim.ldap"]
        assert any("IP address mismatch" in line for line in lines), lines
        # StartTLS is checked the same way.
        status, _, body, backend = get_users(
            dataclasses.replace(settings, urls=(instance.url,), start_tls=True)
        )
        backend.close()
        assert status == 503, body
        # By its own name the same server is fine.
        url = str(instance.ldaps_url).replace("127.0.0.1", "localhost")
        status, _, body, backend = get_users(dataclasses.replace(settings, urls=(url,)))
        backend.close()
        assert status == 200, body


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "No such file"), (b"not a certificate\n", "no CA certificate could be read")],
)
def test_a_bad_ca_file_stops_start_up_naming_the_setting(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    ca_file = tmp_path / "ca.pem"
    if content is not None:
        ca_file.write_bytes(content)
    environ = {
        "SCIM_LDAP_URL": "ldaps://127.0.0.1:636",
        "SCIM_LDAP_BIND_DN": "cn=scim,ou=services,dc=example,dc=org",
        "SCIM_LDAP_BIND_PASSWORD": "secret-not-shown",
        "SCIM_LDAP_USERS_BASE": "ou=people,dc=example,dc=org",
        "SCIM_LDAP_GROUPS_BASE": "ou=groups,dc=example,dc=org",
        "SCIM_LDAP_CA_FILE": str(ca_file),
    }
    with pytest.raises(ConfigError, match=f"^SCIM_LDAP_CA_FILE: .*{reason}") as raised:
        LdapSettings.from_environ(environ)
    assert "secret-not-shown" not in str(raised.value)
