"""``make bench-directories`` / ``python -m bench.directories``: the service on each directory.

For each directory (OpenLDAP, 389-DS, Samba AD), one after the other:

1. A throwaway directory from its launcher in ``scim_core/testing/`` (slapd, 389-DS, Samba DC).
2. The data set, as the directory's own shape: ``max(N, M)`` users ``bench00001``... and one
   group ``benchgroup`` holding the first M of them (M = 10,000 by default). OpenLDAP is loaded
   offline with ``slapadd`` (memberOf written into the LDIF, as ``bench/data.py`` does); 389-DS
   and Samba AD over LDAPS as the administrator with ldap3 (adds on a few connections, then the
   members in modifies of 1,000 values). The time each step takes is recorded.
3. The service under gunicorn with the production ``scim_flask.gunicorn_conf`` on 127.0.0.1
   (``SCIM_*`` environment from the launcher's ``service_settings()``; bench/servers.py).
4. Checks before measuring: every user of the filter pool is found (200, one result, the right
   ``userName``), and ``GET /Groups/benchgroup`` answers 200 with all M members.
5. Filtered GET: ``GET /Users?filter=userName eq "<existing user>"`` (distinct users from the
   first N), 16 connections with wrk: a warm-up, then 3 bounded rounds; medians of req/s, p50
   and p99, with the service's and the directory's CPU per request.
6. The big group: ``GET /Groups/benchgroup`` (members included), 20 sequential requests with
   one client (each answer checked: 200 and M members); median and p90 in ms, response size.

The table is printed and written with the JSON to ``bench/results/directories.{md,json}``.
``--smoke`` runs the same code with 100 users, a group of 50, short rounds and the Python load
generator (no wrk), in well under a minute per directory, to a temporary folder.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import math
import os
import secrets
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

if __package__ in (None, ""):  # run as a script: python bench/directories.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ldap3 import BASE, MODIFY_ADD, NONE, Connection, Server, Tls
from ldap3.core.exceptions import (
    LDAPAttributeOrValueExistsResult,
    LDAPCommunicationError,
    LDAPEntryAlreadyExistsResult,
)

from bench import report
from bench.data import names_of
from bench.load import LoadResult, run_python, run_wrk, write_requests
from bench.run import ensure_wrk, machine_info
from bench.servers import ROOT, Gunicorn, children, cpu_seconds
from scim_core.testing.slapd import SlapdInstance, find_free_port, slapadd

__all__ = ["DIRECTORIES", "FULL", "SMOKE", "Config", "main", "run"]

SCIM = "/scim/v2"
GROUP_CN = "benchgroup"
MAIL_DOMAIN = "example.org"
_INET_ORG_PERSON = ("top", "person", "organizationalPerson", "inetOrgPerson")
_AD_USER = ("top", "person", "organizationalPerson", "user")
#: A global security group (ADS_GROUP_TYPE_GLOBAL_GROUP | ADS_GROUP_TYPE_SECURITY_ENABLED).
_AD_GLOBAL_SECURITY = -2147483646
#: Users added per block after the first ones (each block's add rate is reported).
_RATE_BLOCK = 2_000
#: An enabled normal account (ADS_UF_NORMAL_ACCOUNT); Samba accepts it without a password.
_AD_NORMAL_ACCOUNT = 512


@dataclass(frozen=True)
class Config:
    """Sizes, timings and bounds of one run."""

    users: int = 2_000  # N: the filtered GET addresses users among the first N
    members: int = 10_000  # M: the group's size; max(N, M) users are made
    rounds: int = 3
    duration_s: float = 5.0
    warmup_s: float = 2.0
    connections: int = 16
    pool: int = 500  # distinct users the filtered GET cycles through
    group_requests: int = 20
    group_warmup: int = 2
    group_limit_s: float = 180.0  # the sequential group reads stop there
    load_connections: int = 4  # LDAP connections adding entries (389-DS, AD)
    member_batch: int = 1_000  # member values per modify
    probe_users: int = 300  # the first adds, timed alone: the rate is reported early
    load_limit_s: float = 1_200.0  # loading one directory stops there (error)
    generator: str = "wrk"
    smoke: bool = False


FULL = Config()
SMOKE = Config(
    users=100,
    members=50,
    rounds=1,
    duration_s=1.0,
    warmup_s=0.5,
    connections=4,
    pool=50,
    group_requests=5,
    group_warmup=1,
    group_limit_s=30.0,
    probe_users=50,
    load_limit_s=120.0,
    generator="python",
    smoke=True,
)

_started = time.monotonic()


def say(message: str) -> None:
    """Progress on standard error, with the seconds since start."""
    print(f"[{time.monotonic() - _started:6.1f}s] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ directories


class Launcher(Protocol):
    """What this benchmark uses of a throwaway directory (SlapdInstance, DirsrvInstance,
    SambaDcInstance)."""

    @property
    def dialect(self) -> str:
        """The service's directory profile (``SCIM_LDAP_DIALECT``)."""

    @property
    def url(self) -> str:
        """The URL the service uses (``ldaps://`` for 389-DS and AD)."""

    @property
    def users_base(self) -> str:
        """Where users live."""

    @property
    def groups_base(self) -> str:
        """Where groups live."""

    @property
    def admin_dn(self) -> str:
        """The administrator the data set is loaded as."""

    @property
    def admin_password(self) -> str:
        """The administrator's password."""

    @property
    def ca_file(self) -> Path | None:
        """The CA verifying :attr:`url` (None for a plain ``ldap://`` slapd)."""

    @property
    def pid(self) -> int | None:
        """The directory's main process, while running."""

    @property
    def log_file(self) -> Path:
        """The directory server's own output (its error log)."""

    def start(self) -> object:
        """Start the directory (and seed its base entries)."""

    def close(self) -> None:
        """Stop the directory and remove its files."""

    def service_settings(self) -> dict[str, str]:
        """The ``SCIM_LDAP_*`` environment of the service."""


def _openldap() -> Launcher:
    return SlapdInstance(sssvlv_max=64, sssvlv_maxperconn=8)


def _dirsrv() -> Launcher:
    # Imported here: a missing or broken 389 launcher fails its own row only.
    from scim_core.testing.dirsrv import DirsrvInstance

    return DirsrvInstance()


def _samba() -> Launcher:
    from scim_core.testing.samba import SambaDcInstance

    return SambaDcInstance()


@dataclass(frozen=True)
class Directory:
    """One kind of directory: its launcher and the shape of its entries."""

    key: str
    label: str
    launcher: Callable[[], Launcher]
    active_directory: bool  # AD entries (user/group, CN=, userPrincipalName) else inetOrgPerson
    package: str  # the Debian package whose version is reported


DIRECTORIES: dict[str, Directory] = {
    d.key: d
    for d in (
        Directory("openldap", "OpenLDAP", _openldap, False, "slapd"),
        Directory("389ds", "389-DS", _dirsrv, False, "389-ds-base"),
        Directory("ad", "Samba AD", _samba, True, "samba"),
    )
}


# ------------------------------------------------------------------ the data set


def user_name(index: int) -> str:
    """The name of the ``index``-th benchmark user (1-based): ``bench00042``."""
    return f"bench{index:05d}"


def scim_user_name(directory: Directory, index: int) -> str:
    """The SCIM ``userName`` the service shows for that user (AD: the userPrincipalName)."""
    name = user_name(index)
    return f"{name}@{MAIL_DOMAIN}" if directory.active_directory else name


def user_dn(directory: Directory, launcher: Launcher, index: int) -> str:
    """The DN of the ``index``-th user in ``launcher``."""
    rdn = "CN" if directory.active_directory else "uid"
    return f"{rdn}={user_name(index)},{launcher.users_base}"


def group_dn(directory: Directory, launcher: Launcher) -> str:
    """The DN of the benchmark group."""
    rdn = "CN" if directory.active_directory else "cn"
    return f"{rdn}={GROUP_CN},{launcher.groups_base}"


Entry = tuple[str, tuple[str, ...], dict[str, Any]]
"""(DN, object classes, attributes) of one entry to add."""


def user_entry(directory: Directory, launcher: Launcher, index: int) -> Entry:
    """The ``index``-th user as the directory's own tools would make it."""
    name = user_name(index)
    given, family = names_of(index)
    mail = f"{name}@{MAIL_DOMAIN}"
    dn = user_dn(directory, launcher, index)
    if directory.active_directory:
        return (
            dn,
            _AD_USER,
            {
                "sAMAccountName": name,
                "userPrincipalName": mail,
                "userAccountControl": _AD_NORMAL_ACCOUNT,
                "givenName": given,
                "sn": family,
                "mail": mail,
            },
        )
    attributes = {"uid": name, "cn": f"{given} {family}", "sn": family, "givenName": given}
    attributes["mail"] = mail
    return dn, _INET_ORG_PERSON, attributes


def group_entry(directory: Directory, launcher: Launcher) -> Entry:
    """The benchmark group, empty (members are added in batches)."""
    if directory.active_directory:
        attributes: dict[str, Any] = {
            "sAMAccountName": GROUP_CN,
            "groupType": _AD_GLOBAL_SECURITY,
        }
        return group_dn(directory, launcher), ("top", "group"), attributes
    return group_dn(directory, launcher), ("top", "groupOfNames"), {"cn": GROUP_CN}


@dataclass
class Loaded:
    """What loading one directory did, and how long it took."""

    method: str
    users: int
    members: int
    users_s: float
    group_s: float
    total_s: float
    probe: str = ""
    rates: list[str] = field(default_factory=list)
    retries: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        users_rate = self.users / self.users_s if self.users_s else None
        members_rate = self.members / self.group_s if self.group_s else None
        return {
            "method": self.method,
            "users": self.users,
            "members": self.members,
            "users_s": round(self.users_s, 2),
            "users_per_s": round(users_rate, 1) if users_rate else None,
            "group_s": round(self.group_s, 2),
            "members_per_s": round(members_rate, 1) if members_rate else None,
            "total_s": round(self.total_s, 2),
            "probe": self.probe,
            "rates": self.rates,
            "retries": self.retries,
            "checks": self.checks,
        }


class _VerifiedTls(Tls):  # type: ignore[misc]  # ldap3 has no type information
    """ldap3's Tls with the server's name checked by OpenSSL in the handshake (ldap3 2.9's own
    check calls the deprecated ``ssl.match_hostname``)."""

    def wrap_socket(self, connection: Connection, do_handshake: bool = False) -> None:
        context = ssl.create_default_context(cafile=self.ca_certs_file)
        connection.socket = context.wrap_socket(
            connection.socket,
            server_side=False,
            do_handshake_on_connect=do_handshake,
            server_hostname=connection.server.host,
        )


def admin_connection(launcher: Launcher) -> Connection:
    """A bound ldap3 connection as the administrator; ``ldaps://`` verified with the CA file."""
    url = launcher.url
    if url.startswith("ldaps://"):
        ca_file = launcher.ca_file
        tls = _VerifiedTls(
            validate=ssl.CERT_REQUIRED, ca_certs_file=str(ca_file) if ca_file else None
        )
        server = Server(url, use_ssl=True, tls=tls, get_info=NONE, connect_timeout=10)
    else:
        server = Server(url, get_info=NONE, connect_timeout=10)
    return Connection(
        server,
        user=launcher.admin_dn,
        password=launcher.admin_password,
        auto_bind=True,
        raise_exceptions=True,
        receive_timeout=300,
        check_names=False,
    )


class Admin:
    """An administrator connection that, when the server drops it in an operation, connects
    again and repeats the operation once (an LDAP add or modify is atomic: an "already there"
    answer to the repeat means the first one was applied). Each retry is noted in ``notes``."""

    def __init__(self, launcher: Launcher, notes: list[str]) -> None:
        self.launcher = launcher
        self.notes = notes
        self.connection = admin_connection(launcher)

    def _retry(
        self, what: str, operation: Callable[[Connection], object], already: type[Exception]
    ) -> None:
        try:
            operation(self.connection)
            return
        except LDAPCommunicationError as error:
            self.notes.append(f"{what}: {type(error).__name__} ({error}); connected again")
            with contextlib.suppress(Exception):
                self.connection.unbind()
        self.connection = admin_connection(self.launcher)
        try:
            operation(self.connection)
        except already:
            self.notes[-1] += ", the repeat found it done"
        else:
            self.notes[-1] += ", the repeat succeeded"

    def add(self, entry: Entry) -> None:
        """Add one entry."""
        dn, classes, attributes = entry
        self._retry(
            f"add {dn}",
            lambda c: c.add(dn, list(classes), attributes),
            LDAPEntryAlreadyExistsResult,
        )

    def add_values(self, dn: str, attribute: str, values: list[str]) -> None:
        """Add values to one attribute of an entry in one modify."""
        self._retry(
            f"modify {dn} (+{len(values)} {attribute})",
            lambda c: c.modify(dn, {attribute: [(MODIFY_ADD, values)]}),
            LDAPAttributeOrValueExistsResult,
        )

    def close(self) -> None:
        """Unbind."""
        with contextlib.suppress(Exception):
            self.connection.unbind()


def add_entries(
    launcher: Launcher,
    entries: Sequence[Entry],
    connections: int,
    deadline: float,
    notes: list[str],
) -> None:
    """Add ``entries`` on ``connections`` administrator connections side by side (chunks of 50
    per task); stop at the first error or at ``deadline`` (monotonic), raising it."""
    if not entries:
        return
    chunks = [entries[i : i + 50] for i in range(0, len(entries), 50)]
    local = threading.local()
    opened: list[Admin] = []
    lock = threading.Lock()
    stop = threading.Event()

    def work(chunk: Sequence[Entry]) -> None:
        admin = getattr(local, "admin", None)
        if admin is None:
            admin = Admin(launcher, notes)
            local.admin = admin
            with lock:
                opened.append(admin)
        for entry in chunk:
            if stop.is_set():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"loading stopped at {entry[0]}: the time limit is reached")
            admin.add(entry)

    pool = ThreadPoolExecutor(max_workers=max(1, connections), thread_name_prefix="ldap-add")
    try:
        futures: list[Future[None]] = [pool.submit(work, chunk) for chunk in chunks]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in done:
            error = future.exception()
            if error is not None:
                stop.set()
                raise error
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        for admin in opened:
            admin.close()


def load_slapadd(
    directory: Directory, slapd: SlapdInstance, workdir: Path, total: int, members: int
) -> Loaded:
    """OpenLDAP: one LDIF with the users (memberOf written in, as slapadd runs no overlay) and
    the group, bulk-loaded offline with ``slapadd`` (slapd is stopped and started again)."""
    started = time.monotonic()
    ldif = workdir / f"{directory.key}-bench.ldif"
    group = group_dn(directory, slapd)
    with ldif.open("w", encoding="utf-8") as out:
        for index in range(1, total + 1):
            dn, classes, attributes = user_entry(directory, slapd, index)
            out.write(f"dn: {dn}\n")
            out.writelines(f"objectClass: {c}\n" for c in classes)
            out.writelines(f"{name}: {value}\n" for name, value in attributes.items())
            if index <= members:
                out.write(f"memberOf: {group}\n")
            out.write("\n")
        dn, classes, attributes = group_entry(directory, slapd)
        out.write(f"dn: {dn}\n")
        out.writelines(f"objectClass: {c}\n" for c in classes)
        out.writelines(f"{name}: {value}\n" for name, value in attributes.items())
        out.writelines(f"member: {user_dn(directory, slapd, i)}\n" for i in range(1, members + 1))
        out.write("\n")
    size = ldif.stat().st_size
    slapadd(slapd, ldif)
    ldif.unlink()
    seconds = time.monotonic() - started
    return Loaded(
        method=f"slapadd, offline (one {_size(size)} LDIF; users and group together)",
        users=total,
        members=members,
        users_s=seconds,
        group_s=0.0,
        total_s=seconds,
    )


def load_ldap(
    directory: Directory, launcher: Launcher, config: Config, total: int, members: int
) -> Loaded:
    """389-DS and AD: the users added over LDAP(S) as the administrator on
    ``config.load_connections`` connections (the first ``probe_users`` timed alone), then the
    group, empty, and its members in modifies of ``config.member_batch`` values."""
    started = time.monotonic()
    deadline = started + config.load_limit_s
    entries = [user_entry(directory, launcher, i) for i in range(1, total + 1)]
    probe = min(config.probe_users, total)
    notes: list[str] = []
    add_entries(launcher, entries[:probe], config.load_connections, deadline, notes)
    probe_s = time.monotonic() - started
    rate = probe / probe_s if probe_s else float("inf")
    note = (
        f"first {probe} users in {probe_s:.1f} s ({rate:.0f}/s): "
        f"{total:,} users projected at {total / rate:.0f} s"
    )
    say(f"{directory.key}: {note}")
    # The rest in blocks, each block's rate kept: the add rate falls as the directory grows.
    rates = [f"1-{probe}: {rate:.0f}/s"]
    for first in range(probe, total, _RATE_BLOCK):
        block = entries[first : first + _RATE_BLOCK]
        began = time.monotonic()
        add_entries(launcher, block, config.load_connections, deadline, notes)
        block_rate = len(block) / max(time.monotonic() - began, 1e-9)
        rates.append(f"{first + 1}-{first + len(block)}: {block_rate:.0f}/s")
        say(f"{directory.key}: users {rates[-1]}")
    users_s = time.monotonic() - started
    say(f"{directory.key}: {total:,} users added in {users_s:.1f} s ({total / users_s:.0f}/s)")
    group_started = time.monotonic()
    admin = Admin(launcher, notes)
    try:
        entry = group_entry(directory, launcher)
        admin.add(entry)
        for start in range(1, members + 1, config.member_batch):
            if time.monotonic() > deadline:
                raise TimeoutError(f"loading stopped at member {start}: the time limit is reached")
            end = min(start + config.member_batch, members + 1)
            values = [user_dn(directory, launcher, i) for i in range(start, end)]
            admin.add_values(entry[0], "member", values)
    finally:
        admin.close()
    group_s = time.monotonic() - group_started
    say(f"{directory.key}: {members:,} members added in {group_s:.1f} s")
    connections = config.load_connections
    return Loaded(
        method=(
            f"LDAP adds as {launcher.admin_dn.split(',')[0]} over "
            f"{urlsplit(launcher.url).scheme}, {connections} connection"
            f"{'s' if connections != 1 else ''}; members in modifies of {config.member_batch:,}"
        ),
        users=total,
        members=members,
        users_s=users_s,
        group_s=group_s,
        total_s=time.monotonic() - started,
        probe=note,
        rates=rates,
        retries=notes,
    )


def check_directory(directory: Directory, launcher: Launcher, loaded: Loaded) -> None:
    """The group's member values as the administrator reads them (ranged retrieval followed)."""
    connection = admin_connection(launcher)
    try:
        dn = group_dn(directory, launcher)
        connection.search(dn, "(objectClass=*)", search_scope=BASE, attributes=["member"])
        entries = [e for e in connection.response or () if e.get("type") == "searchResEntry"]
        values = (entries[0]["attributes"].get("member") or []) if entries else []
    finally:
        connection.unbind()
    if len(values) != loaded.members:
        raise RuntimeError(
            f"{directory.key}: the group holds {len(values):,} member values in the directory, "
            f"expected {loaded.members:,}"
        )
    loaded.checks.append(f"the group holds {len(values):,} member values in the directory")


# ------------------------------------------------------------------ measuring


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return []


def tree_cpu_seconds(pid: int | None) -> float:
    """CPU seconds of ``pid`` and every descendant (Samba forks its LDAP workers), reaped
    children included."""
    if pid is None:
        return 0.0
    total, seen, stack = 0.0, set(), [pid]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        total += cpu_seconds(current, with_children=True)
        stack.extend(children(current))
    return total


def settle(pid: int | None, limit_s: float = 60.0) -> str:
    """Wait until the directory's processes use under 5 % of a core over one second (a
    directory may still index after the load), at most ``limit_s``; say how it went."""
    began = time.monotonic()
    while True:
        before = tree_cpu_seconds(pid)
        time.sleep(1.0)
        busy = tree_cpu_seconds(pid) - before
        waited = time.monotonic() - began
        if busy < 0.05:
            return f"directory idle after {waited:.0f} s"
        if waited > limit_s:
            return f"directory still busy ({busy:.0%} of a core) after {waited:.0f} s"


def percentile(values: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(1, math.ceil(percent / 100 * len(ordered))) - 1]


def get(base_url: str, target: str, token: str, timeout: float = 120.0) -> tuple[int, bytes, float]:
    """One GET on a fresh connection: (status, body bytes, seconds until the body is read)."""
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(
        parts.hostname or "127.0.0.1", parts.port, timeout=timeout
    )
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/scim+json"}
    try:
        started = time.perf_counter()
        connection.request("GET", target, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        elapsed = time.perf_counter() - started
    finally:
        connection.close()
    return response.status, raw, elapsed


def filter_path(name: str) -> str:
    """``/Users?filter=userName eq "<name>"``, percent-encoded."""
    return f"{SCIM}/Users?filter=" + quote(f'userName eq "{name}"', safe="")


def group_path() -> str:
    """``/Groups/benchgroup`` (members included)."""
    return f"{SCIM}/Groups/{quote(GROUP_CN, safe='')}"


def pool_indexes(users: int, size: int) -> list[int]:
    """``size`` users spread evenly over the first ``users``."""
    size = max(1, min(size, users))
    step = users / size
    return sorted({min(users, 1 + int(k * step)) for k in range(size)})


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def member_problem(status: int, raw: bytes, members: int) -> str | None:
    """None when a group answer is 200 with ``members`` distinct members, else what is wrong."""
    if status != 200:
        return f"status {status}: {raw[:300]!r}"
    body = _decode(raw)
    listed = body.get("members") if isinstance(body, dict) else None
    if not isinstance(listed, list):
        return f"no members list: {raw[:300]!r}"
    distinct = {m.get("value") for m in listed if isinstance(m, dict)}
    if len(listed) != members or len(distinct) != members:
        return f"{len(listed):,} members ({len(distinct):,} distinct), expected {members:,}"
    return None


class Measurer:
    """The two measurements of one directory behind one gunicorn."""

    def __init__(
        self,
        config: Config,
        directory: Directory,
        service: Gunicorn,
        directory_pid: int | None,
        token: str,
        workdir: Path,
    ) -> None:
        self.config = config
        self.directory = directory
        self.service = service
        self.directory_pid = directory_pid
        self.token = token
        self.workdir = workdir
        self.problems: list[str] = []

    def check_filter(self, indexes: Sequence[int]) -> int:
        """Ask for every user of the pool once; each answer must be 200 with exactly that user.
        Returns the number checked (problems are kept in :attr:`problems`)."""
        wrong = 0
        for index in indexes:
            expected = scim_user_name(self.directory, index)
            status, raw, _ = get(self.service.base_url, filter_path(expected), self.token)
            body = _decode(raw)
            if not isinstance(body, dict):
                body = {}
            found = [r.get("userName") for r in body.get("Resources") or () if isinstance(r, dict)]
            if status != 200 or body.get("totalResults") != 1 or found != [expected]:
                wrong += 1
                if wrong <= 3:
                    self.problems.append(f"filter check {expected}: status {status}, {raw[:200]!r}")
        if wrong:
            self.problems.append(f"filter check: {wrong} of {len(indexes)} answers wrong")
        return len(indexes)

    def _load(self, file: Path, seconds: float) -> LoadResult:
        generate = run_wrk if self.config.generator == "wrk" else run_python
        app_before = self.service.cpu_seconds()
        directory_before = tree_cpu_seconds(self.directory_pid)
        result = generate(
            self.service.base_url, file, self.token, "d", self.config.connections, seconds
        )
        if result.requests:
            app = self.service.cpu_seconds() - app_before
            directory = tree_cpu_seconds(self.directory_pid) - directory_before
            result.app_cpu_ms = app * 1000 / result.requests
            result.slapd_cpu_ms = directory * 1000 / result.requests  # the directory's CPU
        return result

    def filtered_get(self, indexes: Sequence[int]) -> dict[str, Any]:
        """Warm-up, then ``rounds`` bounded runs of the filtered GET; medians."""
        config = self.config
        requests = [("GET", filter_path(scim_user_name(self.directory, i)), None) for i in indexes]
        file = write_requests(self.workdir / f"{self.directory.key}.filter.req", requests)
        self._load(file, config.warmup_s)
        rounds = [self._load(file, config.duration_s) for _ in range(config.rounds)]
        errors = sum(r.errors for r in rounds)
        status_errors = sum(r.status_errors for r in rounds)
        if errors:
            self.problems.append(
                f"filtered GET: {errors} errors under load ({status_errors} non-2xx/3xx answers)"
            )
        app = [r.app_cpu_ms for r in rounds if r.app_cpu_ms is not None]
        directory = [r.slapd_cpu_ms for r in rounds if r.slapd_cpu_ms is not None]
        result = {
            "connections": config.connections,
            "pool": len(indexes),
            "rps": statistics.median(r.rps for r in rounds),
            "p50_ms": statistics.median(r.p50_ms for r in rounds),
            "p90_ms": statistics.median(r.p90_ms for r in rounds),
            "p99_ms": statistics.median(r.p99_ms for r in rounds),
            "max_ms": max(r.max_ms for r in rounds),
            "app_cpu_ms": statistics.median(app) if app else None,
            "directory_cpu_ms": statistics.median(directory) if directory else None,
            "requests": sum(r.requests for r in rounds),
            "errors": errors,
            "status_errors": status_errors,
            "rounds": [_round(r) for r in rounds],
        }
        say(
            f"{self.directory.key}: filtered GET {result['rps']:,.0f} req/s, p50 "
            f"{result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms"
            + (f", {errors} ERRORS" if errors else "")
        )
        return result

    def group_get(self, members: int) -> dict[str, Any]:
        """``group_warmup`` unmeasured reads, then up to ``group_requests`` sequential reads of
        the whole group with one client (stopping at ``group_limit_s``), each checked."""
        config = self.config
        base, target = self.service.base_url, group_path()
        for _ in range(config.group_warmup):
            get(base, target, self.token)
        times: list[float] = []
        sizes: list[int] = []
        wrong = 0
        app_before = self.service.cpu_seconds()
        directory_before = tree_cpu_seconds(self.directory_pid)
        started = time.monotonic()
        stopped = None
        for _ in range(config.group_requests):
            status, raw, elapsed = get(base, target, self.token)
            times.append(elapsed)
            sizes.append(len(raw))
            problem = member_problem(status, raw, members)
            if problem:
                wrong += 1
                if wrong <= 3:
                    self.problems.append(f"group read: {problem}")
            if time.monotonic() - started > config.group_limit_s:
                stopped = f"stopped after {config.group_limit_s:.0f} s"
                break
        app = self.service.cpu_seconds() - app_before
        directory = tree_cpu_seconds(self.directory_pid) - directory_before
        if wrong:
            self.problems.append(f"group read: {wrong} of {len(times)} answers wrong")
        result: dict[str, Any] = {
            "members": members,
            "requests": len(times),
            "p50_ms": statistics.median(times) * 1000,
            "p90_ms": percentile(times, 90) * 1000,
            "min_ms": min(times) * 1000,
            "max_ms": max(times) * 1000,
            "bytes": statistics.median(sizes),
            "app_cpu_ms": app * 1000 / len(times),
            "directory_cpu_ms": directory * 1000 / len(times),
            "wrong_answers": wrong,
            "stopped": stopped,
        }
        say(
            f"{self.directory.key}: group of {members:,}: p50 {result['p50_ms']:.0f} ms, p90 "
            f"{result['p90_ms']:.0f} ms, {_size(result['bytes'])}"
            + (f", {wrong} WRONG answers" if wrong else "")
        )
        return result


# ------------------------------------------------------------------ one directory


def _round(result: LoadResult) -> dict[str, Any]:
    """One round's figures (LoadResult's ``slapd_cpu_ms`` holds the directory's CPU here)."""
    figures = result.as_dict()
    figures["directory_cpu_ms"] = figures.pop("slapd_cpu_ms")
    return figures


def _server_env(settings: dict[str, str], token: str) -> dict[str, str]:
    # Nothing SCIM_* leaks in from the caller: the service runs with its defaults (log level
    # INFO included) and the launcher's directory settings, as in bench/run.py.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCIM_")}
    env.update(settings)
    env["SCIM_TOKENS_SHA256"] = "bench=" + hashlib.sha256(token.encode()).hexdigest()
    return env


def measure_directory(
    directory: Directory, config: Config, workdir: Path, keep: bool
) -> dict[str, Any]:
    """Start the directory, load it, start gunicorn, check, measure; stop both again."""
    outcome: dict[str, Any] = {"label": directory.label, "ok": False}
    total = max(config.users, config.members)
    launcher: Launcher | None = None
    service: Gunicorn | None = None
    try:
        launcher = directory.launcher()
        outcome["dialect"] = launcher.dialect
        say(f"{directory.key}: starting {directory.label}")
        began = time.monotonic()
        launcher.start()
        outcome["start_s"] = round(time.monotonic() - began, 1)
        outcome["url"] = launcher.url
        say(
            f"{directory.key}: {launcher.url} up in {outcome['start_s']} s; loading "
            f"{total:,} users and a group of {config.members:,}"
        )
        if isinstance(launcher, SlapdInstance):
            loaded = load_slapadd(directory, launcher, workdir, total, config.members)
        else:
            loaded = load_ldap(directory, launcher, config, total, config.members)
        check_directory(directory, launcher, loaded)
        outcome["load"] = loaded.as_dict()
        say(f"{directory.key}: loaded in {loaded.total_s:.1f} s ({loaded.method})")
        token = secrets.token_urlsafe(24)
        env = _server_env(launcher.service_settings(), token)
        log = workdir / f"{directory.key}.service.log"
        service = Gunicorn(f"service-{directory.key}", find_free_port(), env, log)
        service.start()
        outcome["workers"] = len(service.workers())
        outcome["settle"] = settle(launcher.pid)
        outcome["load_average_start"] = load_average()
        measurer = Measurer(config, directory, service, launcher.pid, token, workdir)
        status, raw, _ = get(service.base_url, group_path(), token)
        problem = member_problem(status, raw, config.members)
        if problem:
            raise RuntimeError(f"{directory.key}: GET {group_path()}: {problem}")
        indexes = pool_indexes(config.users, config.pool)
        checked = measurer.check_filter(indexes)
        say(
            f"{directory.key}: checks: group answers 200 with {config.members:,} members; "
            f"{checked} filtered GETs checked"
            + (f"; PROBLEMS: {measurer.problems}" if measurer.problems else "")
        )
        outcome["filter"] = measurer.filtered_get(indexes)
        outcome["group"] = measurer.group_get(config.members)
        outcome["load_average_end"] = load_average()
        outcome["problems"] = measurer.problems
        outcome["service_log_warnings"] = _log_warnings(log)
        outcome["ok"] = not measurer.problems
    except Exception as error:  # one directory's failure is its row's, not the run's
        outcome["error"] = f"{type(error).__name__}: {error}"[:2000]
        if service is not None:
            outcome["service_log_tail"] = service.tail(10)
        if launcher is not None:
            outcome["directory_log_tail"] = _directory_log_tail(launcher.log_file)
        say(f"{directory.key}: FAILED: {outcome['error']}")
    finally:
        if service is not None:
            service.stop()
        if launcher is not None:
            say(f"{directory.key}: stopping {directory.label}")
            launcher.close()
    if keep:
        say(f"{directory.key}: service log kept in {workdir}")
    return outcome


def _directory_log_tail(log: Path, lines: int = 15) -> list[str]:
    """The last lines of the directory's log, without 389-DS's two lines per member added (its
    memberOf plugin adds ``nsMemberOf`` to each inetOrgPerson member and logs the repair)."""
    noise = ('"memberOf" not allowed', "repair operation succeeded", "SSL info")
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    kept = [line for line in text.splitlines() if not any(n in line for n in noise)]
    return kept[-lines:]


def _log_warnings(log: Path) -> int:
    """Lines of the service log at WARNING or above (a sign of trouble during the run)."""
    count = 0
    with contextlib.suppress(OSError):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if any(word in line for word in ('"WARNING"', '"ERROR"', "[ERROR]", "Traceback")):
                count += 1
    return count


def _package_version(package: str) -> str | None:
    """The installed Debian version of ``package`` (None when unknown)."""
    if not shutil.which("dpkg-query"):
        return None
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


# ------------------------------------------------------------------ report


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def markdown(results: dict[str, Any]) -> str:
    """The results as markdown: the measured figures, then the loading times."""
    machine, config = results["machine"], results["config"]
    average = " ".join(f"{x:.2f}" for x in results["load_average_start"])
    generator = config["generator"]
    lines = [
        f"# scim-ldap per directory, {results['date']}",
        "",
        f"Machine: {machine['cpu']} ({machine['cores']} cores), load average at start "
        f"{average}. Service: gunicorn `scim_flask.gunicorn_conf` on 127.0.0.1 "
        f"(sync workers, default log level INFO). N = {config['users']:,} users addressed by "
        f"the filter ({config['pool']} distinct, spread over them); the group has "
        f"{config['members']:,} members, so the directory holds "
        f"{max(config['users'], config['members']):,} benchmark users."
        + (" **Smoke run** (tiny sizes, figures meaningless)." if results["smoke"] else ""),
        "",
        f'Filtered GET: `GET /Users?filter=userName eq "…"`, {config["connections"]} '
        f"connections ({generator}), {config['warmup_s']:g} s warm-up then "
        f"{config['rounds']} x {config['duration_s']:g} s, medians of the rounds; CPU ms/req = "
        "all gunicorn workers + the directory's processes, per request. Group: "
        f"`GET /Groups/{GROUP_CN}` (members included), {config['group_requests']} sequential "
        "requests with one client after a warm-up, each checked (200, all members).",
        "",
        "| Directory | filtered GET req/s | p50 ms | p99 ms | CPU ms/req app + dir "
        "| group members | group GET p50 ms | p90 ms | response | CPU ms/req app + dir "
        "| errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, row in results["directories"].items():
        label = row.get("label", key)
        if "filter" not in row or "group" not in row:
            lines.append(f"| {label} | not measured (see notes) |" + " |" * 9)
            continue
        f, g = row["filter"], row["group"]
        problems = len(row.get("problems") or [])
        errors = f["errors"] + g["wrong_answers"]
        lines.append(
            f"| {label} | {f['rps']:,.0f} | {_ms(f['p50_ms'])} | {_ms(f['p99_ms'])} "
            f"| {_cpu(f)} | {g['members']:,} | {_ms(g['p50_ms'])} | {_ms(g['p90_ms'])} "
            f"| {_size(g['bytes'])} | {_cpu(g)} "
            f"| {errors if errors else ('none' if not problems else f'{problems} problems')} |"
        )
    lines += [
        "",
        "Loading (before the service starts):",
        "",
        "| Directory | version | how | users | users s (rate) | members s | total s |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, row in results["directories"].items():
        load = row.get("load")
        version = row.get("version") or "?"
        if not load:
            lines.append(f"| {row.get('label', key)} | {version} | not loaded |" + " |" * 4)
            continue
        rate = f" ({load['users_per_s']:,.0f}/s)" if load.get("users_per_s") else ""
        group = f"{load['group_s']:.1f}" if load["group_s"] else "(in the LDIF)"
        lines.append(
            f"| {row['label']} | {version} | {load['method']} | {load['users']:,} "
            f"| {load['users_s']:.1f}{rate} | {group} | {load['total_s']:.1f} |"
        )
    notes = []
    for key, row in results["directories"].items():
        label = row.get("label", key)
        if row.get("load_average_start"):
            average = " ".join(f"{x:.2f}" for x in row["load_average_start"])
            notes.append(f"- {label}: load average when its measurement began {average}.")
        if row.get("load", {}).get("probe"):
            rates = "; ".join(row["load"].get("rates") or ())
            notes.append(f"- {label} loading: {row['load']['probe']}; add rate by users {rates}.")
        retries = row.get("load", {}).get("retries") or []
        notes.extend(f"- {label} loading, connection dropped: {r}" for r in retries[:5])
        if len(retries) > 5:
            notes.append(f"- {label}: {len(retries) - 5} more dropped connections while loading")
        if row.get("settle") and not row["settle"].endswith("after 1 s"):
            notes.append(f"- {label}: {row['settle']}.")
        for problem in row.get("problems") or ():
            notes.append(f"- {label}: {problem}")
        if row.get("error"):
            notes.append(f"- {label}: **not measured**: {row['error']}")
        if row.get("service_log_warnings"):
            notes.append(
                f"- {label}: {row['service_log_warnings']} warning/error lines in the service log"
            )
    if notes:
        lines += ["", "Notes:", "", *notes]
    lines += ["", f"Command: `{results['command']}`; {results['seconds']:.0f} s in all."]
    return "\n".join(lines) + "\n"


def _size(size: float) -> str:
    return f"{size / 1e6:.2f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def _cpu(side: dict[str, Any]) -> str:
    if side.get("app_cpu_ms") is None or side.get("directory_cpu_ms") is None:
        return "-"
    return f"{side['app_cpu_ms']:.2f} + {side['directory_cpu_ms']:.2f}"


# ------------------------------------------------------------------ main


def run(
    config: Config, keys: Sequence[str], output: Path, keep: bool = False, command: str = ""
) -> dict[str, Any]:
    """Measure each directory of ``keys`` in turn; write and return the results."""
    workdir = Path(tempfile.mkdtemp(prefix="scim-bench-directories-"))
    results: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "smoke": config.smoke,
        "command": command,
        "machine": machine_info(config.generator),
        "load_average_start": load_average(),
        "config": {
            "users": config.users,
            "members": config.members,
            "pool": min(config.pool, config.users),
            "rounds": config.rounds,
            "duration_s": config.duration_s,
            "warmup_s": config.warmup_s,
            "connections": config.connections,
            "group_requests": config.group_requests,
            "load_connections": config.load_connections,
            "member_batch": config.member_batch,
            "generator": config.generator,
        },
        "directories": {},
    }
    wrk = results["machine"].get("wrk")
    if config.generator == "wrk" and wrk:
        results["config"]["generator"] = wrk
    try:
        for key in keys:
            directory = DIRECTORIES[key]
            row = measure_directory(directory, config, workdir, keep)
            row["version"] = _package_version(directory.package)
            results["directories"][key] = row
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    results["seconds"] = round(time.monotonic() - _started, 1)
    output.mkdir(parents=True, exist_ok=True)
    report.write_json(results, output / "directories.json")
    text = markdown(results)
    (output / "directories.md").write_text(text, encoding="utf-8")
    print(text, flush=True)
    say(f"done in {results['seconds']:.0f} s; wrote {output}/directories.json and directories.md")
    return results


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    # Unwind through the finally blocks: gunicorn and the directory are stopped by PID.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """The command line; exit status 1 when a directory failed or an answer was wrong."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.directories",
        description="The SCIM service per directory: filtered GET throughput and a big group.",
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, short rounds")
    parser.add_argument(
        "--directories",
        default=",".join(DIRECTORIES),
        help="comma-separated, in order (default: openldap,389ds,ad)",
    )
    parser.add_argument("--users", type=int, default=None, help="N (default 2,000)")
    parser.add_argument(
        "--members", type=int, default=None, help="the group's size (default 10,000)"
    )
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--duration", type=float, default=None, help="seconds per round")
    parser.add_argument("--warmup", type=float, default=None, help="warm-up seconds")
    parser.add_argument("--connections", type=int, default=None, help="filtered GET connections")
    parser.add_argument("--group-requests", type=int, default=None, help="sequential group reads")
    parser.add_argument(
        "--load",
        choices=("auto", "wrk", "python"),
        default="auto",
        help="load generator (auto: wrk, python for --smoke)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="results folder (default bench/results; --smoke: a temporary folder)",
    )
    parser.add_argument("--no-install", action="store_true", help="do not apt-get install wrk")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (service logs)")
    args = parser.parse_args(argv)
    config = SMOKE if args.smoke else FULL
    overrides: dict[str, Any] = {
        "users": args.users,
        "members": args.members,
        "rounds": args.rounds,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "connections": args.connections,
        "group_requests": args.group_requests,
    }
    config = replace(config, **{k: v for k, v in overrides.items() if v is not None})
    if args.load != "auto":
        config = replace(config, generator=args.load)
    keys = list(dict.fromkeys(k.strip() for k in args.directories.split(",") if k.strip()))
    unknown = sorted(set(keys) - set(DIRECTORIES))
    if unknown or not keys:
        parser.error(f"unknown directories {unknown}; choose among {', '.join(DIRECTORIES)}")
    if config.users < 1 or config.members < 1 or config.rounds < 1 or config.group_requests < 1:
        parser.error("--users, --members, --rounds and --group-requests must be at least 1")
    if config.generator == "wrk":
        ensure_wrk(install=not args.no_install)
    output = args.output or (
        Path(tempfile.gettempdir()) / "scim-bench-directories-smoke"
        if config.smoke
        else ROOT / "bench" / "results"
    )
    command = " ".join(
        ["python -m bench.directories", *(argv if argv is not None else sys.argv[1:])]
    )
    signal.signal(signal.SIGTERM, _on_sigterm)
    results = run(config, keys, output, keep=args.keep, command=command)
    failed = [k for k, row in results["directories"].items() if not row.get("ok")]
    if failed:
        say(f"not clean: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
