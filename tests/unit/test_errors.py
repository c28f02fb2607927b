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
    (errors.TooMany, 400, "tooMany"),
    (errors.Forbidden, 403, None),
    (errors.MethodNotAllowed, 405, None),
    (errors.Uniqueness, 409, "uniqueness"),
    (errors.VersionConflict, 409, None),
    (errors.InternalError, 500, None),
    (errors.DirectoryRefused, 502, None),
    (errors.NotFound, 404, None),
    (errors.PreconditionFailed, 412, None),
    (errors.PayloadTooLarge, 413, None),
    (errors.UnsupportedMediaType, 415, None),
    (errors.NotImplementedByDesign, 501, None),
    (errors.DirectoryUnavailable, 503, None),
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
    assert error.headers == {"WWW-Authenticate": 'Bearer realm="scim"'}
    assert error.to_body()["detail"] == "Authentication required: send a valid bearer token."
    assert "scimType" not in error.to_body()


def test_unavailable_says_when_to_retry():
    error = errors.DirectoryUnavailable(retry_after=7)
    assert error.status == 503
    assert error.headers == {"Retry-After": "7"}


@pytest.mark.parametrize(("kind", "status", "scim_type"), CASES)
def test_status_is_on_the_error_too(kind, status, scim_type):
    error = kind("x")
    assert error.status == status
    assert error.scim_type == scim_type
    assert isinstance(error, errors.ScimError)


def test_unavailable_retries_after_five_seconds_by_default():
    error = errors.DirectoryUnavailable()
    assert error.headers == {"Retry-After": "5"}
    assert error.to_body()["detail"] == "The directory is unavailable; retry later."


def test_too_many_requests_says_when_to_retry():
    assert errors.TooManyRequests("slow down").headers == {"Retry-After": "1"}
    error = errors.TooManyRequests("slow down", retry_after=30)
    assert error.status == 429
    assert error.headers == {"Retry-After": "30"}
    assert "scimType" not in error.to_body()


def test_other_errors_carry_no_headers():
    assert errors.NotFound("gone").headers == {}
    assert errors.InvalidValue("bad", headers={"X-A": "b"}).headers == {"X-A": "b"}


def test_a_partial_write_is_flagged_only_when_a_backend_says_so():
    assert errors.DirectoryUnavailable().partial is False
