"""The audit log (logger ``scim.audit``): one line per change made or refused, no secret in it.

Each line names the token by its configured name (``idp`` in these tests), the action, the
resource type, the id and the status; a refused change also carries its scimType. Reads,
searches and writes that change nothing write no audit line. A canary password, sent in every
write, must appear in no log record at all, nor may the bearer token.
"""

from __future__ import annotations

import json
import logging
import uuid

import pytest
from scim_http import INTEGRATION_TOKEN as TOKEN

from scim_flask.logs import JsonFormatter, RedactPasswords

CANARY = "Canary-" + uuid.uuid4().hex


@pytest.fixture
def audit(caplog):
    caplog.set_level(logging.DEBUG)

    def records():
        return [r for r in caplog.records if r.name == "scim.audit"]

    yield records
    for record in caplog.records:  # every logger, every level: the secrets are nowhere
        text = record.getMessage() + json.dumps(vars(record), default=str)
        assert CANARY not in text, record.name
        assert TOKEN not in text, record.name


def summary(records):
    return [
        (
            r.audit["action"],
            r.audit["resourceType"],
            r.audit["id"],
            r.audit["status"],
            r.audit["result"],
            r.audit.get("scimType"),
        )
        for r in records
    ]


def user_body(name, password):
    return {
        "userName": name,
        "name": {"givenName": "Audit", "familyName": "Trail"},
        "emails": [{"value": f"{name}@example.com"}],
        "password": password,
    }


def test_every_change_is_audited_with_who_what_which_and_result(http, audit):
    name = "audit-" + uuid.uuid4().hex[:8]
    group = "audit-group-" + uuid.uuid4().hex[:6]
    created = http("POST", "/Users", json=user_body(name, CANARY))
    assert created.status_code == 201
    uid = created.get_json(force=True)["id"]
    steps = [
        (
            "PATCH",
            f"/Users/{uid}",
            [
                {"op": "replace", "path": "password", "value": CANARY + "-2"},
                {"op": "replace", "path": "title", "value": "Auditor"},
            ],
        ),
        ("PUT", f"/Users/{uid}", user_body(name, CANARY + "-3")),
        ("POST", "/Groups", {"displayName": group, "members": [{"value": uid}]}),
        ("PATCH", f"/Groups/{group}", [{"op": "remove", "path": "members"}]),
        ("DELETE", f"/Users/{uid}", None),
    ]
    for method, path, body in steps:
        assert http(method, path, json=body).status_code < 300, (method, path)
    assert summary(audit()) == [
        ("create", "User", uid, 201, "success", None),
        ("patch", "User", uid, 200, "success", None),
        ("replace", "User", uid, 200, "success", None),
        ("create", "Group", group, 201, "success", None),
        ("patch", "Group", group, 200, "success", None),
        ("delete", "User", uid, 204, "success", None),
    ]
    for record in audit():
        assert record.audit["who"] == "idp"
        assert record.levelno == logging.INFO
        assert record.getMessage().startswith(record.audit["action"])


def test_refused_changes_are_audited_too(http, audit):
    name = "audit-no-" + uuid.uuid4().hex[:8]
    uid = http("POST", "/Users", json=user_body(name, CANARY)).get_json(force=True)["id"]
    missing = str(uuid.uuid4())
    requests = [
        ("POST", "/Users", user_body(name, CANARY)),  # taken
        ("POST", "/Users", {**user_body(name + "x", CANARY + "\u0001")}),  # bad password
        ("PATCH", f"/Users/{uid}", [{"op": "replace", "path": "active", "value": "maybe"}]),
        ("PATCH", f"/Users/{missing}", [{"op": "replace", "path": "title", "value": "x"}]),
        ("PUT", f"/Users/{uid}", {"userName": name, "password": CANARY}),  # incomplete
        ("DELETE", f"/Users/{missing}", None),
        ("PATCH", "/Groups/audit-missing", [{"op": "add", "path": "members", "value": [uid]}]),
        ("DELETE", "/Groups/audit-missing", None),
        ("PUT", "/Groups/audit-missing", {"displayName": "audit-missing"}),
    ]
    for method, path, body in requests:
        assert http(method, path, json=body).status_code >= 400, (method, path)
    assert summary(audit())[1:] == [
        ("create", "User", None, 409, "failure", "uniqueness"),
        ("create", "User", None, 400, "failure", "invalidValue"),
        ("patch", "User", uid, 400, "failure", "invalidValue"),
        ("patch", "User", missing, 404, "failure", None),
        ("replace", "User", uid, 400, "failure", "invalidValue"),
        ("delete", "User", missing, 404, "failure", None),
        ("patch", "Group", "audit-missing", 404, "failure", None),
        ("delete", "Group", "audit-missing", 501, "failure", None),
        ("replace", "Group", "audit-missing", 501, "failure", None),
    ]
    assert all(r.levelno == logging.WARNING and r.audit["who"] == "idp" for r in audit()[1:])
    http("DELETE", f"/Users/{uid}")


def test_reads_searches_and_no_op_writes_are_not_audited(http, audit):
    name = "audit-ro-" + uuid.uuid4().hex[:8]
    uid = http("POST", "/Users", json=user_body(name, CANARY)).get_json(force=True)["id"]
    title = [{"op": "replace", "path": "title", "value": "Same"}]
    assert http("PATCH", f"/Users/{uid}", json=title).status_code == 200
    before = len(audit())
    assert http("PATCH", f"/Users/{uid}", json=title).status_code == 200  # changes nothing
    assert http("GET", f"/Users/{uid}").status_code == 200
    assert (
        http("GET", "/Users", query_string={"filter": f'userName eq "{name}"'}).status_code == 200
    )
    assert http("POST", "/Users/.search", json={"filter": "bad filter"}).status_code == 400
    assert http("POST", "/ServiceProviderConfig", json={}).status_code == 405
    assert http("GET", f"/Users/{uid}", token=None).status_code == 401
    assert len(audit()) == before
    http("DELETE", f"/Users/{uid}")


def test_changes_refused_for_a_missing_or_wrong_token_are_audited(http, audit):
    before = len(audit())
    assert http("POST", "/Users", json={"password": CANARY}, token=None).status_code == 401
    assert http("DELETE", "/Users/someone", token="wrong-" + CANARY).status_code == 401
    records = [record.audit for record in audit()[before:]]
    assert records == [
        {
            "who": None,
            "action": "create",
            "resourceType": "User",
            "id": None,
            "status": 401,
            "result": "failure",
        },
        {
            "who": None,
            "action": "delete",
            "resourceType": "User",
            "id": "someone",
            "status": 401,
            "result": "failure",
        },
    ]
    assert CANARY not in repr(records)


def test_the_json_line_carries_the_audit_record(http, audit):
    name = "audit-json-" + uuid.uuid4().hex[:8]
    uid = http("POST", "/Users", json=user_body(name, CANARY)).get_json(force=True)["id"]
    http("DELETE", f"/Users/{uid}")
    record = audit()[-1]
    RedactPasswords().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert line["logger"] == "scim.audit"
    assert line["audit"] == {
        "who": "idp",
        "action": "delete",
        "resourceType": "User",
        "id": uid,
        "status": 204,
        "result": "success",
    }
