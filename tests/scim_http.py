"""Shared by the HTTP-level test folders: the app on the real slapd and a token-sending client.

A plain module, not a conftest: pytest puts ``tests/`` on ``sys.path`` (its conftest lives
there), so ``from scim_http import ...`` works from the source tree and from the wheel alike.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager

from ldap3 import NONE, Connection, Server, Tls

from scim_core.auth import parse_tokens
from scim_core.backends.ldap import LdapSettings, operations
from scim_core.config import ServiceConfig, parse_bool
from scim_flask import AppSettings, create_app

INTEGRATION_TOKEN = "integration-token"

#: ``SCIM_LDAP_FAST_PATH=off`` runs every test's plugin on plain ldap3 (`make test-plain-ldap3`).
FAST_PATH = parse_bool(os.environ.get("SCIM_LDAP_FAST_PATH") or "on")


def settings_for(instance, *urls, connect_timeout=3, timeout=10, **extra):
    """LDAP plugin settings for the service account of a throwaway directory (OpenLDAP,
    389-DS or Samba AD; its URL by default), in the directory's profile."""
    ca_file = getattr(instance, "ca_file", None)
    extra.setdefault("dialect", getattr(instance, "dialect", "openldap"))
    extra.setdefault("fast_path", FAST_PATH)
    if ca_file is not None and "ca_file" not in extra:
        extra["ca_file"] = str(ca_file)
    return LdapSettings(
        urls=urls or (instance.url,),
        bind_dn=instance.service_dn,
        bind_password=instance.service_password,
        users_base=instance.users_base,
        groups_base=instance.groups_base,
        placeholder_dn=instance.placeholder_dn,
        connect_timeout=connect_timeout,
        timeout=timeout,
        **extra,
    )


def make_app(backend, token, *, log_level="INFO", name="idp", public_url=None):
    """The Flask app over ``backend``, accepting ``token`` (audit name ``name``), reached at
    ``public_url`` (else only on a loopback Host, as the service is by default)."""
    settings = AppSettings(
        service=ServiceConfig(),
        tokens=parse_tokens(f"{name}=" + hashlib.sha256(token.encode()).hexdigest()),
        backend="ldap",
        log_level=log_level,
        public_url=public_url,
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


@contextmanager
def as_admin(directory):
    """A connection bound as the directory's administrator (over TLS where it serves LDAPS)."""
    settings = settings_for(directory)
    tls = Tls(ca_certs_file=settings.ca_file) if settings.ca_file else None
    server = Server(directory.url, get_info=NONE, tls=tls)
    connection = Connection(
        server, directory.admin_dn, directory.admin_password, auto_bind=True, raise_exceptions=True
    )
    try:
        yield connection
    finally:
        connection.unbind()


def counted_operations(monkeypatch) -> list[str]:
    """The directory operations the service sends from now on, in order, by kind."""
    sent: list[str] = []

    def counted(kind: str, operation):
        def counting(*args, **kwargs):
            sent.append(kind)
            return operation(*args, **kwargs)

        return counting

    for kind in ("search", "modify", "add", "delete", "rename", "set_password"):
        monkeypatch.setattr(operations, kind, counted(kind, getattr(operations, kind)))
    return sent
