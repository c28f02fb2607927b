"""The floor: the least our stack (gunicorn sync workers + Flask + ldap3) can do per request.

A minimal Flask app, served by ``gunicorn -c python:scim_flask.gunicorn_conf
bench.floor_app:app`` so it runs under exactly the service's production gunicorn settings,
doing per request the directory work the matching SCIM scenario needs and nothing else: no
authentication, no SCIM rendering, no logging, no validation. The benchmark measures it in the
same run as the service and reports every service figure as a ratio to it.

Per worker it keeps one bound ldap3 connection (``get_info=NONE``, SYNC strategy), reused
across requests, and asks only for the attributes a SCIM User needs. Sorted pages run on a
second connection that is replaced every ``FLOOR_VLV_PER_CONNECTION`` (default 5) searches:
OpenLDAP's sssvlv keeps each VLV sort context until its connection closes and refuses more
than ``sssvlv-maxperconn`` of them; echoing the context id instead would serve an old sorted
snapshot (a user created since would be missing), which the service must not do either.

Endpoints (the scenario each one mirrors):

- ``GET /floor/users?uid=U``: ``GET /Users?filter=userName eq "U"`` (one search by uid);
- ``GET /floor/users/<id>``: ``GET /Users/{id}`` (one search by entryUUID alone);
- ``POST /floor/users``: ``POST /Users`` (one add, then one base read of the new entry);
- ``PATCH /floor/users/<id>``: a real ``PATCH``/``PUT`` (the user found by entryUUID, as a
  SCIM request names it, one modify of ``title``, one read);
- ``GET /floor/page?startIndex=N&count=C``: ``GET /Users?startIndex=N&count=C`` (one sorted
  VLV search with the service's own sort and VLV control encoders);
- ``GET /floor/groups/<cn>[?members=0]``: ``GET /Groups/{id}`` (the group entry, then its
  members through ``memberOf`` in one search);
- ``PATCH /floor/groups/<cn>``: a membership PATCH (the member found by entryUUID, one modify
  of ``member``, one read of the group without its members).

A SCIM request names a user by its id (entryUUID), never by its DN, so the floor is handed ids
too and finds each user's DN with the cheapest search there is (the id alone, no attributes):
work the service cannot skip is the floor's as well. The floor does not check that the entry
found is a user (the service does, from the objectClass values it reads anyway). Groups are
named by ``cn``, their id.

Configuration: the service's own ``SCIM_LDAP_URL`` (the first URL), ``SCIM_LDAP_BIND_DN``,
``SCIM_LDAP_BIND_PASSWORD``, ``SCIM_LDAP_USERS_BASE`` and ``SCIM_LDAP_GROUPS_BASE``.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from flask import Flask, Response, request
from ldap3 import (
    BASE,
    LEVEL,
    MODIFY_ADD,
    MODIFY_DELETE,
    MODIFY_REPLACE,
    NONE,
    SYNC,
    Connection,
    Server,
)
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap.controls import parse_vlv_response, sort_control, vlv_control
from scim_core.backends.ldap.escape import dn_value, filter_value

__all__ = ["USER_ATTRIBUTES", "app"]

#: What rendering a SCIM User needs, and nothing more.
USER_ATTRIBUTES = (
    "entryUUID",
    "uid",
    "givenName",
    "sn",
    "cn",
    "displayName",
    "title",
    "employeeNumber",
    "mail",
    "manager",
    "pwdAccountLockedTime",
    "createTimestamp",
    "modifyTimestamp",
    "entryCSN",
    "scimExternalId",
)
GROUP_ATTRIBUTES = ("cn", "entryCSN", "createTimestamp", "modifyTimestamp")
USER_FILTER = "(objectClass=inetOrgPerson)"
GROUP_FILTER = "(objectClass=groupOfNames)"
ORDERING_RULE = "caseIgnoreOrderingMatch"  # uid has no ordering rule of its own
VLV_RANGE_ERROR = 76
NO_SUCH_OBJECT = 32

_URL = os.environ.get("SCIM_LDAP_URL", "").split(",")[0].strip()
_BIND_DN = os.environ.get("SCIM_LDAP_BIND_DN", "")
_PASSWORD = os.environ.get("SCIM_LDAP_BIND_PASSWORD", "")
USERS_BASE = os.environ.get("SCIM_LDAP_USERS_BASE", "")
GROUPS_BASE = os.environ.get("SCIM_LDAP_GROUPS_BASE", "")
VLV_PER_CONNECTION = int(os.environ.get("FLOOR_VLV_PER_CONNECTION", "5"))

_local = threading.local()
app = Flask("floor")


def _connection(role: str = "plain") -> Connection:
    """This worker's bound connection for ``role``, opened on first use."""
    connection: Connection | None = getattr(_local, role, None)
    if connection is None or connection.closed:
        connection = Connection(
            Server(_URL, get_info=NONE),
            user=_BIND_DN,
            password=_PASSWORD,
            client_strategy=SYNC,
            raise_exceptions=True,
            auto_bind=True,
            check_names=False,
        )
        setattr(_local, role, connection)
        setattr(_local, role + "_uses", 0)
    return connection


def _sorted_connection() -> Connection:
    """The connection for sorted VLV searches, replaced after ``VLV_PER_CONNECTION`` uses."""
    if getattr(_local, "sorted_uses", 0) >= VLV_PER_CONNECTION:
        _local.sorted.unbind()
        _local.sorted = None
    connection = _connection("sorted")
    _local.sorted_uses += 1
    return connection


def _json(body: Any, status: int = 200) -> Response:
    return Response(json.dumps(body, default=str), status, content_type="application/json")


def _entries(connection: Connection) -> list[dict[str, Any]]:
    return [
        {"dn": r["dn"], **r["attributes"]}
        for r in connection.response or ()
        if r.get("type") == "searchResEntry"
    ]


def _search(base: str, search_filter: str, attributes: Any, scope: str = LEVEL) -> list[Any]:
    connection = _connection()
    try:
        connection.search(base, search_filter, search_scope=scope, attributes=list(attributes))
    except LDAPOperationResult as error:
        if error.result == NO_SUCH_OBJECT:
            return []
        raise
    return _entries(connection)


def _id_filter(user_id: str) -> str:
    # The id alone, as the service looks users up on OpenLDAP: with the users' class in the
    # filter slapd would also read that class's index list, every user's id, on each lookup.
    return f"(entryUUID={filter_value(user_id)})"


def _user_dn(user_id: str) -> str | None:
    """The DN of the user whose entryUUID is ``user_id``, or None."""
    entries = _search(USERS_BASE, _id_filter(user_id), ("1.1",))
    return str(entries[0]["dn"]) if entries else None


def _read_dn(dn: str, attributes: Any) -> Response:
    entries = _search(dn, "(objectClass=*)", attributes, scope=BASE)
    return _json(entries[0]) if entries else _json({"status": "404"}, 404)


@app.get("/healthz")
def healthz() -> Response:
    return _json({"status": "ok"})


@app.get("/floor/users")
def find_user() -> Response:
    uid = filter_value(request.args.get("uid", ""))
    entries = _search(USERS_BASE, f"(&{USER_FILTER}(uid={uid}))", USER_ATTRIBUTES)
    return _json({"totalResults": len(entries), "Resources": entries})


@app.get("/floor/users/<user_id>")
def get_user(user_id: str) -> Response:
    entries = _search(USERS_BASE, _id_filter(user_id), USER_ATTRIBUTES)
    return _json(entries[0]) if entries else _json({"status": "404"}, 404)


@app.post("/floor/users")
def add_user() -> Response:
    body = request.get_json(force=True)
    dn = f"uid={dn_value(body['uid'])},{USERS_BASE}"
    _connection().add(
        dn,
        attributes={
            "objectClass": ["top", "person", "organizationalPerson", "inetOrgPerson"],
            "uid": body["uid"],
            "givenName": body["givenName"],
            "sn": body["sn"],
            "cn": f"{body['givenName']} {body['sn']}",
            "mail": body["mail"],
        },
    )
    response = _read_dn(dn, USER_ATTRIBUTES)
    response.status_code = 201
    return response


@app.patch("/floor/users/<user_id>")
def modify_user(user_id: str) -> Response:
    body = request.get_json(force=True)
    dn = _user_dn(user_id)
    if dn is None:
        return _json({"status": "404"}, 404)
    _connection().modify(dn, {"title": [(MODIFY_REPLACE, [body["title"]])]})
    return _read_dn(dn, USER_ATTRIBUTES)


@app.get("/floor/page")
def page() -> Response:
    start = max(int(request.args.get("startIndex", "1")), 1)
    count = max(int(request.args.get("count", "100")), 0)
    controls = [sort_control("uid", ORDERING_RULE), vlv_control(start, max(count - 1, 0))]
    connection = _sorted_connection()
    try:
        connection.search(
            USERS_BASE,
            USER_FILTER,
            search_scope=LEVEL,
            attributes=list(USER_ATTRIBUTES),
            controls=controls,
        )
        entries = _entries(connection)
    except LDAPOperationResult as error:
        if error.result != VLV_RANGE_ERROR:
            raise
        entries = []
    vlv = parse_vlv_response((connection.result or {}).get("controls"))
    total = vlv.content_count if vlv else len(entries)
    return _json({"totalResults": total, "Resources": entries[:count]})


@app.get("/floor/groups/<cn>")
def get_group(cn: str) -> Response:
    dn = f"cn={dn_value(cn)},{GROUPS_BASE}"
    entries = _search(dn, GROUP_FILTER, GROUP_ATTRIBUTES, scope=BASE)
    if not entries:
        return _json({"status": "404"}, 404)
    group = entries[0]
    if request.args.get("members") != "0":
        member_filter = f"(&{USER_FILTER}(memberOf={filter_value(dn)}))"
        group["members"] = _search(USERS_BASE, member_filter, ("entryUUID", "uid"))
    return _json(group)


@app.patch("/floor/groups/<cn>")
def change_member(cn: str) -> Response:
    body = request.get_json(force=True)
    dn = f"cn={dn_value(cn)},{GROUPS_BASE}"
    operation = MODIFY_ADD if body["op"] == "add" else MODIFY_DELETE
    member = _user_dn(body["member"])
    if member is None:
        return _json({"status": "400"}, 400)
    try:
        _connection().modify(dn, {"member": [(operation, [member])]})
    except LDAPOperationResult as error:
        if error.result not in (16, 20):  # noSuchAttribute / attributeOrValueExists: no-op
            raise
    return _read_dn(dn, GROUP_ATTRIBUTES)
