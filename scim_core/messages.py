"""What an adapter hands the service and gets back: plain, frozen, framework-free values."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SCIM_MEDIA_TYPE", "ScimRequest", "ScimResponse"]

SCIM_MEDIA_TYPE = "application/scim+json"

#: Compact UTF-8 JSON: what ``json.dumps(body, ensure_ascii=False, separators=(",", ":"))`` gives.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


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
    """The service's answer: a status, an optional JSON body and headers.

    A big answer (a group of many members) may come as ``chunks`` instead of ``body``: its
    JSON, already encoded, as an iterable of bytes that can be iterated again. Adapters send
    it as it is made (:meth:`iter_bytes`); :meth:`body_bytes` joins it. Its status and headers
    are final: everything that could fail was done before the service returned it.

    :param status: the HTTP status.
    :param body: the JSON body, or ``None`` (no body, or one given as ``chunks``).
    :param headers: response headers.
    :param chunks: the body as UTF-8 JSON in pieces; ``body`` is then ``None``.
    """

    status: int
    body: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    chunks: Iterable[bytes] | None = None

    def body_bytes(self) -> bytes:
        """The body as compact UTF-8 JSON, or ``b""`` when there is none."""
        if self.chunks is not None:
            return b"".join(self.chunks)
        if self.body is None:
            return b""
        return _COMPACT.encode(self.body).encode()

    def iter_bytes(self) -> Iterable[bytes]:
        """The body as compact UTF-8 JSON in pieces (one piece unless it is ``chunks``)."""
        if self.chunks is not None:
            return self.chunks
        return [self.body_bytes()]

    def json(self) -> Any:
        """The body decoded (``None`` when there is none), whether ``body`` or ``chunks``."""
        if self.chunks is not None:
            return json.loads(self.body_bytes())
        return self.body
