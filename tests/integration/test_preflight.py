"""``scim-ldap check`` and ``scim-ldap schema`` against real directories, as a subprocess with
the service's environment (``directory.service_settings()``).

On each directory the check names it, lists its capabilities and passes; with ``--write-test``
every write step passes as the service account and nothing stays behind. On each directory too,
an account that may search but not write fails at the create, exits non-zero and leaves
nothing, and one that may add and change entries but delete none fails at the first delete and
names what it left behind. A wrong CA is one line; no password ever reaches the output; the
schema ``scim-ldap schema`` prints loads into a fresh OpenLDAP and a fresh 389-DS.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ldap3 import (
    BASE,
    MODIFY_ADD,
    MODIFY_DELETE,
    MODIFY_REPLACE,
    NONE,
    SUBTREE,
    Connection,
    Server,
)
from ldap3.protocol.formatters.formatters import format_sid
from scim_http import as_admin

from scim_core.testing.dirsrv import DirsrvInstance
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
    """step -> (result, detail), from the check's table (a wrapped detail joined again)."""
    found: dict[str, tuple[str, str]] = {}
    step = ""
    for line in output.splitlines()[2:]:
        if line.startswith(" "):
            result, detail = found[step]
            found[step] = (result, f"{detail} {line.strip()}")
            continue
        parts = re.split(r"\s{2,}", line, maxsplit=2)
        step = parts[0]
        found[step] = (parts[1], parts[2] if len(parts) > 2 else "")
    return found


def leftovers(directory: Any, name_part: str) -> list[str]:
    """DNs of entries under the users and groups bases whose name holds ``name_part``."""
    found = []
    with as_admin(directory) as connection:
        for base in (directory.users_base, directory.groups_base):
            for attribute in ("cn", "uid"):
                connection.search(base, f"({attribute}=*{name_part}*)", SUBTREE, attributes=["1.1"])
                found += [e["dn"] for e in connection.response if e["type"] == "searchResEntry"]
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


# ------------------------------------------------------------------------------ fewer rights

ACCOUNT_PASSWORD = "Limited-pw-0nly"
#: The rights of the service account that may add and change entries but delete none: Samba's
#: ACE letters without DC (delete child), DT (delete tree) and SD (delete).
AD_NO_DELETE_RIGHTS = "CCLCSWRPWPLOCRRC"


@dataclass(frozen=True)
class Account:
    """An account with fewer rights than the service's, on ``directory`` (where an admin
    searches for leftovers)."""

    directory: Any
    dn: str

    def env(self) -> dict[str, str]:
        """The service's settings, bound as this account."""
        return {
            **self.directory.service_settings(),
            "SCIM_LDAP_BIND_DN": self.dn,
            "SCIM_LDAP_BIND_PASSWORD": ACCOUNT_PASSWORD,
        }


class RestrictedSlapd(SlapdInstance):
    """The throwaway slapd with two more accounts beside the service's: ``cn=reader`` may read
    and search what the service account may and write nothing; ``cn=keeper`` may do what the
    service account does, add and change entries, but delete none (no ``z`` on a base's
    ``children``)."""

    @property
    def reader_dn(self) -> str:
        return f"cn=reader,{self.services_base}"

    @property
    def keeper_dn(self) -> str:
        return f"cn=keeper,{self.services_base}"

    def _render_config(self) -> str:
        service = f'  by dn.exact="{self.service_dn}" '
        lines: list[str] = []
        target = ""
        for line in super()._render_config().splitlines():
            if line.startswith("access to "):
                target = line
            elif line.startswith(service):
                level = line.removeprefix(service)
                no_delete = "=arscxd" if target.endswith("attrs=children") else level
                lines.append(f'  by dn.exact="{self.keeper_dn}" {no_delete}')
                if "userPassword" not in target:
                    lines.append(f'  by dn.exact="{self.reader_dn}" read')
            lines.append(line)
        return "\n".join(lines)


@pytest.fixture(scope="module")
def restricted_slapd() -> Iterator[RestrictedSlapd]:
    with RestrictedSlapd() as instance:
        ldif = instance.directory / "accounts.ldif"
        ldif.write_text(
            "".join(
                f"dn: {dn}\nobjectClass: simpleSecurityObject\nobjectClass: organizationalRole\n"
                f"cn: {dn[3:].split(',')[0]}\nuserPassword: {ACCOUNT_PASSWORD}\n\n"
                for dn in (instance.reader_dn, instance.keeper_dn)
            ),
            encoding="utf-8",
        )
        instance.ldapadd(ldif)
        yield instance


def _add_account(admin: Connection, directory: Any, name: str) -> str:
    """Add a plain account ``name`` under the services base, with :data:`ACCOUNT_PASSWORD`:
    an AD domain user (which may read the domain), elsewhere an entry that may only bind."""
    if directory.dialect == "ad":
        dn = f"CN={name},{directory.services_base}"
        admin.add(
            dn,
            ["top", "person", "organizationalPerson", "user"],
            {
                "sAMAccountName": name,
                "userPrincipalName": f"{name}@{directory.realm.lower()}",
                "unicodePwd": f'"{ACCOUNT_PASSWORD}"'.encode("utf-16-le"),
                "userAccountControl": 512,
            },
        )
    else:
        dn = f"uid={name},{directory.services_base}"
        admin.add(
            dn, ["account", "simpleSecurityObject"], {"uid": name, "userPassword": ACCOUNT_PASSWORD}
        )
    return dn


Undo = Callable[[], object]


def _add_aci(admin: Connection, base: str, dn: str, rights: str) -> Undo:
    """An ACI on ``base`` (inherited below it) allowing ``dn`` ``rights`` on every attribute."""
    aci = (
        f'(targetattr="*")(version 3.0; acl "scim test: {dn}"; '
        f'allow ({rights}) userdn="ldap:///{dn}";)'
    )
    admin.modify(base, {"aci": [(MODIFY_ADD, [aci])]})
    return lambda: admin.modify(base, {"aci": [(MODIFY_DELETE, [aci])]})


#: LDAP_SERVER_SD_FLAGS_OID with DACL_SECURITY_INFORMATION: read and write an AD entry's DACL.
DACL_ONLY = ("1.2.840.113556.1.4.801", True, b"\x30\x03\x02\x01\x04")


def _add_ace(admin: Connection, directory: Any, base: str, dn: str, rights: str) -> Undo:
    """An ACE on ``base`` (inherited below it) giving ``dn`` ``rights`` (SDDL letters), set
    with ``samba-tool dsacl`` on the DC's own database; undone by writing back the old DACL."""
    admin.search(
        base, "(objectClass=*)", BASE, attributes=["nTSecurityDescriptor"], controls=[DACL_ONLY]
    )
    dacl = admin.response[0]["raw_attributes"]["nTSecurityDescriptor"]
    admin.search(dn, "(objectClass=*)", BASE, attributes=["objectSid"])
    sid = format_sid(admin.response[0]["raw_attributes"]["objectSid"][0])
    ace = f"(A;CI;{rights};;;{sid})"
    command = ["samba-tool", "dsacl", "set", f"--objectdn={base}", f"--sddl={ace}"]
    subprocess.run(
        [*command, "-s", str(directory.config_file)], check=True, capture_output=True, timeout=60
    )
    changes = {"nTSecurityDescriptor": [(MODIFY_REPLACE, dacl)]}
    return lambda: admin.modify(base, changes, controls=[DACL_ONLY])


@contextmanager
def _limited_account(
    directory: Any, name: str, ds_rights: str, ad_rights: str | None
) -> Iterator[str]:
    """A throwaway account on ``directory`` (389-DS or AD) with ``ds_rights`` by an ACI on the
    users and groups bases (389-DS), or ``ad_rights`` by an ACE on them (AD; ``None``: a plain
    domain user's); removed afterwards, the bases' ACIs or DACLs as they were."""
    with as_admin(directory) as admin:
        dn = _add_account(admin, directory, name)
        undo: list[Undo] = []
        try:
            for base in (directory.users_base, directory.groups_base):
                if directory.dialect == "389ds":
                    undo.append(_add_aci(admin, base, dn, ds_rights))
                elif ad_rights is not None:
                    undo.append(_add_ace(admin, directory, base, dn, ad_rights))
            yield dn
        finally:
            for step in reversed(undo):
                step()
            admin.delete(dn)


@pytest.fixture
def read_only_account(directory: Any, request: pytest.FixtureRequest) -> Iterator[Account]:
    """An account that may search the users and groups bases and write nothing there: on
    OpenLDAP ``cn=reader`` of :class:`RestrictedSlapd`, on 389-DS one with an ACI allowing read,
    search and compare, on AD a plain domain user."""
    if directory.dialect == "openldap":
        slapd = request.getfixturevalue("restricted_slapd")
        yield Account(slapd, slapd.reader_dn)
        return
    with _limited_account(directory, "scim-reader", "read, search, compare", None) as dn:
        yield Account(directory, dn)


@pytest.fixture
def no_delete_account(directory: Any, request: pytest.FixtureRequest) -> Iterator[Account]:
    """An account that may do what the service account does but delete an entry: on OpenLDAP
    ``cn=keeper`` of :class:`RestrictedSlapd`, on 389-DS one with an ACI allowing everything but
    delete, on AD one with an ACE of :data:`AD_NO_DELETE_RIGHTS`."""
    if directory.dialect == "openldap":
        slapd = request.getfixturevalue("restricted_slapd")
        yield Account(slapd, slapd.keeper_dn)
        return
    rights = "read, search, compare, add, write"
    with _limited_account(directory, "scim-keeper", rights, AD_NO_DELETE_RIGHTS) as dn:
        yield Account(directory, dn)


def test_an_account_without_write_rights_fails_at_the_create_and_leaves_nothing(
    read_only_account: Account,
) -> None:
    env = read_only_account.env()
    read_only = scim_ldap("check", env=env)
    assert read_only.returncode == 0, read_only.stdout + read_only.stderr
    result = scim_ldap("check", "--write-test", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    table = rows(result.stdout)
    assert "search users" in table, result.stdout + result.stderr
    assert table["search users"][0] == "ok", result.stdout
    assert table["write: create user"] == ("FAILED", "insufficientAccessRights (50)"), result.stdout
    assert {table[step][0] for step in WRITE_STEPS[1:]} == {"skipped"}, result.stdout
    assert "write: clean up" not in table
    assert leftovers(read_only_account.directory, "scim-check-") == []
    assert ACCOUNT_PASSWORD not in result.stdout + result.stderr


def test_an_account_that_may_not_delete_fails_there_and_names_what_it_left(
    no_delete_account: Account,
) -> None:
    directory = no_delete_account.directory
    result = scim_ldap("check", "--write-test", env=no_delete_account.env())
    try:
        assert result.returncode == 1, result.stdout + result.stderr
        table = rows(result.stdout)
        done = WRITE_STEPS[: WRITE_STEPS.index("write: delete group")]
        assert [table[step][0] for step in done] == ["ok"] * len(done), result.stdout
        assert table["write: delete group"] == ("FAILED", "insufficientAccessRights (50)")
        assert table["write: delete user"][0] == "skipped", result.stdout
        name = re.search(r"made (scim-check-[0-9a-f]+)", result.stdout)
        group = re.search(r"made (scim-check-g-[0-9a-f]+)", result.stdout)
        assert name is not None and group is not None
        assert table["write: clean up"] == (
            "FAILED",
            f"left behind: the group {group[1]} (insufficientAccessRights (50)): delete it by "
            f"hand; the user {name[1]} (insufficientAccessRights (50)): delete it by hand",
        ), result.stdout
        assert ACCOUNT_PASSWORD not in result.stdout + result.stderr
        assert not THROWAWAY_PASSWORD.search(result.stdout + result.stderr)
    finally:
        left = leftovers(directory, "scim-check-")
        with as_admin(directory) as admin:
            for dn in sorted(left, key=lambda dn: directory.groups_base.lower() not in dn.lower()):
                admin.delete(dn)
    assert len(left) == 2, left


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


class BareDirsrv(DirsrvInstance):
    """The throwaway 389-DS without the service's schema (the launcher writes none)."""

    def _write_schema(self) -> None:
        (self.config_dir / "schema" / "60scim.ldif").unlink(missing_ok=True)


def _object_classes(directory: Any) -> str:
    with as_admin(directory) as admin:
        admin.search("cn=schema", "(objectClass=*)", BASE, attributes=["objectClasses"])
        return " ".join(map(str, admin.response[0]["attributes"]["objectClasses"]))


def test_the_389ds_schema_loads_into_a_running_instance_by_a_schema_reload(
    tmp_path: Path,
) -> None:
    with BareDirsrv(seed=False) as bare:
        assert "'scimPerson'" not in _object_classes(bare)
        (bare.config_dir / "schema" / "60scim.ldif").write_text(schema("389ds"), encoding="utf-8")
        password = tmp_path / "admin.pw"
        password.write_text(bare.admin_password, encoding="utf-8")
        as_manager = ["-D", bare.admin_dn, "-y", str(password)]
        reload = subprocess.run(
            ["dsconf", bare.name, *as_manager, "schema", "reload", "--wait"],
            env=bare.tool_environment(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert reload.returncode == 0, reload.stdout + reload.stderr
        assert "'scimPerson'" in _object_classes(bare)
        dn = f"uid=schema-probe,{bare.users_base}"
        with as_admin(bare) as admin:
            admin.add(
                dn,
                ["inetOrgPerson", "scimPerson"],
                {"uid": "schema-probe", "cn": "Probe", "sn": "Probe", "scimExternalId": "ext-1"},
            )
            admin.search(dn, "(scimExternalId=ext-1)", BASE, attributes=["objectClass"])
            assert [entry["dn"] for entry in admin.response] == [dn]


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
