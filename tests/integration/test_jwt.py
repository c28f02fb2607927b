"""JWT bearer tokens from an identity provider, against a real JWKS endpoint on loopback.

The keys are made here with ``cryptography``, published by a small HTTP server on 127.0.0.1
(which counts its hits and can be switched off), and every token goes through the whole app.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from scim_core.config import ConfigError
from scim_core.oauth import REFETCH_INTERVAL, JwksKeys, JwtIssuer
from scim_flask import AppSettings, create_app

ISSUER = "https://idp.example.test/tenant/v2.0"
AUDIENCE = "api://scim-ldap"
STATIC = "static-canary-token-0123456789"
SCIM_JSON = "application/scim+json"


class Jwks:
    """A JWKS endpoint on 127.0.0.1: its keys can change, it can go down, it counts hits."""

    def __init__(self) -> None:
        self.document: dict[str, Any] = {"keys": []}
        self.up = True
        self.hits = 0
        jwks = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                jwks.hits += 1
                if not jwks.up:
                    self.send_error(503)
                    return
                body = json.dumps(jwks.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/keys"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def publish(self, *keys: tuple[str, Any]) -> None:
        entries = []
        for kid, private in keys:
            public = private.public_key()
            algorithm = RSAAlgorithm if isinstance(public, rsa.RSAPublicKey) else ECAlgorithm
            entry = algorithm.to_jwk(public, as_dict=True)
            entries.append({**entry, "kid": kid, "use": "sig"})
        self.document = {"keys": entries}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def token(key: Any = RSA_KEY, kid: str = "rsa-1", algorithm: str = "RS256", **claims: Any) -> str:
    now = int(time.time())
    body = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "iat": now,
        "nbf": now,
        "exp": now + 600,
        "azp": "entra-app",
        "roles": ["SCIM.Provision"],
        **claims,
    }
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, key, algorithm=algorithm, headers={"kid": kid})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.fixture
def jwks() -> Iterator[Jwks]:
    server = Jwks()
    server.publish(("rsa-1", RSA_KEY), ("ec-1", EC_KEY))
    yield server
    server.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def settings_for(jwks: Jwks, clock: Clock, **required: str) -> AppSettings:
    base = AppSettings.from_environ(
        {
            "SCIM_BACKEND": "memory",
            "SCIM_LOG_LEVEL": "INFO",
            "SCIM_TOKENS_SHA256": "static=" + hashlib.sha256(STATIC.encode()).hexdigest(),
            "SCIM_JWT_ISSUER": ISSUER,
            "SCIM_JWT_JWKS": jwks.url,
            "SCIM_JWT_AUDIENCE": f"{AUDIENCE},other-audience",
            "SCIM_JWT_REQUIRED_CLAIMS": ",".join(f"{k}={v}" for k, v in required.items()),
        }
    )
    (issuer,) = base.jwt_issuers
    return replace(base, jwt_issuers=(replace(issuer, keys=JwksKeys(jwks.url, clock)),))


def call(app: Any, bearer: str | None, method: str = "GET", path: str = "/Users", **kw: Any):
    headers = {"Authorization": f"Bearer {bearer}"} if bearer is not None else {}
    return app.test_client().open("/scim/v2" + path, method=method, headers=headers, **kw)


def test_rs256_and_es256_tokens_of_the_issuer_are_accepted(jwks, clock, caplog):
    app = create_app(settings=settings_for(jwks, clock))
    caplog.set_level(logging.INFO)
    assert call(app, token()).status_code == 200
    assert call(app, token(EC_KEY, "ec-1", "ES256")).status_code == 200
    created = call(
        app,
        token(),
        "POST",
        json={
            "userName": "jwt-user",
            "name": {"givenName": "J", "familyName": "W"},
            "emails": [{"value": "jwt@example.org"}],
        },
    )
    assert created.status_code == 201
    audits = [r.audit for r in caplog.records if r.name == "scim.audit"]
    assert audits[-1]["who"] == "azp:entra-app"
    assert jwks.hits == 1  # one fetch serves every token


def test_the_static_token_still_works_beside_jwts(jwks, clock):
    app = create_app(settings=settings_for(jwks, clock))
    assert call(app, STATIC).status_code == 200
    assert call(app, "not-the-static-token").status_code == 401


def _hs256_with_the_public_key() -> str:
    pem = RSA_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).encode())
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "exp": now + 600, "azp": "forged"}
    payload = _b64(json.dumps(claims).encode())
    signature = hmac.new(pem, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"


def _alg_none() -> str:
    header = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 600}
    return f"{header}.{_b64(json.dumps(claims).encode())}."


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda: token(exp=int(time.time()) - 120), id="expired"),
        pytest.param(lambda: token(nbf=int(time.time()) + 600), id="not yet valid"),
        pytest.param(lambda: token(aud="someone-else"), id="wrong audience"),
        pytest.param(lambda: token(iss="https://evil.example/"), id="wrong issuer"),
        pytest.param(lambda: token(exp=None), id="no exp"),
        pytest.param(lambda: token(OTHER_RSA_KEY), id="signed by an unknown key"),
        pytest.param(lambda: token(EC_KEY, "rsa-1", "ES256"), id="key of another type"),
        pytest.param(_alg_none, id="alg none"),
        pytest.param(_hs256_with_the_public_key, id="HS256 keyed with the public key"),
        pytest.param(lambda: token()[:-4] + "AAAA", id="signature altered"),
    ],
)
def test_bad_tokens_are_401(jwks, clock, bad, caplog):
    app = create_app(settings=settings_for(jwks, clock))
    caplog.set_level(logging.DEBUG)
    bearer = bad()
    response = call(app, bearer)
    assert response.status_code == 401, response.get_data(as_text=True)
    assert response.headers["Content-Type"] == SCIM_JSON
    assert bearer not in caplog.text and bearer not in response.get_data(as_text=True)


def test_required_claims_must_be_carried(jwks, clock):
    app = create_app(settings=settings_for(jwks, clock, roles="SCIM.Provision", scp="scim"))
    assert call(app, token(scp="openid scim")).status_code == 200
    assert call(app, token(scp="openid")).status_code == 401
    assert call(app, token(scp="openid scim", roles=["Reader"])).status_code == 401


def test_a_rotated_key_is_fetched_and_unknown_ids_cannot_hammer_the_provider(jwks, clock):
    app = create_app(settings=settings_for(jwks, clock))
    assert call(app, token()).status_code == 200
    assert jwks.hits == 1
    new_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwks.publish(("rsa-2", new_key))
    clock.now += REFETCH_INTERVAL  # the provider rotated a while ago
    assert call(app, token(new_key, "rsa-2")).status_code == 200
    assert jwks.hits == 2
    assert call(app, token()).status_code == 401  # the old key is gone from the set
    for _ in range(50):
        assert call(app, token(new_key, uuid.uuid4().hex)).status_code == 401
    assert jwks.hits == 2  # no fetch per made-up key id within the interval
    clock.now += REFETCH_INTERVAL
    assert call(app, token(new_key, uuid.uuid4().hex)).status_code == 401
    assert jwks.hits == 3


def test_keys_fetched_keep_working_while_the_endpoint_is_down(jwks, clock):
    app = create_app(settings=settings_for(jwks, clock))
    assert call(app, token()).status_code == 200
    jwks.up = False
    clock.now += 7200  # the keys are stale: a fetch is tried, fails, the old keys serve
    assert call(app, token()).status_code == 200


def test_with_no_key_ever_fetched_a_jwt_is_503_not_401(jwks, clock):
    jwks.up = False
    app = create_app(settings=settings_for(jwks, clock))
    response = call(app, token())
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "30"
    body = response.get_json(force=True)
    assert body["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert call(app, STATIC).status_code == 200  # static tokens need no keys


def test_keys_from_a_file(jwks, tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(jwks.document))
    issuer = JwtIssuer(ISSUER, JwksKeys(str(path)), (AUDIENCE,))
    assert issuer.identify(token()) == "azp:entra-app"
    assert issuer.identify(token(OTHER_RSA_KEY)) is None


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({}, "SCIM_TOKENS_SHA256"),
        ({"SCIM_JWT_ISSUER": ISSUER, "SCIM_JWT_AUDIENCE": AUDIENCE}, "SCIM_JWT_JWKS"),
        ({"SCIM_JWT_ISSUER": ISSUER, "SCIM_JWT_JWKS": "/x"}, "SCIM_JWT_AUDIENCE"),
        ({"SCIM_JWT_ALGORITHMS": "RS256,HS256"}, "SCIM_JWT_ALGORITHMS"),
        ({"SCIM_JWT_ALGORITHMS": "none"}, "SCIM_JWT_ALGORITHMS"),
        ({"SCIM_JWT_REQUIRED_CLAIMS": "roles"}, "SCIM_JWT_REQUIRED_CLAIMS"),
    ],
)
def test_bad_settings_name_themselves(environ, named):
    with pytest.raises(ConfigError, match=named):
        AppSettings.from_environ({"SCIM_BACKEND": "memory", **environ})


OKTA_ISSUER = "https://org.okta.test/oauth2/aus1"
OKTA_AUDIENCE = "api://scim-ldap-okta"


@pytest.fixture
def okta_jwks() -> Iterator[Jwks]:
    server = Jwks()
    server.publish(("okta-1", OTHER_RSA_KEY))
    yield server
    server.close()


def two_issuers(jwks: Jwks, okta: Jwks) -> Any:
    settings = AppSettings.from_environ(
        {
            "SCIM_BACKEND": "memory",
            "SCIM_LOG_LEVEL": "INFO",
            "SCIM_JWT_ISSUER": ISSUER,
            "SCIM_JWT_JWKS": jwks.url,
            "SCIM_JWT_AUDIENCE": AUDIENCE,
            "SCIM_JWT_REQUIRED_CLAIMS": "roles=SCIM.Provision",
            "SCIM_JWT_ISSUER_OKTA": OKTA_ISSUER,
            "SCIM_JWT_JWKS_OKTA": okta.url,
            "SCIM_JWT_AUDIENCE_OKTA": OKTA_AUDIENCE,
            "SCIM_JWT_REQUIRED_CLAIMS_OKTA": "scp=scim",
            "SCIM_JWT_PRINCIPAL_CLAIMS_OKTA": "cid",
        }
    )
    assert [i.issuer for i in settings.jwt_issuers] == [ISSUER, OKTA_ISSUER]
    return create_app(settings=settings)


def okta_token(key: Any = OTHER_RSA_KEY, kid: str = "okta-1", **claims: Any) -> str:
    base = {"iss": OKTA_ISSUER, "aud": OKTA_AUDIENCE, "cid": "okta-app", "scp": "scim"}
    return token(key, kid, **{"azp": None, "roles": None, **base, **claims})


def test_two_issuers_each_check_their_own_tokens(jwks, okta_jwks, caplog):
    """Entra's and Okta's tokens side by side: each is checked by the issuer its iss names,
    with that issuer's keys, audiences, required and principal claims."""
    app = two_issuers(jwks, okta_jwks)
    caplog.set_level(logging.INFO)
    assert call(app, token()).status_code == 200
    assert call(app, okta_token()).status_code == 200
    principals = [getattr(r, "principal", None) for r in caplog.records if r.name == "scim.request"]
    assert principals[-2:] == ["azp:entra-app", "cid:okta-app"]
    refused = {
        "Okta's iss, Entra's key": okta_token(RSA_KEY, "rsa-1"),
        "Entra's iss, Okta's key": token(OTHER_RSA_KEY, "okta-1"),
        "Okta's iss, Entra's audience": okta_token(aud=AUDIENCE),
        "Okta's iss, Entra's required claim only": okta_token(scp=None, roles=["SCIM.Provision"]),
        "an issuer nobody configured": token(iss="https://evil.example/"),
    }
    for why, bad in refused.items():
        assert call(app, bad).status_code == 401, why


def test_one_issuer_down_leaves_the_other_working(jwks, okta_jwks):
    okta_jwks.up = False
    app = two_issuers(jwks, okta_jwks)
    assert call(app, okta_token()).status_code == 503
    assert call(app, token()).status_code == 200


@pytest.mark.parametrize(
    ("environ", "problem"),
    [
        ({"SCIM_JWT_JWKS_OKTA": "/x"}, "SCIM_JWT_ISSUER_OKTA is missing"),
        (
            {"SCIM_JWT_ISSUER_OKTA": OKTA_ISSUER, "SCIM_JWT_AUDIENCE_OKTA": "a"},
            "SCIM_JWT_JWKS_OKTA is required with SCIM_JWT_ISSUER_OKTA",
        ),
        (
            {"SCIM_JWT_ISSUER_OKTA": OKTA_ISSUER, "SCIM_JWT_JWKS_OKTA": "/x"},
            "SCIM_JWT_AUDIENCE_OKTA is required",
        ),
        ({"SCIM_JWT_LEEWAY_OKTA": "-1"}, "SCIM_JWT_LEEWAY_OKTA"),
        (
            {
                **{f"SCIM_JWT_{k}": v for k, v in (("ISSUER", ISSUER), ("JWKS", "/x"))},
                **{f"SCIM_JWT_{k}_B": v for k, v in (("ISSUER", ISSUER), ("JWKS", "/y"))},
                "SCIM_JWT_AUDIENCE": "a",
                "SCIM_JWT_AUDIENCE_B": "b",
            },
            "Two SCIM_JWT_ISSUER",
        ),
    ],
)
def test_a_named_issuer_is_checked_like_the_first(environ, problem):
    with pytest.raises(ConfigError, match=problem):
        AppSettings.from_environ({"SCIM_BACKEND": "memory", **environ})


def test_only_asymmetric_algorithms_can_be_allowed():
    with pytest.raises(ValueError, match="asymmetric"):
        JwtIssuer(ISSUER, JwksKeys("/x"), (AUDIENCE,), algorithms=("HS256",))
