"""Behind a reverse proxy (``SCIM_TRUSTED_PROXIES``): the app on the session's real slapd.

From a configured proxy, ``X-Forwarded-*`` decide the client's address and the path prefix the
public URLs carry; from anyone else those headers are removed, so a client can neither move the
URLs in answers nor pose as another address to the rate limits.
"""

from __future__ import annotations

import hashlib
import uuid
from ipaddress import ip_network
from typing import Any

import pytest
from reliability import user_body

from scim_core.auth import parse_tokens
from scim_core.config import ServiceConfig
from scim_flask import AppSettings, create_app

pytestmark = pytest.mark.slapd

TOKEN = "proxy-token"
PROXY = "127.0.0.1"
PUBLIC = "https://scim.example.com"
FORWARDED = {
    "X-Forwarded-Proto": "https",
    "X-Forwarded-Host": "scim.example.com",
    "X-Forwarded-Prefix": "/idm",
    "X-Forwarded-For": "203.0.113.7",
}


@pytest.fixture(scope="module")
def app(ldap_backend: Any) -> Any:
    settings = AppSettings(
        service=ServiceConfig(),
        tokens=parse_tokens("idp=" + hashlib.sha256(TOKEN.encode()).hexdigest()),
        backend="ldap",
        log_level="WARNING",
        public_url=PUBLIC,
        auth_failure_limit=1.0,
        trusted_proxies=(ip_network(PROXY),),
    )
    return create_app(settings=settings, backend=ldap_backend)


def send(app: Any, peer: str, method: str, path: str, **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {TOKEN}", **kwargs.pop("headers", {})}
    client = app.test_client()
    return client.open(
        "/scim/v2" + path,
        method=method,
        headers=headers,
        environ_base={"REMOTE_ADDR": peer},
        **kwargs,
    )


def test_behind_a_trusted_proxy_every_url_is_the_public_one(app: Any) -> None:
    name = f"proxied-{uuid.uuid4().hex[:8]}"
    boss = send(app, PROXY, "POST", "/Users", json=user_body(name + "-boss"), headers=FORWARDED)
    assert boss.status_code == 201, boss.get_json()
    root = PUBLIC + "/idm/scim/v2"
    assert boss.headers["Location"] == f"{root}/Users/{boss.get_json()['id']}"
    enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
    body = user_body(name, **{enterprise: {"manager": {"value": boss.get_json()["id"]}}})
    body["schemas"].append(enterprise)
    worker = send(app, PROXY, "POST", "/Users", json=body, headers=FORWARDED).get_json()
    assert worker["meta"]["location"] == f"{root}/Users/{worker['id']}"
    assert worker[enterprise]["manager"]["$ref"] == f"{root}/Users/{boss.get_json()['id']}"
    group = send(
        app,
        PROXY,
        "POST",
        "/Groups",
        json={
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
            "displayName": name,
            "members": [{"value": worker["id"]}],
        },
        headers=FORWARDED,
    )
    assert group.status_code == 201, group.get_json()
    assert group.headers["Location"] == f"{root}/Groups/{group.get_json()['id']}"
    assert [m["$ref"] for m in group.get_json()["members"]] == [f"{root}/Users/{worker['id']}"]
    listing = send(app, PROXY, "GET", f'/Users?filter=userName eq "{name}"', headers=FORWARDED)
    assert [u["meta"]["location"] for u in listing.get_json()["Resources"]] == [
        worker["meta"]["location"]
    ]


def test_forwarded_headers_from_anyone_else_are_ignored(app: Any) -> None:
    name = f"direct-{uuid.uuid4().hex[:8]}"
    created = send(app, "127.0.0.2", "POST", "/Users", json=user_body(name), headers=FORWARDED)
    assert created.status_code == 201, created.get_json()
    assert created.headers["Location"] == f"{PUBLIC}/scim/v2/Users/{created.get_json()['id']}"


def _failures_until_refused(app: Any, peer: str, addresses: list[str]) -> list[int]:
    """Requests with a wrong token, each claiming the next address in ``X-Forwarded-For``."""
    statuses = []
    for address in addresses:
        response = app.test_client().get(
            "/scim/v2/Users",
            headers={"Authorization": "Bearer wrong", "X-Forwarded-For": address},
            environ_base={"REMOTE_ADDR": peer},
        )
        statuses.append(response.status_code)
    return statuses


def test_the_client_address_is_the_proxys_word_only_from_the_proxy(app: Any) -> None:
    # The limit allows bursts of 20 failures per client address, then 429.
    rotating = [f"198.51.100.{n}" for n in range(1, 31)]
    direct = _failures_until_refused(app, "127.0.0.3", rotating)
    assert direct[:20] == [401] * 20 and direct[-1] == 429, direct
    proxied = _failures_until_refused(app, PROXY, rotating)
    assert proxied == [401] * 30, proxied  # thirty clients behind the proxy, one failure each
    one_client = _failures_until_refused(app, PROXY, ["203.0.113.9"] * 25)
    assert one_client[-1] == 429, one_client
