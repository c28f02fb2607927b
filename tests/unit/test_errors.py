"""Every ScimError renders the RFC 7644 §3.12 body with its status and scimType."""

import pytest

from scim_core import errors

CASES = [
    (errors.InvalidSyntax, 400, "invalidSyntax"),
    (errors.InvalidValue, 400, "invalidValue"),
    (errors.InvalidFilter, 400, "invalidFilter"),
    (errors.InvalidPath, 400, "invalidPath"),
    (errors.NoTarget, 400, "noTarget"),
    (errors.Mutability, 400, "mutability"),
    (errors.Uniqueness, 409, "uniqueness"),
    (errors.NotFound, 404, None),
    (errors.PreconditionFailed, 412, None),
    (errors.PayloadTooLarge, 413, None),
    (errors.UnsupportedMediaType, 415, None),
    (errors.NotImplementedByDesign, 501, None),
]


@pytest.mark.parametrize(("kind", "status", "scim_type"), CASES)
def test_error_body(kind, status, scim_type):
    body = kind("something is wrong").to_body()
    assert body["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert body["status"] == str(status)
    assert body["detail"] == "something is wrong"
    assert body.get("scimType") == scim_type


def test_unauthorized_asks_for_a_bearer_token():
    error = errors.Unauthorized()
    assert error.status == 401
    assert error.headers["WWW-Authenticate"].startswith("Bearer")


def test_unavailable_says_when_to_retry():
    error = errors.DirectoryUnavailable(retry_after=7)
    assert error.status == 503
    assert error.headers == {"Retry-After": "7"}
