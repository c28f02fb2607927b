"""The throwaway slapd launcher against a real OpenLDAP: life cycle, ACLs, overlays, controls."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from ldap3 import BASE, MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE, NONE, Connection, Server

from scim_core.testing import slapd as slapd_module
from scim_core.testing.slapd import (
    CHANGE_LOG_BASE,
    SCIM_SCHEMA,
    SlapdError,
    SlapdInstance,
    SlapdNotFoundError,
    find_free_port,
    slapadd,
)

REPO = Path(__file__).resolve().parents[2]
LOCKED = "000001010000Z"  # ppolicy's administrative lock value
SORT_OID = "1.2.840.113556.1.4.473"  # RFC 2891 server-side sort request
VLV_OID = "2.16.840.1.113730.3.4.9"  # draft-ietf-ldapext-ldapv3-vlv request
INVALID_CREDENTIALS = 49
INSUFFICIENT_ACCESS = 50
CONSTRAINT_VIOLATION = 19

pytestmark = pytest.mark.slapd


def connect(
    instance: SlapdInstance,
    dn: str | None = None,
    password: str | None = None,
    *,
    bind: bool = True,
) -> Connection:
    """Open an ldap3 connection (bound when ``bind``; anonymous when ``dn`` is None)."""
    server = Server(instance.url, get_info=NONE, connect_timeout=5)
    conn = Connection(server, user=dn, password=password, receive_timeout=10)
    if bind:
        assert conn.bind(), conn.result
    return conn


def can_bind(instance: SlapdInstance, dn: str, password: str) -> bool:
    """Return whether a simple bind as ``dn`` succeeds; only invalidCredentials counts as no."""
    conn = connect(instance, dn, password, bind=False)
    try:
        if conn.bind():
            return True
        assert conn.result["result"] == INVALID_CREDENTIALS, conn.result
        return False
    finally:
        conn.unbind()


def person(uid: str, password: str | None = None) -> dict[str, object]:
    """Attributes of a minimal inetOrgPerson."""
    attributes: dict[str, object] = {
        "objectClass": ["inetOrgPerson"],
        "uid": uid,
        "cn": f"Test {uid}",
        "sn": uid,
        "givenName": "Test",
        "mail": f"{uid}@example.org",
    }
    if password is not None:
        attributes["userPassword"] = password
    return attributes


def unique(prefix: str) -> str:
    """A name no other test uses (the session slapd is shared)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def process_gone(pid: int) -> bool:
    """Return whether no process ``pid`` exists any more (zombies count as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


def port_closed(port: int) -> bool:
    """Return whether nothing accepts TCP connections on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except OSError:
        return True


@pytest.fixture
def service(slapd: SlapdInstance) -> Iterator[Connection]:
    """A connection bound as the SCIM service account."""
    conn = connect(slapd, slapd.service_dn, slapd.service_password)
    yield conn
    conn.unbind()


@pytest.fixture
def admin(slapd: SlapdInstance) -> Iterator[Connection]:
    """A connection bound as the rootdn."""
    conn = connect(slapd, slapd.admin_dn, slapd.admin_password)
    yield conn
    conn.unbind()


def test_start_stop_leaves_no_process_and_closes_port(tmp_path: Path) -> None:
    instance = SlapdInstance(tmp_path / "d", seed=False)
    with instance:
        pid = instance.pid
        assert pid is not None and not process_gone(pid)
        assert instance.url == f"ldap://127.0.0.1:{instance.port}"
        assert not port_closed(instance.port)
    assert instance.pid is None and not instance.running
    assert process_gone(pid)
    assert port_closed(instance.port)
    assert (tmp_path / "d" / "slapd.conf").is_file()  # a given directory is kept


def test_temporary_directory_is_removed_by_close() -> None:
    with SlapdInstance(seed=False) as instance:
        directory = instance.directory
        assert directory.is_dir()
    assert not directory.exists()


def test_busy_port_is_reported_or_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(SlapdError, match="Address already in use"):
            SlapdInstance(port=port, seed=False).__enter__()
        # An automatically chosen port that turns out taken is replaced by another one.
        ports = iter([port])
        real = slapd_module.find_free_port
        monkeypatch.setattr(slapd_module, "find_free_port", lambda: next(ports, None) or real())
        with SlapdInstance(seed=False) as instance:
            assert instance.port != port and instance.running


def test_missing_openldap_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(slapd_module, "_BINARY_DIRS", ())
    with pytest.raises(SlapdNotFoundError, match="apt-get install slapd ldap-utils"):
        SlapdInstance(seed=False).__enter__()


def test_the_schema_is_package_data_and_the_only_copy(
    slapd: SlapdInstance, capsys: pytest.CaptureFixture[str]
) -> None:
    """slapd.conf includes scim_core.testing's scim.schema (an installed package has it too:
    tests/release/check_dist.py); ``--schema`` prints its path for loading it elsewhere."""
    assert SCIM_SCHEMA.parent == Path(slapd_module.__file__).parent
    assert "NAME 'scimPerson'" in SCIM_SCHEMA.read_text(encoding="utf-8")
    folders = ("scim_core", "scim_flask", "examples", "docs", "bench", "tests")
    copies = [p for folder in folders for p in (REPO / folder).rglob("*.schema")]
    assert copies == [REPO / "scim_core" / "testing" / "scim.schema"]
    assert str(SCIM_SCHEMA) in slapd.config_file.read_text(encoding="utf-8")
    assert slapd_module.main(["--schema"]) == 0
    assert capsys.readouterr().out == f"{SCIM_SCHEMA}\n"


def test_index_lists_hold_a_big_group_exactly(slapd: SlapdInstance) -> None:
    """back-mdb's ``idlexp`` is raised in the running slapd's configuration (its effect, a big
    group's members found without a range scan, is measured by ``python -m bench.scale``)."""
    lines = [line.strip() for line in slapd.config_file.read_text(encoding="utf-8").splitlines()]
    backend = lines.index("backend mdb")
    assert lines[backend + 1] == "idlexp 18"
    assert backend < lines.index("database mdb")
    assert slapd.can_bind(slapd.service_dn, slapd.service_password)  # slapd took it


def test_set_up_for_big_groups(slapd: SlapdInstance, service: Connection) -> None:
    """slapd runs with tcmalloc, members kept sorted and a writable memory map (what they buy
    a membership change on a 100,000-member group is measured by ``python -m bench.scale``)."""
    maps = Path(f"/proc/{slapd.pid}/maps").read_text(encoding="utf-8")
    assert "libtcmalloc_minimal.so" in maps  # `make system-deps` installs it
    lines = config_lines(slapd)
    assert lines.index("sortvals member") < lines.index("backend mdb")
    assert lines.index("database mdb") < lines.index("envflags writemap")
    uid = unique("sorted")
    group_dn = f"cn={uid},{slapd.groups_base}"
    members = [f"uid={name},{slapd.users_base}" for name in ("alice", "bob")]
    assert service.add(
        group_dn, attributes={"objectClass": ["groupOfNames"], "cn": uid, "member": members}
    ), service.result
    service.search(group_dn, "(objectClass=*)", BASE, attributes=["member"])
    # Kept in the order of DN matching (shorter first), not as added: slapd took sortvals.
    assert service.entries[0].member.values == members[::-1]
    assert service.delete(group_dn), service.result


def test_deletes_and_renames_are_logged_for_the_service_to_read(
    slapd: SlapdInstance, admin: Connection, service: Connection
) -> None:
    """slapo-accesslog records each delete and rename with the entry's id and the DN it had,
    in a database the service account reads, only what it asks by and for (a record's values
    stay the rootdn's), and anonymous does not (what it buys an index page after a delete is
    measured by ``python -m bench.scale``)."""
    # Named where the service looks for it by default.
    service.search(slapd.base_dn, "(objectClass=*)", BASE, attributes=["auditContext"])
    assert service.entries[0].auditContext.value == CHANGE_LOG_BASE
    old, new, gone = unique("was"), unique("now"), unique("gone")
    for uid in (old, gone):
        assert admin.add(f"uid={uid},{slapd.users_base}", attributes=person(uid)), admin.result
    admin.search(slapd.users_base, f"(|(uid={old})(uid={gone}))", attributes=["uid", "entryUUID"])
    ids = {entry.uid.value: entry.entryUUID.value for entry in admin.entries}
    assert admin.modify_dn(f"uid={old},{slapd.users_base}", f"uid={new}"), admin.result
    assert admin.delete(f"uid={gone},{slapd.users_base}"), admin.result
    assert admin.modify(
        f"uid={new},{slapd.users_base}", {"title": [(MODIFY_REPLACE, ["not logged"])]}
    ), admin.result
    logged = "(|" + "".join(f"(reqEntryUUID={value})" for value in ids.values()) + ")"
    assert service.search(CHANGE_LOG_BASE, logged, attributes=["reqType", "reqDN"]), service.result
    assert len(service.response) == 2
    assert not any(found["raw_attributes"].get("reqType") for found in service.response)
    admin.search(CHANGE_LOG_BASE, logged, attributes=["reqType", "reqDN", "reqMod"])
    assert any(found["raw_attributes"].get("reqMod") for found in admin.response)  # values
    assert service.search(CHANGE_LOG_BASE, logged, attributes=["*", "reqMod"]), service.result
    assert not any(found["raw_attributes"].get("reqMod") for found in service.response)
    records = sorted((str(e.reqEntryUUID), e.reqDN.value) for e in service.entries)
    assert records == sorted(
        [
            (ids[gone], f"uid={gone},{slapd.users_base}"),
            (ids[old], f"uid={old},{slapd.users_base}"),
        ]
    )
    anonymous = Connection(Server(slapd.url))
    assert anonymous.bind()
    anonymous.search(CHANGE_LOG_BASE, "(objectClass=*)")
    assert anonymous.entries == []
    anonymous.unbind()


def config_lines(instance: SlapdInstance) -> list[str]:
    return [line.strip() for line in instance.config_file.read_text(encoding="utf-8").splitlines()]


def test_a_new_database_has_64_bit_index_keys_an_older_one_keeps_its_own(tmp_path: Path) -> None:
    """64-bit keys are set before the database is made; a folder whose database was made
    without them (by an earlier version) starts without them, and its index still works."""
    with SlapdInstance(directory=tmp_path / "new") as new:
        lines = config_lines(new)
        assert "index_hash64 on" in lines
        assert lines.index("index_hash64 on") < lines.index("backend mdb")
        conn = connect(new, new.admin_dn, new.admin_password)
        assert conn.search(new.users_base, "(uid=alice)", attributes=["uid"]), conn.result
        assert [e.uid.value for e in conn.entries] == ["alice"]
        conn.unbind()
    older = tmp_path / "older"
    with SlapdInstance(directory=older):
        pass
    (older / ".index-hash64").unlink()  # as a folder made before 64-bit keys is
    (older / "data").mkdir(exist_ok=True)
    with SlapdInstance(directory=older) as reused:
        assert "index_hash64 on" not in config_lines(reused)


def test_restart_and_kill_keep_port_and_data() -> None:
    with SlapdInstance() as instance:
        port, first_pid = instance.port, instance.pid
        conn = connect(instance, instance.admin_dn, instance.admin_password)
        dn = f"uid=persist,{instance.users_base}"
        assert conn.add(dn, attributes=person("persist")), conn.result
        conn.unbind()

        instance.restart()
        assert instance.port == port and instance.pid != first_pid
        instance.kill()
        assert first_pid is not None and process_gone(first_pid) and port_closed(port)
        instance.start()
        assert instance.port == port

        conn = connect(instance, instance.admin_dn, instance.admin_password)
        assert conn.search(dn, "(objectClass=*)", BASE, attributes=["uid"]), conn.result
        assert conn.entries[0].uid.value == "persist"
        # The seed is loaded once, not again on restart.
        assert conn.search(instance.users_base, "(uid=alice)", attributes=["uid"])
        assert len(conn.entries) == 1
        conn.unbind()


def test_service_account_writes_people_and_groups_only(
    slapd: SlapdInstance, service: Connection
) -> None:
    uid = unique("acl")
    user_dn = f"uid={uid},{slapd.users_base}"
    group_dn = f"cn={uid},{slapd.groups_base}"
    assert service.add(user_dn, attributes=person(uid)), service.result
    assert service.modify(user_dn, {"mail": [(MODIFY_ADD, [f"{uid}@example.net"])]})
    assert service.modify_dn(user_dn, f"uid={uid}-renamed"), service.result
    user_dn = f"uid={uid}-renamed,{slapd.users_base}"
    assert service.add(
        group_dn,
        attributes={"objectClass": ["groupOfNames"], "cn": uid, "member": [slapd.placeholder_dn]},
    ), service.result
    assert service.search(slapd.placeholder_dn, "(objectClass=*)", BASE), service.result
    assert service.search(slapd.users_base, f"(uid={uid}-renamed)", attributes=["entryUUID"]), (
        service.result
    )
    assert service.entries[0].entryUUID.value

    refused = [
        service.modify(slapd.base_dn, {"description": [(MODIFY_REPLACE, ["x"])]}),
        service.modify(slapd.users_base, {"description": [(MODIFY_REPLACE, ["x"])]}),
        service.modify(slapd.services_base, {"description": [(MODIFY_REPLACE, ["x"])]}),
        service.modify(slapd.placeholder_dn, {"description": [(MODIFY_REPLACE, ["x"])]}),
        service.add(
            f"cn={uid},{slapd.services_base}",
            attributes={"objectClass": ["organizationalRole"], "cn": uid},
        ),
        service.add(
            f"ou={uid},{slapd.base_dn}",
            attributes={"objectClass": ["organizationalUnit"], "ou": uid},
        ),
        service.delete(slapd.placeholder_dn),
    ]
    assert refused == [False] * len(refused)
    assert service.result["result"] == INSUFFICIENT_ACCESS

    # unique: a second entry with the same uid under the people base is refused.
    clash = dict(person(f"{uid}-renamed"), objectClass=["inetOrgPerson"])
    assert not service.add(f"cn={uid} clash,{slapd.users_base}", attributes=clash)
    assert service.result["result"] == CONSTRAINT_VIOLATION

    assert service.delete(group_dn) and service.delete(user_dn), service.result


def test_anonymous_can_only_authenticate(slapd: SlapdInstance) -> None:
    anonymous = connect(slapd)
    assert not anonymous.search(slapd.base_dn, "(objectClass=*)")
    assert anonymous.entries == []
    anonymous.unbind()


def test_password_bind_and_administrative_lock(
    slapd: SlapdInstance, service: Connection, admin: Connection
) -> None:
    uid = unique("lock")
    dn = f"uid={uid},{slapd.users_base}"
    assert service.add(dn, attributes=person(uid, "first-password")), service.result
    assert can_bind(slapd, dn, "first-password")
    assert not can_bind(slapd, dn, "wrong-password")
    # ppolicy_hash_cleartext: stored hashed; the service cannot read it back.
    admin.search(dn, "(objectClass=*)", BASE, attributes=["userPassword"])
    assert admin.entries[0].userPassword.raw_values[0].startswith(b"{SSHA}")
    service.search(dn, "(objectClass=*)", BASE, attributes=["userPassword"])
    assert not service.response[0]["raw_attributes"].get("userPassword")

    # Disable (active=false): a plain modify by the service account, no control needed.
    assert service.modify(dn, {"pwdAccountLockedTime": [(MODIFY_REPLACE, [LOCKED])]}), (
        service.result
    )
    assert not can_bind(slapd, dn, "first-password")
    service.search(dn, "(pwdAccountLockedTime=*)", BASE, attributes=["pwdAccountLockedTime"])
    assert len(service.entries) == 1
    # Re-enable (active=true): delete the attribute.
    assert service.modify(dn, {"pwdAccountLockedTime": [(MODIFY_DELETE, [])]}), service.result
    assert can_bind(slapd, dn, "first-password")

    # RFC 3062 password modify by the service account; the policy refuses short passwords.
    assert service.extend.standard.modify_password(dn, new_password="second-password")
    assert can_bind(slapd, dn, "second-password")
    assert not service.modify(dn, {"userPassword": [(MODIFY_REPLACE, ["short"])]})
    assert service.result["result"] == CONSTRAINT_VIOLATION
    assert service.delete(dn), service.result


def test_failed_binds_lock_users_but_never_the_service_account(
    slapd: SlapdInstance, service: Connection
) -> None:
    uid = unique("failures")
    dn = f"uid={uid},{slapd.users_base}"
    assert service.add(dn, attributes=person(uid, "user-password")), service.result
    for _ in range(6):
        assert not can_bind(slapd, dn, "wrong-password")
        assert not can_bind(slapd, slapd.service_dn, "wrong-password")
    assert not can_bind(slapd, dn, "user-password")  # temporary ppolicy lockout
    service.search(dn, "(objectClass=*)", BASE, attributes=["pwdAccountLockedTime"])
    assert service.entries[0].pwdAccountLockedTime.value != LOCKED  # a real timestamp
    assert can_bind(slapd, slapd.service_dn, slapd.service_password)
    assert service.delete(dn), service.result


def test_memberof_and_refint(slapd: SlapdInstance, service: Connection) -> None:
    uid = unique("member")
    user_dn = f"uid={uid},{slapd.users_base}"
    group_dn = f"cn={uid},{slapd.groups_base}"
    assert service.add(user_dn, attributes=person(uid)), service.result
    assert service.add(
        group_dn, attributes={"objectClass": ["groupOfNames"], "cn": uid, "member": [user_dn]}
    ), service.result
    service.search(user_dn, "(objectClass=*)", BASE, attributes=["memberOf"])
    assert service.entries[0].memberOf.values == [group_dn]

    assert service.delete(user_dn), service.result
    # refint works in a background task of slapd: wait (bounded) until it has run.
    deadline = time.monotonic() + 10
    while True:
        service.search(group_dn, "(objectClass=*)", BASE, attributes=["member"])
        members = service.entries[0].member.values
        if members != [user_dn] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    # refint removed the deleted user; the emptied group holds the placeholder.
    assert members == [slapd.placeholder_dn]
    assert service.delete(group_dn), service.result


def test_sort_and_vlv_controls_are_offered(slapd: SlapdInstance) -> None:
    anonymous = connect(slapd)
    assert anonymous.search("", "(objectClass=*)", BASE, attributes=["supportedControl"])
    controls = anonymous.entries[0].supportedControl.values
    assert SORT_OID in controls and VLV_OID in controls
    anonymous.unbind()


def test_sort_by_uid_needs_an_explicit_ordering_rule(slapd: SlapdInstance) -> None:
    """uid and cn have no ORDERING rule: the sort key must name caseIgnoreOrderingMatch."""
    base = [
        "ldapsearch",
        "-x",
        "-LLL",
        "-H",
        slapd.url,
        "-D",
        slapd.service_dn,
        "-w",
        slapd.service_password,
        "-b",
        slapd.users_base,
        # Only the seeded samples: other tests share this directory and add their own users.
        "(|(uid=bob)(uid=alice))",
        "uid",
    ]
    env = dict(os.environ, LDAPNOINIT="1")
    without = subprocess.run(
        [*base, "-E", "!sss=uid"], capture_output=True, text=True, env=env, check=False
    )
    assert "No ordering rule" in without.stderr
    with_rule = subprocess.run(
        [*base, "-E", "!sss=uid:2.5.13.3", "-E", "!vlv=0/1/1/0"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        input="\n",
    )
    assert "vlvResult" in with_rule.stdout, with_rule.stderr
    assert 0 <= with_rule.stdout.index("uid: alice") < with_rule.stdout.index("uid: bob")


def test_slapadd_and_paged_search_beyond_sizelimit(tmp_path: Path) -> None:
    ldif = tmp_path / "bulk.ldif"
    with ldif.open("w") as out:
        for number in range(600):
            out.write(
                f"dn: uid=bulk{number:04d},ou=people,dc=example,dc=org\n"
                f"objectClass: inetOrgPerson\nuid: bulk{number:04d}\n"
                f"cn: Bulk {number}\nsn: Bulk\n\n"
            )
    with SlapdInstance() as instance:
        slapadd(instance, ldif)
        assert instance.running
        conn = connect(instance, instance.service_dn, instance.service_password)
        entries = conn.extend.standard.paged_search(
            instance.users_base,
            "(objectClass=inetOrgPerson)",
            attributes=["uid"],
            paged_size=200,
            generator=False,
        )
        found = [entry for entry in entries if entry["type"] == "searchResEntry"]
        assert len(found) == 602  # 600 bulk users + the two seeded ones
        conn.unbind()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_main_runs_in_foreground_until_signalled(tmp_path: Path, signum: int) -> None:
    directory = tmp_path / "fg"
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as errors:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "scim_core.testing.slapd",
                "--directory",
                str(directory),
                "--port",
                str(find_free_port()),
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
        )
    lines: queue.Queue[str] = queue.Queue()

    def read_lines() -> None:
        for line in proc.stdout or ():
            lines.put(line)

    reader = threading.Thread(target=read_lines, daemon=True)
    reader.start()
    try:
        settings: dict[str, str] = {}
        deadline = time.monotonic() + 15
        while len(settings) < 8 and time.monotonic() < deadline and proc.poll() is None:
            try:
                name, _, value = lines.get(timeout=0.2).rstrip("\n").partition("=")
            except queue.Empty:
                continue
            settings[name] = value
        assert list(settings) == [
            "LDAP_URL",
            "LDAP_USERS_BASE",
            "LDAP_GROUPS_BASE",
            "LDAP_ADMIN_DN",
            "LDAP_ADMIN_PASSWORD",
            "LDAP_SERVICE_DN",
            "LDAP_SERVICE_PASSWORD",
            "LDAP_PLACEHOLDER_DN",
        ], stderr.read_text()
        slapd_pid = int((directory / "slapd.pid").read_text())
        conn = Connection(
            Server(settings["LDAP_URL"], get_info=NONE),
            settings["LDAP_SERVICE_DN"],
            settings["LDAP_SERVICE_PASSWORD"],
        )
        assert conn.bind(), conn.result
        conn.unbind()
        proc.send_signal(signum)
        assert proc.wait(timeout=10) == 0, stderr.read_text()
        assert process_gone(slapd_pid)
        assert port_closed(int(settings["LDAP_URL"].rsplit(":", 1)[1]))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()


def test_peers_replicate_both_ways() -> None:
    """The multi-provider hook: two instances, each a syncrepl consumer of the other."""
    port_a, port_b = find_free_port(), find_free_port()
    first = SlapdInstance(port=port_a, server_id=1, peers=[f"ldap://127.0.0.1:{port_b}"])
    second = SlapdInstance(
        port=port_b, server_id=2, peers=[f"ldap://127.0.0.1:{port_a}"], seed=False
    )

    def wait_for(instance: SlapdInstance, uid: str) -> bool:
        conn = connect(instance, instance.admin_dn, instance.admin_password)
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if conn.search(instance.users_base, f"(uid={uid})", attributes=["uid"]):
                    return True
                time.sleep(0.05)
            return False
        finally:
            conn.unbind()

    try:
        first.start()
        second.start()
        assert wait_for(second, "alice")  # the seed of the first instance
        conn = connect(second, second.service_dn, second.service_password)
        assert conn.add(f"uid=carol,{second.users_base}", attributes=person("carol")), conn.result
        conn.unbind()
        assert wait_for(first, "carol")
    finally:
        first.close()  # stopping the second first makes its shutdown take 2.5 s
        second.close()
