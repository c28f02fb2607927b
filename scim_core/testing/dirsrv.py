"""A throwaway 389 Directory Server for tests, ``make run`` and benchmarks.

This module owns the development 389-DS: it lays out one instance inside a folder (a private
installation *prefix*: ``etc/dirsrv/slapd-NAME``, ``var/lib/dirsrv/slapd-NAME``, ``var/log/...``,
``run/...``), starts ``ns-slapd`` as a plain foreground child process (no systemd) listening on
``127.0.0.1`` only, seeds it once and removes it again with ``dsctl NAME remove --do-it``. It
uses the standard library and the 389 command line tools only (``ns-slapd``, ``pwdhash``,
``certutil``/``pk12util`` from NSS, ``dsidm``, ``dsctl``, ``ldapadd`` and ``ldapsearch`` from
``ldap-utils``,
which ``389-ds-base`` depends on); :meth:`DirsrvInstance.can_bind` speaks LDAP itself.

How the instance is made. ``dscreate`` needs systemd, makes RSA keys and starts and stops the
server twice with one-second polling (about 9 s here); this module does what its offline part
does and puts the rest into the configuration before the first start, so ns-slapd starts
once and a new seeded instance is ready after about two seconds:

* the ``dse.ldif`` is 389's own ``template-dse.ldif`` with the placeholders ``dscreate`` fills,
  plus the plugin settings below, the ``userRoot`` backend for ``dc=example,dc=org`` with its
  mapping tree node, and the listen addresses;
* a ``defaults.inf`` in ``share/dirsrv/inf`` of the folder (the file ``lib389`` reads when
  ``PREFIX`` names the folder) says where that instance lives and that there is no systemd, so
  ``dsidm``, ``dsconf`` and ``dsctl`` find and manage it with ``PREFIX=<folder>``
  (:meth:`DirsrvInstance.tool_environment`);
* TLS: a private CA and an RSA server certificate for ``localhost``, ``127.0.0.1`` and the
  host name (made with ``openssl``) imported into the instance's NSS database as
  ``Server-Cert``; :attr:`~DirsrvInstance.ca_file` is the CA as PEM.

What the server has (what the SCIM service expects of a production 389-DS):

* suffix ``dc=example,dc=org`` with ``ou=people``, ``ou=groups`` and ``ou=services``
  (``examples/389ds/00-base.ldif``);
* the memberOf plugin (``member`` -> ``memberOf``, ``memberOfAutoAddOC: nsMemberOf``, since
  inetOrgPerson cannot hold memberOf), referential integrity for ``member``, ``uniqueMember``,
  ``owner``, ``seeAlso`` and ``manager`` with update delay 0 (synchronous), attribute
  uniqueness of ``uid`` under ``ou=people`` and the entryUSN plugin (``entryusn`` changes with
  every write: the ETag source);
* ns-slapd preloads jemalloc, as Debian's ``dirsrv@.service`` does (a change to a big group
  costs half as much again without it);
* VLV indexes for the service's list searches without a filter (users by uid and by
  ``nsUniqueId``, groups by cn), made from what ``scim-ldap schema --vlv-indexes`` prints for
  this directory, so a list page reads a window of an index instead of sorting every user;
* the SCIM auxiliary schema, translated at every start from
  :data:`~scim_core.testing.slapd.SCIM_SCHEMA` (package data) into ``schema/60scim.ldif`` of
  the instance;
* the service account ``uid=scim,ou=services`` with unlimited size, look-through, paged-size
  and time limits and ACIs on ``ou=people`` and ``ou=groups`` allowing it everything there
  (server-side sort and VLV included) but reading the stored password hashes;
* seed data: ``examples/389ds/10-sample.ldif`` (alice, bob, group developers) loaded with
  ``ldapadd`` as the Directory Manager, and carol made with 389's own ``dsidm`` (objectClasses
  nsPerson, nsAccount, nsOrgPerson, posixAccount: no inetOrgPerson);
* password changes (RFC 3062 or a ``userPassword`` write) need TLS (or LDAPI): over plain
  ``ldap://`` they answer confidentialityRequired (13); simple binds are accepted there. 389-DS
  hashes a cleartext ``userPassword`` itself (PBKDF2-SHA512).

Typical use::

    with DirsrvInstance() as ds:
        connect(ds.url, ds.service_dn, ds.service_password, ca_file=ds.ca_file)

Run ``python -m scim_core.testing.dirsrv [--directory D]`` to keep one in the foreground; it
prints ``LDAP_*=value`` lines and stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import base64
import configparser
import contextlib
import grp
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import MappingProxyType

from scim_core.testing._common import (
    Launcher,
    answers,
    bind_checked,
    find_binary,
    foreground_parser,
    preloaded_environment,
    run_tool,
    serve_in_foreground,
)
from scim_core.testing.slapd import (
    SCIM_SCHEMA,
    SlapdError,
    find_free_port,
    make_tls_files,
    schema_statements,
)

__all__ = [
    "ADMIN_PASSWORD",
    "ALLOCATOR",
    "BASE_DN",
    "SERVICE_PASSWORD",
    "DirsrvError",
    "DirsrvInstance",
    "DirsrvNotFoundError",
    "main",
    "scim_schema_ldif",
]

#: Suffix of the development directory.
BASE_DN = "dc=example,dc=org"
#: Password of ``cn=Directory Manager`` (development only).
ADMIN_PASSWORD = "admin-dev-password"
#: Password of the service account, as in ``examples/389ds/00-base.ldif``.
SERVICE_PASSWORD = "scim-dev-password"
#: The malloc ns-slapd runs with: jemalloc, which Debian's ``dirsrv@.service`` preloads (the
#: 389-ds-base-libs package depends on it). Without it a change to a 10,000-member group took
#: 389-DS half as long again, glibc's malloc and free being about half of its time.
ALLOCATOR = "jemalloc"

_LISTEN_HOST = "127.0.0.1"
#: The name the server certificate is verified for (389's own self-signed certificate names
#: ``localhost`` too); :attr:`DirsrvInstance.url` uses it.
_TLS_HOST = "localhost"
_INSTALL_HINT = "install 389 Directory Server with `apt-get install 389-ds-base`"
_BINARY_DIRS = ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")
_DEFAULTS_INF = (
    "/usr/share/dirsrv/inf/defaults.inf",
    "/usr/local/share/dirsrv/inf/defaults.inf",
)
_ROOT_DN = "cn=Directory Manager"
_BACKEND = "userRoot"
_SERVER_CERT = "Server-Cert"
_CA_NICKNAME = "scim-ldap CA"
_TLS_DAYS = 730
#: Equality (and presence) indexes the template lacks: (attribute, index types).
_EXTRA_INDEXES = (
    ("entryUUID", ["eq", "pres"]),
    ("manager", ["eq"]),
    ("scimExternalId", ["eq"]),
    ("displayName", ["eq", "pres"]),
)
#: ns-slapd's default error log level (``SLAPD_DEFAULT_ERRORLOG_LEVEL`` in slap.h, as
#: ``dscontainer`` passes it): ``-d`` keeps ns-slapd in the foreground, and ``-d 0`` would
#: silence the error log.
_ERRORLOG_LEVEL = "266354688"
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 30.0
_TOOL_TIMEOUT = 120.0
#: Written first into a folder this launcher lays an instance out in: only a folder holding it
#: is reused, and only the entries below are ever removed from it.
_OWNER_MARKER = ".scim-dirsrv"
_CREATED_MARKER = ".created"
_SEEDED_MARKER = ".seeded"
#: What :meth:`DirsrvInstance.close` removes from a folder it did not create.
_OWNED_ENTRIES = (
    "share",
    "etc",
    "var",
    "run",
    "lib",
    "tmp",
    "tls",
    "ns-slapd.log",
    "admin.pw",
    _CREATED_MARKER,
    _SEEDED_MARKER,
)
_UNIX_PATH_MAX = 107
# An anonymous simple BindRequest, message id 1 (RFC 4511 §4.2), BER-encoded.

#: The user made with ``dsidm`` on the first start: (uid, cn, displayName, mail). dsidm's users
#: are nsPerson/nsAccount/nsOrgPerson/posixAccount, which allow neither givenName nor sn.
_DSIDM_USER = ("carol", "Carol Danvers", "Carol Danvers", "carol@example.org")
_DSIDM_UID_NUMBER = "10003"


class DirsrvError(RuntimeError):
    """The throwaway 389 Directory Server could not be created, started, seeded or removed."""


class DirsrvNotFoundError(DirsrvError):
    """389 Directory Server (``ns-slapd``, its tools or its data files) is not installed."""


# -- small helpers ---------------------------------------------------------------------------


def _find_binary(name: str) -> str:
    """Locate a 389-DS, NSS or OpenLDAP client binary on ``PATH`` or in the system folders."""
    return find_binary(name, _BINARY_DIRS, DirsrvNotFoundError, _INSTALL_HINT)


def _system_defaults() -> configparser.RawConfigParser:
    """Read 389's ``defaults.inf`` (the installation's paths and defaults)."""
    for candidate in _DEFAULTS_INF:
        if Path(candidate).is_file():
            parser = configparser.RawConfigParser()
            parser.read(candidate, encoding="utf-8")
            if parser.has_section("slapd"):
                return parser
    raise DirsrvNotFoundError(f"389-DS defaults.inf not found: {_INSTALL_HINT}")


def _examples_dir() -> Path:
    """Find ``examples/`` of the repository (source tree first, then the working folder)."""
    for candidate in (Path(__file__).resolve().parents[2] / "examples", Path.cwd() / "examples"):
        if (candidate / "389ds" / "00-base.ldif").is_file():
            return candidate
    raise DirsrvError("examples/389ds not found; run from the repository root")


def scim_schema_ldif(
    schema_file: Path | str,
    comment: str | None = "Generated from {name} by scim_core.testing.dirsrv at every start.",
) -> str:
    """Translate an OpenLDAP ``.schema`` file into a 389-DS schema LDIF file.

    Every ``attributetype`` and ``objectclass`` statement becomes one ``attributeTypes`` or
    ``objectClasses`` value of ``cn=schema`` (:func:`~scim_core.testing.slapd.schema_statements`),
    marked ``X-ORIGIN 'scim-ldap'``; the OIDs and definitions are the file's own.

    :param schema_file: e.g. :data:`~scim_core.testing.slapd.SCIM_SCHEMA`.
    :param comment: the file's first line, a comment (``{name}``: the schema file's name);
        ``None``: none.
    :returns: the text of a file for the instance's ``schema`` folder.
    :raises DirsrvError: when the file holds no definition or an unknown statement.
    """
    try:
        definitions = schema_statements(schema_file)
    except ValueError as error:
        raise DirsrvError(str(error)) from None
    lines = [
        *([] if comment is None else ["# " + comment.format(name=Path(schema_file).name)]),
        "dn: cn=schema",
        "objectClass: top",
        "objectClass: ldapSubentry",
        "objectClass: subschema",
        "cn: schema",
    ]
    for attribute, definition in definitions:
        lines.append(f"{attribute}: {definition[:-1].rstrip()} X-ORIGIN 'scim-ldap' )")
    return "\n".join(lines) + "\n"


# -- dse.ldif --------------------------------------------------------------------------------

_Entry = tuple[str, list[tuple[str, str]]]


def _normal_dn(dn: str) -> str:
    """A DN for comparison: lower case, no spaces around separators (``cn=a, cn=b``)."""
    return re.sub(r"\s*([,=])\s*", r"\1", dn.strip()).lower()


def _parse_ldif(text: str) -> list[_Entry]:
    """Split LDIF content records into (dn, [(attribute, 'attribute: value' line)])."""
    entries: list[_Entry] = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        lines: list[str] = []
        for line in block.split("\n"):
            if line.startswith("#"):
                continue
            if line.startswith(" ") and lines:
                lines[-1] += line[1:]
            elif line:
                lines.append(line)
        if not lines:
            continue
        head, _, value = lines[0].partition(":")
        if head.lower() != "dn":
            raise DirsrvError(f"LDIF record without dn: {lines[0][:60]!r}")
        dn = base64.b64decode(value[1:]).decode() if value.startswith(":") else value.strip()
        attributes = [(line.partition(":")[0].strip().lower(), line) for line in lines[1:]]
        entries.append((dn, attributes))
    return entries


def _render_ldif(entries: Sequence[_Entry]) -> str:
    """The inverse of :func:`_parse_ldif` (unfolded lines)."""
    return "".join(
        f"dn: {dn}\n" + "".join(line + "\n" for _, line in attributes) + "\n"
        for dn, attributes in entries
    )


def _apply_changes(
    entries: list[_Entry],
    changes: Mapping[str, Mapping[str, Sequence[str]]],
    additions: Sequence[tuple[str, Mapping[str, Sequence[str]]]] = (),
) -> None:
    """Replace attribute values of existing entries and append new entries, in place.

    :raises DirsrvError: when an entry to change is missing (another 389-DS version's template).
    """
    index = {_normal_dn(dn): number for number, (dn, _) in enumerate(entries)}
    for dn, attributes in changes.items():
        number = index.get(_normal_dn(dn))
        if number is None:
            raise DirsrvError(f"dse.ldif has no entry {dn!r}: unsupported 389-DS version?")
        entry_dn, lines = entries[number]
        names = {name.lower() for name in attributes}
        kept = [(name, line) for name, line in lines if name not in names]
        for name, values in attributes.items():
            kept.extend((name.lower(), f"{name}: {value}") for value in values)
        entries[number] = (entry_dn, kept)
    for dn, attributes in additions:
        if _normal_dn(dn) in index:
            raise DirsrvError(f"dse.ldif already has an entry {dn!r}")
        lines = [
            (name.lower(), f"{name}: {value}")
            for name, values in attributes.items()
            for value in values
        ]
        entries.append((dn, lines))


def _config_value(entries: Sequence[_Entry], dn: str, attribute: str) -> str | None:
    """The first value of ``attribute`` in the entry ``dn`` (plain values only)."""
    for entry_dn, lines in entries:
        if _normal_dn(entry_dn) == _normal_dn(dn):
            for name, line in lines:
                if name == attribute.lower():
                    return line.partition(":")[2].strip()
    return None


class DirsrvInstance(Launcher):
    """One throwaway 389 Directory Server instance (``ns-slapd``) living in a folder.

    The service's profile for it is :attr:`dialect`; the seeded users' passwords are in
    :attr:`seed_passwords` (development data).

    The instance is a context manager: entering starts it, leaving removes it (:meth:`close`).
    :meth:`stop` keeps the data, so :meth:`start` brings the same directory back on the same
    ports. The first :meth:`start` creates the instance (about 0.3 s), starts ns-slapd (about
    0.9 s) and seeds it (about 0.7 s, and 0.2 s more for the VLV indexes); a later start takes
    about 1 s, :meth:`stop` one to four seconds. See :attr:`timings`.

    :param directory: the folder holding the instance (its installation prefix): new, empty or
        made by this launcher before (then reused as it is); a fresh temporary folder when
        omitted. :meth:`close` removes the temporary folder, or empties a given one.
    :param seed: load ``examples/389ds/10-sample.ldif`` and make carol with ``dsidm`` on the
        first start (the suffix, the OUs and the service account are always made).
    :param name: the 389 instance name (``slapd-NAME``); by default the one instance in a
        reused folder, else a new unique ``scim-xxxxxxxx``.
    :param db_lib: the database implementation, ``bdb`` (389-DS 2.3's default, as in
        production) or ``mdb`` (faster to stop).
    :param vlv_indexes: make the VLV indexes of the service's list searches on the first start
        (:mod:`scim_core.backends.ldap.vlv_indexes`); without them every list page sorts.
    :param allocator: the malloc library ns-slapd runs with where it is installed (a name as
        ``ctypes.util.find_library`` takes it; ``None``: the C library's own).
    """

    dialect: str = "389ds"
    base_dn: str = BASE_DN
    users_base: str = f"ou=people,{BASE_DN}"
    groups_base: str = f"ou=groups,{BASE_DN}"
    services_base: str = f"ou=services,{BASE_DN}"
    admin_dn: str = _ROOT_DN
    admin_password: str = ADMIN_PASSWORD
    service_dn: str = f"uid=scim,ou=services,{BASE_DN}"
    service_password: str = SERVICE_PASSWORD
    #: 389-DS's groupOfNames may be empty (its schema has ``member`` as a MAY): no placeholder.
    placeholder_dn: str | None = None
    seed_passwords: Mapping[str, str] = MappingProxyType(
        {"alice": "alice-dev-password", "bob": "bob-dev-password", "carol": "carol-dev-password"}
    )

    def __init__(
        self,
        directory: Path | str | None = None,
        *,
        seed: bool = True,
        name: str | None = None,
        db_lib: str = "bdb",
        vlv_indexes: bool = True,
        allocator: str | None = ALLOCATOR,
    ) -> None:
        if name is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,60}", name):
            raise ValueError(f"invalid 389 instance name {name!r} (letters, digits, - and _)")
        if db_lib not in ("bdb", "mdb"):
            raise ValueError("db_lib must be 'bdb' or 'mdb'")
        self._use_folder(directory, "scim-dirsrv-")
        if (
            self._directory.is_dir()
            and not (self._directory / _OWNER_MARKER).is_file()
            and any(self._directory.iterdir())
        ):
            raise DirsrvError(
                f"{self._directory} is not empty and holds no instance of this launcher: "
                "pass an empty or new folder"
            )
        self._name = name or self._existing_name() or f"scim-{secrets.token_hex(4)}"
        self._seed = seed
        self._db_lib = db_lib
        self._vlv_indexes = vlv_indexes
        self._allocator = allocator
        self._ports: tuple[int, int] | None = None  # plain LDAP, LDAPS
        self._proc: subprocess.Popen[bytes] | None = None
        #: Seconds the steps took, each once it happened through this object: ``create`` and
        #: ``seed`` (first start of the folder), ``launch`` (ns-slapd until it answers) and
        #: ``start`` (the whole :meth:`start`) of the last start.
        self.timings: dict[str, float] = {}
        self._read_ports()

    # -- identity ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The 389 instance name (``dsctl NAME ...`` with :meth:`tool_environment`)."""
        return self._name

    @property
    def config_dir(self) -> Path:
        """``etc/dirsrv/slapd-NAME``: ``dse.ldif``, the NSS database and ``schema/``."""
        return self._directory / "etc" / "dirsrv" / f"slapd-{self._name}"

    @property
    def log_dir(self) -> Path:
        """``var/log/dirsrv/slapd-NAME``: the ``errors`` and ``access`` logs."""
        return self._directory / "var" / "log" / "dirsrv" / f"slapd-{self._name}"

    @property
    def log_file(self) -> Path:
        """ns-slapd's standard output and error (its error log), appended across starts."""
        return self._directory / "ns-slapd.log"

    @property
    def ldapi_path(self) -> Path:
        """The LDAPI socket (root binds there as the Directory Manager by autobind)."""
        return self._directory / "run" / f"slapd-{self._name}.socket"

    @property
    def port(self) -> int:
        """The plain LDAP port on 127.0.0.1 (chosen on the first start)."""
        return self._chosen_ports()[0]

    @property
    def tls_port(self) -> int:
        """The LDAPS port on 127.0.0.1 (chosen on the first start)."""
        return self._chosen_ports()[1]

    def _chosen_ports(self) -> tuple[int, int]:
        if self._ports is None:
            self._choose_ports()
        assert self._ports is not None
        return self._ports

    @property
    def url(self) -> str:
        """What the service uses: ``ldaps://localhost:PORT`` (passwords need TLS on 389-DS)."""
        return f"ldaps://{_TLS_HOST}:{self.tls_port}"

    @property
    def ldap_url(self) -> str:
        """The plain LDAP URL, ``ldap://127.0.0.1:PORT`` (no simple binds with passwords)."""
        return f"ldap://{_LISTEN_HOST}:{self.port}"

    @property
    def ca_file(self) -> Path:
        """The private CA certificate (PEM) that verifies :attr:`url` for ``localhost``."""
        return self._directory / "tls" / "ca.crt"

    def tool_environment(self) -> dict[str, str]:
        """The environment in which ``dsidm``, ``dsconf`` and ``dsctl`` find this instance by
        :attr:`name` (``PREFIX`` is the folder)."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env.update(PREFIX=str(self._directory), LDAPNOINIT="1", LC_ALL="C.UTF-8")
        return env

    def can_bind(self, dn: str, password: str) -> bool:
        """Whether a simple bind over LDAPS as ``dn`` with ``password`` succeeds (False for a
        wrong password, 49, or an entry with ``nsAccountLock: TRUE``, 53).

        :raises DirsrvError: when the server cannot be reached.
        """
        return bind_checked(
            _TLS_HOST, self.tls_port, dn, password, self.ca_file, DirsrvError, self.url
        )

    # -- life cycle -------------------------------------------------------------------------

    def __repr__(self) -> str:
        state = f"pid={self.pid}" if self.running else "stopped"
        return f"<DirsrvInstance {self._name} {self.url} {state} {self._directory}>"

    def start(self) -> DirsrvInstance:
        """Create the instance (first time), start ns-slapd, wait until it answers, seed it once.

        Does nothing when already running.

        :returns: this instance.
        :raises DirsrvNotFoundError: when 389-DS is not installed.
        :raises DirsrvError: when the instance cannot be created, ns-slapd exits or does not
            answer within 60 s (the message ends with the tail of its log), or seeding fails
            (the half-seeded instance is removed, so the next start makes it afresh).
        """
        if self.running:
            return self
        started = time.monotonic()
        ns_slapd = _find_binary("ns-slapd")
        created = (self._directory / _CREATED_MARKER).exists()
        if not created:
            self._create()
        self._write_schema()
        attempts = 1 if created else 3
        for attempt in range(attempts):
            logged = self.log_file.stat().st_size if self.log_file.exists() else 0
            try:
                self._launch(ns_slapd)
                break
            except DirsrvError:
                with self.log_file.open("rb") as log:
                    log.seek(logged)
                    busy = b"address is in use" in log.read()
                if attempt + 1 == attempts or not busy:
                    raise
                # A port chosen on creation was taken since (another server, a parallel run).
                self._choose_ports(rewrite=True)
        if not (self._directory / _SEEDED_MARKER).exists():
            seeding = time.monotonic()
            try:
                self._seed_directory()
            except BaseException:
                self.stop()
                self._remove_instance()
                raise
            (self._directory / _SEEDED_MARKER).touch()
            self.timings["seed"] = time.monotonic() - seeding
        self.timings["start"] = time.monotonic() - started
        return self

    def stop(self, timeout: float = _STOP_TIMEOUT) -> None:
        """Stop ns-slapd with SIGTERM to its PID (SIGKILL after ``timeout`` seconds); keep the
        data. A clean stop takes one to four seconds (the bdb threads finish their cycle)."""
        super().stop(timeout)

    def close(self) -> None:
        """Stop ns-slapd and remove the instance (``dsctl NAME remove --do-it``) and its files:
        the whole folder when this object made it, else what it put there."""
        self.stop()
        self._remove_instance()
        self._remove_folder()

    # -- data -------------------------------------------------------------------------------

    def ldapadd(self, ldif: Path | str) -> None:
        """Add the entries of an LDIF file as the Directory Manager, over LDAPI (a secure
        connection for 389-DS: cleartext passwords are accepted and hashed). The server
        must be running.

        :param ldif: the LDIF file (content records, or change records with ``changetype``).
        :raises DirsrvError: when ``ldapadd`` fails; the message carries its output.
        """
        command = [
            _find_binary("ldapadd"),
            "-x",
            "-H",
            self._ldapi_url(),
            "-D",
            self.admin_dn,
            "-y",
            str(self._password_file()),
            "-f",
            str(ldif),
        ]
        self._run(command, f"ldapadd {ldif}")

    def dsidm(self, *arguments: str) -> str:
        """Run 389's ``dsidm NAME -b BASE ARGUMENTS`` on this instance as the Directory Manager.

        :returns: its output.
        :raises DirsrvError: when it fails.
        """
        command = [
            _find_binary("dsidm"),
            self._name,
            "-b",
            self.base_dn,
            "-D",
            self.admin_dn,
            "-y",
            str(self._password_file()),
            *arguments,
        ]
        return self._run(command, f"dsidm {' '.join(arguments[:2])}")

    def _seed_directory(self) -> None:
        """Load the base entries, then (with ``seed``) the sample LDIF alongside carol by dsidm,
        then (with ``vlv_indexes``) the VLV indexes: built over entries, an index is used at
        once (over none, 389-DS looks for it again a minute later)."""
        examples = _examples_dir() / "389ds"
        self.ldapadd(examples / "00-base.ldif")
        if self._seed:
            self._add_samples(examples)
        if self._vlv_indexes:
            self._add_vlv_indexes()

    def _add_samples(self, examples: Path) -> None:
        """alice, bob and the group developers from the sample LDIF, carol made by dsidm."""
        uid, cn, display, mail = _DSIDM_USER
        dn = f"uid={uid},{self.users_base}"

        def dsidm_user() -> None:
            self.dsidm(
                "user",
                "create",
                f"--uid={uid}",
                f"--cn={cn}",
                f"--displayName={display}",
                f"--uidNumber={_DSIDM_UID_NUMBER}",
                f"--gidNumber={_DSIDM_UID_NUMBER}",
                f"--homeDirectory=/home/{uid}",
            )
            with ThreadPoolExecutor(max_workers=2) as pool:
                changes = (f"add:mail:{mail}",)
                futures = [
                    pool.submit(self.dsidm, "user", "modify", uid, *changes),
                    pool.submit(
                        self.dsidm, "account", "reset_password", dn, self.seed_passwords[uid]
                    ),
                ]
            for future in futures:
                future.result()

        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [
                pool.submit(self.ldapadd, examples / "10-sample.ldif"),
                pool.submit(dsidm_user),
            ]
        for future in futures:
            future.result()

    def _add_vlv_indexes(self) -> None:
        """Add the VLV indexes of the service's list searches (once the bases exist: 389-DS
        looks a one-level index's base up when it is added) and wait for the task that builds
        them: an index is used only once built."""
        from scim_core.backends.ldap.settings import LdapSettings
        from scim_core.backends.ldap.vlv_indexes import REINDEX_TASK_DN, vlv_index_ldif

        settings = LdapSettings.from_environ(self.service_settings())
        ldif = self._paths()["tmp_dir"] / "vlv-indexes.ldif"
        ldif.write_text(vlv_index_ldif(settings, _BACKEND), encoding="utf-8")
        self.ldapadd(ldif)
        deadline = time.monotonic() + _TOOL_TIMEOUT
        while True:
            task = self._read_entry(REINDEX_TASK_DN, "nsTaskExitCode", "nsTaskStatus")
            if "nstaskexitcode" in task:
                break
            if time.monotonic() > deadline:
                raise DirsrvError(f"the VLV index task did not finish: {task}")
            time.sleep(0.02)
        if task["nstaskexitcode"] != "0":
            raise DirsrvError(f"the VLV index task failed: {task.get('nstaskstatus')}")

    def _read_entry(self, dn: str, *attributes: str) -> dict[str, str]:
        """The first value of each of ``attributes`` of entry ``dn`` that it has (lower-case
        names), read with ``ldapsearch`` as the Directory Manager over LDAPI."""
        output = self._run(
            [_find_binary("ldapsearch"), "-LLL", "-o", "ldif-wrap=no", "-x", "-H",
             self._ldapi_url(), "-D", self.admin_dn, "-y", str(self._password_file()),
             "-s", "base", "-b", dn, "(objectClass=*)", *attributes],
            f"ldapsearch {dn}",
        )  # fmt: skip
        values: dict[str, str] = {}
        for line in output.splitlines():
            name, separator, value = line.partition(": ")
            if separator:
                values.setdefault(name.lower(), value)
        return values

    def _ldapi_url(self) -> str:
        return "ldapi://" + str(self.ldapi_path).replace("%", "%25").replace("/", "%2F")

    def _password_file(self) -> Path:
        """A file holding the Directory Manager password (for ``-y``), made when missing."""
        path = self._directory / "admin.pw"
        if not path.exists():
            path.write_text(self.admin_password, encoding="utf-8")
            path.chmod(0o600)
        return path

    def _run(self, command: Sequence[str], what: str, *, timeout: float = _TOOL_TIMEOUT) -> str:
        """Run a tool quietly in :meth:`tool_environment`; raise :class:`DirsrvError` with its
        output on failure, else return its output."""
        return run_tool(command, what, DirsrvError, env=self.tool_environment(), timeout=timeout)

    # -- creation ---------------------------------------------------------------------------

    def _existing_name(self) -> str | None:
        """The name of the one instance already in the folder, if any."""
        found = sorted(
            path.parent.name.removeprefix("slapd-")
            for path in (self._directory / "etc" / "dirsrv").glob("slapd-*/dse.ldif")
        )
        if len(found) > 1:
            raise DirsrvError(f"{self._directory} holds several instances {found}: pass name=")
        return found[0] if found else None

    def _read_ports(self) -> None:
        """Take the ports of an existing instance from its ``dse.ldif``."""
        dse = self.config_dir / "dse.ldif"
        if not dse.is_file():
            return
        entries = _parse_ldif(dse.read_text(encoding="utf-8"))
        port = _config_value(entries, "cn=config", "nsslapd-port")
        tls_port = _config_value(entries, "cn=config", "nsslapd-securePort")
        if port and tls_port:
            self._ports = int(port), int(tls_port)

    def _choose_ports(self, *, rewrite: bool = False) -> None:
        """Pick two free ports outside the ephemeral range (and write them into dse.ldif)."""
        port = find_free_port(_LISTEN_HOST)
        tls_port = find_free_port(_LISTEN_HOST)
        while tls_port == port:
            tls_port = find_free_port(_LISTEN_HOST)
        self._ports = port, tls_port
        if rewrite:
            self._edit_dse(
                {"cn=config": {"nsslapd-port": [str(port)], "nsslapd-securePort": [str(tls_port)]}}
            )

    def _edit_dse(self, changes: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
        """Change ``dse.ldif`` while ns-slapd is stopped."""
        dse = self.config_dir / "dse.ldif"
        entries = _parse_ldif(dse.read_text(encoding="utf-8"))
        _apply_changes(entries, changes)
        dse.write_text(_render_ldif(entries), encoding="utf-8")

    def _paths(self, instance_name: str | None = None) -> dict[str, Path]:
        """Where the instance's parts live, by ``defaults.inf`` key.

        :param instance_name: the name to put in the paths (:attr:`name` when None).
        """
        root, name = self._directory, f"slapd-{instance_name or self._name}"
        config = root / "etc" / "dirsrv" / name
        state = root / "var" / "lib" / "dirsrv" / name
        return {
            "sysconf_dir": root / "etc",
            "initconfig_dir": root / "etc" / "default",
            "config_dir": config,
            "cert_dir": config,
            "schema_dir": config / "schema",
            "local_state_dir": root / "var",
            "db_dir": state / "db",
            "db_home_dir": state / "db",
            "backup_dir": state / "bak",
            "ldif_dir": state / "ldif",
            "log_dir": root / "var" / "log" / "dirsrv" / name,
            "run_dir": root / "run" / "dirsrv",
            "lock_dir": root / "run" / "lock" / "dirsrv" / name,
            "inst_dir": root / "lib" / "dirsrv" / name,
            "tmp_dir": root / "tmp",
            "tmpfiles_d": root / "etc" / "tmpfiles.d",
        }

    def _create(self) -> None:
        """Lay out a new instance in the folder (what ``dscreate`` does before its first start,
        with the configuration it applies online written into ``dse.ldif`` instead)."""
        began = time.monotonic()
        if len(str(self.ldapi_path)) > _UNIX_PATH_MAX:
            raise DirsrvError(f"folder path too long for the LDAPI socket: {self.ldapi_path}")
        defaults = _system_defaults()
        slapd = defaults["slapd"]
        template = Path(slapd.get("data_dir", "/usr/share"), "dirsrv", "data", "template-dse.ldif")
        if not template.is_file():
            raise DirsrvNotFoundError(f"{template} not found: {_INSTALL_HINT}")
        tools = (
            "ns-slapd",
            "pwdhash",
            "certutil",
            "pk12util",
            "openssl",
            "ldapadd",
            "ldapsearch",
            "dsidm",
            "dsctl",
        )
        for tool in tools:
            _find_binary(tool)
        self._remove_instance()
        self._directory.mkdir(parents=True, exist_ok=True)
        (self._directory / _OWNER_MARKER).touch()
        try:
            paths = self._paths()
            for key in ("config_dir", "schema_dir", "db_dir", "backup_dir", "ldif_dir"):
                paths[key].mkdir(parents=True, exist_ok=True)
            for key in ("log_dir", "run_dir", "lock_dir", "inst_dir", "tmp_dir"):
                paths[key].mkdir(parents=True, exist_ok=True)
            system_config = Path(slapd.get("sysconf_dir", "/etc"), "dirsrv")
            self._write_defaults_inf(defaults)
            for file in ("slapd-collations.conf", "certmap.conf"):
                shutil.copy(system_config / "config" / file, paths["config_dir"] / file)
            for schema in sorted((system_config / "schema").glob("*.ldif")):
                shutil.copy(schema, paths["schema_dir"] / schema.name)
            if self._ports is None:
                self._choose_ports()
            self._write_dse(template, paths)
            self._make_certificates()
            self._password_file()
        except BaseException:
            self._remove_instance()
            raise
        (self._directory / _CREATED_MARKER).touch()
        self.timings["create"] = time.monotonic() - began

    def _write_defaults_inf(self, defaults: configparser.RawConfigParser) -> None:
        """The ``defaults.inf`` that ``lib389`` reads under ``PREFIX``: this folder's paths (with
        lib389's ``{instance_name}`` placeholder), the system's binaries, no systemd."""
        slapd = defaults["slapd"]
        name = "{instance_name}"
        paths = self._paths(name)
        user = pwd.getpwuid(os.geteuid())
        slapd.update({key: str(path) for key, path in paths.items()})
        slapd.update(
            with_systemd="0",
            with_selinux="",
            user=user.pw_name,
            group=_group_name(user.pw_gid),
            pid_file=str(paths["run_dir"] / f"slapd-{name}.pid"),
            ldapi=str(self._directory / "run" / f"slapd-{name}.socket"),
            access_log=str(paths["log_dir"] / "access"),
            audit_log=str(paths["log_dir"] / "audit"),
            error_log=str(paths["log_dir"] / "errors"),
            security_log=str(paths["log_dir"] / "security"),
        )
        target = self._directory / "share" / "dirsrv" / "inf" / "defaults.inf"
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as file:
            file.write("; Generated by scim_core.testing.dirsrv: this instance's paths.\n")
            defaults.write(file)

    def _pid_file(self) -> Path:
        return self._paths()["run_dir"] / f"slapd-{self._name}.pid"

    def _write_dse(self, template: Path, paths: Mapping[str, Path]) -> None:
        """Fill 389's ``template-dse.ldif`` as ``dscreate`` does and add this launcher's
        configuration: listeners, TLS, plugins, the backend."""
        hashed = self._run(
            [_find_binary("pwdhash"), "-s", "PBKDF2-SHA512", self.admin_password], "pwdhash"
        )
        values = {
            "schema_dir": paths["schema_dir"],
            "lock_dir": paths["lock_dir"],
            "tmp_dir": paths["tmp_dir"],
            "cert_dir": paths["cert_dir"],
            "ldif_dir": paths["ldif_dir"],
            "bak_dir": paths["backup_dir"],
            "run_dir": paths["run_dir"],
            "inst_dir": paths["inst_dir"],
            "log_dir": paths["log_dir"],
            "config_dir": paths["config_dir"],
            "db_dir": paths["db_dir"],
            "db_home_dir": paths["db_home_dir"],
            "db_lib": self._db_lib,
            "fqdn": _TLS_HOST,
            "ds_port": self.port,
            "ds_user": pwd.getpwuid(os.geteuid()).pw_name,
            "rootdn": self.admin_dn,
            "ds_passwd": hashed.splitlines()[-1].strip(),
            "instance_name": self._name,
            "ds_suffix": self.base_dn,
            "ldapi_enabled": "on",
            "ldapi": self.ldapi_path,
            "ldapi_autobind": "on",
        }

        def fill(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in values:
                raise DirsrvError(f"{template}: unknown placeholder %{key}%")
            return str(values[key])

        text = re.sub(r"%([a-z_]+)%", fill, template.read_text(encoding="utf-8"))
        entries = _parse_ldif(text)
        plugins = "cn=plugins,cn=config"
        changes: dict[str, dict[str, list[str]]] = {
            "cn=config": {
                "nsslapd-listenhost": [_LISTEN_HOST],
                "nsslapd-securelistenhost": [_LISTEN_HOST],
                "nsslapd-securePort": [str(self.tls_port)],
                "nsslapd-security": ["on"],
                # The global password policy checks new passwords (389's rules: at least 8
                # characters of 3 categories, no 3-character token of the entry's uid, cn, ...),
                # as the other development directories refuse weak ones. The Directory Manager
                # (the seed) is exempt.
                "passwordCheckSyntax": ["on"],
                "passwordMinLength": ["8"],
            },
            f"cn=MemberOf Plugin,{plugins}": {
                "nsslapd-pluginEnabled": ["on"],
                "memberOfAttr": ["memberOf"],
                "memberOfGroupAttr": ["member"],
                "memberOfAutoAddOC": ["nsMemberOf"],
            },
            f"cn=referential integrity postoperation,{plugins}": {
                "nsslapd-pluginEnabled": ["on"],
                "referint-update-delay": ["0"],
                "referint-membership-attr": [
                    "member",
                    "uniquemember",
                    "owner",
                    "seeAlso",
                    "manager",
                ],
            },
            f"cn=attribute uniqueness,{plugins}": {
                "nsslapd-pluginEnabled": ["on"],
                "uniqueness-attribute-name": ["uid"],
                "uniqueness-subtrees": [self.users_base],
                "uniqueness-across-all-subtrees": ["off"],
            },
            f"cn=USN,{plugins}": {"nsslapd-pluginEnabled": ["on"]},
        }
        ldbm = f"cn=ldbm database,{plugins}"
        # Default indexes are copied into the backend when ns-slapd first opens it. dscreate
        # adds entryUUID; manager is a referential integrity attribute (``dsctl healthcheck``
        # wants an equality index for each) and the service looks users up by scimExternalId.
        additions: list[tuple[str, dict[str, list[str]]]] = [
            (
                f"cn={attribute},cn=default indexes,cn=config,{ldbm}",
                {
                    "objectClass": ["top", "nsIndex"],
                    "cn": [attribute],
                    "nsSystemIndex": ["false"],
                    "nsIndexType": kinds,
                },
            )
            for attribute, kinds in _EXTRA_INDEXES
        ]
        additions += [
            (
                f"cn={_BACKEND},{ldbm}",
                {
                    "objectClass": ["top", "extensibleObject", "nsBackendInstance"],
                    "cn": [_BACKEND],
                    "nsslapd-suffix": [self.base_dn],
                },
            ),
            (
                f'cn="{self.base_dn}",cn=mapping tree,cn=config',
                {
                    "objectClass": ["top", "extensibleObject", "nsMappingTree"],
                    "cn": [self.base_dn],
                    "nsslapd-state": ["backend"],
                    "nsslapd-backend": [_BACKEND],
                },
            ),
        ]
        _apply_changes(entries, changes, additions)
        dse = paths["config_dir"] / "dse.ldif"
        dse.write_text(_render_ldif(entries), encoding="utf-8")
        dse.chmod(0o600)

    def _make_certificates(self) -> None:
        """A private CA and a server certificate (PEM, in ``tls/``, made with ``openssl``),
        imported into the instance's NSS database as the trusted CA and ``Server-Cert``.

        The server key is RSA, as ``dscreate``'s is: 389-DS wraps the attribute-encryption keys
        of a backend with it and logs errors at every start when it cannot. The NSS database has
        a password, given to ns-slapd by ``pin.txt`` (as ``dscreate`` does).
        """
        folder = self._directory / "tls"
        names = [_TLS_HOST, _LISTEN_HOST]
        # OpenLDAP's client tools check a certificate for ldaps://localhost against this
        # machine's host name instead of "localhost".
        host = socket.gethostname()
        if host and re.fullmatch(r"[A-Za-z0-9.-]+", host) and host not in names:
            names.append(host)
        try:
            tls = make_tls_files(folder, names, rsa=True, days=_TLS_DAYS)
        except SlapdError as failure:
            raise DirsrvError(str(failure)) from None
        bundle, secret = folder / "server.p12", secrets.token_hex(16)
        self._run(
            [_find_binary("openssl"), "pkcs12", "-export", "-in", str(tls.cert_file),
             "-inkey", str(tls.key_file), "-name", _SERVER_CERT, "-passout", f"pass:{secret}",
             "-out", str(bundle)],
            "openssl pkcs12",
        )  # fmt: skip
        nss_password = secrets.token_hex(16)
        password_file = self.config_dir / "pwdfile.txt"
        password_file.write_text(nss_password, encoding="utf-8")
        pin = self.config_dir / "pin.txt"
        pin.write_text(f"Internal (Software) Token:{nss_password}\n", encoding="utf-8")
        for path in (password_file, pin):
            path.chmod(0o600)
        database = f"sql:{self.config_dir}"
        certutil = _find_binary("certutil")
        self._run([certutil, "-N", "-d", database, "-f", str(password_file)], "certutil -N")
        self._run(
            [certutil, "-A", "-d", database, "-f", str(password_file), "-n", _CA_NICKNAME,
             "-t", "CT,,", "-a", "-i", str(self.ca_file)],
            "certutil -A",
        )  # fmt: skip
        self._run(
            [_find_binary("pk12util"), "-i", str(bundle), "-d", database,
             "-k", str(password_file), "-W", secret],
            "pk12util",
        )  # fmt: skip
        bundle.unlink()

    def _write_schema(self) -> None:
        """(Re)write ``schema/60scim.ldif`` from :data:`SCIM_SCHEMA`."""
        target = self.config_dir / "schema" / "60scim.ldif"
        text = scim_schema_ldif(SCIM_SCHEMA)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")

    def _remove_instance(self) -> None:
        """Remove the instance with ``dsctl NAME remove --do-it`` (when it has a dse.ldif) and
        the files this launcher put in the folder; never raises. A folder without this
        launcher's marker is left alone."""
        if not (self._directory / _OWNER_MARKER).is_file():
            return
        if (self.config_dir / "dse.ldif").is_file() and shutil.which("dsctl"):
            # The folders go below in any case.
            with contextlib.suppress(DirsrvError):
                self._run(
                    [_find_binary("dsctl"), self._name, "remove", "--do-it"],
                    "dsctl remove",
                    timeout=60,
                )
        for entry in _OWNED_ENTRIES:
            path = self._directory / entry
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        (self._directory / _OWNER_MARKER).unlink(missing_ok=True)

    # -- process ----------------------------------------------------------------------------

    def _launch(self, ns_slapd: str) -> None:
        """Start ``ns-slapd -d`` (foreground) and wait until LDAPS answers with our certificate."""
        began = time.monotonic()
        pid_file = self._pid_file()
        pid_file.unlink(missing_ok=True)
        proc = self._spawn(
            [ns_slapd, "-D", str(self.config_dir), "-i", str(pid_file), "-d", _ERRORLOG_LEVEL],
            self.log_file,
            self.url,
            env=preloaded_environment(self._allocator),
        )
        # The CA is this folder's own: a server whose certificate it verifies is ours.
        self._await_answer(
            proc,
            self.log_file,
            self._answers,
            DirsrvError,
            timeout=_START_TIMEOUT,
            interval=0.02,
            give_up=lambda: self.stop(timeout=5),
        )
        self.timings["launch"] = time.monotonic() - began

    def _answers(self) -> bool:
        """Whether both listeners answer an anonymous bind (LDAPS verified with our CA)."""
        secure = answers(_TLS_HOST, self.tls_port, ca_file=self.ca_file, timeout=0.5)
        return secure and answers(_LISTEN_HOST, self.port, timeout=0.5)


def _group_name(gid: int) -> str:
    """The name of group ``gid`` (the number itself when it has none)."""
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one 389 Directory Server in the foreground until SIGINT or SIGTERM.

    Prints ``LDAP_URL=...``, ``LDAP_USERS_BASE=...``, ``LDAP_GROUPS_BASE=...``,
    ``LDAP_ADMIN_DN=...``, ``LDAP_ADMIN_PASSWORD=...``, ``LDAP_SERVICE_DN=...``,
    ``LDAP_SERVICE_PASSWORD=...`` and ``LDAP_CA_FILE=...``, one per line, once it answers.

    :param argv: command-line arguments (``sys.argv[1:]`` when None).
    :returns: 0 after a clean stop, 1 if ns-slapd failed or died.
    """
    parser = foreground_parser(
        "scim_core.testing.dirsrv",
        "Run a throwaway 389 Directory Server seeded with examples/389ds.",
        directory_help="folder for the instance (kept, and reused next time); default: a "
        "temporary folder, removed on exit",
        seed_help="do not add alice, bob, carol",
    )
    parser.add_argument("--name", default=None, help="the 389 instance name")
    args = parser.parse_args(argv)

    instance = DirsrvInstance(args.directory, seed=args.seed, name=args.name)
    return serve_in_foreground(instance, DirsrvError, "ns-slapd")


if __name__ == "__main__":
    raise SystemExit(main())
