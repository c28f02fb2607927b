"""The nginx recipe (``examples/nginx/scim-ldap.conf``) in front of ``scim-ldap serve``.

The shipped file is used as it stands, with only its example addresses and certificate paths
replaced by the test's; nginx (Debian's ``nginx-light``) terminates TLS on 127.0.0.1 and the
service, trusting that proxy, answers with the public URL in every ``Location``.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import ssl
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from reliability import TOKEN, serve_environment, served, user_body

from scim_core.testing.slapd import SlapdInstance, find_free_port, make_tls_files

pytestmark = pytest.mark.slapd

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "examples" / "nginx" / "scim-ldap.conf"
PUBLIC_NAME = "scim.example.com"


def _nginx() -> str:
    found = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    if found is None:
        pytest.fail("the nginx recipe test needs nginx: apt-get install nginx-light", pytrace=False)
    return found


def _ready(port: int, context: ssl.SSLContext) -> bool:
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=1)
    try:
        with suppress(OSError, http.client.HTTPException):
            connection.request("GET", "/healthz", headers={"Host": PUBLIC_NAME})
            return connection.getresponse().status == 200
        return False
    finally:
        connection.close()


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, ssl.SSLContext]]:
    folder = tmp_path_factory.mktemp("nginx")
    files = make_tls_files(folder / "tls", [PUBLIC_NAME, "127.0.0.1"])
    service_port, proxy_port = find_free_port(), find_free_port()
    site = RECIPE.read_text()
    for example, real in {
        "listen 443 ssl;": f"listen 127.0.0.1:{proxy_port} ssl;",
        "server 127.0.0.1:8080;": f"server 127.0.0.1:{service_port};",
        "/etc/ssl/scim/fullchain.pem": str(files.cert_file),
        "/etc/ssl/scim/privkey.pem": str(files.key_file),
    }.items():
        assert example in site, f"the recipe no longer says {example!r}"
        site = site.replace(example, real)
    (folder / "scim-ldap.conf").write_text(site)
    temp = {name: folder / name for name in ("body", "proxy")}
    (folder / "nginx.conf").write_text(
        f"user root;\nworker_processes 1;\npid {folder}/nginx.pid;\n"
        f"error_log {folder}/error.log;\nevents {{}}\nhttp {{\n  access_log off;\n"
        f"  client_body_temp_path {temp['body']};\n  proxy_temp_path {temp['proxy']};\n"
        f"  include {folder}/scim-ldap.conf;\n}}\n"
    )
    context = ssl.create_default_context(cafile=str(files.ca_file))
    nginx = [_nginx(), "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"]
    with SlapdInstance() as directory:
        environment = serve_environment(
            directory,
            service_port,
            SCIM_TRUSTED_PROXIES="127.0.0.1",
            SCIM_PUBLIC_URL=f"https://{PUBLIC_NAME}",
        )
        service = [sys.executable, "-m", "scim_flask.cli", "serve"]
        with (
            served(service, environment, folder / "scim.log", lambda: True),
            served(
                nginx, dict(os.environ), folder / "nginx.log", lambda: _ready(proxy_port, context)
            ),
        ):
            yield proxy_port, context


def test_through_nginx_answers_carry_the_public_url(proxied: tuple[int, ssl.SSLContext]) -> None:
    port, context = proxied
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        headers = {
            "Host": PUBLIC_NAME,
            "Authorization": f"Bearer {TOKEN}",
            "Content-Type": "application/scim+json",
        }
        connection.request("POST", "/scim/v2/Users", json.dumps(user_body("behind.nginx")), headers)
        response = connection.getresponse()
        created = json.loads(response.read())
        assert response.status == 201, created
        location = f"https://{PUBLIC_NAME}/scim/v2/Users/{created['id']}"
        assert response.getheader("Location") == location
        assert created["meta"]["location"] == location
        connection.request("GET", f"/scim/v2/Users/{created['id']}", headers=headers)
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read())["userName"] == "behind.nginx"
    finally:
        connection.close()
