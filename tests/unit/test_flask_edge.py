"""The Flask adapter's per-request edge work: URLs from Host, request ids, the request log
line, metrics and the JSON log format, over the in-memory backend."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time

import pytest
from prometheus_client import REGISTRY

from scim_core.auth import parse_tokens
from scim_core.backends.memory import MemoryBackend
from scim_core.config import ServiceConfig
from scim_flask import AppSettings, create_app, metrics
from scim_flask.logs import JsonFormatter, RedactPasswords

TOKEN = "edge-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


def _app(public_url: str | None = None, log_level: str = "INFO"):
    settings = AppSettings(
        service=ServiceConfig(),
        tokens=parse_tokens("edge=" + hashlib.sha256(TOKEN.encode()).hexdigest()),
        backend="memory",
        log_level=log_level,
        public_url=public_url,
    )
    return create_app(settings=settings, backend=MemoryBackend())


def _user(name: str) -> dict:
    return {
        "schemas": [USER_URN],
        "userName": name,
        "name": {"givenName": "E", "familyName": "Dge"},
        "emails": [{"value": f"{name}@example.org"}],
    }


def test_without_a_public_url_each_requests_host_decides_its_urls():
    client = _app().test_client()
    created = client.post(
        "/scim/v2/Users", json=_user("hosted"), headers=AUTH, base_url="http://localhost:8080"
    )
    assert created.status_code == 201
    uid = created.get_json(force=True)["id"]
    assert created.headers["Location"] == f"http://localhost:8080/scim/v2/Users/{uid}"
    # The same process, other loopback Hosts, schemes and script roots: each its own URL.
    for base_url, root, expected in [
        ("http://127.0.0.1:9000", "", "http://127.0.0.1:9000/scim/v2"),
        ("https://localhost", "", "https://localhost/scim/v2"),
        ("http://[::1]:8443", "", "http://[::1]:8443/scim/v2"),
        ("http://localhost:8080", "/mounted", "http://localhost:8080/mounted/scim/v2"),
        ("http://localhost:8080", "", "http://localhost:8080/scim/v2"),
    ]:
        got = client.get(
            f"/scim/v2/Users/{uid}",
            headers=AUTH,
            base_url=base_url + root,
        )
        assert got.status_code == 200, (base_url, got.data)
        assert got.get_json(force=True)["meta"]["location"] == f"{expected}/Users/{uid}"


def test_without_a_public_url_any_other_host_is_refused_every_time():
    client = _app().test_client()
    for _ in range(2):
        refused = client.get("/scim/v2/Users", headers=AUTH, base_url="http://evil.example")
        assert refused.status_code == 400
        assert "evil" not in refused.get_data(as_text=True)
    assert client.get("/scim/v2/Users", headers=AUTH).status_code == 200


def test_a_public_url_wins_over_the_host():
    client = _app(public_url="https://scim.example.com").test_client()
    created = client.post(
        "/scim/v2/Users", json=_user("public"), headers=AUTH, base_url="http://evil.example"
    )
    assert created.status_code == 201
    uid = created.get_json(force=True)["id"]
    assert created.headers["Location"] == f"https://scim.example.com/scim/v2/Users/{uid}"


def test_request_ids_are_made_when_none_usable_is_offered():
    client = _app().test_client()
    made = {client.get("/scim/v2/Users", headers=AUTH).headers["X-Request-Id"] for _ in range(3)}
    assert len(made) == 3
    assert all(re.fullmatch(r"[0-9a-f]{32}", made_id) for made_id in made)
    offered = client.get("/scim/v2/Users", headers={**AUTH, "X-Request-Id": "idp-42.a:b"})
    assert offered.headers["X-Request-Id"] == "idp-42.a:b"
    replaced = client.get("/scim/v2/Users", headers={**AUTH, "X-Request-Id": "no spaces"})
    assert re.fullmatch(r"[0-9a-f]{32}", replaced.headers["X-Request-Id"])


def test_each_request_logs_one_line_with_its_fields(caplog):
    client = _app().test_client()
    uid = client.post("/scim/v2/Users", json=_user("logged"), headers=AUTH).get_json(force=True)[
        "id"
    ]
    caplog.set_level(logging.INFO, logger="scim.request")
    caplog.clear()
    patch = {
        "schemas": [PATCH_URN],
        "Operations": [{"op": "replace", "path": "title", "value": "T"}],
    }
    answer = client.patch(f"/scim/v2/Users/{uid}", json=patch, headers=AUTH)
    denied = client.get("/scim/v2/Users")
    lines = [r for r in caplog.records if r.name == "scim.request"]
    assert [r.getMessage() for r in lines] == [
        f"PATCH /scim/v2/Users/{uid} 200",
        "GET /scim/v2/Users 401",
    ]
    first, second = lines
    assert first.request_id == answer.headers["X-Request-Id"]
    assert (first.method, first.path, first.status, first.principal) == (
        "PATCH",
        f"/scim/v2/Users/{uid}",
        200,
        "edge",
    )
    assert isinstance(first.duration_ms, float) and first.duration_ms >= 0
    assert second.request_id == denied.headers["X-Request-Id"]
    assert (second.status, second.principal) == (401, None)


def test_without_info_logging_no_line_but_the_id_and_the_count_remain(caplog):
    app = _app(log_level="WARNING")
    client = app.test_client()
    logging.getLogger().setLevel(logging.WARNING)  # the level a WARNING service runs at
    labels = {"route": "/scim/v2/Users", "method": "GET", "status": "200", "principal": "edge"}
    before = REGISTRY.get_sample_value("scim_requests_total", labels) or 0
    try:
        answer = client.get("/scim/v2/Users", headers=AUTH)
    finally:
        logging.getLogger().setLevel(logging.INFO)
    assert answer.status_code == 200
    assert re.fullmatch(r"[0-9a-f]{32}", answer.headers["X-Request-Id"])
    assert not [r for r in caplog.records if r.name == "scim.request"]
    assert REGISTRY.get_sample_value("scim_requests_total", labels) == before + 1


def test_every_request_is_counted_under_its_own_labels():
    client = _app().test_client()
    ok = {"route": "/scim/v2/Users", "method": "GET", "status": "200", "principal": "edge"}
    denied = {"route": "/scim/v2/Users", "method": "GET", "status": "401", "principal": "-"}
    counts = [REGISTRY.get_sample_value("scim_requests_total", s) or 0 for s in (ok, denied)]
    timed = REGISTRY.get_sample_value(
        "scim_request_duration_seconds_count", {"route": "/scim/v2/Users", "method": "GET"}
    )
    for _ in range(3):
        client.get("/scim/v2/Users", headers=AUTH)
    client.get("/scim/v2/Users")
    assert REGISTRY.get_sample_value("scim_requests_total", ok) == counts[0] + 3
    assert REGISTRY.get_sample_value("scim_requests_total", denied) == counts[1] + 1
    assert (
        REGISTRY.get_sample_value(
            "scim_request_duration_seconds_count", {"route": "/scim/v2/Users", "method": "GET"}
        )
        == (timed or 0) + 4
    )


def test_directory_operations_are_counted_under_their_own_labels():
    def count(kind: str, outcome: str) -> float:
        labels = {"kind": kind, "outcome": outcome}
        return REGISTRY.get_sample_value("scim_directory_operations_total", labels) or 0

    def timed(kind: str) -> float:
        labels = {"kind": kind}
        return REGISTRY.get_sample_value("scim_directory_operation_duration_seconds_sum", labels)

    before = count("modify", "success"), count("modify", "busy"), timed("modify") or 0
    metrics.observe_directory_operation("modify", "success", 0.25)
    metrics.observe_directory_operation("modify", "success", 0.5)
    metrics.observe_directory_operation("modify", "busy", 0.125)
    assert count("modify", "success") == before[0] + 2
    assert count("modify", "busy") == before[1] + 1
    assert timed("modify") == pytest.approx(before[2] + 0.875)


def _record(created: float, **extra) -> logging.LogRecord:
    record = logging.makeLogRecord({"name": "scim.test", "levelno": 20, "levelname": "INFO"})
    record.msg, record.args, record.created = "hello %s", ("wörld",), created
    for key, value in extra.items():
        setattr(record, key, value)
    return record


def test_the_json_line_names_its_own_second_and_keeps_text_as_it_is():
    formatter = JsonFormatter()
    earlier, later = 1_700_000_000.25, 1_700_000_001.75
    lines = [
        json.loads(formatter.format(_record(created, thing=object(), n=1)))
        for created in (earlier, earlier + 0.5, later, earlier)
    ]
    expected = [
        time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(created))
        for created in (earlier, earlier + 0.5, later, earlier)
    ]
    assert [line["time"] for line in lines] == expected
    assert expected[0] != expected[2]
    assert lines[0]["message"] == "hello wörld"
    assert '"hello wörld"' in formatter.format(_record(earlier))  # not escaped to \\u00f6
    assert lines[0]["thing"].startswith("<object object")  # str() of what JSON cannot hold
    assert lines[0]["n"] == 1 and lines[0]["level"] == "INFO" and lines[0]["logger"] == "scim.test"


def test_redaction_masks_every_extra_that_holds_a_password():
    record = _record(1.0, body={"password": "s3cret", "userName": "u"}, note="password=s3cret")
    record.args = ("userPassword: s3cret",)
    assert RedactPasswords().filter(record)
    line = JsonFormatter().format(record)
    assert "s3cret" not in line
    entry = json.loads(line)
    assert entry["body"] == {"password": "[redacted]", "userName": "u"}
    assert entry["note"] == "password=[redacted]"
