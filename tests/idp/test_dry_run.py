"""Dry run on a real slapd: identity providers' sequences planned, nothing written, and the
planned LDIF, applied with ldapmodify, makes what a real run makes."""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from ldap3 import SUBTREE, Connection, Server
from replay import TOKEN, Replay, dig, load, substitute
from scim_http import Http, make_app, settings_for

from scim_core.backends.ldap import LdapBackend
from scim_core.testing.slapd import SlapdInstance

pytestmark = pytest.mark.slapd

SCIM_JSON = "application/scim+json"
PASSWORDS = ("1mz050nq", "t1meMa$heen")  # what the replays send
# Kept by the directory itself, or different by nature between two servers.
_OPERATIONAL = {
    "entryuuid",
    "entrycsn",
    "createtimestamp",
    "modifytimestamp",
    "creatorsname",
    "modifiersname",
    "entrydn",
    "subschemasubentry",
    "hassubordinates",
    "structuralobjectclass",
    "pwdchangedtime",
    "pwdhistory",
    "userpassword",
    "contextcsn",
}


@contextlib.contextmanager
def _admin(instance: SlapdInstance) -> Iterator[Connection]:
    server = Server(instance.url)
    admin = Connection(server, instance.admin_dn, instance.admin_password, auto_bind=True)
    try:
        yield admin
    finally:
        admin.unbind()


def _dump(instance: SlapdInstance, everything: bool = True) -> dict[str, dict[str, list[str]]]:
    """Every entry under the suffix as the rootdn reads it: DN -> attribute -> sorted values."""
    with _admin(instance) as admin:
        admin.search(instance.base_dn, "(objectClass=*)", SUBTREE, attributes=["*", "+"])
        found = {}
        for entry in admin.response:
            if entry["type"] != "searchResEntry":
                continue
            raw = entry["raw_attributes"]
            found[entry["dn"].lower()] = {
                name.lower(): sorted(v.decode(errors="replace").lower() for v in values)
                for name, values in raw.items()
                if everything or name.lower() not in _OPERATIONAL
            }
        return found


def _apply(instance: SlapdInstance, ldif: Path) -> None:
    login = ["-x", "-H", instance.url, "-D", instance.admin_dn, "-w", instance.admin_password]
    done = subprocess.run(
        ["ldapmodify", *login, "-f", str(ldif)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, (done.stderr, ldif.read_text())


def _send(http: Http, step: dict[str, Any], variables: dict[str, Any]) -> Any:
    request = substitute(step["request"], variables)
    path = request["path"]
    if request.get("query"):
        path += "?" + urlencode(request["query"])
    data = json.dumps(request["body"]).encode() if "body" in request else None
    headers = {**request.get("headers", {})}
    if data is not None:
        headers["Content-Type"] = SCIM_JSON
    return http(request["method"], path, data=data, headers=headers)


@pytest.fixture
def directories() -> Iterator[tuple[SlapdInstance, SlapdInstance]]:
    with SlapdInstance() as real, SlapdInstance() as planned:
        yield real, planned


def _unknown() -> dict[str, str]:
    """The ids and names the replays look up to find nothing."""
    return {"missing": str(uuid.uuid4()), "probe": str(uuid.uuid4())}


_backends: list[LdapBackend] = []


@pytest.fixture(autouse=True)
def _close_backends() -> Iterator[None]:
    yield
    while _backends:
        _backends.pop().close()


def _app(instance: SlapdInstance, **extra: Any) -> Http:
    backend = LdapBackend(settings_for(instance, **extra))
    _backends.append(backend)
    return Http(make_app(backend, TOKEN, log_level="WARNING").test_client(), TOKEN)


@pytest.mark.parametrize("scenario", ["okta", "entra-scim062020", "entra-default", "authentik"])
def test_a_dry_run_replay_leaves_the_directory_byte_identical(
    scenario: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every step of an identity provider's sequence, answered, and not one byte written."""
    ldif = tmp_path / "planned.ldif"
    with SlapdInstance() as instance:
        http = _app(instance, dry_run=True, dry_run_ldif=str(ldif))
        before = _dump(instance)
        variables: dict[str, Any] = {"run": "dry", **_unknown()}
        statuses = []
        caplog.set_level(logging.INFO, logger="scim.dryrun")
        caplog.set_level(logging.INFO, logger="scim.audit")
        for step in load(scenario)["steps"]:
            try:
                response = _send(http, step, variables)
            except KeyError:
                continue  # a value only a real write gives (a version) was never captured
            statuses.append(response.status_code)
            write = step["request"]["method"] != "GET" and ".search" not in step["request"]["path"]
            assert (response.headers.get("X-Dry-Run") == "true") == write, step["name"]
            assert response.status_code != 500, (step["name"], response.get_data(as_text=True))
            body = response.get_json(silent=True)
            for name, where in step.get("capture", {}).items():
                if body is not None and response.status_code < 300:
                    variables[name] = dig(body, where)
        assert _dump(instance) == before
    text = ldif.read_text()
    assert "changetype: add" in text, text
    assert 201 in statuses, statuses
    assert any("changetype: add" in r.getMessage() for r in caplog.records)
    audits = [r.audit for r in caplog.records if r.name == "scim.audit"]
    assert audits and all(record["dryRun"] is True for record in audits), audits


def test_planned_ldif_reproduces_the_real_run(
    directories: tuple[SlapdInstance, SlapdInstance], tmp_path: Path
) -> None:
    """Okta's and Entra's sequences: for each request, the dry run's answer has the real
    run's status and, applied with ldapmodify, its LDIF makes the directory the real run made
    (passwords aside: the LDIF never holds one)."""
    real, planned = directories
    real_http, ldif = _app(real), tmp_path / "step.ldif"
    planned_http = _app(planned, dry_run=True, dry_run_ldif=str(ldif))
    for scenario in ("okta", "entra-scim062020"):
        unknown = _unknown()
        Replay(real_http, scenario, run="r", **unknown).rest()
        variables: dict[str, Any] = {"run": "r", **unknown}
        for step in load(scenario)["steps"]:
            expected = step["response"]["status"]
            ldif.write_text("")
            untouched = _dump(planned)
            response = _send(planned_http, step, variables)
            label = (scenario, step["name"], response.get_data(as_text=True))
            assert response.status_code == expected, label
            assert _dump(planned) == untouched, label
            body = response.get_json(silent=True)
            for name, where in step.get("capture", {}).items():
                variables[name] = dig(body, where)
            text = ldif.read_text()
            assert not any(password in text for password in PASSWORDS), text
            if text.strip():
                _apply(planned, ldif)
            if response.status_code == 201 and "userName" in body:
                _adopt_real_id(planned, text, body["id"], variables)
    assert _dump(planned, everything=False) == _dump(real, everything=False)


def _adopt_real_id(
    instance: SlapdInstance, text: str, planned_id: str, variables: dict[str, Any]
) -> None:
    """A planned create answered with an id of its own; ldapmodify's add got the directory's:
    later steps use that one."""
    (dn,) = [line[4:] for line in text.splitlines() if line.startswith("dn: uid=")][:1]
    with _admin(instance) as admin:
        admin.search(dn, "(objectClass=*)", "BASE", attributes=["entryUUID"])
        real_id = str(admin.entries[0].entryUUID)
    for name, value in list(variables.items()):
        if value == planned_id:
            variables[name] = real_id
