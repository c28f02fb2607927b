"""The container image (Containerfile, ``make image``) built and run as the documentation says.

The base is plain Debian bookworm made here with debootstrap (no registry is needed), imported
once as ``localhost/debian-bookworm`` and reused by later runs on the same machine. The image is
built with ``make image BASE=localhost/debian-bookworm`` and run by podman with a read-only root
file system and nothing writable but a tmpfs on /tmp, as its non-root user, the directory
password and CA certificate mounted as files, against a throwaway OpenLDAP on 127.0.0.1 over
ldaps. The SCIM requests go over HTTP through the container.

Runs as root (rootful podman, debootstrap); ``make test`` installs podman, buildah, runc and
debootstrap. Under CI a missing tool fails the test; elsewhere it is skipped with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scim_core.testing.slapd import SlapdInstance, find_free_port

REPO = Path(__file__).resolve().parents[2]
BASE = "localhost/debian-bookworm"
TOOLS = ("podman", "buildah", "runc", "debootstrap", "make")
TOKEN = "container-" + secrets.token_hex(8)
#: podman as these machines need it: runc, cgroupfs, no default ulimits (containers.conf below).
PODMAN_OPTIONS = ("--runtime", "runc", "--cgroup-manager", "cgroupfs")
#: The image's user (Containerfile).
IMAGE_UID = 10001


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"the container image test {reason}", pytrace=False)
    pytest.skip(f"the container image test {reason}")


@pytest.fixture(scope="module")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Podman]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        _missing(f"needs {', '.join(missing)}: `make deploy-deps` installs them (as root)")
    if os.geteuid() != 0:
        _missing("runs as root (rootful podman, debootstrap)")
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    conf.write_text("[containers]\ndefault_ulimits = []\n")
    yield Podman(dict(os.environ, CONTAINERS_CONF=str(conf)))


@dataclass(frozen=True)
class Podman:
    environment: dict[str, str]

    def __call__(
        self, *args: str, check: bool = True, timeout: float = 120, stdin: Any = None
    ) -> subprocess.CompletedProcess[str]:
        run = subprocess.run(
            ["podman", *PODMAN_OPTIONS, *args],
            env=self.environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=stdin,
        )
        if check and run.returncode != 0:
            raise AssertionError(
                f"podman {args[0]} failed ({run.returncode}): {run.stderr[-2000:]}"
            )
        return run


def make_debian_base(podman: Podman, folder: Path) -> None:
    """``debootstrap --variant=minbase bookworm`` imported as :data:`BASE`, unless it exists."""
    if podman("image", "exists", BASE, check=False).returncode == 0:
        return
    rootfs = folder / "rootfs"
    try:
        made = subprocess.run(
            ["debootstrap", "--variant=minbase", "bookworm", str(rootfs)],
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        assert made.returncode == 0, f"debootstrap failed: {(made.stdout + made.stderr)[-3000:]}"
        # The packages debootstrap fetched and the package lists: the build fetches its own.
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (rootfs / cache).glob("*"):
                if item.is_file():
                    item.unlink()
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        try:
            podman("import", "--quiet", "-", BASE, stdin=tar.stdout, timeout=600)
        finally:
            assert tar.stdout is not None
            tar.stdout.close()
            assert tar.wait(timeout=600) == 0
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)


@pytest.fixture(scope="module")
def image(podman: Podman, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``make image`` on the local Debian base, as a name of its own (removed afterwards)."""
    make_debian_base(podman, tmp_path_factory.mktemp("debian"))
    name = "localhost/scim-ldap-test-" + secrets.token_hex(4)
    build = subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "image", f"BASE={BASE}", f"IMAGE={name}"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    try:
        assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
        yield name
    finally:
        podman("rmi", "--force", name, check=False)


@pytest.fixture(scope="module")
def directory() -> Iterator[SlapdInstance]:
    """OpenLDAP on 127.0.0.1 with ldaps, its certificate from a private CA."""
    with SlapdInstance(tls=True) as instance:
        yield instance


@dataclass
class Container:
    podman: Podman
    name: str
    port: int
    token: str

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request from the host to the service in the container; (status, JSON body)."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/scim+json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                raw = answer.read()
                status = answer.status
        except urllib.error.HTTPError as error:
            raw, status = error.read(), error.code
        return status, json.loads(raw) if raw.strip().startswith((b"{", b"[")) else raw

    def logs(self) -> str:
        run = self.podman("logs", self.name, check=False)
        return run.stdout + run.stderr

    def exec(self, *command: str, **options: str) -> subprocess.CompletedProcess[str]:
        env = [f"--env={key}={value}" for key, value in options.items()]
        return self.podman("exec", *env, self.name, *command, check=False, timeout=60)


@pytest.fixture(scope="module")
def container(
    podman: Podman,
    image: str,
    directory: SlapdInstance,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Container]:
    """The image run read-only, with the settings as variables and the secrets as files."""
    secrets_dir = tmp_path_factory.mktemp("secrets")
    password = secrets_dir / "ldap-password"
    password.write_text(directory.service_password)
    ca = secrets_dir / "ldap-ca.pem"
    assert directory.ca_file is not None
    shutil.copyfile(directory.ca_file, ca)
    for secret in (password, ca):
        # What a secret store does: the file belongs to the image's user, readable by it only.
        os.chown(secret, IMAGE_UID, IMAGE_UID)
        secret.chmod(0o400)
    port = find_free_port()
    name = "scim-ldap-test-" + secrets.token_hex(4)
    settings = {
        # Loopback only: the container shares the host's network here.
        "SCIM_BIND": f"127.0.0.1:{port}",
        "SCIM_WORKERS": "2",
        "SCIM_TOKENS_SHA256": "container=" + hashlib.sha256(TOKEN.encode()).hexdigest(),
        "SCIM_LDAP_URL": directory.ldaps_url,
        "SCIM_LDAP_CA_FILE": "/run/secrets/ldap-ca.pem",
        "SCIM_LDAP_BIND_DN": directory.service_dn,
        "SCIM_LDAP_BIND_PASSWORD_FILE": "/run/secrets/ldap-password",
        "SCIM_LDAP_USERS_BASE": directory.users_base,
        "SCIM_LDAP_GROUPS_BASE": directory.groups_base,
        "SCIM_LDAP_GROUP_PLACEHOLDER_DN": directory.placeholder_dn,
    }
    podman(
        "run",
        "--detach",
        f"--name={name}",
        "--network=host",
        # Nothing writable but /tmp, as under `docker run --read-only --tmpfs /tmp`.
        "--read-only",
        "--read-only-tmpfs=false",
        "--tmpfs=/tmp:rw,nosuid,nodev,size=64m",
        f"--volume={password}:/run/secrets/ldap-password:ro",
        f"--volume={ca}:/run/secrets/ldap-ca.pem:ro",
        *[f"--env={key}={value}" for key, value in settings.items()],
        image,
    )
    served = Container(podman, name, port, TOKEN)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if served.call("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            state = podman("inspect", "--format={{.State.Running}}", name, check=False).stdout
            if state.strip() != "true" or time.monotonic() > deadline:
                pytest.fail(f"the container did not serve /healthz:\n{served.logs()[-3000:]}")
            time.sleep(0.5)
        yield served
    finally:
        podman("rm", "--force", "--time=5", name, check=False)


def test_the_image_runs_as_its_user_with_the_documented_defaults(
    podman: Podman, image: str
) -> None:
    (config,) = json.loads(podman("image", "inspect", image).stdout)
    assert config["Config"]["User"] == f"{IMAGE_UID}:{IMAGE_UID}"
    assert config["Config"]["Entrypoint"] == ["/opt/scim-ldap/bin/scim-ldap", "serve"]
    assert "SCIM_BIND=0.0.0.0:8080" in config["Config"]["Env"]
    assert "8080/tcp" in config["Config"]["ExposedPorts"]
    assert config["Healthcheck"]["Test"][0] == "CMD"
    # No compiler, no pip: the final stage holds the interpreter and the virtualenv.
    found = podman(
        "run",
        "--rm",
        "--no-healthcheck",
        "--entrypoint=/bin/sh",
        image,
        "-c",
        "for tool in gcc cc make pip pip3; do command -v $tool; done; ls /opt/scim-ldap/bin",
    ).stdout.split()
    assert not [line for line in found if line.startswith("/")]
    assert "scim-ldap" in found and "python3" in found


def test_a_user_is_created_read_disabled_and_deleted_through_the_container(
    container: Container, directory: SlapdInstance
) -> None:
    user_password = "Container-" + secrets.token_urlsafe(12)
    name = "ctr" + secrets.token_hex(4)
    status, created = container.call(
        "POST",
        "/scim/v2/Users",
        {
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "userName": name,
            "name": {"givenName": "Con", "familyName": "Tainer"},
            "emails": [{"value": f"{name}@example.org", "primary": True}],
            "password": user_password,
        },
    )
    assert status == 201, created
    dn = f"uid={name},{directory.users_base}"
    assert directory.can_bind(dn, user_password)

    status, read = container.call("GET", f"/scim/v2/Users/{created['id']}")
    assert status == 200
    assert (read["userName"], read["active"]) == (name, True)
    assert read["emails"][0]["value"] == f"{name}@example.org"

    status, patched = container.call(
        "PATCH",
        f"/scim/v2/Users/{created['id']}",
        {
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            "Operations": [{"op": "replace", "path": "active", "value": False}],
        },
    )
    assert status == 200, patched
    assert patched["active"] is False
    assert container.call("GET", f"/scim/v2/Users/{created['id']}")[1]["active"] is False
    assert not directory.can_bind(dn, user_password)

    assert container.call("DELETE", f"/scim/v2/Users/{created['id']}")[0] == 204
    assert container.call("GET", f"/scim/v2/Users/{created['id']}")[0] == 404

    # Neither the directory password nor the user's reached the container's log.
    logs = container.logs()
    assert created["id"] in logs  # the log is there: one line per request
    assert directory.service_password not in logs and user_password not in logs


def test_the_root_file_system_is_read_only_and_the_service_not_root(container: Container) -> None:
    refused = container.exec("/bin/sh", "-c", "touch /opt/scim-ldap/x || touch /x")
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr
    status = container.exec("/bin/sh", "-c", "grep ^Uid: /proc/1/status").stdout.split()
    assert status[1:] == [str(IMAGE_UID)] * 4  # the gunicorn master: real, effective, saved, fs
    # What gunicorn writes lives on the tmpfs: the metrics folder of the workers.
    made = container.exec("/bin/sh", "-c", "ls -d /tmp/scim-metrics-*")
    assert made.returncode == 0, made.stderr
    # Nothing the service tried to write failed.
    assert "[ERROR]" not in container.logs()


def test_metrics_add_up_the_workers_from_the_tmpfs(container: Container) -> None:
    for _ in range(6):
        assert container.call("GET", "/scim/v2/ServiceProviderConfig")[0] == 200
    status, metrics = container.call("GET", "/metrics")
    assert status == 200
    counted = [
        float(line.rsplit(" ", 1)[1])
        for line in metrics.decode().splitlines()
        if line.startswith("scim_requests_total{") and "ServiceProviderConfig" in line
    ]
    assert sum(counted) >= 6, metrics.decode()[-2000:]
    # The workers write their counts in the metrics folder on the tmpfs.
    files = container.exec("/bin/sh", "-c", "ls /tmp/scim-metrics-*/").stdout.split()
    assert any(name.endswith(".db") for name in files)


def test_the_health_check_passes_and_fails_with_the_service(
    podman: Podman, image: str, container: Container
) -> None:
    assert container.call("GET", "/healthz")[0] == 200
    (config,) = json.loads(podman("image", "inspect", image).stdout)
    kind, *command = config["Healthcheck"]["Test"]
    assert kind == "CMD"
    # The image's own command, run in the container the way the health check runs it.
    healthy = container.exec(*command)
    assert healthy.returncode == 0, healthy.stderr
    # podman runs it as the health check (no systemd needed to run it once) and records it.
    checked = podman("healthcheck", "run", container.name, check=False, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    state = podman("inspect", "--format={{.State.Health.Status}}", container.name).stdout
    assert state.strip() == "healthy"
    # It is not vacuous: pointed at a port where nothing listens, it fails.
    unhealthy = container.exec(*command, SCIM_BIND=f"127.0.0.1:{find_free_port()}")
    assert unhealthy.returncode != 0


def test_sighup_reloads_gracefully_on_the_read_only_file_system(
    podman: Podman, container: Container
) -> None:
    def workers() -> set[str]:
        listing = container.exec(
            "/bin/sh", "-c", "grep -l '^PPid:[[:space:]]*1$' /proc/[0-9]*/status"
        )
        return {line.split("/")[2] for line in listing.stdout.split()}

    before = workers()
    assert len(before) == 2
    podman("kill", "--signal=HUP", container.name)
    deadline = time.monotonic() + 30
    while (workers() & before or len(workers()) != 2) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not workers() & before and len(workers()) == 2
    assert container.call("GET", "/scim/v2/Users?count=1")[0] == 200
    assert "[ERROR]" not in container.logs()


def test_the_container_stops_cleanly_on_sigterm(podman: Podman, container: Container) -> None:
    podman("stop", "--time=20", container.name, timeout=60)
    state = podman("inspect", "--format={{.State.ExitCode}}", container.name).stdout
    assert state.strip() == "0", container.logs()[-3000:]
