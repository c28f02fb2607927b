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
