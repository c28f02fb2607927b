"""The throwaway 389 Directory Server launcher against a real 389-DS, over the wire (LDAPS,
ldap3): life cycle, loopback-only listeners, the plugins the service relies on (memberOf,
referential integrity, attribute uniqueness, entryUSN), the SCIM schema, the service account's
rights, passwords over TLS, nsAccountLock, empty groups, sort and VLV, entries made by dsidm.

Fails, never skips, when 389-DS is not installed.
"""

from __future__ import annotations

import re
import signal
import socket
import ssl
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from ldap3 import BASE, LEVEL, MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE, NONE, Connection, Server
from ldap3 import Tls as LdapTls

from scim_core.backends.ldap.controls import parse_vlv_response, sort_control, vlv_control
from scim_core.testing.dirsrv import (
    DirsrvError,
    DirsrvInstance,
    DirsrvNotFoundError,
    scim_schema_ldif,
)
from scim_core.testing.slapd import SCIM_SCHEMA

SUCCESS = 0
OPERATIONS_ERROR = 1
CONFIDENTIALITY_REQUIRED = 13
CONSTRAINT_VIOLATION = 19
INVALID_CREDENTIALS = 49
UNWILLING_TO_PERFORM = 53
#: RFC 2891 server-side sort, draft-ietf-ldapext-ldapv3-vlv, RFC 2696 paged results.
SORT, VLV, PAGED = "1.2.840.113556.1.4.473", "2.16.840.1.113730.3.4.9", "1.2.840.113556.1.4.319"
PASSWORD_MODIFY = "1.3.6.1.4.1.4203.1.11.1"  # RFC 3062
INET_ORG_PERSON = ["top", "person", "organizationalPerson", "inetOrgPerson"]
SERVICE_PW = "scim-dev-password"


@pytest.fixture(scope="module")
def ds() -> Iterator[DirsrvInstance]:
    """One started, seeded 389-DS for this module (fails, never skips, without 389-DS)."""
    instance = DirsrvInstance()
    try:
        instance.start()
    except DirsrvNotFoundError as error:
        instance.close()
        pytest.fail(f"the 389-DS launcher tests need 389-DS: {error}", pytrace=False)
    except BaseException:
        instance.close()
        raise
    yield instance
    instance.close()


class VerifiedTls(LdapTls):
    """ldap3's Tls with the host name checked by OpenSSL in the handshake (ldap3 2.9 calls the
    deprecated ssl.match_hostname otherwise, an error under this project's warning filters)."""

    def wrap_socket(self, connection, do_handshake=False):
        context = ssl.create_default_context(cafile=self.ca_certs_file)
        connection.socket = context.wrap_socket(
            connection.socket,
            do_handshake_on_connect=do_handshake,
            server_hostname=connection.server.host,
        )


def connect(ds: DirsrvInstance, user: str | None, password: str | None) -> Connection:
    """An ldap3 connection to :attr:`DirsrvInstance.url` that verifies the certificate."""
    tls = VerifiedTls(validate=ssl.CERT_REQUIRED, ca_certs_file=str(ds.ca_file))
    server = Server(ds.url, use_ssl=True, tls=tls, get_info=NONE, connect_timeout=5)
    return Connection(server, user=user, password=password, receive_timeout=10)


def bind_result(ds: DirsrvInstance, user: str, password: str) -> int:
    conn = connect(ds, user, password)
    try:
        conn.bind()
        return int(conn.result["result"])
    finally:
        conn.unbind()


@pytest.fixture
def service(ds: DirsrvInstance) -> Iterator[Connection]:
    """A connection bound as the SCIM service account over LDAPS."""
    conn = connect(ds, ds.service_dn, ds.service_password)
    assert conn.bind(), conn.result
    yield conn
    conn.unbind()


def read(conn: Connection, dn: str, *attributes: str) -> dict:
    """The attributes of one entry (every value a list: the connections read no schema)."""
    assert conn.search(dn, "(objectClass=*)", BASE, attributes=list(attributes)), conn.result
    return conn.response[0]["attributes"]


def usn(conn: Connection, dn: str) -> int:
    return int(read(conn, dn, "entryusn")["entryusn"][0])


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def add_user(conn: Connection, ds: DirsrvInstance, uid: str, **attributes: object) -> str:
    dn = f"uid={uid},{ds.users_base}"
    values = {"cn": uid, "sn": uid, **attributes}
    assert conn.add(dn, INET_ORG_PERSON, values), conn.result
    return dn


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a live (non-zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def listeners(pid: int) -> list[str]:
    """The local addresses of the TCP sockets ``pid`` listens on (``ss``)."""
    output = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    return sorted(
        line.split()[3] for line in output.splitlines() if f"pid={pid}," in line.replace(")", ",")
    )


# -- without a server --------------------------------------------------------------------------


def test_identity_and_settings() -> None:
    instance = DirsrvInstance(name="scimtest")
    try:
        assert instance.name == "scimtest" and instance.dialect == "389ds"
        assert instance.placeholder_dn is None
        assert instance.admin_dn == "cn=Directory Manager"
        assert instance.service_dn == "uid=scim,ou=services,dc=example,dc=org"
        assert instance.base_dn == "dc=example,dc=org"
        assert instance.users_base == "ou=people,dc=example,dc=org"
        assert instance.groups_base == "ou=groups,dc=example,dc=org"
        assert not instance.running and instance.pid is None
        assert re.fullmatch(r"ldaps://localhost:\d+", instance.url)
        assert instance.ldap_url == f"ldap://127.0.0.1:{instance.port}"
        assert instance.port != instance.tls_port
        assert all(20000 <= p < 32768 for p in (instance.port, instance.tls_port))
        assert instance.service_settings() == {
            "SCIM_LDAP_URL": instance.url,
            "SCIM_LDAP_BIND_DN": instance.service_dn,
            "SCIM_LDAP_BIND_PASSWORD": instance.service_password,
            "SCIM_LDAP_USERS_BASE": instance.users_base,
            "SCIM_LDAP_GROUPS_BASE": instance.groups_base,
            "SCIM_LDAP_DIALECT": "389ds",
            "SCIM_LDAP_CA_FILE": str(instance.ca_file),
        }
        assert list(instance.environment()) == [
            "LDAP_URL",
            "LDAP_USERS_BASE",
            "LDAP_GROUPS_BASE",
            "LDAP_ADMIN_DN",
            "LDAP_ADMIN_PASSWORD",
            "LDAP_SERVICE_DN",
            "LDAP_SERVICE_PASSWORD",
            "LDAP_CA_FILE",
        ]
        with pytest.raises(ValueError, match="instance name"):
            DirsrvInstance(instance.directory, name="no spaces")
    finally:
        instance.close()
    assert not instance.directory.exists()
    first, second = DirsrvInstance(), DirsrvInstance()
    try:
        assert first.name != second.name  # unique by default
        assert re.fullmatch(r"scim-[0-9a-f]{8}", first.name)
    finally:
        first.close()
        second.close()
    assert not first.directory.exists() and not second.directory.exists()


def test_missing_389ds_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from scim_core.testing import dirsrv as dirsrv_module

    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(dirsrv_module, "_BINARY_DIRS", ())
    instance = DirsrvInstance()
    with pytest.raises(DirsrvNotFoundError, match=r"apt-get install 389-ds-base"):
        instance.__enter__()
    assert not instance.directory.exists()


def test_the_schema_is_translated_from_scim_schema() -> None:
    text = scim_schema_ldif(SCIM_SCHEMA)
    oids = re.findall(r"\(\s*(2\.25\.[\d.]+)\s", SCIM_SCHEMA.read_text())
    assert len(oids) == 12
    values = [
        line for line in text.splitlines() if re.match(r"(attributeTypes|objectClasses):", line)
    ]
    assert [re.search(r"\( (\S+) ", value).group(1) for value in values] == oids
    assert "NAME 'scimPerson'" in text and "SUP top AUXILIARY" in text
    assert (
        "MAY ( scimExternalId $ scimNoPrimaryEmail $ scimPendingSince $ scimUserName $ "
        "scimNickName $ scimLocale $ scimTimezone $ scimCostCenter $ scimDivision $ "
        "scimCountry )"
    ) in text


def test_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(DirsrvError, match="not empty"):
        DirsrvInstance(tmp_path)
    assert (tmp_path / "precious.txt").read_text(encoding="utf-8") == "keep me"


def test_a_folder_is_reused_and_a_taken_port_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "ds"
    first = DirsrvInstance(folder, seed=False, db_lib="mdb")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", first.tls_port))
        busy.listen()
        taken = first.tls_port
        try:
            first.start()
            assert first.tls_port != taken and first.can_bind(first.service_dn, SERVICE_PW)
        finally:
            first.stop()
    assert "create" in first.timings and "seed" in first.timings
    again = DirsrvInstance(folder)
    try:
        assert (again.name, again.port, again.tls_port) == (first.name, first.port, first.tls_port)
        again.start()
        assert "create" not in again.timings and "seed" not in again.timings
        assert again.can_bind(again.service_dn, SERVICE_PW)
        assert not again.can_bind(f"uid=alice,{again.users_base}", "alice-dev-password")
    finally:
        again.close()
    assert folder.is_dir() and not any(folder.iterdir())  # the folder stays, emptied


def test_main_runs_in_the_foreground_until_sigterm() -> None:
    command = [sys.executable, "-m", "scim_core.testing.dirsrv", "--no-seed"]
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=root) as proc:
        try:
            assert proc.stdout is not None
            printed = dict(proc.stdout.readline().strip().split("=", 1) for _ in range(8))
            assert next(iter(printed)) == "LDAP_URL", printed
            folder = Path(printed["LDAP_CA_FILE"]).parent.parent
            port = int(printed["LDAP_URL"].rsplit(":", 1)[1])
            assert folder.is_dir()
            socket.create_connection(("localhost", port), timeout=5).close()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:  # a failed assertion: still let it remove its server
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
    assert not folder.exists()
    with pytest.raises(OSError):
        socket.create_connection(("localhost", port), timeout=5).close()


# -- one server ----------------------------------------------------------------------------------


def test_it_started_fast_and_listens_on_loopback_only(ds: DirsrvInstance) -> None:
    assert ds.running and ds.pid is not None
    assert ds.timings["start"] < 30, ds.timings
    assert listeners(ds.pid) == sorted([f"127.0.0.1:{ds.port}", f"127.0.0.1:{ds.tls_port}"])
    # The instance is a 389 instance the 389 tools know by its name.
    status = subprocess.run(
        ["dsctl", ds.name, "status"], capture_output=True, text=True, env=ds.tool_environment()
    )
    assert status.returncode == 0 and "is running" in status.stdout, status


def test_ns_slapd_runs_with_jemalloc_as_debians_unit_starts_it(ds: DirsrvInstance) -> None:
    """As dirsrv@.service preloads it (what it buys a big group: docs/directories.md)."""
    assert ds.pid is not None
    maps = Path(f"/proc/{ds.pid}/maps").read_text(encoding="utf-8")
    assert "libjemalloc.so" in maps  # 389-ds-base-libs depends on libjemalloc2


def test_the_certificate_is_verified_for_localhost(ds: DirsrvInstance) -> None:
    context = ssl.create_default_context(cafile=str(ds.ca_file))
    with (
        socket.create_connection(("localhost", ds.tls_port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
        names = [value for _, value in tls.getpeercert()["subjectAltName"]]
    assert "localhost" in names and "127.0.0.1" in names
    # Another CA does not verify it.
    with pytest.raises(ssl.SSLCertVerificationError):
        other = ssl.create_default_context()
        with (
            socket.create_connection(("localhost", ds.tls_port), timeout=5) as raw,
            other.wrap_socket(raw, server_hostname="localhost"),
        ):
            pass


def test_root_dse(service: Connection) -> None:
    assert service.search("", "(objectClass=*)", BASE, attributes=["*", "+"]), service.result
    root = service.response[0]["attributes"]
    controls, extensions = set(root["supportedControl"]), set(root["supportedExtension"])
    assert {SORT, VLV, PAGED} <= controls
    assert PASSWORD_MODIFY in extensions
    # No RFC 4528 assertion, no RFC 3876 ValuesReturnFilter.
    assert not controls & {"1.3.6.1.1.12", "1.2.826.0.1.3344810.2.3"}
    assert root["vendorVersion"][0].startswith("389-Directory/")
    assert "dc=example,dc=org" in root["namingContexts"]


def test_service_account_reads_users_with_ids_and_versions(
    ds: DirsrvInstance, service: Connection
) -> None:
    attributes = ["uid", "nsUniqueId", "entryusn", "memberOf", "objectClass", "userPassword"]
    assert service.search(ds.users_base, "(uid=*)", LEVEL, attributes=attributes)
    users = {e["attributes"]["uid"][0]: e["attributes"] for e in service.response}
    assert {"alice", "bob", "carol"} <= set(users)
    for user in users.values():
        assert re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{8}){3}", user["nsUniqueId"][0])
        assert int(user["entryusn"][0]) > 0
        assert not user.get("userPassword")  # it sets passwords but never reads the hashes
    alice = users["alice"]
    assert alice["memberOf"] == [f"cn=developers,{ds.groups_base}"]
    # memberOfAutoAddOC: inetOrgPerson cannot hold memberOf, nsMemberOf was added for it.
    assert "nsMemberOf" in alice["objectClass"] and "scimPerson" in alice["objectClass"]
    group = read(service, f"cn=developers,{ds.groups_base}", "member")
    assert sorted(group["member"]) == [f"uid={u},{ds.users_base}" for u in ("alice", "bob")]
    bob = read(service, f"uid=bob,{ds.users_base}", "manager", "mail")
    assert bob["manager"] == [f"uid=alice,{ds.users_base}"] and len(bob["mail"]) == 2


def test_entryusn_changes_with_every_write(ds: DirsrvInstance, service: Connection) -> None:
    dn = f"uid=bob,{ds.users_base}"
    before = usn(service, dn)
    versions = {before}
    for title in ("One", "Two", "Three"):
        assert service.modify(dn, {"title": [(MODIFY_REPLACE, [title])]}), service.result
        versions.add(usn(service, dn))
    assert len(versions) == 4 and max(versions) > before
    assert service.modify(dn, {"title": [(MODIFY_DELETE, [])]}), service.result


def test_seeded_users_bind_with_their_passwords(ds: DirsrvInstance) -> None:
    for name, password in ds.seed_passwords.items():
        dn = f"uid={name},{ds.users_base}"
        assert ds.can_bind(dn, password), name
        assert not ds.can_bind(dn, password + "x")
        assert bind_result(ds, dn, password + "x") == INVALID_CREDENTIALS
    assert not ds.can_bind(f"uid=alice,{ds.users_base}", "")
    assert ds.can_bind(ds.service_dn, ds.service_password)
    assert ds.can_bind(ds.admin_dn, ds.admin_password)


def test_ns_account_lock_disables_and_enables(ds: DirsrvInstance, service: Connection) -> None:
    dn, password = f"uid=alice,{ds.users_base}", ds.seed_passwords["alice"]
    assert service.modify(dn, {"nsAccountLock": [(MODIFY_REPLACE, ["TRUE"])]}), service.result
    try:
        assert read(service, dn, "nsAccountLock")["nsAccountLock"] == ["TRUE"]
        assert bind_result(ds, dn, password) == UNWILLING_TO_PERFORM  # "Account inactivated"
        assert not ds.can_bind(dn, password)
    finally:
        assert service.modify(dn, {"nsAccountLock": [(MODIFY_DELETE, [])]}), service.result
    assert ds.can_bind(dn, password)


def test_dsidm_user_is_no_inet_org_person(ds: DirsrvInstance, service: Connection) -> None:
    carol = read(service, f"uid=carol,{ds.users_base}", "objectClass", "mail", "cn", "sn")
    assert sorted(carol["objectClass"]) == [
        "nsAccount",
        "nsOrgPerson",
        "nsPerson",
        "posixAccount",
        "top",
    ]
    assert carol["mail"] == ["carol@example.org"] and not carol.get("sn")
    # The service's user filter for 389-DS finds both kinds.
    users = "(|(objectClass=inetOrgPerson)(objectClass=nsPerson))"
    assert service.search(ds.users_base, users, LEVEL, attributes=["uid"])
    assert {"alice", "bob", "carol"} <= {e["attributes"]["uid"][0] for e in service.response}


def test_service_creates_a_scim_person_and_sets_its_password_over_tls(
    ds: DirsrvInstance, service: Connection
) -> None:
    uid = unique("new")
    dn = add_user(
        service,
        ds,
        uid,
        objectClass=[*INET_ORG_PERSON, "scimPerson"],
        scimExternalId=f"ext-{uid}",
        scimNoPrimaryEmail="TRUE",
        scimPendingSince="20240101000000Z",
        mail=[f"{uid}@example.org"],
    )
    try:
        found = read(service, dn, "scimExternalId", "objectClass", "nsUniqueId", "scimPendingSince")
        assert found["scimExternalId"] == [f"ext-{uid}"] and "scimPerson" in found["objectClass"]
        assert service.search(ds.users_base, f"(scimExternalId=ext-{uid})", LEVEL)
        assert len(service.response) == 1
        # RFC 3062 as the service account over TLS; 389-DS stores the password hashed. No
        # three characters in a row of either password can be a piece of the uid ("new-" and
        # random hex), which 389-DS refuses ("Pa55" held "a55", as a uid now and then did).
        password = "Created-Px7yword!"
        assert service.extend.standard.modify_password(dn, None, password), service.result
        assert ds.can_bind(dn, password)
        # A cleartext userPassword replace works too (over TLS).
        assert service.modify(dn, {"userPassword": [(MODIFY_REPLACE, ["Other-Px7yword!"])]})
        assert ds.can_bind(dn, "Other-Px7yword!") and not ds.can_bind(dn, password)
        # Rename (a userName change) keeps the entry and its password.
        assert service.modify_dn(dn, f"uid={uid}x"), service.result
        dn = f"uid={uid}x,{ds.users_base}"
        assert ds.can_bind(dn, "Other-Px7yword!")
    finally:
        assert service.delete(dn), service.result


def test_weak_passwords_are_refused(ds: DirsrvInstance, service: Connection) -> None:
    dn = add_user(service, ds, unique("weak"))
    try:
        for weak in ("short", "lowercaseonly", dn.split(",")[0][4:] + "-Pa55!"):
            assert not service.extend.standard.modify_password(dn, None, weak), weak
            assert service.result["result"] == CONSTRAINT_VIOLATION, service.result
        # No three characters in a row of it can be a piece of the uid, cn and sn ("weak-"
        # and random hex), which 389-DS refuses: "Strong-Pa55word!" held "a55", and a uid
        # now and then held it too.
        assert service.extend.standard.modify_password(dn, None, "Strong-Px7yword!")
    finally:
        assert service.delete(dn), service.result


def test_passwords_need_tls(ds: DirsrvInstance) -> None:
    plain = Connection(Server(ds.ldap_url, get_info=NONE), ds.service_dn, ds.service_password)
    assert plain.bind(), plain.result  # 389-DS allows simple binds without TLS by default
    try:
        plain.extend.standard.modify_password(f"uid=bob,{ds.users_base}", None, "Nope-123456")
        assert plain.result["result"] == CONFIDENTIALITY_REQUIRED, plain.result
    finally:
        plain.unbind()
    assert ds.can_bind(f"uid=bob,{ds.users_base}", ds.seed_passwords["bob"])


def test_groups_may_be_empty_and_refint_keeps_them_clean(
    ds: DirsrvInstance, service: Connection
) -> None:
    group = f"cn={unique('empty')},{ds.groups_base}"
    assert service.add(group, ["top", "groupOfNames"], {"cn": group[3:].split(",")[0]})
    try:
        assert not read(service, group, "member").get("member")
        uid = unique("member")
        dn = add_user(service, ds, uid)
        boss = add_user(service, ds, unique("boss"))
        assert service.modify(dn, {"manager": [(MODIFY_ADD, [boss])]}), service.result
        assert service.modify(group, {"member": [(MODIFY_ADD, [dn, boss])]}), service.result
        assert read(service, dn, "memberOf")["memberOf"] == [group]
        assert service.delete(boss), service.result
        # Referential integrity is synchronous (update delay 0): no wait needed.
        assert read(service, group, "member")["member"] == [dn]
        assert not read(service, dn, "manager").get("manager")
        assert service.delete(dn), service.result
        assert not read(service, group, "member").get("member")
    finally:
        assert service.delete(group), service.result


def test_uid_is_unique_under_people(ds: DirsrvInstance, service: Connection) -> None:
    dn = f"cn={unique('dupe')},{ds.users_base}"
    assert not service.add(dn, INET_ORG_PERSON, {"cn": "x", "sn": "x", "uid": "alice"})
    assert service.result["result"] == CONSTRAINT_VIOLATION, service.result


def test_sorted_search_and_vlv_over_many_entries(ds: DirsrvInstance, service: Connection) -> None:
    prefix = unique("sort")
    dns = [add_user(service, ds, f"{prefix}-{n:02d}") for n in reversed(range(14))]
    try:
        users = f"(&(|(objectClass=inetOrgPerson)(objectClass=nsPerson))(uid={prefix}-*))"

        def uids(*controls: tuple[str, bool, bytes | None]) -> list[str]:
            service.search(ds.users_base, users, LEVEL, attributes=["uid"], controls=controls)
            assert service.result["result"] == SUCCESS, service.result
            return [entry["attributes"]["uid"][0] for entry in service.response]

        expected = [f"{prefix}-{n:02d}" for n in range(14)]
        assert uids(sort_control("uid")) == expected
        assert uids(sort_control("uid"), vlv_control(3, 2)) == expected[2:5]
        vlv = parse_vlv_response(service.result.get("controls"))
        assert vlv is not None and vlv.result == 0 and vlv.content_count == 14, service.result
        # 389-DS refuses an explicit caseIgnoreOrderingMatch beyond a dozen candidates.
        service.search(
            ds.users_base, users, LEVEL, controls=[sort_control("uid", "caseIgnoreOrderingMatch")]
        )
        assert service.result["result"] == OPERATIONS_ERROR, service.result
    finally:
        for dn in dns:
            assert service.delete(dn), service.result


def test_service_account_writes_people_and_groups_only(
    ds: DirsrvInstance, service: Connection
) -> None:
    assert not service.add(f"cn={unique('x')},{ds.services_base}", ["top", "organizationalUnit"])
    assert not service.modify(ds.base_dn, {"description": [(MODIFY_REPLACE, ["x"])]})
    anonymous = connect(ds, None, None)
    assert anonymous.bind()
    assert anonymous.search(ds.base_dn, "(uid=*)", attributes=["uid"]) is False or not [
        entry for entry in anonymous.response if entry.get("type") == "searchResEntry"
    ]
    anonymous.unbind()


def test_ldapadd_loads_ldif_as_directory_manager(ds: DirsrvInstance, tmp_path: Path) -> None:
    uid = unique("ldif")
    ldif = tmp_path / "user.ldif"
    ldif.write_text(
        f"dn: uid={uid},{ds.users_base}\nobjectClass: inetOrgPerson\ncn: {uid}\nsn: {uid}\n"
        f"userPassword: {uid}-password\n",
        encoding="utf-8",
    )
    ds.ldapadd(ldif)
    assert ds.can_bind(f"uid={uid},{ds.users_base}", f"{uid}-password")
    with pytest.raises(DirsrvError, match="Already exists"):
        ds.ldapadd(ldif)
    admin = connect(ds, ds.admin_dn, ds.admin_password)
    assert admin.bind() and admin.delete(f"uid={uid},{ds.users_base}"), admin.result
    admin.unbind()


def test_stop_and_start_keep_the_data(ds: DirsrvInstance, service: Connection) -> None:
    dn = add_user(service, ds, unique("keep"))
    version = usn(service, dn)
    pid, port, tls_port = ds.pid, ds.port, ds.tls_port
    assert pid is not None
    ds.stop()
    assert not ds.running and ds.pid is None and not process_alive(pid)
    with pytest.raises(DirsrvError, match="cannot bind"):
        ds.can_bind(ds.service_dn, ds.service_password)
    ds.stop()  # idempotent
    assert ds.start() is ds and ds.running and ds.pid != pid
    assert (ds.port, ds.tls_port) == (port, tls_port)
    assert ds.start() is ds  # idempotent
    conn = connect(ds, ds.service_dn, ds.service_password)
    assert conn.bind(), conn.result
    assert usn(conn, dn) == version
    # The seed is loaded once, not again on a restart.
    assert conn.search(ds.users_base, "(uid=alice)", LEVEL) and len(conn.response) == 1
    assert ds.can_bind(f"uid=alice,{ds.users_base}", ds.seed_passwords["alice"])
    assert conn.delete(dn), conn.result
    conn.unbind()


def test_close_leaves_no_process_and_no_instance(ds: DirsrvInstance) -> None:
    """Runs last in this module: the fixture's own close() afterwards does nothing."""
    pid, folder, config = ds.pid, ds.directory, ds.config_dir
    assert pid is not None and config.is_dir()
    ds.close()
    assert not ds.running and ds.pid is None and not process_alive(pid)
    assert not config.exists() and not folder.exists()
    ds.close()  # idempotent
