"""JWT bearer tokens checked by :class:`JwtIssuer` alone: keys from a JWKS file or a loopback
HTTP endpoint, tokens signed here with keys made by ``cryptography`` (the whole app with a JWKS
endpoint is tests/integration/test_jwt.py)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from scim_core import oauth
from scim_core.errors import ScimError
from scim_core.oauth import (
    ASYMMETRIC_ALGORITHMS,
    KEYS_MAX_AGE,
    REFETCH_INTERVAL,
    JwksKeys,
    JwtIssuer,
    KeysUnavailable,
    issuer_of,
    looks_like_jwt,
)

ISSUER = "https://idp.example.test/tenant/v2.0"
AUDIENCE = "api://scim-ldap"
EC_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_EC_KEY = ec.generate_private_key(ec.SECP256R1())
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwk(kid: str | None, private: Any) -> dict[str, Any]:
    public = private.public_key()
    algorithm = RSAAlgorithm if isinstance(public, rsa.RSAPublicKey) else ECAlgorithm
    entry: dict[str, Any] = algorithm.to_jwk(public, as_dict=True)
    return {**entry, "kid": kid} if kid is not None else entry


def token(
    key: Any = EC_KEY,
    kid: str | None = "ec-1",
    algorithm: str = "ES256",
    headers: dict[str, Any] | None = None,
    **claims: Any,
) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "iat": now, "nbf": now, "exp": now + 600, **claims}
    body = {k: v for k, v in body.items() if v is not None}
    header = {**({"kid": kid} if kid is not None else {}), **(headers or {})}
    return jwt.encode(body, key, algorithm=algorithm, headers=header)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Published:
    """A JWKS file whose keys can change (the identity provider rotating them)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = Clock()

    def publish(self, *keys: tuple[str | None, Any]) -> None:
        self.path.write_text(json.dumps({"keys": [jwk(kid, key) for kid, key in keys]}))

    def keys(self) -> JwksKeys:
        return JwksKeys(str(self.path), self.clock)


@pytest.fixture
def published(tmp_path: Path) -> Published:
    files = Published(tmp_path / "jwks.json")
    files.publish(("ec-1", EC_KEY), ("rsa-1", RSA_KEY))
    return files


def issuer(published: Published, **options: Any) -> JwtIssuer:
    return JwtIssuer(ISSUER, published.keys(), (AUDIENCE, "other-audience"), **options)


# --------------------------------------------------------------------------- token shape


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("aGVhZA.Ym9keQ.c2ln", True),
        ("aGVhZA.Ym9keQ.", True),  # an unsigned token is still a JWS in form (refused later)
        ("static-token-without-dots", False),
        ("aGVhZA.Ym9keQ", False),
        ("a.b.c.d", False),
        (".Ym9keQ.c2ln", False),
        ("aGVhZA..c2ln", False),
    ],
)
def test_a_jwt_has_three_parts_the_first_two_non_empty(text: str, expected: bool) -> None:
    assert looks_like_jwt(text) is expected


# --------------------------------------------------------------------------- the issuer's rules


def test_a_token_of_the_issuer_names_its_caller_by_the_first_present_claim(published) -> None:
    checker = issuer(published)
    assert checker.identify(token(azp="entra-app", sub="someone")) == "azp:entra-app"
    assert checker.identify(token(appid="legacy-app", sub="someone")) == "appid:legacy-app"
    assert checker.identify(token(client_id="okta-app")) == "client_id:okta-app"
    assert checker.identify(token(sub="someone")) == "sub:someone"
    # Empty or non-text claims name nobody: the next one does, or the caller is just "jwt".
    assert checker.identify(token(azp="", appid=42, sub="someone")) == "sub:someone"
    assert checker.identify(token()) == "jwt"


def test_the_principal_claims_are_configurable(published) -> None:
    checker = issuer(published, principal_claims=("cid", "sub"))
    assert checker.identify(token(azp="entra-app", cid="okta-app")) == "cid:okta-app"
    assert checker.identify(token(azp="entra-app")) == "jwt"


def test_every_accepted_audience_is_accepted_and_no_other(published) -> None:
    checker = issuer(published)
    assert checker.identify(token(aud="other-audience", sub="x")) == "sub:x"
    assert checker.identify(token(aud=["someone", AUDIENCE], sub="x")) == "sub:x"
    assert checker.identify(token(aud="someone-else", sub="x")) is None
    assert checker.identify(token(aud=None, sub="x")) is None


def test_the_issuer_must_match_exactly(published) -> None:
    checker = issuer(published)
    assert checker.identify(token(iss="https://evil.example/", sub="x")) is None
    assert checker.identify(token(iss=ISSUER + "/", sub="x")) is None
    assert checker.identify(token(iss=None, sub="x")) is None


def test_expiry_is_required_and_checked_with_the_leeway(published) -> None:
    now = int(time.time())
    checker = issuer(published)
    assert checker.identify(token(exp=None, sub="x")) is None
    assert checker.identify(token(exp=now - 120, sub="x")) is None
    assert checker.identify(token(exp=now - 30, sub="x")) == "sub:x"  # default leeway: 60 s
    assert checker.identify(token(nbf=now + 30, sub="x")) == "sub:x"
    assert checker.identify(token(nbf=now + 600, sub="x")) is None
    strict = issuer(published, leeway=0)
    assert strict.identify(token(exp=now - 30, sub="x")) is None
    assert strict.identify(token(nbf=now + 30, sub="x")) is None


def test_a_token_under_an_algorithm_not_allowed_is_refused(published) -> None:
    only_rsa = issuer(published, algorithms=("RS256",))
    assert only_rsa.identify(token(RSA_KEY, "rsa-1", "RS256", sub="x")) == "sub:x"
    assert only_rsa.identify(token(sub="x")) is None  # ES256, with a key the set has
    assert issuer(published).identify(token(RSA_KEY, "rsa-1", "RS512", sub="x")) == "sub:x"


def test_a_token_whose_key_is_of_another_kind_than_its_algorithm_is_refused(published) -> None:
    checker = issuer(published)
    assert checker.identify(token(RSA_KEY, "rsa-1", "RS256", sub="x")) == "sub:x"
    assert checker.identify(token(RSA_KEY, "rsa-1", "PS256", sub="x")) == "sub:x"
    assert checker.identify(token(EC_KEY, "rsa-1", "ES256", sub="x")) is None
    assert checker.identify(token(RSA_KEY, "ec-1", "RS256", sub="x")) is None


def test_a_token_signed_by_a_key_the_set_lacks_is_refused(published) -> None:
    checker = issuer(published)
    assert checker.identify(token(OTHER_EC_KEY, sub="x")) is None  # a known kid, another key
    assert checker.identify(token(OTHER_EC_KEY, "unknown", sub="x")) is None
    assert checker.identify(token(kid=None, sub="x")) is None  # no kid, two keys: which one?


def test_what_is_not_a_token_is_refused(published) -> None:
    checker = issuer(published)
    assert checker.identify("aGVhZA.Ym9keQ.c2ln") is None
    assert checker.identify(token(sub="x")[:-4] + "AAAA") is None


def test_required_claims_must_equal_or_contain_the_value(published) -> None:
    checker = issuer(published, required_claims={"roles": "SCIM.Provision", "scp": "scim"})
    assert checker.identify(token(roles=["SCIM.Provision"], scp="scim", sub="x")) == "sub:x"
    assert checker.identify(token(roles=["A", "SCIM.Provision"], scp="openid scim")) == "jwt"
    assert checker.identify(token(roles=["SCIM.Provision"], scp="openid scimx")) is None
    assert checker.identify(token(roles=["Reader"], scp="scim")) is None
    assert checker.identify(token(roles="SCIM.Provision", scp=None)) is None
    assert checker.identify(token(roles={"SCIM.Provision": 1}, scp="scim")) is None
    assert checker.identify(token(roles=7, scp="scim")) is None
    spaced = issuer(published, required_claims={"tenant": "two words"})
    assert spaced.identify(token(tenant="two words")) == "jwt"
    assert spaced.identify(token(tenant="two")) is None


def test_refusals_are_logged_with_their_reason_never_the_token(published, caplog) -> None:
    caplog.set_level(logging.INFO, logger="scim.auth")
    checker = issuer(published, required_claims={"scp": "scim"})
    expired = token(exp=int(time.time()) - 600)
    assert checker.identify(expired) is None
    assert [r.getMessage() for r in caplog.records] == ["a JWT was refused: ExpiredSignatureError"]
    caplog.clear()
    lacking = token(scp="openid")
    assert checker.identify(lacking) is None
    assert [r.getMessage() for r in caplog.records] == ["a JWT lacks a required claim"]
    assert expired not in caplog.text and lacking not in caplog.text


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"algorithms": ("HS256",)}, "only asymmetric algorithms can be allowed: HS256"),
        ({"algorithms": ("RS256", "none")}, "only asymmetric algorithms can be allowed: none"),
        ({"algorithms": ()}, "only asymmetric algorithms can be allowed: "),
        ({"audiences": ()}, "at least one audience is needed"),
    ],
)
def test_an_issuer_allows_asymmetric_algorithms_and_needs_an_audience(options, problem) -> None:
    settings: dict[str, Any] = {"audiences": (AUDIENCE,), **options}
    with pytest.raises(ValueError) as refused:
        JwtIssuer(ISSUER, JwksKeys("/nonexistent"), **settings)
    assert str(refused.value) == problem


def test_the_default_algorithms_are_the_asymmetric_ones() -> None:
    made = JwtIssuer(ISSUER, JwksKeys("/nonexistent"), (AUDIENCE,))
    assert made.algorithms == ASYMMETRIC_ALGORITHMS
    assert not {"none", "HS256", "HS384", "HS512"} & set(ASYMMETRIC_ALGORITHMS)
    assert JwtIssuer(ISSUER, JwksKeys("/x"), (AUDIENCE,), algorithms=("EdDSA",)).leeway == 60


def test_an_issuer_is_chosen_by_the_iss_its_token_names(published) -> None:
    okta = JwtIssuer("https://org.okta.test/oauth2", published.keys(), (AUDIENCE,))
    entra = issuer(published)
    assert issuer_of([okta, entra], token()) is entra
    assert issuer_of([okta, entra], token(iss="https://org.okta.test/oauth2")) is okta
    assert issuer_of([okta, entra], token(iss="https://evil.example/")) is None
    assert issuer_of([okta, entra], token(iss=None)) is None
    assert issuer_of([okta, entra], "aGVhZA.Ym9keQ.c2ln") is None


# --------------------------------------------------------------------------- the keys


def test_a_single_key_without_an_id_serves_tokens_without_a_kid(published) -> None:
    published.publish((None, EC_KEY))
    checker = issuer(published)
    assert checker.identify(token(kid=None, sub="x")) == "sub:x"
    assert checker.identify(token(kid="", sub="x")) == "sub:x"  # an empty id names it too
    assert checker.identify(token(kid="ec-1", sub="x")) is None


def test_a_single_key_with_an_id_serves_tokens_without_a_kid(published) -> None:
    published.publish(("ec-1", EC_KEY))
    checker = issuer(published)
    assert checker.identify(token(kid=None, sub="x")) == "sub:x"
    assert checker.identify(token(kid="ec-1", sub="x")) == "sub:x"


def test_keys_without_ids_among_several_serve_nobody(published) -> None:
    published.publish((None, EC_KEY), (None, OTHER_EC_KEY))
    checker = issuer(published)
    assert checker.identify(token(kid=None, sub="x")) is None
    assert checker.identify(token(OTHER_EC_KEY, kid=None, sub="x")) is None


def test_keys_are_read_once_and_again_when_they_are_old(published) -> None:
    keys = published.keys()
    assert keys.key("ec-1") is not None
    published.publish(("ec-2", OTHER_EC_KEY))
    published.clock.now += KEYS_MAX_AGE
    assert keys.key("ec-1") is not None  # not older than the maximum age yet
    assert keys.key(None) is None  # two keys: a token without a kid names none
    published.clock.now += 1
    assert keys.key("ec-2") is not None
    assert keys.key("ec-1") is None
    assert keys.key(None) is not None  # one key now


def test_an_unknown_key_id_reads_the_keys_again_at_most_once_a_while(published) -> None:
    keys = published.keys()
    assert keys.key("ec-1") is not None
    published.publish(("ec-1", EC_KEY), ("ec-2", OTHER_EC_KEY))
    assert keys.key("ec-2") is None  # the first read was just now
    published.clock.now += REFETCH_INTERVAL - 1
    assert keys.key("ec-2") is None
    published.clock.now += 1
    assert keys.key("ec-2") is not None  # a rotation is picked up
    published.publish(("ec-3", EC_KEY))
    published.clock.now += REFETCH_INTERVAL - 1
    assert keys.key("ec-3") is None  # the last read, rotation or not, counts
    assert keys.key("ec-2") is not None


def test_a_known_key_id_never_reads_the_keys_again_before_they_are_old(published) -> None:
    keys = published.keys()
    assert keys.key("ec-1") is not None
    published.path.unlink()
    published.clock.now += REFETCH_INTERVAL * 2
    assert keys.key("ec-1") is not None
    assert keys.key(None) is None  # no kid, two keys: ambiguous, but no read either


def test_unreadable_keys_are_503_until_some_are_read(published, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="scim.auth")
    published.path.write_text("{not json")
    keys = published.keys()
    with pytest.raises(KeysUnavailable) as raised:
        keys.key("ec-1")
    assert isinstance(raised.value, ScimError)
    assert raised.value.status == 503
    assert raised.value.headers == {"Retry-After": "30"}
    body = raised.value.to_body()
    assert body["detail"] == "The identity provider's signing keys cannot be fetched; retry later."
    assert body["status"] == "503"
    source = str(published.path)
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot fetch the JWKS {source}: JSONDecodeError"
    ]
    published.publish(("ec-1", EC_KEY))
    published.clock.now += REFETCH_INTERVAL - 1
    with pytest.raises(KeysUnavailable):
        keys.key("ec-1")  # no second try so soon: an outage is not one fetch per token
    assert len(caplog.records) == 1
    published.clock.now += 1
    assert keys.key("ec-1") is not None


def test_keys_already_read_keep_working_when_reading_fails(published) -> None:
    keys = published.keys()
    assert keys.key("ec-1") is not None
    published.path.write_text(json.dumps({"keys": "not a list"}))
    published.clock.now += KEYS_MAX_AGE + 1
    assert keys.key("ec-1") is not None
    published.publish(("ec-2", OTHER_EC_KEY))
    published.clock.now += REFETCH_INTERVAL - 1  # stale keys, but the failed read was a read
    assert keys.key("ec-1") is not None
    assert keys.key("ec-2") is None
    published.clock.now += 1
    assert keys.key("ec-2") is not None
    assert keys.key("ec-1") is None


# --------------------------------------------------------------------------- over HTTP


class Endpoint:
    """A JWKS endpoint on 127.0.0.1 serving ``body``; it records the requests' Accept header."""

    def __init__(self) -> None:
        self.body = b""
        self.endless = False
        self.sent = 0
        self.delay = 0.0
        self.accepts: list[str | None] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                endpoint.accepts.append(self.headers.get("Accept"))
                time.sleep(endpoint.delay)
                if endpoint.endless:
                    self.send_endlessly()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(endpoint.body)))
                self.end_headers()
                self.wfile.write(endpoint.body)

            def send_endlessly(self) -> None:
                # No length: a body that ends only when the client hangs up (64 MiB at most).
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                chunk = b" " * 65536
                try:
                    while endpoint.sent < 64 * 1024 * 1024:
                        self.wfile.write(chunk)
                        endpoint.sent += len(chunk)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/keys"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve(self, size: int) -> None:
        """A JWKS of exactly ``size`` bytes (its keys, then blanks)."""
        document = json.dumps({"keys": [jwk("ec-1", EC_KEY)]}).encode()
        self.body = document + b" " * (size - len(document))


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_keys_are_fetched_over_http_up_to_one_mebibyte(endpoint) -> None:
    endpoint.serve(1024 * 1024)
    keys = JwksKeys(endpoint.url)
    assert keys.key("ec-1") is not None
    assert endpoint.accepts == ["application/json"]
    assert JwtIssuer(ISSUER, keys, (AUDIENCE,)).identify(token(sub="x")) == "sub:x"


def test_a_jwks_over_one_mebibyte_is_refused(endpoint) -> None:
    endpoint.serve(1024 * 1024 + 1)
    with pytest.raises(KeysUnavailable):
        JwksKeys(endpoint.url).key("ec-1")


def test_an_endless_jwks_is_cut_after_one_mebibyte(endpoint) -> None:
    endpoint.endless = True
    with pytest.raises(KeysUnavailable):
        JwksKeys(endpoint.url).key("ec-1")
    endpoint.server.shutdown()  # the handler has finished: what it sent is counted
    assert endpoint.sent < 32 * 1024 * 1024  # not read to the end (socket buffers aside)


def test_an_https_source_is_fetched_not_read_as_a_file(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="scim.auth")
    with pytest.raises(KeysUnavailable):
        JwksKeys("https://127.0.0.1:1/keys").key("ec-1")  # nothing listens on port 1
    assert [r.getMessage() for r in caplog.records] == [
        "cannot fetch the JWKS https://127.0.0.1:1/keys: URLError"
    ]


def test_a_fetch_waits_no_longer_than_the_timeout(endpoint, monkeypatch) -> None:
    monkeypatch.setattr(oauth, "FETCH_TIMEOUT", 0.2)
    endpoint.serve(1000)
    endpoint.delay = 2.0
    started = time.monotonic()
    with pytest.raises(KeysUnavailable):
        JwksKeys(endpoint.url).key("ec-1")
    assert time.monotonic() - started < 1.5
