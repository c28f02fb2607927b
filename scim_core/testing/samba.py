"""A throwaway Samba Active Directory domain controller for tests, ``make run`` and benchmarks.

This module owns the development Active Directory: it provisions a domain ``EXAMPLE.ORG`` into a
folder with ``samba-tool domain provision``, starts ``samba -i`` as a plain foreground child
process (no systemd) listening on one loopback address only, seeds it once with ``samba-tool``
and stops it again by process id. It uses the standard library and Samba's command line tools
(``samba``, ``samba-tool``) only (:meth:`SambaDcInstance.can_bind` speaks LDAP itself).

What the domain controller looks like:

* only Samba's ``ldap`` service runs (ports 389, 636, 3268 and 3269 of the listening address;
  no Kerberos, SMB, RPC or DNS), so one DC per address: a second one on the same address fails
  with a message naming the taken port;
* LDAPS on port 636 with a certificate from a private CA (:attr:`~SambaDcInstance.ca_file`, made
  with :func:`scim_core.testing.slapd.make_tls_files`) valid for the listening address, so
  :attr:`~SambaDcInstance.url` verifies without an ``/etc/hosts`` entry. Simple binds over
  plain ``ldap://`` are refused (``strongerAuthRequired``), as on a default AD;
* ``OU=people``, ``OU=groups`` and ``OU=services`` under ``DC=example,DC=org``;
* the service account ``CN=scim,OU=services`` is an ordinary user (not a Domain Admin) with one
  delegated ACE on each of ``OU=people`` and ``OU=groups``, inherited by everything below them:
  create and delete children, read and write every property, all extended rights (among them
  *Reset Password*), delete, delete tree, read permissions; not write-DAC or write-owner;
* users ``alice`` and ``bob`` in ``OU=people`` (``givenName``, ``sn``, ``mail``,
  ``userPrincipalName`` ``<name>@example.org``; bob's ``manager`` is alice) and the global
  security group ``developers`` in ``OU=groups`` holding both;
* a password change or reset takes effect at once (``old password allowed period = 0``; by
  default Samba accepts the previous password for another hour, in simple binds too);
* Samba's default password policy: complexity on, at least 7 characters, history 24, minimum
  age 1 day, maximum age 42 days (the service and administrator passwords never expire).

Typical use::

    with SambaDcInstance() as dc:
        connect(dc.url, dc.service_dn, dc.service_password, ca_file=dc.ca_file)

Run ``python -m scim_core.testing.samba [--directory D] [--host 127.0.0.1]`` to keep one in the
foreground; it prints ``LDAP_*=value`` lines and stops on SIGINT/SIGTERM. It needs root (the AD
ports are below 1024) and the Debian packages ``samba``, ``samba-ad-dc`` and
``samba-ad-provision``.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from types import MappingProxyType

from scim_core.testing._common import (
    Launcher,
    answers,
    bind_checked,
    find_binary,
    foreground_parser,
    run_tool,
    serve_in_foreground,
)
from scim_core.testing.slapd import make_tls_files

__all__ = [
    "ADMIN_PASSWORD",
    "SERVICE_PASSWORD",
    "SambaDcInstance",
    "SambaError",
    "SambaNotFoundError",
    "main",
]

#: Password of ``CN=Administrator,CN=Users,...`` (development only).
ADMIN_PASSWORD = "Admin-dev-Passw0rd"
#: Password of the service account ``CN=scim,OU=services,...`` (development only).
SERVICE_PASSWORD = "Scim-dev-Passw0rd"

_REALM = "EXAMPLE.ORG"
_DOMAIN = "EXAMPLE"
_BASE_DN = "DC=example,DC=org"
_HOST_NAME = "dc1"
_INSTALL_HINT = (
    "install a Samba AD DC with `apt-get install samba samba-ad-dc samba-ad-provision` "
    "(samba-ad-provision holds the AD schema files provisioning needs)"
)
_BINARY_DIRS = (
    "/usr/sbin",
    "/usr/bin",
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/local/samba/sbin",
)
#: The ports of Samba's ``ldap`` service: LDAP, LDAPS, global catalog and global catalog over TLS.
_PORTS = (389, 636, 3268, 3269)
_LDAPS_PORT = 636
_PROVISION_TIMEOUT = 300.0
_TOOL_TIMEOUT = 120.0
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 15.0
_PROVISIONED_MARKER = ".provisioned"
_SEEDED_MARKER = ".seeded"
#: Folders a provision creates inside the target folder (removed again before a retry).
_PROVISION_DIRS = ("etc", "private", "state", "cache", "bind-dns", "run", "log", "tls")
#: The delegated rights of the service account on the people and groups OUs, as an SDDL
#: access mask: create child, delete child, list children, validated write, read property,
#: write property, delete tree, list object, all extended rights (Reset Password among them),
#: delete, read permissions. CI: this object and every descendant.
_SERVICE_RIGHTS = "CCDCLCSWRPWPDTLOCRSDRC"


class SambaError(RuntimeError):
    """The throwaway Samba DC could not be provisioned, started, seeded or stopped."""


class SambaNotFoundError(SambaError):
    """Samba (the ``samba`` daemon, ``samba-tool`` or the AD provisioning files) is missing."""


def _find_binary(name: str) -> str:
    """Locate a Samba binary on ``PATH`` or in the usual system folders."""
    return find_binary(name, _BINARY_DIRS, SambaNotFoundError, _INSTALL_HINT)


def _interface_addresses() -> set[str] | None:
    """The IPv4 addresses on this machine's interfaces (``ip -o -4 addr``); None without ``ip``."""
    tool = shutil.which("ip") or next(
        (p for p in ("/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip") if os.access(p, os.X_OK)), None
    )
    if tool is None:
        return None
    result = subprocess.run(
        [tool, "-o", "-4", "addr", "show"],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        return None
    return set(re.findall(r"\binet (\d+\.\d+\.\d+\.\d+)/", result.stdout))


def _port_taken(host: str, port: int) -> bool:
    """Return whether a listening socket already holds ``host:port`` (as Samba would bind it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            return error.errno == errno.EADDRINUSE
    return False


def _process_group_members(pgid: int) -> list[int]:
    """The live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command: state, ppid, pgrp, ...
        if len(fields) > 2 and fields[0] != "Z" and fields[2] == str(pgid):
            members.append(int(entry.name))
    return members


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to every live process of the process group ``pgid`` (one by one, by PID)."""
    for pid in _process_group_members(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


class SambaDcInstance(Launcher):
    """One throwaway Samba AD domain controller with its configuration and data in a folder.

    The service's profile for it is :attr:`dialect`; the seeded users' passwords are in
    :attr:`seed_passwords` (development data).

    The instance is a context manager: entering starts it, leaving stops it and removes the
    folder when the instance created it. :meth:`stop` keeps the data, so :meth:`start` brings
    the same domain back.

    The first :meth:`start` provisions the domain (about 5 s) and seeds it (about 2.5 s); a
    start of a provisioned folder takes about half a second (see :attr:`timings`).

    :param directory: folder for the configuration, the databases and the logs; a fresh
        temporary folder (removed by :meth:`close`) when omitted. An existing provisioned
        folder is reused.
    :param seed: add alice, bob and the group developers on the first start (the OUs, the
        service account and its rights are always made).
    :param host: the loopback IPv4 address to listen on. When it is not on an interface yet,
        :meth:`start` adds it to ``lo`` (root only) and :meth:`close` removes it again.
    """

    dialect: str = "ad"
    realm: str = _REALM
    domain: str = _DOMAIN
    base_dn: str = _BASE_DN
    users_base: str = f"OU=people,{_BASE_DN}"
    groups_base: str = f"OU=groups,{_BASE_DN}"
    services_base: str = f"OU=services,{_BASE_DN}"
    admin_dn: str = f"CN=Administrator,CN=Users,{_BASE_DN}"
    admin_password: str = ADMIN_PASSWORD
    service_dn: str = f"CN=scim,OU=services,{_BASE_DN}"
    service_password: str = SERVICE_PASSWORD
    #: AD groups may be empty: no placeholder member is needed.
    placeholder_dn: str | None = None
    seed_passwords: Mapping[str, str] = MappingProxyType(
        {"alice": "Alice-dev-Passw0rd", "bob": "Bob-dev-Passw0rd"}
    )

    def __init__(
        self,
        directory: Path | str | None = None,
        *,
        seed: bool = True,
        host: str = "127.0.0.1",
    ) -> None:
        address = ipaddress.ip_address(host)
        if address.version != 4 or not address.is_loopback:
            raise ValueError(f"host must be a loopback IPv4 address (127.x.y.z), not {host}")
        self._host = str(address)
        self._use_folder(directory, "scim-samba-")
        self._seed = seed
        self._proc: subprocess.Popen[bytes] | None = None
        self._added_address = False
        #: Seconds the provision, the seed and the last start took (each key once it happened).
        self.timings: dict[str, float] = {}

    # -- identity ---------------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The loopback address the DC listens on."""
        return self._host

    @property
    def url(self) -> str:
        """The LDAPS URL, ``ldaps://<host>:636``, verifiable with :attr:`ca_file`."""
        return f"ldaps://{self._host}:{_LDAPS_PORT}"

    @property
    def ca_file(self) -> Path:
        """The private CA certificate (PEM) that verifies :attr:`url`'s certificate."""
        return self._directory / "tls" / "ca.crt"

    @property
    def config_file(self) -> Path:
        """The DC's ``smb.conf``."""
        return self._directory / "etc" / "smb.conf"

    @property
    def log_file(self) -> Path:
        """samba's standard output and error, appended across starts."""
        return self._directory / "log" / "samba.log"

    def can_bind(self, name: str, password: str) -> bool:
        """Whether a simple bind over LDAPS as ``name`` (a DN, a ``userPrincipalName`` such as
        ``alice@example.org``, or ``EXAMPLE\\alice``) with ``password`` succeeds (False for a
        wrong password or a disabled account, 49).

        :raises SambaError: when the DC cannot be reached.
        """
        return bind_checked(
            self._host, _LDAPS_PORT, name, password, self.ca_file, SambaError, self.url
        )

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> SambaDcInstance:
        """Provision the domain (first time), seed it (once), start samba, wait for LDAPS.

        Does nothing when already running.

        :returns: this instance.
        :raises SambaNotFoundError: when Samba is not installed.
        :raises SambaError: when the address cannot be used, an AD port is taken, provisioning
            or seeding fails, or samba exits or does not answer within 60 s (the message ends
            with the tail of its log).
        """
        if self.running:
            return self
        samba = _find_binary("samba")
        _find_binary("samba-tool")
        self._ensure_address()
        taken = [port for port in _PORTS if _port_taken(self._host, port)]
        if taken:
            raise SambaError(
                f"port {', '.join(map(str, taken))} on {self._host} is taken (another Samba DC "
                "or LDAP server?); Samba AD uses fixed ports, so run one DC per address: pass "
                "another loopback address as host="
            )
        if not (self._directory / _PROVISIONED_MARKER).exists():
            self._provision()
        self._write_config()
        if not (self._directory / _SEEDED_MARKER).exists():
            started = time.monotonic()
            try:
                self._seed_directory()
            except BaseException:
                # Half seeded: the next start provisions afresh rather than seed twice.
                (self._directory / _PROVISIONED_MARKER).unlink(missing_ok=True)
                raise
            self.timings["seed"] = time.monotonic() - started
            (self._directory / _SEEDED_MARKER).touch()
        started = time.monotonic()
        self._launch(samba)
        self.timings["start"] = time.monotonic() - started
        return self

    def stop(self, timeout: float = _STOP_TIMEOUT) -> None:
        """Stop samba with SIGTERM (SIGKILL after ``timeout`` seconds); keep the data.

        samba's child processes (the prefork LDAP workers) share its process group; any of
        them still alive once samba has exited is sent SIGTERM and then SIGKILL, by PID.

        :param timeout: seconds to wait for a clean shutdown.
        """
        proc = self._proc
        if proc is None:
            return
        pgid = proc.pid  # samba leads its own process group (started in a new session)
        self._terminate(proc, timeout)
        if proc.stdin is not None:
            proc.stdin.close()
        deadline = time.monotonic() + timeout
        sig = signal.SIGTERM
        while _process_group_members(pgid):
            if time.monotonic() > deadline:
                if sig == signal.SIGKILL:
                    raise SambaError(f"samba processes of group {pgid} survived SIGKILL")
                sig, deadline = signal.SIGKILL, time.monotonic() + 5
            _signal_group(pgid, sig)
            time.sleep(0.05)
        self._forget()

    def stop_at_exit(self) -> None:
        """Stop samba and remove an address :meth:`start` added."""
        self.stop()
        self._release_address()

    def close(self) -> None:
        """Stop samba, remove an address :meth:`start` added, and remove the folder when this
        instance created it."""
        self.stop()
        self._release_address()
        self._remove_folder()

    # -- address ----------------------------------------------------------------------------

    def _ensure_address(self) -> None:
        """Make sure :attr:`host` is on an interface (samba binds only interface addresses)."""
        addresses = _interface_addresses()
        if addresses is None or self._host in addresses:
            return
        if os.geteuid() != 0:
            raise SambaError(
                f"{self._host} is on no network interface and Samba listens only on interface "
                f"addresses: run `sudo ip addr add {self._host}/32 dev lo` (or use 127.0.0.1)"
            )
        self._ip("add")
        self._added_address = True

    def _release_address(self) -> None:
        """Remove the address from ``lo`` if (and only if) this instance added it."""
        if self._added_address:
            self._ip("del")
            self._added_address = False

    def _ip(self, action: str) -> None:
        """``ip addr add|del <host>/32 dev lo``."""
        tool = shutil.which("ip") or "/usr/sbin/ip"
        command = [tool, "addr", action, f"{self._host}/32", "dev", "lo"]
        result = subprocess.run(
            command, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
        )
        if result.returncode != 0:
            raise SambaError(f"{' '.join(command)} failed: {result.stderr.strip()}")

    # -- provisioning -----------------------------------------------------------------------

    def _provision(self) -> None:
        """Provision the domain into the folder (removing what a failed attempt left)."""
        for name in _PROVISION_DIRS:
            shutil.rmtree(self._directory / name, ignore_errors=True)
        self._directory.mkdir(parents=True, exist_ok=True)
        self._make_tls_files()
        command = [
            _find_binary("samba-tool"),
            "domain",
            "provision",
            f"--realm={self.realm}",
            f"--domain={self.domain}",
            "--server-role=dc",
            "--dns-backend=NONE",
            "--use-rfc2307",
            f"--targetdir={self._directory}",
            f"--host-name={_HOST_NAME}",
            f"--host-ip={self._host}",
            f"--adminpass={self.admin_password}",
            *(f"--option={key} = {value}" for key, value in self._options().items()),
        ]
        started = time.monotonic()
        self._run(command, "samba-tool domain provision", timeout=_PROVISION_TIMEOUT)
        self.timings["provision"] = time.monotonic() - started
        (self._directory / _PROVISIONED_MARKER).touch()

    def _make_tls_files(self) -> None:
        """A private CA and a certificate for the address and the DC's host name (again when
        the folder is reused on another address)."""
        names = (self._host, f"{_HOST_NAME}.{self.realm.lower()}", "localhost")
        record = self._directory / "tls" / "names"
        try:
            if self.ca_file.is_file() and record.read_text(encoding="utf-8").split() == list(names):
                return
        except OSError:
            pass
        make_tls_files(record.parent, names)
        record.write_text("\n".join(names) + "\n", encoding="utf-8")

    def _options(self) -> dict[str, str]:
        """The smb.conf [global] settings this launcher owns (set at provision and each start)."""
        folder = self._directory
        tls = folder / "tls"
        return {
            "interfaces": self._host,
            "bind interfaces only": "yes",
            "server services": "ldap",
            "pid directory": str(folder / "run"),
            "ncalrpc dir": str(folder / "run" / "ncalrpc"),
            "winbindd socket directory": str(folder / "run" / "winbindd"),
            "ntp signd socket directory": str(folder / "run" / "ntp_signd"),
            "log file": str(folder / "log" / "log.%m"),
            # Samba's default (60 minutes) keeps accepting the previous password, simple binds
            # included, after a change or reset: a new password takes effect at once here.
            "old password allowed period": "0",
            "tls enabled": "yes",
            "tls keyfile": str(tls / "server.key"),
            "tls certfile": str(tls / "server.crt"),
            "tls cafile": str(tls / "ca.crt"),
        }

    def _write_config(self) -> None:
        """Rewrite the [global] settings of :meth:`_options` in ``smb.conf``."""
        self._make_tls_files()
        for name in ("run", "log"):
            (self._directory / name).mkdir(exist_ok=True)
        options = self._options()
        owned = {_option_key(key) for key in options}
        lines: list[str] = []
        section = ""
        for line in self.config_file.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith("["):
                section = stripped.lower()
                lines.append(line)
                if section == "[global]":
                    lines.extend(f"\t{key} = {value}" for key, value in options.items())
                continue
            key = stripped.split("=", 1)[0]
            if section == "[global]" and "=" in stripped and _option_key(key) in owned:
                continue
            lines.append(line)
        self.config_file.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _seed_directory(self) -> None:
        """Add the OUs, the service account with its rights and (with ``seed``) the seed data,
        with ``samba-tool`` on the local database (samba is not running yet).

        Independent commands run side by side (the database serialises their transactions):
        four rounds of about 0.4 s instead of thirteen.
        """
        self._tools(
            *(("ou", "add", dn) for dn in (self.users_base, self.groups_base, self.services_base))
        )
        people = _relative(self.users_base)
        seed_adds: list[tuple[str, ...]] = [
            (
                "user",
                "add",
                name,
                self.seed_passwords[name],
                "--use-username-as-cn",
                f"--userou={people}",
                f"--given-name={given}",
                f"--surname={surname}",
                f"--mail-address={name}@{self.realm.lower()}",
            )
            for name, given, surname in (("alice", "Alice", "Smith"), ("bob", "Bob", "Jones"))
        ]
        seed_adds.append(
            (
                "group",
                "add",
                "developers",
                f"--groupou={_relative(self.groups_base)}",
                "--group-scope=Global",
                "--group-type=Security",
                "--description=Developers",
            )
        )
        service_add = (
            "user",
            "add",
            "scim",
            self.service_password,
            "--use-username-as-cn",
            f"--userou={_relative(self.services_base)}",
            "--description=SCIM provisioning service",
        )
        self._tools(service_add, *(seed_adds if self._seed else ()))
        # `samba-tool user edit` hands the entry's LDIF to an editor: this one adds a line.
        editor = self._directory / "run" / "add-manager"
        editor.write_text(
            f"#!/bin/sh\nexec sed -i '/^dn: /a manager: CN=alice,{self.users_base}' \"$1\"\n",
            encoding="utf-8",
        )
        editor.chmod(0o700)
        seed_edits = [
            ("group", "addmembers", "developers", "alice,bob"),
            ("user", "edit", "bob", f"--editor={editor}"),
        ]
        shown, *_ = self._tools(
            ("user", "show", "scim", "--attributes=objectSid"),
            ("user", "setexpiry", "scim", "--noexpiry"),
            ("user", "setexpiry", "Administrator", "--noexpiry"),
            *(seed_edits if self._seed else ()),
        )
        editor.unlink()
        match = re.search(r"^objectSid: (S-1-5-21-[0-9-]+)$", shown, re.MULTILINE)
        if match is None:
            raise SambaError(f"no objectSid in `samba-tool user show scim`:\n{shown}")
        ace = f"(A;CI;{_SERVICE_RIGHTS};;;{match.group(1)})"
        self._tools(
            *(
                ("dsacl", "set", f"--objectdn={base}", f"--sddl={ace}")
                for base in (self.users_base, self.groups_base)
            )
        )

    def _tools(self, *commands: Sequence[str]) -> list[str]:
        """Run several :meth:`_tool` commands side by side; return their outputs in order.

        :raises SambaError: the first failure, once every command has finished.
        """
        with ThreadPoolExecutor(max_workers=len(commands)) as pool:
            futures = [pool.submit(self._tool, *command) for command in commands]
            wait(futures)
        return [future.result() for future in futures]

    def _tool(self, *arguments: str) -> str:
        """Run ``samba-tool ARGUMENTS -s smb.conf`` on the local database; return its output."""
        command = [_find_binary("samba-tool"), *arguments, "-s", str(self.config_file)]
        return self._run(command, f"samba-tool {' '.join(arguments[:2])}", timeout=_TOOL_TIMEOUT)

    def _run(self, command: Sequence[str], what: str, *, timeout: float) -> str:
        """Run a Samba tool quietly; raise :class:`SambaError` with its output on failure."""
        env = dict(os.environ, LC_ALL="C.UTF-8", EDITOR="/bin/false")
        try:
            return run_tool(command, what, SambaError, env=env, timeout=timeout)
        except SambaError as failure:
            if "samba-ad-provision" in str(failure):
                raise SambaNotFoundError(f"{what} failed: {_INSTALL_HINT}\n{failure}") from None
            raise

    # -- process ----------------------------------------------------------------------------

    def _launch(self, samba: str) -> None:
        """Start ``samba -i`` and wait until LDAPS answers an anonymous bind."""
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        proc = self._spawn(
            [samba, "-i", "-s", str(self.config_file)],
            self.log_file,
            self.url,
            # samba -i exits when its standard input reaches end of file: a pipe only this
            # process holds stops samba even when this process dies without cleaning up.
            stdin=subprocess.PIPE,
        )
        # The CA is this folder's own: an answer verified with it is this DC's.
        self._await_answer(
            proc,
            self.log_file,
            lambda: answers(self._host, _LDAPS_PORT, ca_file=self.ca_file, timeout=0.5),
            SambaError,
            timeout=_START_TIMEOUT,
            interval=0.05,
            give_up=self.stop,
            explain=_exit_hint,
        )


def _exit_hint(log: str) -> str:
    """A likely cause of samba's early exit, read from its log (empty when none is known)."""
    if "Failed to listen" in log and "ACCESS_DENIED" in log:
        return " (the AD ports are below 1024: run as root)"
    if "ADDRESS_ALREADY_ASSOCIATED" in log or "Address already in use" in log:
        return " (an AD port is taken: one DC per address)"
    if "no network interfaces" in log.lower():
        return " (the address is on no interface)"
    return ""


def _option_key(key: str) -> str:
    """Normalise an smb.conf parameter name (case, spaces and underscores do not matter)."""
    return re.sub(r"[\s_]+", "", key).lower()


def _relative(dn: str) -> str:
    """``OU=x,DC=example,DC=org`` without the domain part, as ``--userou`` expects it."""
    suffix = "," + _BASE_DN
    return dn[: -len(suffix)] if dn.lower().endswith(suffix.lower()) else dn


def main(argv: Sequence[str] | None = None) -> int:
    """Run one Samba AD DC in the foreground until SIGINT or SIGTERM.

    Prints ``LDAP_URL=...``, ``LDAP_USERS_BASE=...``, ``LDAP_GROUPS_BASE=...``,
    ``LDAP_ADMIN_DN=...``, ``LDAP_ADMIN_PASSWORD=...``, ``LDAP_SERVICE_DN=...``,
    ``LDAP_SERVICE_PASSWORD=...`` and ``LDAP_CA_FILE=...``, one per line, once LDAPS answers.

    :param argv: command-line arguments (``sys.argv[1:]`` when None).
    :returns: 0 after a clean stop, 1 if samba failed or died.
    """
    parser = foreground_parser(
        "scim_core.testing.samba",
        "Run a throwaway Samba Active Directory domain controller.",
        seed_help="do not add alice, bob, developers",
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to listen on")
    args = parser.parse_args(argv)

    instance = SambaDcInstance(args.directory, seed=args.seed, host=args.host)
    return serve_in_foreground(instance, SambaError, "samba")


if __name__ == "__main__":
    raise SystemExit(main())
