"""Embedding SCIM in an existing Flask app, under its own prefix and behind its own checks.

The host application has pages and an API of its own, guarded by an API key. It mounts the
SCIM extension under ``/api/scim`` (instead of the standalone ``/scim/v2``) and lets only its
identity provider's networks reach it; SCIM's bearer tokens are then checked as usual, so a
request must pass both::

    export SCIM_BACKEND=memory SCIM_TOKENS_SHA256=... HOST_API_KEY=...
    flask --app examples/flask_embed.py run      # SCIM at http://127.0.0.1:5000/api/scim

The host's ``before_request`` runs before the SCIM blueprint's, so a refused caller never
reaches SCIM. The extension's error bodies and request log apply under its prefix only: the
host keeps its own error pages (registered here before the extension, so that it knows them)
everywhere else. ``SCIM_*`` settings may also sit in the host's ``app.config``. Its
``/healthz``, ``/readyz`` and ``/metrics`` sit under its prefix too (the host has a ``/healthz``
of its own). It must be created before any host ``before_request`` that can answer early.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Sequence

from flask import Flask, Response, jsonify, request

from scim_core import Backend
from scim_flask import AppSettings, ScimExtension

SCIM_URL_PREFIX = "/api/scim"
IDP_NETWORKS = ("127.0.0.0/8", "::1/128")


def create_host_app(
    settings: AppSettings | None = None,
    backend: Backend | None = None,
    *,
    api_key: str | None = None,
    idp_networks: Sequence[str] = IDP_NETWORKS,
) -> Flask:
    """The host application with SCIM mounted under :data:`SCIM_URL_PREFIX`.

    :param settings: SCIM settings; read from ``SCIM_*`` variables when omitted.
    :param backend: the SCIM backend; loaded by the name in the settings when omitted.
    :param api_key: the key the host's own API expects (``HOST_API_KEY`` when omitted).
    :param idp_networks: the only networks allowed to reach SCIM.
    """
    app = Flask(__name__)
    key = api_key if api_key is not None else os.environ["HOST_API_KEY"]
    networks = [ipaddress.ip_network(network) for network in idp_networks]

    @app.errorhandler(404)
    def host_not_found(_: Exception) -> tuple[Response, int]:
        return jsonify(error="no such page here"), 404

    @app.errorhandler(Exception)
    def host_failure(_: Exception) -> tuple[Response, int]:
        return jsonify(error="the host application failed"), 500

    # Mount SCIM first: its request bookkeeping (request id, timing) must run before any
    # host check that may answer early, since its after_request hook logs every response.
    ScimExtension(app, settings=settings, backend=backend, url_prefix=SCIM_URL_PREFIX)

    @app.before_request
    def host_auth() -> tuple[Response, int] | None:
        if request.path == SCIM_URL_PREFIX or request.path.startswith(SCIM_URL_PREFIX + "/"):
            address = ipaddress.ip_address(request.remote_addr or "0.0.0.0")
            if not any(address in network for network in networks):
                return jsonify(error="SCIM is open to the identity provider only"), 403
            return None  # the SCIM blueprint checks the bearer token next
        offered = request.headers.get("X-Api-Key", "")
        if request.path.startswith("/api/") and not hmac.compare_digest(
            offered.encode(), key.encode()
        ):
            return jsonify(error="missing or wrong X-Api-Key"), 401
        return None

    @app.get("/")
    def home() -> str:
        return "<h1>Host application</h1>"

    @app.get("/healthz")
    def healthz() -> Response:
        return jsonify(host="up")

    @app.get("/api/projects")
    def projects() -> Response:
        return jsonify(projects=["apollo", "gemini"])

    @app.get("/broken")
    def broken() -> Response:
        raise RuntimeError("a host page failing")

    return app


def create_app() -> Flask:
    """Entry point for ``flask --app examples/flask_embed.py run`` (settings from the env)."""
    return create_host_app()
