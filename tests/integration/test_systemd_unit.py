"""The example systemd unit (examples/systemd): valid for systemd's own checker, hardened.

``systemd-analyze verify`` needs no running systemd but checks that ``ExecStart`` exists, so it
reads a copy whose ``ExecStart`` names an executable made here; everything else is the shipped
text. ``make test`` installs systemd-analyze (Debian's ``systemd`` package) when it is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from scim_core.backends.ldap.settings import LDAP_SETTINGS
from scim_core.config import SERVICE_SETTINGS
from scim_flask.settings import HTTP_SETTINGS, SERVER_SETTINGS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "systemd"
UNIT = EXAMPLES / "scim-ldap.service"
ENV_FILE = EXAMPLES / "scim-ldap.env"
EXEC_START = "/opt/scim-ldap/bin/scim-ldap serve"

#: Directive and value the unit must carry (a directive may appear more than once).
HARDENING = {
    ("DynamicUser", "yes"),
    ("ProtectSystem", "strict"),
    ("ProtectHome", "yes"),
    ("NoNewPrivileges", "yes"),
    ("PrivateTmp", "yes"),
    ("PrivateDevices", "yes"),
    ("ProtectKernelTunables", "yes"),
    ("ProtectKernelModules", "yes"),
    ("ProtectKernelLogs", "yes"),
    ("ProtectControlGroups", "yes"),
    ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
    ("CapabilityBoundingSet", ""),
    ("AmbientCapabilities", ""),
    ("SystemCallFilter", "@system-service"),
    ("LoadCredential", "ldap-password:/etc/scim-ldap/ldap-password"),
    ("LoadCredential", "tls-key:/etc/scim-ldap/tls/key.pem"),
    ("Environment", "SCIM_LDAP_BIND_PASSWORD_FILE=%d/ldap-password"),
    ("Environment", "SCIM_TLS_KEY_FILE=%d/tls-key"),
    ("ExecStart", EXEC_START),
    ("ExecReload", "kill -HUP $MAINPID"),
}


def directives(text: str) -> list[tuple[str, str, str]]:
    """``(section, name, value)`` for every assignment in a unit file, in order."""
    found = []
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        name, _, value = line.partition("=")
        found.append((section, name.strip(), value.strip()))
    return found


def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.fail(
            "systemd-analyze is missing: `make system-deps` installs Debian's systemd package",
            pytrace=False,
        )
    return found


@pytest.fixture
def checkable_unit(tmp_path: Path) -> Path:
    """The shipped unit, but for an ``ExecStart`` that exists on this machine."""
    program = tmp_path / "bin" / "scim-ldap"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    text = UNIT.read_text()
    assert f"\nExecStart={EXEC_START}\n" in text
    unit = tmp_path / UNIT.name
    unit.write_text(text.replace(f"ExecStart={EXEC_START}", f"ExecStart={program} serve"))
    return unit


def test_systemd_verify_accepts_the_unit_without_a_warning(checkable_unit: Path) -> None:
    run = subprocess.run(
        [systemd_analyze(), "verify", "--man=no", str(checkable_unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    output = run.stdout + run.stderr
    about_unit = [line for line in output.splitlines() if "scim-ldap" in line]
    assert run.returncode == 0, output
    assert about_unit == []


def test_verify_would_report_a_mistake(checkable_unit: Path) -> None:
    """The check above can fail: a misspelt directive is reported about this unit."""
    text = checkable_unit.read_text().replace("ProtectHome=yes", "ProtectHomes=yes")
    checkable_unit.write_text(text)
    run = subprocess.run(
        [systemd_analyze(), "verify", "--man=no", str(checkable_unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Unknown key" in run.stderr and "scim-ldap.service" in run.stderr


def test_systemd_rates_the_unit_well_hardened(checkable_unit: Path) -> None:
    run = subprocess.run(
        [systemd_analyze(), "security", "--offline=true", "--no-pager", str(checkable_unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    exposure = re.search(r"Overall exposure level for scim-ldap\.service: ([0-9.]+)", run.stdout)
    assert exposure is not None, run.stdout
    # systemd's scale: 0 (locked down) to 10 (unprotected); up to 2.0 it says "OK".
    assert float(exposure.group(1)) <= 2.0, run.stdout


def test_the_unit_carries_the_hardening_and_the_credentials() -> None:
    present = {(name, value) for section, name, value in directives(UNIT.read_text())}
    assert HARDENING - present == set()
    names = {name for _, name, _ in directives(UNIT.read_text())}
    # The service keeps no state: no state, cache or writable folder of its own.
    assert not names & {"StateDirectory", "CacheDirectory", "ReadWritePaths", "User"}
    assert ("Service", "EnvironmentFile", "/etc/scim-ldap/scim-ldap.env") in directives(
        UNIT.read_text()
    )


def test_the_environment_file_names_real_settings_and_no_secret() -> None:
    known = {
        setting.name
        for settings in (SERVICE_SETTINGS, HTTP_SETTINGS, SERVER_SETTINGS, LDAP_SETTINGS)
        for setting in settings
    }
    assigned = dict(
        line.split("=", 1)
        for line in ENV_FILE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    assert set(assigned) - known == set()
    # The password and the TLS key come from the unit's credentials, never from this file.
    assert not {"SCIM_LDAP_BIND_PASSWORD", "SCIM_LDAP_BIND_PASSWORD_FILE"} & set(assigned)
    assert "SCIM_TLS_KEY_FILE" not in assigned
    required = {"SCIM_TOKENS_SHA256", "SCIM_LDAP_URL", "SCIM_LDAP_BIND_DN"}
    assert required | {"SCIM_LDAP_USERS_BASE", "SCIM_LDAP_GROUPS_BASE"} <= set(assigned)
