"""scim_core served by a plain WSGI callable: no Flask, no framework, only the standard library.

The backend is chosen by name (``SCIM_BACKEND``: ``memory``, ``ldap`` or one you registered)
and configured from the ``SCIM_*`` environment, like the Flask service. Bearer tokens are
configured as SHA-256 digests in ``SCIM_TOKENS_SHA256`` (``name=digest`` or bare ``digest``,
comma-separated)::

    export SCIM_BACKEND=memory SCIM_TOKENS_SHA256=$(printf %s "$TOKEN" | sha256sum | cut -c1-64)
    python examples/plain_wsgi.py                      # wsgiref on 127.0.0.1:8000
    gunicorn 'plain_wsgi:create_application()' --chdir examples

Every SCIM decision is the service's: this file only converts WSGI to :class:`ScimRequest`
and :class:`ScimResponse` back; the bearer token is checked by :class:`scim_core.TokenSet`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl
from wsgiref.simple_server import make_server
from wsgiref.util import application_uri

from scim_core import (
    ConfigError,
    NotFound,
    PayloadTooLarge,
    ScimError,
    ScimRequest,
    ScimService,
    ServiceConfig,
    TokenSet,
    error_response,
    load_backend,
    parse_tokens,
)

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class ScimWsgiApp:
    """A WSGI app serving ``service`` under ``prefix`` to holders of ``tokens``."""

    def __init__(self, service: ScimService, tokens: TokenSet, prefix: str = "/scim/v2"):
        self.service = service
        self.prefix = prefix
        self.tokens = tokens

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Answer one request (PEP 3333)."""
        # PEP 3333 hands the path over as latin-1; SCIM ids (group names) may be UTF-8.
        path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "replace")
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            if path != self.prefix and not path.startswith(self.prefix + "/"):
                raise NotFound(f"No endpoint at {path}.")
            principal = self.tokens.authenticate(environ.get("HTTP_AUTHORIZATION"))  # else 401
            if length > self.service.config.max_body_bytes:
                raise PayloadTooLarge("The request body is over the limit.")
            response = self.service.handle(
                ScimRequest(
                    method=environ["REQUEST_METHOD"],
                    path=path[len(self.prefix) :] or "/",
                    query=dict(reversed(parse_qsl(environ.get("QUERY_STRING", "")))),
                    body=environ["wsgi.input"].read(length) if length else b"",
                    content_type=environ.get("CONTENT_TYPE") or None,
                    if_match=environ.get("HTTP_IF_MATCH"),
                    base_url=application_uri(environ).rstrip("/") + self.prefix,
                    principal=principal,
                )
            )
        except ScimError as error:
            response = error_response(error)
        status = f"{response.status} {HTTPStatus(response.status).phrase}"
        if response.chunks is not None:  # a big group: sent as it is written, no length
            start_response(status, list(response.headers.items()))
            return response.chunks
        payload = response.body_bytes()
        headers = [*response.headers.items(), ("Content-Length", str(len(payload)))]
        start_response(status, headers)
        return [payload]

    def close(self) -> None:
        """Release the backend's connections."""
        self.service.backend.close()


def create_application(environ: Mapping[str, str] = os.environ) -> ScimWsgiApp:
    """The app for a ``SCIM_*`` environment; :class:`ConfigError` names a bad setting."""
    if not environ.get("SCIM_TOKENS_SHA256"):
        raise ConfigError("SCIM_TOKENS_SHA256 is required: the accepted bearer token digests")
    try:
        tokens = parse_tokens(environ["SCIM_TOKENS_SHA256"])
    except ValueError as error:
        raise ConfigError(f"SCIM_TOKENS_SHA256: {error}") from None
    backend = load_backend(environ.get("SCIM_BACKEND", "memory"))(environ)
    return ScimWsgiApp(ScimService(backend, ServiceConfig.from_environ(environ)), tokens)


if __name__ == "__main__":
    port = int(os.environ.get("SCIM_PORT", "8000"))
    with make_server("127.0.0.1", port, create_application()) as server:
        print(f"SCIM_BASE=http://127.0.0.1:{port}/scim/v2", file=sys.stderr)
        server.serve_forever()
