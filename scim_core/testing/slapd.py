"""A throwaway OpenLDAP ``slapd`` for tests, ``make run`` and benchmarks.

This module owns the development directory server: it writes a ``slapd.conf`` into a temporary
folder, starts ``slapd`` as a child process listening on ``127.0.0.1`` only, seeds it with the
LDIF files of ``examples/slapd/`` and stops it again. It uses the standard library and the
OpenLDAP binaries (``slapd``, ``slapadd``, ``ldapadd``) only; ldap3 is not imported. The
service's schema, :data:`SCIM_SCHEMA`, is package data of :mod:`scim_core.testing`, so an
installed package has it too; the seed files are the repository's (or ``seed_files=``).

The server mirrors what the SCIM service expects of a production OpenLDAP:

* ``ppolicy`` with a default policy that has ``pwdLockout: TRUE``, so the administrative lock
  value ``pwdAccountLockedTime: 000001010000Z`` refuses every bind of the entry. In OpenLDAP
  2.5 ``pwdAccountLockedTime`` is *not* NO-USER-MODIFICATION: the service account sets and
  removes it with a plain modify (no control), given ``write`` access, which the ACLs grant
  under the people subtree.
* ``ppolicy_hash_cleartext`` + ``password-hash {SSHA}``: cleartext passwords are stored hashed;
* ``memberof`` (groupOfNames/member -> memberOf), ``refint`` (member, manager; an emptied
  group keeps the placeholder entry as its member), ``unique`` (uid under the people base);
* ``sssvlv`` (server-side sort, RFC 2891, and VLV), sized for several workers;
* ``syncprov`` (loaded and active, so an instance can serve as a replication provider), with a
  session log of 10,000 changes (an index page learns from it what changed since its sorted
  snapshot, instead of sorting again);
* set up for big groups: 64-bit index keys, index lists exact up to 2^18 entries, ``member``
  values kept sorted, LMDB's writable memory map, and slapd run with tcmalloc where it is
  installed (Debian: ``libtcmalloc-minimal4``), which together halve what a membership change
  on a 100,000-member group costs slapd;
* a service account that is not the rootdn, with unlimited size and time limits (without them a
  paged search, RFC 2696, silently stops at the global size limit);
* with ``tls=True``: a certificate from a private CA (made with the ``openssl`` command), StartTLS
  on the ``ldap://`` port and an ``ldaps://`` listener on a second port.

Typical use::

    with SlapdInstance() as slapd:
        connect(slapd.url, slapd.service_dn, slapd.service_password)

Run ``python -m scim_core.testing.slapd --directory D --port P`` to keep one in the foreground;
it prints ``LDAP_*=value`` lines and stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import shutil
import socket
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from ipaddress import ip_address
from pathlib import Path
from types import MappingProxyType

from scim_core.testing._common import (
    Launcher,
    answers,
    find_binary,
    foreground_parser,
    preloaded_environment,
    run_tool,
    serve_in_foreground,
    tail,
)

__all__ = [
    "ADMIN_PASSWORD",
    "ALLOCATOR",
    "BASE_DN",
    "CHANGE_LOG_BASE",
    "SCIM_SCHEMA",
    "SERVICE_PASSWORD",
    "SlapdError",
    "SlapdInstance",
    "SlapdNotFoundError",
    "TlsFiles",
    "cn_config_ldif",
    "find_free_port",
    "main",
    "make_tls_files",
    "schema_statements",
    "slapadd",
    "ssha_hash",
]

#: Suffix of the development directory.
BASE_DN = "dc=example,dc=org"
#: The service's auxiliary schema in OpenLDAP's form (``scimPerson``, ``scimGroup``): package
#: data, the one copy (the 389-DS helper translates it; production directories load it too).
SCIM_SCHEMA = Path(__file__).with_name("scim.schema")
#: Password of the rootdn ``cn=admin,<base>`` (development only).
ADMIN_PASSWORD = "admin-dev-password"
#: Where slapo-accesslog keeps its log of deletes and renames (its own database).
CHANGE_LOG_BASE = "cn=accesslog"
#: Password of the service account, as hashed in ``examples/slapd/00-base.ldif``.
SERVICE_PASSWORD = "scim-dev-password"

_HOST = "127.0.0.1"
_INSTALL_HINT = "install OpenLDAP with `apt-get install slapd ldap-utils`"
_BINARY_DIRS = ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/usr/libexec")
_MODULE_DIRS = (
    "/usr/lib/ldap",
    "/usr/lib/openldap",
    "/usr/libexec/openldap",
    "/usr/local/libexec/openldap",
    "/usr/lib64/openldap",
)
_SCHEMA_DIRS = ("/etc/ldap/schema", "/etc/openldap/schema", "/usr/local/etc/openldap/schema")
_SCHEMAS = ("core", "cosine", "inetorgperson", "nis")
_MODULES = (
    "back_mdb",
    "ppolicy",
    "memberof",
    "refint",
    "unique",
    "sssvlv",
    "syncprov",
    "accesslog",
)
#: What the service account may read of the change log: each record's entry, the attributes
#: its search filters on and the ones it reads.
_CHANGE_LOG_READ = "entry,objectClass,entryCSN,reqResult,reqEntryUUID,reqDN"
_INDEXES = (
    ("objectClass", "eq"),
    ("uid", "eq"),
    ("mail", "eq"),
    ("cn", "eq"),
    ("member", "eq"),
    ("memberOf", "eq"),
    ("manager", "eq"),
    ("entryUUID", "eq"),
    ("entryCSN", "eq"),
    ("createTimestamp", "eq"),
    ("pwdAccountLockedTime", "eq,pres"),
    ("scimExternalId", "eq"),
    ("displayName", "eq,pres"),
)
_TLS_NAMES = (_HOST, "localhost")
_IDL_EXPONENT = 18
#: The malloc slapd runs with where installed (Debian: libtcmalloc-minimal4). OpenLDAP 2.5's
#: back-mdb copies every value of an entry it modifies, one allocation each: for a change to a
#: 100,000-member group glibc's malloc and free took half of slapd's time.
ALLOCATOR = "tcmalloc_minimal"
_TLS_DAYS = 365
_START_TIMEOUT = 15.0
_STOP_TIMEOUT = 10.0
_SEEDED_MARKER = ".seeded"
_HASH64_MARKER = ".index-hash64"  # the database was made with 64-bit index keys

# Strong references: a running instance is never garbage-collected with its slapd left behind.


class SlapdError(RuntimeError):
    """The throwaway slapd could not be configured, started, seeded or stopped."""


class SlapdNotFoundError(SlapdError):
    """An OpenLDAP binary, module folder or schema folder is missing on this machine."""


def ssha_hash(password: str, salt: bytes | None = None) -> str:
    """Hash ``password`` the way ``slappasswd -h {SSHA}`` does.

    :param password: the cleartext password.
    :param salt: 8 salt bytes; random when omitted.
    :returns: ``{SSHA}`` followed by base64(SHA-1(password + salt) + salt).
    """
    salt = os.urandom(8) if salt is None else salt
    # {SSHA} is SHA-1 by definition (RFC 2307 userPassword schemes); dev seed data only.
    digest = hashlib.sha1(password.encode("utf-8") + salt).digest()  # noqa: S324
    return "{SSHA}" + base64.b64encode(digest + salt).decode("ascii")


#: OpenLDAP ``.schema`` keyword -> the RFC 4512 subschema attribute its definition becomes.
_SCHEMA_KEYWORDS: Mapping[str, str] = MappingProxyType(
    {"attributetype": "attributeTypes", "objectclass": "objectClasses"}
)


def schema_statements(schema_file: Path | str) -> list[tuple[str, str]]:
    """The definitions of an OpenLDAP ``.schema`` file, in order: (``attributeTypes`` or
    ``objectClasses``, the definition in parentheses on one line). Comments are dropped,
    continuation lines joined and whitespace collapsed; OIDs and definitions are the file's.

    :param schema_file: e.g. :data:`SCIM_SCHEMA`.
    :raises ValueError: naming the file, for a statement that is not an ``attributetype`` or
        ``objectclass`` definition, or a file without any.
    """
    statements: list[str] = []
    for line in Path(schema_file).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0].isspace():
            if not statements:
                raise ValueError(f"{schema_file}: continuation line before any statement")
            statements[-1] += " " + line.strip()
        else:
            statements.append(line.strip())
    definitions = []
    for statement in statements:
        keyword, _, definition = statement.partition(" ")
        attribute = _SCHEMA_KEYWORDS.get(keyword.lower())
        definition = " ".join(definition.split())
        if attribute is None or not (definition.startswith("(") and definition.endswith(")")):
            raise ValueError(f"{schema_file}: cannot translate {statement[:60]!r}")
        definitions.append((attribute, definition))
    if not definitions:
        raise ValueError(f"{schema_file}: no attributetype or objectclass statement")
    return definitions


def cn_config_ldif(schema_file: Path | str = SCIM_SCHEMA, name: str = "scim") -> str:
    """An OpenLDAP ``.schema`` file as the ``cn=config`` schema entry ``ldapadd`` loads
    (``cn=NAME,cn=schema,cn=config``: one ``olcAttributeTypes`` or ``olcObjectClasses`` value
    per definition, in the file's order).

    :raises ValueError: as :func:`schema_statements`.
    """
    lines = [f"dn: cn={name},cn=schema,cn=config", "objectClass: olcSchemaConfig", f"cn: {name}"]
    for attribute, definition in schema_statements(schema_file):
        lines.append(f"olc{attribute[0].upper()}{attribute[1:]}: {definition}")
    return "\n".join(lines) + "\n"


def _ephemeral_ports() -> range:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return range(int(low), int(high) + 1)
    except (OSError, ValueError):
        return range(32768, 61000)  # Linux's default


def find_free_port(host: str = _HOST) -> int:
    """Return a TCP port on ``host`` that is free right now, outside the ephemeral range.

    Outside, because while a server started on it is down (tests stop and kill slapd), a
    client's connect to an ephemeral port can connect the socket to itself (TCP simultaneous
    open) and then hold the port, so the server cannot start again.

    :param host: the address to probe.
    :returns: a port number free when probed (it may be taken again before use).
    """
    ephemeral = _ephemeral_ports()
    candidates = [p for p in range(20000, 32768) if p not in ephemeral]
    for port in random.sample(candidates, min(200, len(candidates))):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        chosen: int = sock.getsockname()[1]
        return chosen


@dataclass(frozen=True)
class TlsFiles:
    """A private CA and a server certificate it signed, as PEM files."""

    ca_file: Path
    cert_file: Path
    key_file: Path


_OPENSSL_CONFIG = """\
[req]
distinguished_name = subject
prompt = no
[subject]
CN = scim-ldap test
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
subjectAltName = @names
[names]
"""


def make_tls_files(
    folder: Path | str,
    names: Sequence[str] = _TLS_NAMES,
    *,
    rsa: bool = False,
    days: int = _TLS_DAYS,
) -> TlsFiles:
    """Create a CA and a server certificate for ``names`` in ``folder`` with ``openssl``.

    Development and tests only: the keys are unencrypted P-256 keys (the server's an RSA
    2048-bit one with ``rsa``), valid for ``days`` days.

    :param folder: where ``ca.crt``, ``ca.key``, ``server.crt`` and ``server.key`` go.
    :param names: the certificate's subjectAltName entries (IP addresses or DNS names); the
        first is its subject's CN.
    :returns: the paths of the CA certificate, the server certificate and its key.
    :raises SlapdNotFoundError: when the ``openssl`` command is missing.
    :raises SlapdError: when ``openssl`` fails.
    """
    if not names:
        raise ValueError("a server certificate needs at least one name")
    tool = shutil.which("openssl")
    if tool is None:
        raise SlapdNotFoundError("openssl not found: install it with `apt-get install openssl`")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = TlsFiles(folder / "ca.crt", folder / "server.crt", folder / "server.key")
    config = folder / "openssl.cnf"
    entries = []
    for number, name in enumerate(names, start=1):
        try:
            ip_address(name)
            entries.append(f"IP.{number} = {name}")
        except ValueError:
            entries.append(f"DNS.{number} = {name}")
    config.write_text(_OPENSSL_CONFIG + "\n".join(entries) + "\n", encoding="utf-8")
    ec_key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    server_key = ["-newkey", "rsa:2048", "-nodes"] if rsa else ec_key
    commands = [
        [tool, "req", "-x509", "-config", str(config), "-extensions", "ca", *ec_key,
         "-keyout", str(folder / "ca.key"), "-out", str(files.ca_file),
         "-days", str(days), "-subj", "/CN=scim-ldap test CA " + os.urandom(4).hex()],
        [tool, "req", "-new", "-config", str(config), *server_key,
         "-keyout", str(files.key_file), "-out", str(folder / "server.csr"),
         "-subj", f"/CN={names[0]}"],
        [tool, "x509", "-req", "-in", str(folder / "server.csr"), "-CA", str(files.ca_file),
         "-CAkey", str(folder / "ca.key"), "-set_serial", "0x" + os.urandom(8).hex(),
         "-days", str(days), "-extfile", str(config), "-extensions", "server",
         "-out", str(files.cert_file)],
    ]  # fmt: skip
    for command in commands:
        run_tool(command, "openssl " + " ".join(command[1:3]), SlapdError, env=os.environ)
    for key in (folder / "ca.key", files.key_file):
        key.chmod(0o600)
    (folder / "server.csr").unlink()
    return files


def _find_binary(name: str) -> str:
    """Locate an OpenLDAP binary on ``PATH`` or in the usual system folders."""
    return find_binary(name, _BINARY_DIRS, SlapdNotFoundError, _INSTALL_HINT)


def _find_dir(candidates: Iterable[str], probe: str, what: str) -> Path:
    """Return the first folder of ``candidates`` holding the file ``probe``."""
    for folder in candidates:
        if Path(folder, probe).is_file():
            return Path(folder)
    raise SlapdNotFoundError(
        f"OpenLDAP {what} folder not found (looked for {probe}): {_INSTALL_HINT}"
    )


def _examples_dir() -> Path:
    """Find ``examples/slapd`` of the repository (source tree first, then the working folder)."""
    candidates = (
        Path(__file__).resolve().parents[2] / "examples" / "slapd",
        Path.cwd() / "examples" / "slapd",
    )
    for candidate in candidates:
        if (candidate / "00-base.ldif").is_file():
            return candidate
    raise SlapdError(
        "examples/slapd/00-base.ldif not found: run from the repository root, or pass "
        "examples_dir=, seed_files= or seed=False"
    )


class SlapdInstance(Launcher):
    """One throwaway ``slapd`` process with its configuration and data in a folder.

    The service's profile for it is :attr:`dialect`; the seeded users' passwords are in
    :attr:`seed_passwords` (development data, published in the README).

    The instance is a context manager: entering starts it, leaving stops it and removes the
    folder when the instance created it. :meth:`stop` keeps the data, so :meth:`start` (or
    :meth:`restart`) brings the same directory back on the same port.

    :param directory: folder for the configuration, the database and the log; a fresh temporary
        folder (removed by :meth:`close`) when omitted. An existing seeded folder is reused.
    :param port: TCP port on 127.0.0.1; a free one when omitted.
    :param seed: load the seed LDIF files on the first start.
    :param seed_files: LDIF files to load instead of ``examples/slapd/*.ldif`` (sorted by name).
    :param examples_dir: folder holding the seed LDIF files (``examples/slapd`` by default).
    :param base_dn: the database suffix; the seed files assume the default.
    :param admin_password: password of the rootdn.
    :param sizelimit: the global size limit (``None``: unlimited); OpenLDAP's default is 500.
    :param sssvlv_max: concurrent sort/VLV requests server-wide (``sssvlv-max``).
    :param sssvlv_maxperconn: concurrent sort/VLV requests per connection.
    :param maxsize: LMDB map size in bytes.
    :param durable: fsync every write; off by default (a killed slapd still loses nothing,
        only a machine crash would).
    :param server_id: ``serverID`` for multi-provider replication (1-4095).
    :param peers: LDAP URLs of replication peers; each becomes a ``syncrepl`` consumer
        (bound as the rootdn, which must share ``admin_password``) with ``multiprovider on``.
    :param tls: serve TLS: StartTLS on :attr:`url` and ``ldaps://`` on :attr:`ldaps_url`, with
        a certificate from a private CA (:attr:`ca_file`) made on the first start.
    :param tls_port: TCP port of the ``ldaps://`` listener; a free one when omitted.
    :param tls_names: the names the certificate is valid for (IP addresses or DNS names).
    :param allocator: the malloc library slapd runs with where it is installed (a name as
        ``ctypes.util.find_library`` takes it; ``None``: the C library's own).
    :param session_log: slapo-syncprov keeps a session log (as a site's slapd may not).
    """

    dialect = "openldap"
    seed_passwords: Mapping[str, str] = MappingProxyType(
        {"alice": "alice-dev-password", "bob": "bob-dev-password"}
    )

    def __init__(
        self,
        directory: Path | str | None = None,
        port: int | None = None,
        *,
        seed: bool = True,
        seed_files: Sequence[Path | str] | None = None,
        examples_dir: Path | str | None = None,
        base_dn: str = BASE_DN,
        admin_password: str = ADMIN_PASSWORD,
        sizelimit: int | None = 500,
        sssvlv_max: int = 64,
        sssvlv_maxperconn: int = 8,
        maxsize: int = 1 << 30,
        durable: bool = False,
        server_id: int | None = None,
        peers: Sequence[str] = (),
        tls: bool = False,
        tls_port: int | None = None,
        tls_names: Sequence[str] = _TLS_NAMES,
        allocator: str | None = ALLOCATOR,
        session_log: bool = True,
    ) -> None:
        positive = {"sssvlv_max": sssvlv_max, "sssvlv_maxperconn": sssvlv_maxperconn}
        positive.update(maxsize=maxsize, sizelimit=1 if sizelimit is None else sizelimit + 1)
        for name, value in positive.items():
            if value < 1:
                raise ValueError(f"{name} is out of range")
        if server_id is not None and not 1 <= server_id <= 4095:
            raise ValueError("server_id must be between 1 and 4095")
        if peers and server_id is None:
            raise ValueError("replication peers need a server_id")
        self._use_folder(directory, "scim-slapd-")
        self._auto_port = port is None
        self._port = find_free_port() if port is None else port
        self._seed = seed
        self._seed_files = None if seed_files is None else [Path(p) for p in seed_files]
        self._examples_dir = None if examples_dir is None else Path(examples_dir)
        self._base_dn = base_dn
        self._admin_password = admin_password
        self._sizelimit = sizelimit
        self._sssvlv_max = sssvlv_max
        self._sssvlv_maxperconn = sssvlv_maxperconn
        self._maxsize = maxsize
        self._durable = durable
        self._server_id = server_id
        self._peers = tuple(peers)
        self._tls = tls
        self._auto_tls_port = tls_port is None
        self._tls_port = (find_free_port() if tls_port is None else tls_port) if tls else None
        self._tls_names = tuple(tls_names)
        self._allocator = allocator
        self._session_log = session_log
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Path = self._directory / "slapd.log"
        self._started_once = False

    # -- identity ---------------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The loopback address slapd listens on (always 127.0.0.1)."""
        return _HOST

    @property
    def port(self) -> int:
        """The TCP port slapd listens on."""
        return self._port

    @property
    def url(self) -> str:
        """The LDAP URL, ``ldap://127.0.0.1:PORT``."""
        return f"ldap://{_HOST}:{self._port}"

    @property
    def tls_port(self) -> int | None:
        """The TCP port of the ``ldaps://`` listener (None without ``tls``)."""
        return self._tls_port

    @property
    def ldaps_url(self) -> str | None:
        """The LDAP-over-TLS URL, ``ldaps://127.0.0.1:PORT`` (None without ``tls``)."""
        return None if self._tls_port is None else f"ldaps://{_HOST}:{self._tls_port}"

    @property
    def tls_files(self) -> TlsFiles | None:
        """The CA, certificate and key files in ``tls/`` (None without ``tls``)."""
        if not self._tls:
            return None
        folder = self._directory / "tls"
        return TlsFiles(folder / "ca.crt", folder / "server.crt", folder / "server.key")

    @property
    def ca_file(self) -> Path | None:
        """The CA certificate clients verify the server with (None without ``tls``)."""
        files = self.tls_files
        return None if files is None else files.ca_file

    @property
    def config_file(self) -> Path:
        """The generated ``slapd.conf``."""
        return self._directory / "slapd.conf"

    @property
    def log_file(self) -> Path:
        """slapd's standard error, appended across starts."""
        return self._log

    @property
    def base_dn(self) -> str:
        """The database suffix."""
        return self._base_dn

    @property
    def users_base(self) -> str:
        """Where SCIM users live (``ou=people``)."""
        return f"ou=people,{self._base_dn}"

    @property
    def groups_base(self) -> str:
        """Where SCIM groups live (``ou=groups``)."""
        return f"ou=groups,{self._base_dn}"

    @property
    def services_base(self) -> str:
        """Where the service account and the placeholder live (``ou=services``)."""
        return f"ou=services,{self._base_dn}"

    @property
    def admin_dn(self) -> str:
        """The rootdn (bypasses ACLs and limits; for fixtures, not for the application)."""
        return f"cn=admin,{self._base_dn}"

    @property
    def admin_password(self) -> str:
        """Password of the rootdn."""
        return self._admin_password

    @property
    def service_dn(self) -> str:
        """The SCIM service's own account: writes people and groups only."""
        return f"cn=scim,{self.services_base}"

    @property
    def service_password(self) -> str:
        """Password of the service account (as seeded by ``00-base.ldif``)."""
        return SERVICE_PASSWORD

    @property
    def placeholder_dn(self) -> str:
        """The entry an empty groupOfNames holds as its only member."""
        return f"cn=placeholder,{self.services_base}"

    @property
    def policy_dn(self) -> str:
        """The default password policy entry (``ppolicy_default``)."""
        return f"cn=default,ou=policies,{self._base_dn}"

    def can_bind(self, dn: str, password: str) -> bool:
        """Whether a simple bind as ``dn`` with ``password`` succeeds (``ldapwhoami``)."""
        command = [_find_binary("ldapwhoami"), "-x", "-H", self.url, "-D", dn, "-w", password]
        return subprocess.run(command, capture_output=True, timeout=10, check=False).returncode == 0

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> SlapdInstance:
        """Write the configuration, start slapd, wait until it answers, seed it once.

        Does nothing when already running. The first start of an unseeded folder loads the
        seed files as the rootdn over LDAP (so overlays such as memberof and ppolicy apply).

        :returns: this instance.
        :raises SlapdNotFoundError: when OpenLDAP is not installed.
        :raises SlapdError: when slapd exits or does not answer within 15 s (the message ends
            with the tail of its log), or when seeding fails.
        """
        if self.running:
            return self
        slapd = _find_binary("slapd")
        self._write_config()
        attempts = 3 if self._auto_port and not self._started_once else 1
        for attempt in range(attempts):
            try:
                self._launch(slapd)
                break
            except SlapdError:
                if attempt + 1 == attempts or "already in use" not in tail(self._log):
                    raise
                self._port = find_free_port()
                if self._auto_tls_port and self._tls_port is not None:
                    self._tls_port = find_free_port()
        self._started_once = True
        marker = self._directory / _SEEDED_MARKER
        if not marker.exists():
            try:
                if self._seed:
                    for ldif in self._seed_paths():
                        self.ldapadd(ldif)
            except BaseException:
                self.stop()
                raise
            marker.touch()
        return self

    def kill(self) -> None:
        """Kill slapd with SIGKILL (fault tests); :meth:`start` recovers the same data."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        self._forget()

    def restart(self) -> SlapdInstance:
        """Stop, then start again on the same port with the same data.

        :returns: this instance.
        """
        self.stop()
        return self.start()

    def close(self) -> None:
        """Stop slapd and remove the folder when this instance created it."""
        self.stop()
        self._remove_folder()

    # -- data -------------------------------------------------------------------------------

    def ldapadd(self, ldif: Path | str) -> None:
        """Add the entries of an LDIF file over LDAP as the rootdn (slapd must be running).

        :param ldif: the LDIF file.
        :raises SlapdError: when ``ldapadd`` fails; the message carries its output.
        """
        password_file = self._directory / "admin.pw"
        command = [
            _find_binary("ldapadd"),
            "-x",
            "-H",
            self.url,
            "-D",
            self.admin_dn,
            "-y",
            str(password_file),
            "-f",
            str(ldif),
        ]
        self._run(command, f"ldapadd {ldif}")

    def _seed_paths(self) -> list[Path]:
        """Return the LDIF files of the first start."""
        if self._seed_files is not None:
            return self._seed_files
        return sorted(self._examples().glob("*.ldif"), key=lambda p: p.name)

    def _examples(self) -> Path:
        return self._examples_dir if self._examples_dir is not None else _examples_dir()

    def _run(self, command: Sequence[str], what: str) -> None:
        """Run an OpenLDAP tool quietly; raise :class:`SlapdError` with its output on failure."""
        run_tool(command, what, SlapdError, env=dict(os.environ, LDAPNOINIT="1"))

    # -- process ----------------------------------------------------------------------------

    def _launch(self, slapd: str) -> None:
        """Start the slapd process and wait until it answers an anonymous bind."""
        listeners = f"{self.url}/" + (f" {self.ldaps_url}/" if self.ldaps_url else "")
        proc = self._spawn(
            [slapd, "-d", "none", "-h", listeners, "-f", str(self.config_file)],
            self._log,
            self.url,
            env=preloaded_environment(self._allocator),
        )
        # slapd writes its pid file only after binding the port: a server answering before
        # that is someone else's (a port race with a parallel session), not ours.
        self._await_answer(
            proc,
            self._log,
            lambda: self._pid_file_holds(proc.pid) and answers(_HOST, self._port, timeout=0.25),
            SlapdError,
            timeout=_START_TIMEOUT,
            interval=0.01,
            give_up=self.kill,
        )

    def _pid_file_holds(self, pid: int) -> bool:
        """Return whether ``slapd.pid`` in the folder names ``pid``."""
        try:
            return (self._directory / "slapd.pid").read_text().strip() == str(pid)
        except OSError:
            return False

    # -- configuration ----------------------------------------------------------------------

    def _write_config(self) -> None:
        """Write ``slapd.conf`` and the rootdn password file into the folder."""
        data = self._directory / "data"
        data.mkdir(parents=True, exist_ok=True)
        (self._directory / "changelog").mkdir(exist_ok=True)
        if not (data / "data.mdb").exists():
            # A new database gets 64-bit index keys; one made before keeps its 32-bit keys
            # (the two are incompatible: index lookups would find nothing).
            (self._directory / _HASH64_MARKER).touch()
        password_file = self._directory / "admin.pw"
        password_file.write_text(self._admin_password, encoding="utf-8")
        password_file.chmod(0o600)
        files = self.tls_files
        if files is not None and not all(
            f.is_file() for f in (files.ca_file, files.cert_file, files.key_file)
        ):
            make_tls_files(files.ca_file.parent, self._tls_names)
        self.config_file.write_text(self._render_config(), encoding="utf-8")
        self.config_file.chmod(0o600)

    def _render_config(self) -> str:
        """Return the text of ``slapd.conf``."""
        schema_dir = _find_dir(_SCHEMA_DIRS, "core.schema", "schema")
        module_dir = _find_dir(_MODULE_DIRS, "back_mdb.la", "module")
        service = f'dn.exact="{self.service_dn}"'
        people, groups = self.users_base, self.groups_base
        q = _quote
        lines = [
            "# Generated by scim_core.testing.slapd; rewritten on every start.",
            *(f"include {q(schema_dir / f'{name}.schema')}" for name in _SCHEMAS),
            f"include {q(SCIM_SCHEMA)}",
            "",
            f"modulepath {q(module_dir)}",
            *(f"moduleload {name}" for name in _MODULES),
            "",
            f"pidfile {q(self._directory / 'slapd.pid')}",
            f"argsfile {q(self._directory / 'slapd.args')}",
            "password-hash {SSHA}",
            "# A member is added or removed by a binary search instead of a scan of every value.",
            "sortvals member",
            f"sizelimit {'unlimited' if self._sizelimit is None else self._sizelimit}",
            *([f"serverID {self._server_id}"] if self._server_id is not None else []),
            *self._tls_config(),
            "",
            "# Frontend: the root DSE (controls, naming contexts) is public, the schema is for",
            "# bound clients.",
            'access to dn.base="" by * read',
            'access to dn.base="cn=Subschema" by users read by * none',
            "",
            "# An index slot holds up to 2^18 entry ids exactly (back-mdb's default, 2^16, turns",
            "# a longer list into a range: past 65,536 members a group's memberOf lookup tests",
            "# every entry in that range, at a million users nearly all of them).",
            "# 64-bit index keys: with 32-bit ones back-mdb indexes again every remaining value",
            "# of an attribute a value was removed from (in case of a key collision), so taking",
            "# one member out of a 100,000-member group cost 50 ms instead of 13.",
            *(["index_hash64 on"] if (self._directory / _HASH64_MARKER).exists() else []),
            "backend mdb",
            f"idlexp {_IDL_EXPONENT}",
            *self._change_log_database(service),
            "",
            "database mdb",
            f"suffix {q(self._base_dn)}",
            f"rootdn {q(self.admin_dn)}",
            f"rootpw {ssha_hash(self._admin_password)}",
            f"directory {q(self._directory / 'data')}",
            f"maxsize {self._maxsize}",
            *([] if self._durable else ["dbnosync"]),
            "# Writes go straight into the memory map: a change to a big group writes its entry",
            "# again, and a copy through write(2) of its megabytes was a tenth of slapd's time.",
            "envflags writemap",
            *(f"index {attribute} {kinds}" for attribute, kinds in _INDEXES),
            f"limits {service} size=unlimited size.prtotal=unlimited time=unlimited",
            "",
            "# Passwords: the service account may set them under people; anyone may bind.",
            f"access to dn.subtree={q(people)} attrs=userPassword",
            f"  by {service} =w",
            "  by anonymous auth",
            "  by * none",
            "access to attrs=userPassword",
            "  by anonymous auth",
            "  by * none",
            "# The people and groups subtrees belong to the service account.",
            *self._subtree_acl(people, service, self_read=True),
            *self._subtree_acl(groups, service, self_read=False),
            f"access to dn.base={q(self.placeholder_dn)}",
            f"  by {service} read",
            "  by * none",
            f"access to dn.base={q(self.service_dn)}",
            "  by self read",
            "  by * none",
            f"access to dn.base={q(self._base_dn)}",
            f"  by {service} read",
            "  by * none",
            "access to *",
            "  by * none",
            *self._replication_config(),
            "",
            "overlay syncprov",
            "syncprov-checkpoint 100 10",
            *(["syncprov-sessionlog 10000"] if self._session_log else []),
            "",
            "# Deletes and renames, with the DN each entry had: where a sorted list's entry was.",
            "overlay accesslog",
            f"logdb {q(CHANGE_LOG_BASE)}",
            "logops delete modrdn",
            "logpurge 07+00:00 01+00:00",
            "",
            "overlay ppolicy",
            f"ppolicy_default {q(self.policy_dn)}",
            "ppolicy_hash_cleartext",
            "",
            "overlay memberof",
            "memberof-group-oc groupOfNames",
            "memberof-member-ad member",
            "memberof-memberof-ad memberOf",
            "memberof-refint TRUE",
            "",
            "overlay refint",
            "refint_attributes member manager",
            f"refint_nothing {q(self.placeholder_dn)}",
            "",
            "overlay unique",
            f"unique_uri {q(f'ldap:///{people}?uid?sub')}",
            "",
            "overlay sssvlv",
            f"sssvlv-max {self._sssvlv_max}",
            f"sssvlv-maxperconn {self._sssvlv_maxperconn}",
            "",
        ]
        return "\n".join(lines)

    def _change_log_database(self, service: str) -> list[str]:
        """The database slapo-accesslog writes its log of deletes and renames into. The
        service account reads what it asks by and for, nothing more: a log of every write
        (a delta-syncrepl provider's) holds each modify's values, passwords among them. The
        rootdn of the directory reads all of it."""
        q = _quote
        admin = f'dn.exact="{self.admin_dn}"'
        return [
            "",
            "database mdb",
            f"suffix {q(CHANGE_LOG_BASE)}",
            f"directory {q(self._directory / 'changelog')}",
            f"maxsize {self._maxsize}",
            *([] if self._durable else ["dbnosync"]),
            "index entryCSN,objectClass eq",
            f"limits {service} size=unlimited time=unlimited",
            f"access to attrs={_CHANGE_LOG_READ}",
            f"  by {admin} read",
            f"  by {service} read",
            "  by * none",
            "access to *",
            f"  by {admin} read",
            "  by * none",
        ]

    @staticmethod
    def _subtree_acl(base: str, service: str, *, self_read: bool) -> list[str]:
        """ACL giving the service account the entries below ``base`` and read on ``base``."""
        q = _quote
        return [
            f"access to dn.base={q(base)} attrs=children",
            f"  by {service} write",
            "  by * none",
            f"access to dn.base={q(base)}",
            f"  by {service} read",
            "  by * none",
            f"access to dn.children={q(base)}",
            f"  by {service} write",
            *(["  by self read"] if self_read else []),
            "  by * none",
        ]

    def _tls_config(self) -> list[str]:
        """The server certificate for StartTLS and ``ldaps://`` (clients need no certificate)."""
        files = self.tls_files
        if files is None:
            return []
        return [
            f"TLSCACertificateFile {_quote(files.ca_file)}",
            f"TLSCertificateFile {_quote(files.cert_file)}",
            f"TLSCertificateKeyFile {_quote(files.key_file)}",
            "TLSVerifyClient never",
        ]

    def _replication_config(self) -> list[str]:
        """``syncrepl`` stanzas for multi-provider replication with :attr:`peers`."""
        if not self._peers:
            return []
        lines = [""]
        for number, peer in enumerate(self._peers, start=1):
            lines += [
                f"syncrepl rid={number:03d} provider={peer} type=refreshAndPersist",
                f"  bindmethod=simple binddn={_quote_dn(self.admin_dn)}",
                f"  credentials={self._admin_password}",
                f'  searchbase={_quote_dn(self._base_dn)} retry="1 +"',
            ]
        lines.append("multiprovider on")
        return lines


def _quote(value: object) -> str:
    """Quote a slapd.conf argument (paths and DNs may hold spaces)."""
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _quote_dn(value: str) -> str:
    """Quote a DN inside a ``syncrepl`` keyword argument."""
    return '"' + value.replace('"', '\\"') + '"'


def slapadd(instance: SlapdInstance, ldif_path: Path | str) -> None:
    """Bulk-load an LDIF file offline: stop, ``slapadd -q``, start again.

    Much faster than LDAP adds (benchmarks load 100,000 users this way), but overlays do not run:
    ``userPassword`` values are stored as given (hash them with :func:`ssha_hash`) and
    ``memberOf`` is not computed. Parents must exist (the seed is loaded on the first start,
    which this function performs when needed).

    :param instance: the instance to load; it is running afterwards.
    :param ldif_path: the LDIF file.
    :raises SlapdError: when ``slapadd`` fails; the message carries its output.
    """
    tool = _find_binary("slapadd")
    instance.start()
    instance.stop()
    try:
        instance._run(
            [
                tool,
                "-f",
                str(instance.config_file),
                "-b",
                instance.base_dn,
                "-q",
                "-l",
                str(ldif_path),
            ],
            f"slapadd {ldif_path}",
        )
    finally:
        instance.start()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one slapd in the foreground until SIGINT or SIGTERM.

    Prints ``LDAP_URL=...``, ``LDAP_USERS_BASE=...``, ``LDAP_GROUPS_BASE=...``,
    ``LDAP_ADMIN_DN=...``, ``LDAP_ADMIN_PASSWORD=...``, ``LDAP_SERVICE_DN=...``,
    ``LDAP_SERVICE_PASSWORD=...`` and ``LDAP_PLACEHOLDER_DN=...``, one per line, once slapd
    answers; with ``--tls`` also ``LDAP_LDAPS_URL=...`` and ``LDAP_CA_FILE=...``.

    With ``--schema``, prints the path of :data:`SCIM_SCHEMA` instead (to load it elsewhere).

    :param argv: command-line arguments (``sys.argv[1:]`` when None).
    :returns: 0 after a clean stop, 1 if slapd failed or died.
    """
    parser = foreground_parser(
        "scim_core.testing.slapd",
        "Run a throwaway OpenLDAP slapd seeded with examples/slapd.",
        seed_help="do not load the seed LDIF files",
    )
    parser.add_argument("--port", type=int, default=None, help="port on 127.0.0.1")
    parser.add_argument(
        "--seed-file",
        dest="seed_files",
        type=Path,
        action="append",
        default=None,
        help="LDIF to load instead of examples/slapd/*.ldif",
    )
    parser.add_argument(
        "--tls", action="store_true", help="serve StartTLS and ldaps:// with a private CA"
    )
    parser.add_argument(
        "--schema",
        action="store_true",
        help="print the path of the service's scim.schema (package data) and exit",
    )
    args = parser.parse_args(argv)
    if args.schema:
        print(SCIM_SCHEMA)
        return 0

    instance = SlapdInstance(
        args.directory, args.port, seed=args.seed, seed_files=args.seed_files, tls=args.tls
    )
    return serve_in_foreground(instance, SlapdError, "slapd")


if __name__ == "__main__":
    raise SystemExit(main())
