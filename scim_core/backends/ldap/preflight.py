"""``scim-ldap check``: a preflight of the configured directory, as the service account.

It connects and binds the way the service does (:class:`~.connection.ConnectionFactory`, TLS
verified), reads the rootDSE and names the directory (:mod:`~.identity`), lists which of the
controls and extended operations the service uses the server offers and what the service
falls back to without each (:mod:`~.capabilities`), checks that the users and groups bases
exist, that the object classes and attributes the profile and the mapping files name are in
the directory's schema (its subschema subentry), lists a page of users and of groups the
way a list request does and, on 389-DS, checks the VLV indexes of those lists
(:mod:`~.vlv_indexes`). Nothing is written.

With ``write_test`` it then runs the write test (:mod:`~.write_test`): throwaway entries made,
changed and deleted through the backend's own write paths. The bind password never appears in
a step.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Final

from ldap3 import BASE, SUBTREE, Connection
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backend import Query
from scim_core.backends.ldap import capabilities as features
from scim_core.backends.ldap import operations
from scim_core.backends.ldap.backend import LdapBackend
from scim_core.backends.ldap.capabilities import Capabilities
from scim_core.backends.ldap.connection import UNAVAILABLE, ConnectionFactory, failure_reason
from scim_core.backends.ldap.identity import (
    IDENTITY_ATTRIBUTES,
    Identity,
    identify,
    root_values,
)
from scim_core.backends.ldap.operations import Search
from scim_core.backends.ldap.profiles import PROFILES
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.backends.ldap.vlv_indexes import (
    VLV_ATTRIBUTES,
    VLV_CONFIGURATION,
    VLV_DIALECTS,
    VLV_ENTRIES,
    vlv_index_report,
)
from scim_core.backends.ldap.write_test import ldap_refusal, write_steps
from scim_core.checks import FAILED, FALLBACK, OK, SKIPPED, WARNING, Result, Step
from scim_core.errors import ScimError

__all__ = ["PreflightError", "run_check", "schema_names"]

log = logging.getLogger("scim.ldap")


class PreflightError(Exception):
    """No configured URL could be connected to and bound; the message is one line."""


# ------------------------------------------------------------------------------ capabilities


@dataclass(frozen=True)
class _Feature:
    """One control or extended operation the service uses, and its fallback."""

    name: str
    offered: Callable[[Capabilities], bool]
    used_for: str
    without: str
    needed: Callable[[LdapSettings], bool] = lambda _settings: True
    #: Without it (and needed), provisioning fails rather than falls back.
    required: bool = False


_FEATURES: Final = (
    _Feature(
        "assertion (RFC 4528)",
        lambda c: c.assertion,
        "If-Match and lost updates are checked by the directory in the write itself",
        "If-Match is compared in the read just before the write: a change in between is not seen",
    ),
    _Feature(
        "post-read (RFC 4527)",
        lambda c: features.POST_READ in c.controls,
        "a write's answer carries the entry it left",
        "the entry is read with a search after each write (one more operation)",
    ),
    _Feature(
        "ValuesReturnFilter (RFC 3876)",
        lambda c: c.values_return_filter,
        "membership changes check only the members in question",
        "one base search per member in question",
    ),
    _Feature(
        "sort + VLV (RFC 2891)",
        lambda c: c.sorted_windows,
        "list pages are sorted windows at any depth",
        "every match is read and sorted by the service (cost grows with the list)",
    ),
    _Feature(
        "password modify (RFC 3062)",
        lambda c: c.password_modify,
        "passwords are set with the password modify operation",
        "passwords cannot be set: a request with a password fails",
        needed=lambda s: PROFILES[s.dialect].password_attribute is None and not s.password_on_add,
        required=True,
    ),
    _Feature(
        "Who am I? (RFC 4532)",
        lambda c: c.who_am_i,
        "/readyz asks on the bound connection",
        "/readyz reads the rootDSE instead",
    ),
)


def _feature_steps(settings: LdapSettings, offered: Capabilities) -> list[Step]:
    steps = []
    for feature in _FEATURES:
        if not feature.needed(settings):
            steps.append(Step(feature.name, OK, "not used with this profile and settings"))
        elif feature.offered(offered):
            steps.append(Step(feature.name, OK, f"offered: {feature.used_for}"))
        else:
            result = FAILED if feature.required else FALLBACK
            steps.append(Step(feature.name, result, f"not offered: {feature.without}"))
    return steps


# ------------------------------------------------------------------------------ schema

_NAMES = re.compile(r"\bNAME\s+(?:'([^']+)'|\(([^)]*)\))", re.IGNORECASE)


def schema_names(definitions: Sequence[object]) -> set[str]:
    """The names (lower case) RFC 4512 ``attributeTypes`` or ``objectClasses`` values define
    (``NAME 'cn'``, ``NAME ( 'cn' 'commonName' )``)."""
    names: set[str] = set()
    for definition in definitions:
        text = definition.decode() if isinstance(definition, bytes) else str(definition)
        for single, several in _NAMES.findall(text):
            names.update(
                n.lower() for n in ([single] if single else re.findall(r"'([^']+)'", several))
            )
    return names


def _needed_classes(backend: LdapBackend) -> list[str]:
    settings, profile = backend.settings, backend.profile
    mapped = [m.object_class for m in (*backend.mapping.users, *backend.mapping.groups)]
    chosen = [settings.external_id_object_class, settings.group_object_class, *mapped]
    return list(
        dict.fromkeys([*profile.user_classes, *profile.group_classes, *filter(None, chosen)])
    )


def _needed_attributes(backend: LdapBackend) -> list[str]:
    settings, profile = backend.settings, backend.profile
    extension = (
        settings.pending_attribute,
        settings.group_display_name_attribute,
        profile.account_name,
        profile.password_attribute or "userPassword",
        profile.dn_attribute,
        profile.member_of,
    )
    names = [
        *backend.users.read_attributes,
        profile.user_naming,
        "cn",
        "member",
        *filter(None, extension),
        *(m.ldap for m in backend.mapping.groups),
    ]
    return [n for n in dict.fromkeys(names) if n not in ("1.1", "*", "+")]


def _missing(needed: Sequence[str], defined: set[str]) -> list[str]:
    return [name for name in needed if name.lower() not in defined]


_SCHEMA_HINT: Final = (
    "load the service's schema (`scim-ldap schema`), or map them elsewhere (SCIM_MAPPING_FILE, "
    '`ldap = "none"`) or set their SCIM_LDAP_* setting to none'
)


def _schema_steps(run: Callable[..., Any], subschema: str, backend: LdapBackend) -> list[Step]:
    entries, _ = run(subschema, "(objectClass=*)", ["attributeTypes", "objectClasses"])
    if not entries:
        return [Step("schema", FAILED, f"the subschema entry {subschema} cannot be read")]
    found = entries[0]["attributes"]
    steps = []
    for what, needed, attribute in (
        ("object classes", _needed_classes(backend), "objectClasses"),
        ("attributes", _needed_attributes(backend), "attributeTypes"),
    ):
        missing = _missing(needed, schema_names(root_values(found, attribute)))
        if missing:
            detail = f"missing in {subschema}: {', '.join(missing)}; {_SCHEMA_HINT}"
            steps.append(Step(f"schema: {what}", FAILED, detail))
        else:
            steps.append(Step(f"schema: {what}", OK, f"all {len(needed)} found in {subschema}"))
    return steps


# ------------------------------------------------------------------------------ the check


@contextmanager
def _quiet() -> Iterator[None]:
    """The plugin's own log lines stay out of the check's output (the steps say it all)."""
    logger = logging.getLogger("scim")
    silent = logging.NullHandler()
    propagate = logger.propagate
    logger.addHandler(silent)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(silent)
        logger.propagate = propagate


def _transport(settings: LdapSettings, url: str) -> tuple[Result, str]:
    """(result, detail) of how ``url`` is protected."""
    verified = f"certificate verified against {settings.ca_file or 'the system CAs'}"
    if url.lower().startswith("ldaps://"):
        return OK, f"LDAPS, {verified}"
    if settings.start_tls:
        return OK, f"StartTLS, {verified}"
    return WARNING, (
        "no TLS: the bind password and users' passwords cross the network in clear "
        "(389-DS and AD refuse password changes without TLS)"
    )


def _connect(settings: LdapSettings) -> tuple[LdapSettings, list[Step]]:
    """Connect and bind to each URL as the service does; the settings of the first that
    answers (a failover URL that does not is a warning).

    :raises PreflightError: when none does.
    """
    steps: list[Step] = []
    working: LdapSettings | None = None
    failures = []
    for url in settings.urls:
        single = replace(settings, urls=(url,))
        try:
            with ConnectionFactory(single).fresh():
                pass
        except UNAVAILABLE as error:
            failures.append(f"{url}: {failure_reason(error)}")
            steps.append(Step(f"connect {url}", WARNING, failure_reason(error)))
            continue
        steps.append(Step(f"connect {url}", *_transport(settings, url)))
        working = working or single
    if working is None:
        raise PreflightError("no directory answered: " + "; ".join(failures))
    steps.append(Step("bind", OK, f"bound as {settings.bind_dn}"))
    return working, steps


def run_check(settings: LdapSettings, *, write_test: bool = False) -> list[Step]:
    """The preflight's steps against the directory ``settings`` name.

    :param write_test: also write (and delete) a throwaway user and group.
    :raises PreflightError: when no URL can be connected to and bound (one line: the URL
        and why, e.g. a certificate that does not verify).
    """
    with _quiet():
        working, steps = _connect(settings)
        backend = LdapBackend(replace(working, dry_run=False))
        try:
            steps += _read_steps(backend)
            steps += (
                write_steps(backend)
                if write_test
                else [Step("write test", SKIPPED, "not asked for (--write-test)")]
            )
        finally:
            backend.close()
    return steps


def _searcher(backend: LdapBackend) -> Callable[..., Any]:
    """A base search on the backend's connection (the directory's own answer on a refusal)."""

    def run(base: str, search_filter: str, attributes: Sequence[str]) -> Any:
        def operation(connection: Connection) -> Any:
            return operations.search(connection, Search(base, search_filter, BASE, attributes))

        return backend.connections.run(operation)

    return run


def _read_steps(backend: LdapBackend) -> list[Step]:
    run = _searcher(backend)
    settings = backend.settings
    entries, _ = run("", "(objectClass=*)", [*IDENTITY_ATTRIBUTES])
    root_dse = entries[0]["attributes"] if entries else {}
    monitor = None
    try:
        found, _ = run("cn=Monitor", "(objectClass=*)", ["monitoredInfo"])
        monitor = (
            next(iter(root_values(found[0]["attributes"], "monitoredInfo")), None)
            if found
            else None
        )
    except LDAPOperationResult:
        pass
    identity = identify(root_dse, monitor)
    steps = [_directory_step(identity, settings)]
    steps += _feature_steps(settings, backend.connections.capabilities())
    steps += _base_steps(run, settings)
    subschema = next(iter(root_values(root_dse, "subschemaSubentry")), "cn=Subschema")
    try:
        steps += _schema_steps(run, subschema, backend)
    except LDAPOperationResult as error:
        steps.append(Step("schema", FAILED, f"{subschema} cannot be read: {ldap_refusal(error)}"))
    steps += _search_steps(backend)
    steps += _vlv_steps(backend)
    return steps


def _directory_step(identity: Identity, settings: LdapSettings) -> Step:
    detail = f"{identity}; profile {settings.dialect}"
    if identity.profile is None:
        return Step("directory", WARNING, f"{detail}: the server does not say what it is")
    if identity.profile != settings.dialect:
        return Step(
            "directory",
            FAILED,
            f"{detail}, but the server is {identity.name}: "
            f"set SCIM_LDAP_DIALECT={identity.profile}",
        )
    return Step("directory", OK, detail)


def _base_steps(run: Callable[..., Any], settings: LdapSettings) -> list[Step]:
    places = {
        **{base: "users base" for base in settings.users_bases},
        **{base: "groups base" for base in settings.groups_bases},
    }
    for base, what in (
        (settings.new_users_base, "new users base"),
        (settings.new_groups_base, "new groups base"),
    ):
        places.setdefault(str(base), what)
    steps = []
    for base, what in places.items():
        try:
            found, _ = run(base, "(objectClass=*)", ["1.1"])
        except LDAPOperationResult as error:
            steps.append(Step(what, FAILED, f"{base}: {ldap_refusal(error)}"))
            continue
        result = OK if found else FAILED
        steps.append(Step(what, result, f"{base} {'exists' if found else 'not found'}"))
    return steps


def _search_steps(backend: LdapBackend) -> list[Step]:
    steps = []
    for what, find in (("users", backend.find_users), ("groups", backend.find_groups)):
        try:
            page = find(Query(count=1, attributes=frozenset({"id"})))
        except ScimError as error:
            steps.append(Step(f"search {what}", FAILED, ldap_refusal(error)))
            continue
        steps.append(
            Step(
                f"search {what}",
                OK,
                f"{page.total_results} found; a list page read as a list request does",
            )
        )
    return steps


def _vlv_steps(backend: LdapBackend) -> list[Step]:
    """389-DS's VLV indexes line, their entries read as the service account (their ACI lets it)."""
    settings = backend.settings
    if settings.dialect not in VLV_DIALECTS:
        return []

    def read(connection: Connection) -> list[dict[str, Any]]:
        request = Search(VLV_CONFIGURATION, VLV_ENTRIES, SUBTREE, [*VLV_ATTRIBUTES])
        try:
            entries, _ = operations.search(connection, request)
        except LDAPOperationResult:  # nothing the account may read
            return []
        return list(entries)

    return vlv_index_report(settings, backend.connections.run(read))
