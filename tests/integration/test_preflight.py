"""``scim-ldap check`` and ``scim-ldap schema`` against real directories, as a subprocess with
the service's environment (``directory.service_settings()``).

On each directory the check names it, lists its capabilities and passes; with ``--write-test``
every write step passes as the service account and nothing stays behind. An account that may
search but not write fails at the create, exits non-zero and leaves nothing; a wrong CA is one
line; no password ever reaches the output.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ldap3 import BASE, NONE, SUBTREE, Connection, Server, Tls
from scim_http import settings_for

from scim_core.testing.slapd import SlapdInstance, make_tls_files

#: How each profile's directory is named in the check's table.
FLAVOURS = {"openldap": "OpenLDAP", "389ds": "389-DS", "ad": "Active Directory"}
#: The throwaway password's form (random letters and symbols), to prove it is never shown.
THROWAWAY_PASSWORD = re.compile(r"[g-z]{12}#[G-Z]{4}%!")
WRITE_STEPS = (
    "write: create user",
    "write: modify user",
    "write: disable user",
    "write: set password",
    "bind as disabled user",
    "write: create group",
    "write: modify group",
    "write: delete group",
    "write: delete user",
)


def scim_ldap(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``scim-ldap ARGS`` with exactly ``env`` as its SCIM environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SCIM_")}
    return subprocess.run(
        [sys.executable, "-m", "scim_flask.cli", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def rows(output: str) -> dict[str, tuple[str, str]]:
    """step -> (result, first line of detail), from the check's table."""
    found = {}
    for line in output.splitlines()[2:]:
        if line.startswith(" "):
            continue
        parts = re.split(r"\s{2,}", line, maxsplit=2)
        found[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return found


def leftovers(directory: Any, name_part: str) -> list[str]:
    """DNs of entries under the users and groups bases whose name holds ``name_part``."""
    settings = settings_for(directory)
    tls = Tls(ca_certs_file=settings.ca_file) if settings.ca_file else None
    server = Server(directory.url, get_info=NONE, tls=tls)
    connection = Connection(server, directory.admin_dn, directory.admin_password, auto_bind=True)
    found = []
    try:
        for base in (directory.users_base, directory.groups_base):
            for attribute in ("cn", "uid"):
                connection.search(base, f"({attribute}=*{name_part}*)", SUBTREE, attributes=["1.1"])
                found += [e["dn"] for e in connection.response if e["type"] == "searchResEntry"]
    finally:
        connection.unbind()
    return sorted(set(found))


def test_check_names_the_directory_lists_its_capabilities_and_passes(directory: Any) -> None:
    result = scim_ldap("check", env=directory.service_settings())
    assert result.returncode == 0, result.stdout + result.stderr
    table = rows(result.stdout)
    assert table["directory"][0] == "ok"
    assert FLAVOURS[directory.dialect] in table["directory"][1]
    for feature in ("assertion (RFC 4528)", "sort + VLV (RFC 2891)", "password modify (RFC 3062)"):
        assert table[feature][0] in ("ok", "fallback"), table[feature]
    for step in ("bind", "users base", "groups base", "schema: object classes"):
        assert table[step][0] == "ok", (step, table[step])
    assert table["schema: attributes"][0] == "ok", table["schema: attributes"]
    assert table["write test"][0] == "skipped"
    assert "FAILED" not in result.stdout
    assert directory.service_password not in result.stdout + result.stderr


def test_the_write_test_passes_as_the_service_account_and_leaves_nothing(directory: Any) -> None:
    result = scim_ldap("check", "--write-test", env=directory.service_settings())
    assert result.returncode == 0, result.stdout + result.stderr
    table = rows(result.stdout)
    assert [table[step][0] for step in WRITE_STEPS] == ["ok"] * len(WRITE_STEPS), result.stdout
    name = re.search(r"made (scim-check-[0-9a-f]+)", result.stdout)
    assert name is not None
    assert leftovers(directory, name[1]) == []
    assert not THROWAWAY_PASSWORD.search(result.stdout + result.stderr)


# ------------------------------------------------------------------------------ no write rights

READER_PASSWORD = "Reader-pw-Only"


class ReadOnlySlapd(SlapdInstance):
    """The throwaway slapd with one more account, ``cn=reader``, that may read and search the
    people and groups subtrees and write nothing."""

    @property
    def reader_dn(self) -> str:
        return f"cn=reader,{self.services_base}"

    def _subtree_acl(self, base: str, service: str, *, self_read: bool) -> list[str]:  # type: ignore[override]
        lines = SlapdInstance._subtree_acl(base, service, self_read=self_read)
        reader = f'  by dn.exact="{self.reader_dn}" read'
        return [
            kept for line in lines for kept in ([reader, line] if line == "  by * none" else [line])
        ]


@pytest.fixture(scope="module")
def read_only_slapd() -> Iterator[ReadOnlySlapd]:
    with ReadOnlySlapd() as instance:
        ldif = instance.directory / "reader.ldif"
        ldif.write_text(
            f"dn: {instance.reader_dn}\nobjectClass: simpleSecurityObject\n"
            f"objectClass: organizationalRole\ncn: reader\nuserPassword: {READER_PASSWORD}\n",
            encoding="utf-8",
        )
        instance.ldapadd(ldif)
        yield instance


def test_an_account_without_write_rights_fails_at_the_create_and_leaves_nothing(
    read_only_slapd: ReadOnlySlapd,
) -> None:
    env = {
        **read_only_slapd.service_settings(),
        "SCIM_LDAP_BIND_DN": read_only_slapd.reader_dn,
        "SCIM_LDAP_BIND_PASSWORD": READER_PASSWORD,
    }
    read_only = scim_ldap("check", env=env)
    assert read_only.returncode == 0, read_only.stdout + read_only.stderr
    result = scim_ldap("check", "--write-test", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    table = rows(result.stdout)
    assert "search users" in table, result.stdout + result.stderr
    assert table["search users"][0] == "ok", result.stdout
    assert table["write: create user"] == ("FAILED", "insufficientAccessRights (50)")
    assert {table[step][0] for step in WRITE_STEPS[1:]} == {"skipped"}
    assert "write: clean up" not in table
    assert leftovers(read_only_slapd, "scim-check-") == []
    assert READER_PASSWORD not in result.stdout + result.stderr


# ------------------------------------------------------------------------------ TLS and secrets


@pytest.fixture(scope="module")
def tls_slapd() -> Iterator[SlapdInstance]:
    with SlapdInstance(tls=True) as instance:
        yield instance


def test_ldaps_with_the_right_ca_is_verified(tls_slapd: SlapdInstance) -> None:
    env = {
        **tls_slapd.service_settings(),
        "SCIM_LDAP_URL": str(tls_slapd.ldaps_url),
        "SCIM_LDAP_CA_FILE": str(tls_slapd.ca_file),
    }
    result = scim_ldap("check", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert rows(result.stdout)[f"connect {tls_slapd.ldaps_url}"][0] == "ok"
    assert "certificate verified" in result.stdout


def test_a_wrong_ca_is_one_clear_line(tls_slapd: SlapdInstance) -> None:
    other = make_tls_files(tempfile.mkdtemp(prefix="scim-other-ca-"))
    env = {
        **tls_slapd.service_settings(),
        "SCIM_LDAP_URL": str(tls_slapd.ldaps_url),
        "SCIM_LDAP_CA_FILE": str(other.ca_file),
    }
    result = scim_ldap("check", env=env)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "certificate verif" in lines[0]
    assert str(tls_slapd.ldaps_url) in lines[0]


def test_the_bind_password_never_appears(slapd: SlapdInstance) -> None:
    canary = "Canary-" + secrets.token_urlsafe(12)
    refused = scim_ldap(
        "check", "--write-test", env={**slapd.service_settings(), "SCIM_LDAP_BIND_PASSWORD": canary}
    )
    assert refused.returncode == 1
    assert len(refused.stderr.splitlines()) == 1
    assert "invalidCredentials" in refused.stderr
    assert canary not in refused.stdout + refused.stderr
    password_file = Path(tempfile.mkdtemp(prefix="scim-pw-")) / "password"
    password_file.write_text(slapd.service_password, encoding="utf-8")
    env = {k: v for k, v in slapd.service_settings().items() if k != "SCIM_LDAP_BIND_PASSWORD"}
    passed = scim_ldap(
        "check", "--write-test", env={**env, "SCIM_LDAP_BIND_PASSWORD_FILE": str(password_file)}
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert slapd.service_password not in passed.stdout + passed.stderr


def test_a_configuration_error_is_one_line_and_status_2() -> None:
    result = scim_ldap("check", env={"SCIM_LDAP_URL": "http://x"})
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert "SCIM_LDAP_URL" in result.stderr


# ------------------------------------------------------------------------------ scim-ldap schema

CONFIG_ADMIN = "cn=admin,cn=config"
CONFIG_PASSWORD = "config-dev-password"


def schema(dialect: str) -> str:
    result = scim_ldap("schema", "--dialect", dialect, env={})
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def cn_config_slapd(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A fresh slapd configured by cn=config (slapd.d) with the core, cosine and inetorgperson
    schemas only, its config database open to ``CONFIG_ADMIN``; yields its URL and folder."""
    from scim_core.testing.slapd import _find_binary, find_free_port, ssha_hash

    schemas = [
        Path(f"/etc/ldap/schema/{name}.ldif") for name in ("core", "cosine", "inetorgperson")
    ]
    config = "\n".join(
        [
            "dn: cn=config\nobjectClass: olcGlobal\ncn: config\n"
            f"olcPidFile: {tmp_path / 'slapd.pid'}\n",
            "dn: cn=schema,cn=config\nobjectClass: olcSchemaConfig\ncn: schema\n",
            *(path.read_text(encoding="utf-8") for path in schemas),
            "dn: olcDatabase={0}config,cn=config\nobjectClass: olcDatabaseConfig\n"
            f"olcDatabase: {{0}}config\nolcRootDN: {CONFIG_ADMIN}\n"
            f"olcRootPW: {ssha_hash(CONFIG_PASSWORD)}\n",
        ]
    )
    (tmp_path / "config.ldif").write_text(config, encoding="utf-8")
    (tmp_path / "slapd.d").mkdir()
    subprocess.run(
        [
            _find_binary("slapadd"),
            "-n0",
            "-F",
            str(tmp_path / "slapd.d"),
            "-l",
            str(tmp_path / "config.ldif"),
        ],
        check=True,
        capture_output=True,
    )
    url = f"ldap://127.0.0.1:{find_free_port()}"
    process = subprocess.Popen(
        [_find_binary("slapd"), "-d", "0", "-h", url + "/", "-F", str(tmp_path / "slapd.d")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            if (
                subprocess.run(
                    ["ldapwhoami", "-x", "-H", url, "-D", CONFIG_ADMIN, "-w", CONFIG_PASSWORD],
                    capture_output=True,
                    check=False,
                ).returncode
                == 0
            ):
                break
            time.sleep(0.05)
        yield url, tmp_path
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_openldap_schema_loads_into_a_fresh_cn_config(
    cn_config_slapd: tuple[str, Path],
) -> None:
    url, folder = cn_config_slapd
    ldif = folder / "scim.ldif"
    ldif.write_text(schema("openldap"), encoding="utf-8")
    added = subprocess.run(
        ["ldapadd", "-x", "-H", url, "-D", CONFIG_ADMIN, "-w", CONFIG_PASSWORD, "-f", str(ldif)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert added.returncode == 0, added.stdout + added.stderr
    server = Server(url, get_info=NONE)
    connection = Connection(server, CONFIG_ADMIN, CONFIG_PASSWORD, auto_bind=True)
    try:
        connection.search("cn=Subschema", "(objectClass=*)", BASE, attributes=["objectClasses"])
        defined = " ".join(map(str, connection.response[0]["attributes"]["objectClasses"]))
    finally:
        connection.unbind()
    assert "'scimPerson'" in defined and "'scimGroup'" in defined


def test_the_389ds_schema_is_what_the_instance_loads(dirsrv: Any) -> None:
    printed = [line for line in schema("389ds").splitlines() if not line.startswith("#")]
    loaded = (dirsrv.config_dir / "schema" / "60scim.ldif").read_text(encoding="utf-8")
    assert printed == [line for line in loaded.splitlines() if not line.startswith("#")]
    result = scim_ldap("check", env=dirsrv.service_settings())
    assert rows(result.stdout)["schema: object classes"][0] == "ok"


def test_the_ad_text_names_every_mapped_attribute() -> None:
    from scim_core.backends.ldap.sitemap import default_mapping

    text = schema("ad")
    mapping = default_mapping("ad")
    for ldap in ("objectGUID", "userPrincipalName", "unicodePwd", "userAccountControl"):
        assert ldap in text
    for mapped in (*mapping.users, *mapping.groups):
        assert re.search(rf"\s{re.escape(mapped.ldap)}\b", text), mapped.ldap
    assert "dn:" not in text


def test_schema_follows_scim_ldap_dialect_and_refuses_an_unknown_one() -> None:
    assert scim_ldap("schema", env={"SCIM_LDAP_DIALECT": "389ds"}).stdout == schema("389ds")
    wrong = scim_ldap("schema", env={"SCIM_LDAP_DIALECT": "novell"})
    assert wrong.returncode == 2
    assert len(wrong.stderr.splitlines()) == 1
    assert "SCIM_LDAP_DIALECT" in wrong.stderr
