"""Per-token rate limit: a token bucket per token name, 429 with Retry-After beyond it."""

from __future__ import annotations

import hashlib

import pytest

from scim_core.auth import parse_tokens
from scim_core.backends.memory import MemoryBackend
from scim_core.config import ConfigError, ServiceConfig
from scim_flask import AppSettings, create_app
from scim_flask.ratelimit import TokenBuckets


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_the_rate_with_a_burst_of_one_second():
    clock = Clock()
    buckets = TokenBuckets(3, clock=clock)
    assert [buckets.acquire("okta") for _ in range(4)] == [0, 0, 0, 1]
    clock.now += 1 / 3
    assert buckets.acquire("okta") == 0
    assert buckets.acquire("okta") == 1
    clock.now += 10  # a pause refills up to the burst, never beyond
    assert [buckets.acquire("okta") for _ in range(4)] == [0, 0, 0, 1]


def test_a_burst_can_be_larger_than_one_second():
    clock = Clock()
    buckets = TokenBuckets(2, burst=10, clock=clock)
    assert [buckets.acquire("10.0.0.1") for _ in range(11)] == [0] * 10 + [1]
    clock.now += 0.5
    assert buckets.acquire("10.0.0.1") == 0


def test_names_beyond_the_bound_forget_the_least_recently_seen():
    clock = Clock()
    buckets = TokenBuckets(1, max_names=2, clock=clock)
    assert buckets.acquire("a") == 0
    assert buckets.acquire("b") == 0
    assert buckets.acquire("a") == 1  # "a" is now the most recently seen
    assert buckets.acquire("c") == 0  # forgets "b"
    assert len(buckets._buckets) == 2
    assert buckets.acquire("b") == 0  # a fresh bucket
    assert buckets.acquire("c") == 1  # "c" survived; "a" was forgotten for "b"
    assert buckets.acquire("a") == 0


def test_buckets_are_per_name():
    buckets = TokenBuckets(1, clock=Clock())
    assert buckets.acquire("okta") == 0
    assert buckets.acquire("okta") == 1
    assert buckets.acquire("entra") == 0


def test_retry_after_is_whole_seconds_until_a_request_fits():
    clock = Clock()
    buckets = TokenBuckets(0.25, clock=clock)  # one request per 4 s
    assert buckets.acquire("slow") == 0
    assert buckets.acquire("slow") == 4
    clock.now += 3.5
    assert buckets.acquire("slow") == 1
    clock.now += 0.5
    assert buckets.acquire("slow") == 0


@pytest.mark.parametrize("rate", [0, -1])
def test_a_bucket_needs_a_positive_rate(rate):
    with pytest.raises(ValueError, match="above 0"):
        TokenBuckets(rate)


def _env(**extra):
    digest = hashlib.sha256(b"t").hexdigest()
    return {"SCIM_TOKENS_SHA256": digest, "SCIM_BACKEND": "memory", **extra}


@pytest.mark.parametrize(("text", "rate"), [("0", 0.0), ("2.5", 2.5), (" 10 ", 10.0)])
def test_the_setting(text, rate):
    assert AppSettings.from_environ(_env(SCIM_RATE_LIMIT=text)).rate_limit == rate
    assert AppSettings.from_environ(_env()).rate_limit == 0.0


@pytest.mark.parametrize("text", ["-1", "abc", "nan", "inf", "1/s"])
def test_a_bad_setting_is_one_line_naming_it(text):
    with pytest.raises(ConfigError, match=r"^SCIM_RATE_LIMIT"):
        AppSettings.from_environ(_env(SCIM_RATE_LIMIT=text))


def _app(rate):
    tokens = "okta={},entra={}".format(
        hashlib.sha256(b"okta-token").hexdigest(), hashlib.sha256(b"entra-token").hexdigest()
    )
    settings = AppSettings(
        service=ServiceConfig(),
        tokens=parse_tokens(tokens),
        backend="memory",
        log_level="INFO",
        rate_limit=rate,
    )
    return create_app(settings=settings, backend=MemoryBackend())


def test_the_app_answers_429_with_retry_after_per_token():
    app = _app(2)
    clock = Clock()
    app.extensions["scim"]["limiter"] = TokenBuckets(2, clock=clock)
    client = app.test_client()
    okta = {"Authorization": "Bearer okta-token"}
    statuses = [client.get("/scim/v2/Users", headers=okta).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    refused = client.get("/scim/v2/Users", headers=okta)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert refused.headers["Content-Type"] == "application/scim+json"
    body = refused.get_json(force=True)
    assert body["status"] == "429" and "rate limit" in body["detail"]
    entra = {"Authorization": "Bearer entra-token"}
    assert client.get("/scim/v2/Users", headers=entra).status_code == 200
    assert client.get("/scim/v2/Users").status_code == 401  # no token: refused before the limit
    assert client.get("/healthz").status_code == 200  # outside /scim/v2: never limited
    clock.now += 0.5
    assert client.get("/scim/v2/Users", headers=okta).status_code == 200


def test_no_limit_by_default():
    app = _app(0)
    assert app.extensions["scim"]["limiter"] is None
    client = app.test_client()
    okta = {"Authorization": "Bearer okta-token"}
    assert {client.get("/scim/v2/Users", headers=okta).status_code for _ in range(50)} == {200}
