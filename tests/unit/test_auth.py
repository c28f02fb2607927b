"""Bearer tokens: configured as SHA-256 digests, names for the audit log, bad input refused."""

import hashlib

import pytest

from scim_flask.auth import parse_tokens


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def test_named_and_bare_digests_identify_their_token():
    tokens = parse_tokens(f"okta={sha('alpha')}, {sha('beta')}")
    assert tokens.identify("Bearer alpha") == "okta"
    assert tokens.identify("bearer beta") == "token-2"


@pytest.mark.parametrize(
    "header", [None, "", "Bearer", "Bearer ", "Basic alpha", "Bearer wrong", "alpha"]
)
def test_anything_else_is_refused(header):
    assert parse_tokens(sha("alpha")).identify(header) is None


@pytest.mark.parametrize("text", ["", "abc", "x=" + "g" * 64, sha("a")[:-1]])
def test_malformed_configuration_is_an_error(text):
    with pytest.raises(ValueError, match="digest"):
        parse_tokens(text)


def test_comparison_is_constant_time():
    import inspect

    import scim_flask.auth

    source = inspect.getsource(scim_flask.auth)
    assert "hmac.compare_digest" in source
    assert "==" not in source.split("def identify", 1)[1].split("def parse_tokens", 1)[0]


def test_only_digests_are_kept():
    tokens = parse_tokens(f"okta={sha('alpha-secret')}, {sha('beta-secret')}")
    assert all(len(known) == 32 for _, known in tokens.digests)
    assert "secret" not in repr(tokens)
    assert [name for name, _ in tokens.digests] == ["okta", "token-2"]


@pytest.mark.parametrize("offered", ["alpha", "beta", "gamma", "wrong"])
def test_every_digest_is_compared_whatever_matches(monkeypatch, offered):
    """No early exit: the work done does not tell which token (if any) matched."""
    import hmac

    import scim_flask.auth

    calls = []
    compare = hmac.compare_digest

    def counting(a, b):
        calls.append((len(a), len(b)))
        return compare(a, b)

    monkeypatch.setattr(scim_flask.auth.hmac, "compare_digest", counting)
    tokens = parse_tokens(",".join(sha(t) for t in ("alpha", "beta", "gamma")))
    tokens.identify(f"Bearer {offered}")
    assert calls == [(32, 32)] * 3


@pytest.mark.parametrize(
    "header",
    ["Bearer " + "x" * 100_000, "Bearer é", "Bearer \x00", "Bearer alpha\x00", "Bearer\talpha"],
)
def test_hostile_headers_are_refused_quietly(header):
    assert parse_tokens(sha("alpha")).identify(header) is None
