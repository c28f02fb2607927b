"""The SCIM error hierarchy: one class per RFC 7644 §3.12 error, each rendering its own body.

Every failure the service reports to a client is a :class:`ScimError`. Adapters render it with
:meth:`ScimError.to_body` and :attr:`ScimError.headers`; nothing else reaches the wire. Details
are written for the client and must never carry password material.
"""

from __future__ import annotations

from typing import Any, ClassVar

from scim_core.urns import ERROR_URN

__all__ = [
    "DirectoryRefused",
    "DirectoryUnavailable",
    "ExpiredCursor",
    "Forbidden",
    "InternalError",
    "InvalidCount",
    "InvalidCursor",
    "InvalidFilter",
    "InvalidPath",
    "InvalidSyntax",
    "InvalidValue",
    "MethodNotAllowed",
    "Mutability",
    "NoTarget",
    "NotFound",
    "NotImplementedByDesign",
    "PayloadTooLarge",
    "PreconditionFailed",
    "ScimError",
    "TooMany",
    "TooManyRequests",
    "Unauthorized",
    "Uniqueness",
    "UnsupportedMediaType",
    "VersionConflict",
]


class ScimError(Exception):
    """Base of every error the service answers with (RFC 7644 §3.12).

    :param detail: human-readable explanation for the client; never contains secrets.
    :param headers: extra response headers (``Retry-After``, ``WWW-Authenticate``).
    """

    status: ClassVar[int] = 400
    scim_type: ClassVar[str | None] = None
    #: Set by a backend when the change failed after a first part of it was written (the
    #: directory went away between two operations): the audit line records it.
    partial: bool = False

    def __init__(self, detail: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers: dict[str, str] = dict(headers or {})

    def to_body(self) -> dict[str, Any]:
        """Render the RFC 7644 §3.12 error body; ``status`` is a string as the RFC shows it."""
        body: dict[str, Any] = {"schemas": [ERROR_URN], "status": str(self.status)}
        if self.scim_type:
            body["scimType"] = self.scim_type
        body["detail"] = self.detail
        return body


class InvalidSyntax(ScimError):
    """400 ``invalidSyntax``: the body is not parseable JSON or not of the required shape."""

    scim_type = "invalidSyntax"


class InvalidValue(ScimError):
    """400 ``invalidValue``: a required value is missing or a value is not compatible."""

    scim_type = "invalidValue"


class InvalidFilter(ScimError):
    """400 ``invalidFilter``: the filter syntax is invalid or the form is not allowed."""

    scim_type = "invalidFilter"


class InvalidCursor(ScimError):
    """400 invalidCursor: a cursor this service did not issue for this query and caller, or
    one that was altered (RFC 9865 §2.1)."""

    scim_type = "invalidCursor"


class ExpiredCursor(ScimError):
    """400 expiredCursor: a cursor older than the advertised ``cursorTimeout``."""

    scim_type = "expiredCursor"


class InvalidCount(ScimError):
    """400 invalidCount: a count that is not a whole number, or differs from the count of the
    walk's first page."""

    scim_type = "invalidCount"


class InvalidPath(ScimError):
    """400 ``invalidPath``: a PATCH path is invalid or names an unsupported attribute."""

    scim_type = "invalidPath"


class NoTarget(ScimError):
    """400 ``noTarget``: a PATCH path matched nothing where a match is required."""

    scim_type = "noTarget"


class Mutability(ScimError):
    """400 ``mutability``: an attempt to change an immutable or read-only attribute."""

    scim_type = "mutability"


class TooMany(ScimError):
    """400 ``tooMany``: the query would return more results than the service allows."""

    scim_type = "tooMany"


class Unauthorized(ScimError):
    """401: no bearer token, or one the service does not know."""

    status = 401

    def __init__(self, detail: str = "Authentication required: send a valid bearer token.") -> None:
        super().__init__(detail, headers={"WWW-Authenticate": 'Bearer realm="scim"'})


class Forbidden(ScimError):
    """403: the caller is known but may not do this."""

    status = 403


class NotFound(ScimError):
    """404: the resource or endpoint does not exist."""

    status = 404


class MethodNotAllowed(ScimError):
    """405: the endpoint exists but does not take this method."""

    status = 405


class Uniqueness(ScimError):
    """409 ``uniqueness``: a resource with this unique value exists already."""

    status = 409
    scim_type = "uniqueness"


class VersionConflict(ScimError):
    """409: the resource changed between read and write (RFC 7644 §3.12, version mismatch).

    Backends raise it from an optimistic write; the service re-reads and retries, or
    answers 412 when the client sent ``If-Match``.
    """

    status = 409


class PreconditionFailed(ScimError):
    """412: the ``If-Match`` version is not the resource's current version."""

    status = 412


class PayloadTooLarge(ScimError):
    """413: the request body is larger than the configured limit."""

    status = 413


class UnsupportedMediaType(ScimError):
    """415: the request body is not ``application/scim+json`` or ``application/json``."""

    status = 415


class TooManyRequests(ScimError):
    """429: the caller's rate limit is exhausted; ``Retry-After`` says when to come back."""

    status = 429

    def __init__(self, detail: str, *, retry_after: int = 1) -> None:
        super().__init__(detail, headers={"Retry-After": str(retry_after)})


class InternalError(ScimError):
    """500: an unexpected failure; the detail names only the request id, never internals."""

    status = 500


class NotImplementedByDesign(ScimError):
    """501: an operation the service deliberately does not offer (group PUT and DELETE)."""

    status = 501


class DirectoryRefused(ScimError):
    """502: the directory refused a well-formed request for a reason that is not the client's
    (a control or operation it lacks, the service account's rights, its configuration).

    The detail says what the operator should look at; the client may retry later but the
    same request will fail the same way until the directory or the service is reconfigured.
    """

    status = 502


class DirectoryUnavailable(ScimError):
    """503: the directory cannot be reached; the client should retry after ``Retry-After``."""

    status = 503

    def __init__(
        self, detail: str = "The directory is unavailable; retry later.", *, retry_after: int = 5
    ) -> None:
        super().__init__(detail, headers={"Retry-After": str(retry_after)})
