"""Bearer tokens (scim_core.auth): configured as SHA-256 digests, names for the audit log, bad
input refused, a 401 with WWW-Authenticate otherwise; the Flask adapter uses the same code."""

import hashlib
import hmac
import inspect
import json

import pytest

import scim_core.auth
from scim_core import TokenSet, Unauthorized, error_response, parse_tokens
from scim_core.auth import bearer_token, digest


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def test_named_and_bare_digests_identify_their_token():
    tokens = parse_tokens(f"okta={sha('alpha')}, {sha('beta')}")
    assert tokens.identify("Bearer alpha") == "okta"
    assert tokens.identify("bearer beta") == "token-2"
    assert tokens.authenticate("BEARER  alpha ") == "okta"


def test_digest_is_the_configured_form():
    assert digest("alpha") == sha("alpha")
    assert parse_tokens(f"idp={digest('alpha')}").identify("Bearer alpha") == "idp"


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        (None, None),
        ("", None),
        ("Bearer", None),
        ("Bearer   ", None),
        ("Basic YWxhZGRpbjpvcGVu", None),
        ("abc", None),
        ("Bearer\tabc", None),
    ],
)
def test_bearer_token_parses_the_header(header, token):
    assert bearer_token(header) == token


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Bearer ", "Basic alpha", "Bearer wrong", "alpha", "Token alpha"],
)
def test_anything_else_is_refused(header):
    assert parse_tokens(sha("alpha")).identify(header) is None


@pytest.mark.parametrize(
    ("case", "header"),
    [
        ("missing header", None),
        ("wrong scheme", "Basic YWxwaGE6"),
        ("wrong token", "Bearer wrong"),
        ("empty token", "Bearer "),
    ],
)
def test_authenticate_refuses_with_a_401_and_www_authenticate(case, header):
    with pytest.raises(Unauthorized) as refused:
        parse_tokens(sha("alpha")).authenticate(header)
    response = error_response(refused.value)
    assert response.status == 401, case
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="scim"'
    body = json.loads(response.body_bytes())
    assert body["status"] == "401"
    assert body["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert "alpha" not in response.body_bytes().decode() and "wrong" not in body["detail"]


@pytest.mark.parametrize("text", ["", " , ", "abc", "x=" + "g" * 64, sha("a")[:-1]])
def test_malformed_configuration_is_an_error(text):
    with pytest.raises(ValueError, match="digest"):
        parse_tokens(text)


def test_comparison_is_constant_time():
    source = inspect.getsource(scim_core.auth.TokenSet.identify)
    assert "hmac.compare_digest" in source
    assert "==" not in source


def test_only_digests_are_kept():
    tokens = parse_tokens(f"okta={sha('alpha-secret')}, {sha('beta-secret')}")
    assert all(len(known) == 32 for _, known in tokens.digests)
    assert "secret" not in repr(tokens)
    assert [name for name, _ in tokens.digests] == ["okta", "token-2"]


@pytest.mark.parametrize("offered", ["alpha", "beta", "gamma", "wrong"])
def test_every_digest_is_compared_whatever_matches(monkeypatch, offered):
    """No early exit: the work done does not tell which token (if any) matched; every
    comparison goes through hmac.compare_digest."""
    calls = []
    compare = hmac.compare_digest

    def counting(a, b):
        calls.append((len(a), len(b)))
        return compare(a, b)

    monkeypatch.setattr(scim_core.auth.hmac, "compare_digest", counting)
    tokens = parse_tokens(",".join(sha(t) for t in ("alpha", "beta", "gamma")))
    found = tokens.identify(f"Bearer {offered}")
    assert calls == [(32, 32)] * 3
    assert found == {"alpha": "token-1", "beta": "token-2", "gamma": "token-3"}.get(offered)


@pytest.mark.parametrize(
    "header",
    ["Bearer " + "x" * 100_000, "Bearer é", "Bearer \x00", "Bearer alpha\x00", "Bearer\talpha"],
)
def test_hostile_headers_are_refused_quietly(header):
    assert parse_tokens(sha("alpha")).identify(header) is None


def test_the_flask_adapter_checks_static_tokens_with_the_core():
    import scim_flask.auth
    from scim_flask.settings import HTTP_SETTINGS, AppSettings

    assert scim_flask.auth.TokenSet is TokenSet
    assert scim_flask.auth.parse_tokens is parse_tokens
    (setting,) = [s for s in HTTP_SETTINGS if s.name == "SCIM_TOKENS_SHA256"]
    assert setting.parse is parse_tokens
    settings = AppSettings.from_environ({"SCIM_TOKENS_SHA256": f"okta={sha('alpha')}"})
    assert isinstance(settings.tokens, TokenSet)
    assert settings.identify("Bearer alpha") == "okta"
    assert settings.identify("Bearer beta") is None
