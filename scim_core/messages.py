"""What an adapter hands the service and gets back: plain, frozen, framework-free values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SCIM_MEDIA_TYPE", "ScimRequest", "ScimResponse"]

SCIM_MEDIA_TYPE = "application/scim+json"


@dataclass(frozen=True)
class ScimRequest:
    """One HTTP request, reduced to what SCIM needs (RFC 7644 §3).

    :param method: the HTTP method, upper case.
    :param path: the path below the SCIM root, e.g. ``/Users/2819c223``; percent-decoded.
    :param query: query parameters, one value each (the first wins).
    :param body: the raw request body; the service parses it.
    :param content_type: the ``Content-Type`` header, if any.
    :param if_match: the ``If-Match`` header, if any (RFC 7644 §3.14).
    :param base_url: the absolute URL of the SCIM root, used for ``meta.location``.
    :param principal: the authenticated caller's name, for the audit log.
    """

    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str | None = None
    if_match: str | None = None
    base_url: str = ""
    principal: str | None = None


@dataclass(frozen=True)
class ScimResponse:
    """The service's answer: a status, an optional JSON body and headers."""

    status: int
    body: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def body_bytes(self) -> bytes:
        """The body as compact UTF-8 JSON, or ``b""`` when there is none."""
        if self.body is None:
            return b""
        return json.dumps(self.body, ensure_ascii=False, separators=(",", ":")).encode()
