"""The throwaway Samba AD DC launcher against a real Samba, over the wire (LDAPS, ldap3): life
cycle, the service account's delegated rights, passwords, disable/enable, groups, sort and VLV.

Fails, never skips, when Samba is not installed. The DC of this module listens on a loopback
address of its own (not 127.0.0.1, where the session's ``samba_dc`` fixture may run).
"""

from __future__ import annotations

import re
import shutil
import socket
import ssl
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from ldap3 import BASE, MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE, NONE, SUBTREE, Connection, Server
from ldap3 import Tls as LdapTls

from scim_core.backends.ldap.controls import parse_vlv_response, sort_control, vlv_control
from scim_core.testing.samba import SambaDcInstance, SambaError, SambaNotFoundError

INVALID_CREDENTIALS = 49
INSUFFICIENT_ACCESS = 50
STRONGER_AUTH_REQUIRED = 8
#: userAccountControl: NORMAL_ACCOUNT, and NORMAL_ACCOUNT | ACCOUNTDISABLE.
ENABLED, DISABLED = 512, 514
DONT_EXPIRE_PASSWORD = 0x10000
#: groupType of a global security group.
GLOBAL_SECURITY = -2147483646
AD_PORTS = (389, 636, 3268, 3269)
PASSWORD = "Created-Pa55word!"


def free_loopback_address() -> str:
    """A loopback address from 127.0.0.2 on where nothing listens on the AD ports."""
    for last in range(2, 64):
        host = f"127.0.0.{last}"
        taken = False
        for port in AD_PORTS:
            try:
                with socket.create_connection((host, port), timeout=0.5):
                    taken = True
            except OSError:
                pass
        if not taken:
            return host
    raise AssertionError("no loopback address with free AD ports")


def interface_addresses() -> set[str]:
    """The IPv4 addresses on this machine's interfaces."""
    output = subprocess.run(
        ["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, check=True
    ).stdout
    return set(re.findall(r"\binet (\d+\.\d+\.\d+\.\d+)/", output))


#: The interface addresses before this module added any (close() removes only what it added).
ADDRESSES_BEFORE = interface_addresses() if shutil.which("ip") else set()


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of the process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z" and fields[2] == str(pgid):
                members.append(int(entry.name))
    return members


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def dc() -> Iterator[SambaDcInstance]:
    """One started, seeded DC for this module (fails, never skips, without Samba)."""
    instance = SambaDcInstance(host=free_loopback_address())
    try:
        instance.start()
    except SambaNotFoundError as error:
        instance.close()
        pytest.fail(f"the Samba launcher tests need Samba: {error}", pytrace=False)
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


def connect(dc: SambaDcInstance, user: str | None, password: str | None) -> Connection:
    """An ldap3 connection over LDAPS that verifies the DC's certificate with its CA."""
    tls = VerifiedTls(validate=ssl.CERT_REQUIRED, ca_certs_file=str(dc.ca_file))
    server = Server(dc.url, use_ssl=True, tls=tls, get_info=NONE, connect_timeout=5)
    return Connection(server, user=user, password=password, receive_timeout=10)


@pytest.fixture
def service(dc: SambaDcInstance) -> Iterator[Connection]:
    """A connection bound as the SCIM service account."""
    conn = connect(dc, dc.service_dn, dc.service_password)
    assert conn.bind(), conn.result
    yield conn
    conn.unbind()


def bind_result(dc: SambaDcInstance, user: str, password: str) -> int:
    conn = connect(dc, user, password)
    try:
        conn.bind()
        return int(conn.result["result"])
    finally:
        conn.unbind()


def unicode_pwd(password: str) -> bytes:
    """AD's unicodePwd value: the password in double quotes, UTF-16LE."""
    return f'"{password}"'.encode("utf-16-le")


def unique(prefix: str) -> str:
    """A name no other test uses (at most 20 characters: a sAMAccountName)."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def test_identity_and_settings() -> None:
    instance = SambaDcInstance()
    try:
        assert instance.url == "ldaps://127.0.0.1:636"
        assert instance.dialect == "ad" and instance.placeholder_dn is None
        assert instance.admin_dn == "CN=Administrator,CN=Users,DC=example,DC=org"
        assert instance.service_dn == "CN=scim,OU=services,DC=example,DC=org"
        assert not instance.running and instance.pid is None
        assert instance.service_settings() == {
            "SCIM_LDAP_URL": "ldaps://127.0.0.1:636",
            "SCIM_LDAP_BIND_DN": instance.service_dn,
            "SCIM_LDAP_BIND_PASSWORD": instance.service_password,
            "SCIM_LDAP_USERS_BASE": "OU=people,DC=example,DC=org",
            "SCIM_LDAP_GROUPS_BASE": "OU=groups,DC=example,DC=org",
            "SCIM_LDAP_DIALECT": "ad",
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
        with pytest.raises(ValueError, match="loopback"):
            SambaDcInstance(host="192.0.2.1")
    finally:
        instance.close()
    assert not instance.directory.exists()


def test_missing_samba_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from scim_core.testing import samba as samba_module

    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(samba_module, "_BINARY_DIRS", ())
    instance = SambaDcInstance()
    with pytest.raises(SambaNotFoundError, match="apt-get install samba"):
        instance.__enter__()
    assert not instance.directory.exists()


def test_the_dc_listens_on_its_address_only(dc: SambaDcInstance) -> None:
    assert dc.running and dc.pid is not None
    processes = {str(pid) for pid in group_members(dc.pid)}
    listening = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True)
    ours = [
        line.split()[3]
        for line in listening.stdout.splitlines()
        if processes & set(re.findall(r"pid=(\d+)", line))
    ]
    assert sorted(ours) == sorted(f"{dc.host}:{port}" for port in AD_PORTS), ours


def test_plain_ldap_refuses_simple_binds(dc: SambaDcInstance) -> None:
    conn = Connection(
        Server(f"ldap://{dc.host}", get_info=NONE), dc.service_dn, dc.service_password
    )
    assert not conn.bind()
    assert conn.result["result"] == STRONGER_AUTH_REQUIRED
    conn.unbind()


def test_root_dse_controls(dc: SambaDcInstance, service: Connection) -> None:
    """What the service's AD profile relies on (and does without) in Samba 4.17's rootDSE."""
    assert service.search("", "(objectClass=*)", BASE, attributes=["supportedControl", "+"])
    found = service.response[0]["attributes"]
    controls = set(found["supportedControl"])
    sort, vlv, paged, permissive = (
        "1.2.840.113556.1.4.473",
        "2.16.840.1.113730.3.4.9",
        "1.2.840.113556.1.4.319",
        "1.2.840.113556.1.4.1413",
    )
    assert {sort, vlv, paged, permissive} <= controls
    # No RFC 4528 assertion, no RFC 4527 pre/post-read, no RFC 3876 ValuesReturnFilter.
    assert not controls & {"1.3.6.1.1.12", "1.3.6.1.1.13.1", "1.3.6.1.1.13.2"}
    assert "1.2.826.0.1.3344810.2.3" not in controls


def test_service_account_reads_alice(dc: SambaDcInstance, service: Connection) -> None:
    attributes = [
        "objectGUID",
        "uSNChanged",
        "userAccountControl",
        "memberOf",
        "sAMAccountName",
        "userPrincipalName",
        "givenName",
        "sn",
        "mail",
    ]
    assert service.search(dc.users_base, "(sAMAccountName=alice)", SUBTREE, attributes=attributes)
    (alice,) = service.response
    found = alice["attributes"]
    assert alice["dn"] == f"CN=alice,{dc.users_base}"
    assert len(alice["raw_attributes"]["objectGUID"][0]) == 16
    assert int(found["uSNChanged"][0]) > 0
    assert found["userAccountControl"] == [str(ENABLED)]
    assert found["memberOf"] == [f"CN=developers,{dc.groups_base}"]
    assert found["sAMAccountName"] == ["alice"]
    assert found["userPrincipalName"] == ["alice@example.org"]
    assert (found["givenName"], found["sn"], found["mail"]) == (
        ["Alice"],
        ["Smith"],
        ["alice@example.org"],
    )
    assert service.search(
        f"CN=bob,{dc.users_base}", "(objectClass=*)", BASE, attributes=["manager"]
    )
    assert service.response[0]["attributes"]["manager"] == [f"CN=alice,{dc.users_base}"]
    assert service.search(
        f"CN=developers,{dc.groups_base}", "(objectClass=group)", BASE, attributes=["member"]
    )
    members = service.response[0]["attributes"]["member"]
    assert sorted(members) == [f"CN=alice,{dc.users_base}", f"CN=bob,{dc.users_base}"]


def test_service_account_is_delegated_not_an_admin(
    dc: SambaDcInstance, service: Connection
) -> None:
    attributes = ["memberOf", "userAccountControl"]
    assert service.search(dc.service_dn, "(objectClass=*)", BASE, attributes=attributes)
    found = service.response[0]["attributes"]
    assert found["memberOf"] == []  # only Domain Users (its primary group)
    for dn in (dc.service_dn, dc.admin_dn):
        assert service.search(dn, "(objectClass=*)", BASE, attributes=["userAccountControl"])
        flags = int(service.response[0]["attributes"]["userAccountControl"][0])
        assert flags == ENABLED | DONT_EXPIRE_PASSWORD, (dn, flags)
    # Outside its OUs it cannot create anything.
    name = unique("out")
    assert not service.add(
        f"CN={name},CN=Users,{dc.base_dn}",
        attributes={"objectClass": ["user"], "sAMAccountName": name},
    )
    assert service.result["result"] == INSUFFICIENT_ACCESS, service.result


def test_alice_binds_by_upn_and_by_dn(dc: SambaDcInstance) -> None:
    password = dc.seed_passwords["alice"]
    assert bind_result(dc, "alice@example.org", password) == 0
    assert bind_result(dc, f"CN=alice,{dc.users_base}", password) == 0
    assert bind_result(dc, "alice@example.org", "wrong-Passw0rd") == INVALID_CREDENTIALS
    assert dc.can_bind("alice@example.org", password)
    assert dc.can_bind(f"CN=alice,{dc.users_base}", password)
    assert not dc.can_bind("alice@example.org", "wrong-Passw0rd")
    assert not dc.can_bind("alice@example.org", "")  # never an unauthenticated bind


def test_user_account_control_disables_and_enables(
    dc: SambaDcInstance, service: Connection
) -> None:
    dn = f"CN=bob,{dc.users_base}"
    password = dc.seed_passwords["bob"]
    try:
        assert service.modify(dn, {"userAccountControl": [(MODIFY_REPLACE, [str(DISABLED)])]})
        assert bind_result(dc, dn, password) == INVALID_CREDENTIALS
        assert not dc.can_bind("bob@example.org", password)
    finally:
        assert service.modify(dn, {"userAccountControl": [(MODIFY_REPLACE, [str(ENABLED)])]})
    assert bind_result(dc, dn, password) == 0
    assert dc.can_bind("bob@example.org", password)


def test_service_account_creates_a_user_with_a_password(
    dc: SambaDcInstance, service: Connection
) -> None:
    name = unique("u")
    dn = f"CN={name},{dc.users_base}"
    upn = f"{name}@example.org"
    attributes = {
        "objectClass": ["user"],
        "sAMAccountName": name,
        "userPrincipalName": upn,
        "givenName": "Test",
        "sn": name,
        "mail": upn,
    }
    assert service.add(dn, attributes=attributes), service.result
    try:
        assert service.search(dn, "(objectClass=*)", BASE, attributes=["userAccountControl"])
        created = int(service.response[0]["attributes"]["userAccountControl"][0])
        assert created & 2  # AD creates a user without a password disabled
        assert service.modify(dn, {"unicodePwd": [(MODIFY_REPLACE, [unicode_pwd(PASSWORD)])]}), (
            service.result
        )
        assert service.modify(dn, {"userAccountControl": [(MODIFY_REPLACE, [str(ENABLED)])]}), (
            service.result
        )
        assert bind_result(dc, dn, PASSWORD) == 0
        assert dc.can_bind(upn, PASSWORD)
        # A reset by the service account (Reset Password right), then the old one fails.
        assert service.modify(
            dn, {"unicodePwd": [(MODIFY_REPLACE, [unicode_pwd("Next-Pa55word")])]}
        )
        assert not dc.can_bind(upn, PASSWORD) and dc.can_bind(upn, "Next-Pa55word")
        assert service.modify_dn(dn, f"CN={name}-renamed"), service.result
        dn = f"CN={name}-renamed,{dc.users_base}"
    finally:
        assert service.delete(dn), service.result


def test_service_account_creates_a_group_and_changes_members(
    dc: SambaDcInstance, service: Connection
) -> None:
    name = unique("g")
    dn = f"CN={name},{dc.groups_base}"
    alice, bob = f"CN=alice,{dc.users_base}", f"CN=bob,{dc.users_base}"
    attributes = {"objectClass": ["group"], "groupType": GLOBAL_SECURITY, "sAMAccountName": name}
    assert service.add(dn, attributes=attributes), service.result
    try:

        def members() -> list[str]:
            assert service.search(dn, "(objectClass=group)", BASE, attributes=["member"])
            return sorted(service.response[0]["attributes"]["member"])

        assert members() == []  # an AD group may be empty
        assert service.modify(dn, {"member": [(MODIFY_ADD, [alice, bob])]}), service.result
        assert members() == [alice, bob]
        assert service.modify(dn, {"member": [(MODIFY_DELETE, [bob])]}), service.result
        assert members() == [alice]
        assert service.search(alice, "(objectClass=*)", BASE, attributes=["memberOf"])
        assert dn in service.response[0]["attributes"]["memberOf"]
    finally:
        assert service.delete(dn), service.result


def test_server_side_sort_and_vlv(dc: SambaDcInstance, service: Connection) -> None:
    people = "(&(objectClass=user)(|(sAMAccountName=alice)(sAMAccountName=bob)))"

    def names(*controls: tuple[str, bool, bytes | None]) -> list[str]:
        assert service.search(
            dc.users_base, people, SUBTREE, attributes=["sAMAccountName"], controls=list(controls)
        ), service.result
        return [entry["attributes"]["sAMAccountName"][0] for entry in service.response]

    # alice Smith, bob Jones: each key gives its own order.
    assert names(sort_control("sAMAccountName")) == ["alice", "bob"]
    assert names(sort_control("sn")) == ["bob", "alice"]
    # A VLV window of one entry at position 2 (1-based) of the list sorted by sAMAccountName.
    assert names(sort_control("sAMAccountName"), vlv_control(2, 0)) == ["bob"]
    vlv = parse_vlv_response(service.result.get("controls"))
    assert vlv is not None and vlv.result == 0 and vlv.content_count == 2, service.result


def test_a_second_dc_on_the_same_address_fails_clearly(dc: SambaDcInstance) -> None:
    other = SambaDcInstance(host=dc.host)
    with pytest.raises(SambaError, match=r"636.*taken.*one DC per address"):
        other.__enter__()
    assert not other.directory.exists() and dc.running


def test_stop_and_start_keep_the_data(dc: SambaDcInstance, service: Connection) -> None:
    name = unique("keep")
    dn = f"CN={name},{dc.groups_base}"
    attributes = {"objectClass": ["group"], "groupType": GLOBAL_SECURITY, "sAMAccountName": name}
    assert service.add(dn, attributes=attributes), service.result
    pid = dc.pid
    assert pid is not None and len(group_members(pid)) > 1  # samba and its LDAP workers
    dc.stop()
    assert not dc.running and dc.pid is None
    assert group_members(pid) == [] and not port_open(dc.host, 636)
    dc.stop()  # idempotent
    dc.start()
    assert dc.running and dc.pid != pid
    assert dc.start() is dc and dc.running  # idempotent
    conn = connect(dc, dc.service_dn, dc.service_password)
    assert conn.bind(), conn.result
    assert conn.search(dn, "(objectClass=group)", BASE, attributes=["sAMAccountName"])
    # The seed is added once, not again on a restart.
    assert conn.search(dc.users_base, "(sAMAccountName=alice)", SUBTREE, attributes=["cn"])
    assert len(conn.response) == 1
    assert conn.delete(dn), conn.result
    conn.unbind()


def test_close_leaves_no_process_no_folder_and_no_address(dc: SambaDcInstance) -> None:
    """Runs last in this module: the fixture's own close() afterwards does nothing."""
    pid, folder, host = dc.pid, dc.directory, dc.host
    added = host not in ADDRESSES_BEFORE
    assert pid is not None and folder.is_dir()
    dc.close()
    assert not dc.running and dc.pid is None
    assert group_members(pid) == []
    assert not folder.exists()
    assert not port_open(host, 636)
    if shutil.which("ip"):
        assert (host in interface_addresses()) == (not added)
    dc.close()  # idempotent
