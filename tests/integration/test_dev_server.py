"""``make run`` as the README promises it: one command, a seeded directory, the service under
gunicorn; SIGTERM (what Ctrl-C's SIGINT does for the terminal's process group) leaves nothing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from reliability import TOKEN, Served, user_body, wait_until

from scim_core.testing.slapd import find_free_port

pytestmark = pytest.mark.slapd

REPO = Path(__file__).resolve().parents[2]


def _listening(url: str) -> bool:
    host, port = url.split("://", 1)[-1].rstrip("/").rsplit(":", 1)
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, int(port))) == 0


# The Samba DC of `make run DIRECTORY=ad` takes 127.0.0.1's ports 389/636, which the test
# session's own DC holds; the AD launcher is tested in test_samba_launcher.py.
@pytest.mark.parametrize("directory", ["openldap", "389ds"])
def test_make_run_serves_a_seeded_directory_and_stops_cleanly(directory: str) -> None:
    port = find_free_port()
    environment = dict(os.environ, SCIM_PORT=str(port), SCIM_DEV_TOKEN=TOKEN, DIRECTORY=directory)
    process = subprocess.Popen(
        [sys.executable, "examples/dev_server.py"],
        cwd=REPO,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    printed: dict[str, str] = {}
    try:
        assert process.stdout is not None
        while "LDAP_ADMIN_PASSWORD" not in printed:
            line = process.stdout.readline()
            assert line, f"dev_server ended early with {process.wait(timeout=30)}"
            key, _, value = line.strip().partition("=")
            printed[key] = value
        assert printed["SCIM_BASE"] == f"http://127.0.0.1:{port}/scim/v2"
        assert printed["SCIM_TOKEN"] == TOKEN
        served = Served("127.0.0.1", port)
        assert wait_until(
            lambda: served.call("GET", "/healthz", token=None, timeout=1).status == 200, timeout=30
        )
        seeded = served.call("GET", "/Users?filter=userName%20eq%20%22alice%22")
        assert seeded.status == 200 and seeded.body["totalResults"] == 1, seeded.describe()
        assert printed["DIRECTORY"] == directory
        created = served.call("POST", "/Users", user_body("dev-server-user", "Xq7-Lm9-Rt2z"))
        assert created.status == 201, created.describe()
        assert served.call("GET", "/Users", token=None).status == 401
        assert _listening(printed["LDAP_URL"])
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
        process.stdout.close()  # type: ignore[union-attr]
    assert code == 0
    assert not _listening(printed["LDAP_URL"]), "the directory outlived make run"
    assert not _listening(f"ldap://127.0.0.1:{port}"), "gunicorn outlived make run"
