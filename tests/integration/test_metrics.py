"""Prometheus metrics across gunicorn workers: the shipped config, real traffic, one scrape."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from reliability import TOKEN, shipped_gunicorn

from scim_core.testing.slapd import SlapdInstance, find_free_port
from scim_flask.metrics import route_of

WORKERS = 4
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"


def get(port: int, path: str, token: str | None = TOKEN) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    connection.request("GET", path, headers=headers)
    answer = connection.getresponse()
    status, body = answer.status, answer.read()
    connection.close()  # a new connection per request: the workers share the load
    return status, body


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    port = find_free_port()
    environment = dict(
        os.environ,
        SCIM_PORT=str(port),
        SCIM_WORKERS=str(WORKERS),
        SCIM_BACKEND="memory",
        SCIM_LOG_LEVEL="WARNING",
        SCIM_TOKENS_SHA256="scraper=" + hashlib.sha256(TOKEN.encode()).hexdigest(),
    )
    environment.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log: Path = tmp_path_factory.mktemp("metrics") / "gunicorn.log"

    def up() -> bool:
        try:
            return get(port, "/healthz")[0] == 200
        except OSError:
            return False

    with shipped_gunicorn(environment, log, up) as process:
        pids = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        while len(pids.read_text().split()) < WORKERS:
            get(port, "/healthz")
        yield port


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    found = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found.append((sample.labels, sample.value))
    return found


def test_counts_add_up_across_the_workers(port: int) -> None:
    before = Counter[tuple[str, str]]()
    status, text = get(port, "/metrics")
    assert status == 200
    for labels, value in samples(text.decode(), "scim_requests_total"):
        before[labels["route"], labels["status"]] += int(value)
    sent = Counter[tuple[str, str]]()
    for _ in range(40):
        assert get(port, "/scim/v2/Users")[0] == 200
        sent["/scim/v2/Users", "200"] += 1
    for number in range(12):
        assert get(port, f"/scim/v2/Users/nobody-{number}")[0] == 404
        sent["/scim/v2/Users/{id}", "404"] += 1
    for _ in range(8):
        assert get(port, "/scim/v2/Groups", token="wrong-token")[0] == 401
        sent["/scim/v2/Groups", "401"] += 1
    status, text = get(port, "/metrics")
    assert status == 200
    after = Counter[tuple[str, str]]()
    principals = set()
    for labels, value in samples(text.decode(), "scim_requests_total"):
        after[labels["route"], labels["status"]] += int(value)
        principals.add(labels["principal"])
    for key, count in sent.items():
        assert after[key] - before[key] == count, (key, after[key], before[key])
    assert {"scraper", "-"} <= principals
    refused = samples(text.decode(), "scim_refused_requests_total")
    assert sum(v for labels, v in refused if labels["reason"] == "unauthenticated") >= 8
    durations = samples(text.decode(), "scim_request_duration_seconds_count")
    assert sum(v for labels, v in durations if labels["route"] == "/scim/v2/Users") >= 40
    assert "nobody" not in text.decode()  # ids never become labels


def test_metrics_need_a_token(port: int) -> None:
    status, body = get(port, "/metrics", token=None)
    assert status == 401 and b"urn:ietf:params:scim:api:messages:2.0:Error" in body


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/scim/v2/Users", "/scim/v2/Users"),
        ("/scim/v2/Users/abc", "/scim/v2/Users/{id}"),
        ("/scim/v2/Groups/a/b", "/scim/v2/Groups/{id}"),
        ("/scim/v2/Users/.search", "/scim/v2/Users/.search"),
        ("/scim/v2/ServiceProviderConfig", "/scim/v2/ServiceProviderConfig"),
        ("/scim/v2/secret-word", "other"),
        ("/elsewhere", "other"),
        ("/healthz", "/healthz"),
    ],
)
def test_routes_are_templates(path: str, route: str) -> None:
    assert route_of(path, "/scim/v2") == route


def test_directory_operations_are_counted_by_kind_and_outcome(
    tmp_path: Path,
) -> None:
    """Over a real slapd, across two workers: each create is one add, a repeated one an add
    the directory refuses, and every lookup at least one search."""
    port = find_free_port()
    with SlapdInstance() as directory:
        environment = dict(
            os.environ,
            SCIM_PORT=str(port),
            SCIM_WORKERS="2",
            SCIM_LOG_LEVEL="WARNING",
            SCIM_TOKENS_SHA256="scraper=" + hashlib.sha256(TOKEN.encode()).hexdigest(),
            **directory.service_settings(),
        )
        environment.pop("PROMETHEUS_MULTIPROC_DIR", None)

        def up() -> bool:
            try:
                return get(port, "/healthz")[0] == 200
            except OSError:
                return False

        with shipped_gunicorn(environment, tmp_path / "gunicorn.log", up):
            for number in range(10):
                assert post_user(port, f"counted-{number}") == 201
            for number in range(3):
                assert post_user(port, f"counted-{number}") == 409
            for number in range(10):
                query = f"/scim/v2/Users?filter=userName%20eq%20%22counted-{number}%22"
                assert get(port, query)[0] == 200
            status, text = get(port, "/metrics")
    assert status == 200
    operations = Counter[tuple[str, str]]()
    for labels, value in samples(text.decode(), "scim_directory_operations_total"):
        operations[labels["kind"], labels["outcome"]] += int(value)
    assert operations["add", "success"] == 10, operations
    assert operations["add", "entryAlreadyExists"] == 3, operations
    assert operations["search", "success"] >= 10, operations
    timed = samples(text.decode(), "scim_directory_operation_duration_seconds_count")
    assert sum(v for labels, v in timed) == sum(operations.values())


def test_dropped_attributes_are_counted_by_rfc_name_across_the_workers(port: int) -> None:
    """Attributes nothing stores are skipped and counted: an RFC 7643 name as itself (in a
    body, under the enterprise URN, in a PATCH path), anything else as ``other``."""
    status, text = get(port, "/metrics")
    before = Counter[tuple[str, str]]()
    for labels, value in samples(text.decode(), "scim_dropped_attributes_total"):
        before[labels["resource_type"], labels["attribute"]] += int(value)
    extra = {
        "nickName": "Babs",
        "phoneNumbers": [{"type": "work", "value": "+41 44 000 00 00"}],
        "favouriteColour": "green",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"costCenter": "4130"},
    }
    for number in range(6):
        assert post_user(port, f"dropped-{number}", **extra) == 201
    status, text = get(port, "/metrics")
    assert status == 200
    after = Counter[tuple[str, str]]()
    for labels, value in samples(text.decode(), "scim_dropped_attributes_total"):
        after[labels["resource_type"], labels["attribute"]] += int(value)
    counted = after - before
    assert counted == Counter(
        {
            ("User", "nickname"): 6,
            ("User", "phonenumbers"): 6,
            ("User", "costcenter"): 6,
            ("User", "other"): 6,
        }
    ), counted


def post_user(port: int, name: str, **extra: object) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps(
        {
            "schemas": [USER_URN],
            "userName": name,
            "name": {"givenName": "G", "familyName": "F"},
            "emails": [{"value": f"{name}@example.org", "primary": True}],
            **extra,
        }
    )
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/scim+json"}
    connection.request("POST", "/scim/v2/Users", body=body, headers=headers)
    answer = connection.getresponse()
    status, text = answer.status, answer.read()
    connection.close()
    assert status in (201, 409), text
    return status
