"""The Flask adapter: ``flask.request`` -> :class:`ScimRequest`, :class:`ScimResponse` -> response.

It holds no SCIM logic: authentication, logging and the conversion at the edge, nothing else.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from flask import Blueprint, Flask, Request, Response, current_app, g, request
from werkzeug.exceptions import HTTPException
from werkzeug.sansio.utils import get_current_url

from scim_core.backend import Backend, load_backend
from scim_core.errors import (
    InternalError,
    InvalidSyntax,
    InvalidValue,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ScimError,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
)
from scim_core.messages import SCIM_MEDIA_TYPE, ScimRequest, ScimResponse
from scim_core.observe import add_directory_observer, add_dropped_attribute_observer
from scim_core.service import ScimService, error_response
from scim_flask import metrics
from scim_flask.logs import configure_logging
from scim_flask.proxy import TrustedProxies
from scim_flask.ratelimit import TokenBuckets
from scim_flask.settings import AppSettings

__all__ = ["SCIM_PREFIX", "ScimExtension", "create_app"]

SCIM_PREFIX = "/scim/v2"
EXTENSION_KEY = "scim"

request_log = logging.getLogger("scim.request")
log = logging.getLogger("scim.app")

_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
#: A client's X-Request-Id is echoed and logged only if it looks like an id; else one is made.
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
#: The Host values used for URLs when no public URL is configured: a developer's own machine.
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
#: Client addresses whose failed authentications are counted, per worker, at most.
_TRACKED_ADDRESSES = 10_000
#: A client address may fail this many seconds' worth of authentications at once (an identity
#: provider whose token was rotated retries; a script probing tokens is held to the rate).
_FAILURE_BURST_SECONDS = 20


class _RequestTimeout(ScimError):
    """The request (its body) did not arrive within ``SCIM_READ_TIMEOUT``."""

    status = 408


_HTTP_ERRORS: dict[int, type[ScimError]] = {
    404: NotFound,
    405: MethodNotAllowed,
    408: _RequestTimeout,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
}


def _to_flask(response: ScimResponse) -> Response:
    headers = response.headers
    # The headers and the content type go in with the body: werkzeug then sets no default
    # Content-Type only to replace it (a header set afterwards is checked and set one by one).
    content_type = None
    has_body = response.body is not None or response.chunks is not None
    if has_body and not any(name.lower() == "content-type" for name in headers):
        content_type = SCIM_MEDIA_TYPE
    if response.chunks is not None:
        # Sent as it is made (chunked transfer): the status and headers are final already.
        body: Any = iter(response.chunks)
    else:
        body = response.body_bytes()
    return Response(body, response.status, headers or None, content_type=content_type)


def _error(error: ScimError) -> Response:
    return _to_flask(error_response(error))


class ScimExtension:
    """Flask extension holding the service and settings in ``app.extensions["scim"]``."""

    def __init__(
        self,
        app: Flask | None = None,
        *,
        settings: AppSettings | None = None,
        backend: Backend | None = None,
        url_prefix: str = SCIM_PREFIX,
        own_app: bool = False,
        ops_prefix: str | None = None,
    ) -> None:
        self._settings = settings
        self._backend = backend
        self.url_prefix = url_prefix
        self.own_app = own_app
        #: Where ``/healthz``, ``/readyz`` and ``/metrics`` are served: at the root of the
        #: service's own app, under ``url_prefix`` in a host app (whose root is its own).
        self.ops_prefix = (
            ops_prefix if ops_prefix is not None else ("" if own_app else url_prefix)
        ).rstrip("/")
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        """Build the service, register the blueprint, handlers and health endpoints.

        ``SCIM_*`` settings come from the app's config, else from the environment. In a host
        app (``own_app`` false) the error handlers and the request log answer only requests
        under ``url_prefix`` (and the health and metrics endpoints, under ``ops_prefix``): the
        host's other routes keep their own error pages, handlers registered before this call
        included.
        """
        environ = {
            **os.environ,
            **{k: str(v) for k, v in app.config.items() if k.startswith("SCIM_")},
        }
        settings = self._settings or AppSettings.from_environ(environ)
        backend = self._backend or load_backend(settings.backend)(environ)
        service = ScimService(backend, settings.service)
        if settings.service.cursor_secret is None:
            # Said once at start-up: a cursor request would otherwise be the first sign.
            log.warning(
                "cursor-based paging is off: set SCIM_CURSOR_SECRET (the same on every worker "
                "and instance) to offer it; index paging is unaffected"
            )
        add_directory_observer(metrics.observe_directory_operation)
        add_dropped_attribute_observer(metrics.observe_dropped_attribute)
        limiter = TokenBuckets(settings.rate_limit) if settings.rate_limit else None
        failures = (
            TokenBuckets(
                settings.auth_failure_limit,
                burst=settings.auth_failure_limit * _FAILURE_BURST_SECONDS,
                max_names=_TRACKED_ADDRESSES,
            )
            if settings.auth_failure_limit
            else None
        )
        app.extensions[EXTENSION_KEY] = {
            "service": service,
            "settings": settings,
            "limiter": limiter,
            "failures": failures,
        }
        # Flask defines the key as None (no limit): a host app's own limit, if it set one,
        # stays. Otherwise a Content-Length over it is refused unread, and a chunked body is
        # read no further than one byte past the service's limit (werkzeug stops a stream at
        # this value without an error), so the service sees it is too large and answers 413.
        if app.config.get("MAX_CONTENT_LENGTH") is None:
            app.config["MAX_CONTENT_LENGTH"] = settings.service.max_body_bytes + 1
        app.register_blueprint(_blueprint(self.url_prefix), url_prefix=self.url_prefix)
        app.register_blueprint(_ops_blueprint(), url_prefix=self.ops_prefix or None)
        _register_handlers(app, self.url_prefix, self.ops_prefix, self.own_app)


def _state() -> Mapping[str, Any]:
    state: Mapping[str, Any] = current_app.extensions[EXTENSION_KEY]
    return state


def _blueprint(url_prefix: str) -> Blueprint:
    blueprint = Blueprint("scim", __name__)

    @blueprint.before_request
    def authenticate() -> Response | None:
        state = _state()
        principal = state["settings"].identify(request.headers.get("Authorization"))
        if principal is None:
            error = _failed_authentication()
            return _to_flask(state["service"].refuse(_scim_request(None), error))
        g.scim_principal = principal
        limiter = state["limiter"]
        wait = limiter.acquire(principal) if limiter is not None else 0
        if wait:
            metrics.refused("rate_limited")
            return _error(
                TooManyRequests(
                    f"The rate limit of this token is exhausted; retry after {wait} s.",
                    retry_after=wait,
                )
            )
        return None

    def _scim_request(principal: str | None, body: bytes = b"") -> ScimRequest:
        # One look-up of the request behind flask.request: each use of the proxy costs one.
        current: Request = request._get_current_object()  # type: ignore[attr-defined]
        headers = current.headers
        return ScimRequest(
            method=current.method,
            path="/" + (current.view_args or {}).get("subpath", ""),
            query=current.args.to_dict(),  # one value per name: the first
            body=body,
            content_type=headers.get("Content-Type"),
            if_match=headers.get("If-Match"),
            base_url=_public_base() + url_prefix,
            principal=principal,
        )

    # strict_slashes=False: /scim/v2 is served, not redirected to a URL built from Host.
    @blueprint.route("/", defaults={"subpath": ""}, methods=_METHODS, strict_slashes=False)
    @blueprint.route("/<path:subpath>", methods=_METHODS)
    def dispatch(subpath: str) -> Response:
        try:
            body = request.get_data(cache=False)
        except HTTPException:
            raise  # over the limit (413), too slow (408): answered as such
        except Exception as error:  # the server's own parser: a malformed chunk, say
            log.info("unreadable request body: %s", type(error).__name__)
            raise InvalidSyntax("The request body could not be read as HTTP/1.1.") from None
        scim_request = _scim_request(g.scim_principal, body)
        return _to_flask(_state()["service"].handle(scim_request))

    return blueprint


def _failed_authentication() -> ScimError:
    """The answer to a request without a valid token: 401, or 429 once its client address
    has failed too often (``SCIM_AUTH_FAILURE_LIMIT``), wherever the token was offered."""
    failures = _state()["failures"]
    wait = failures.acquire(request.remote_addr or "-") if failures is not None else 0
    metrics.refused("authentication_throttled" if wait else "unauthenticated")
    if wait:
        return TooManyRequests(
            f"Too many requests without a valid token; retry after {wait} s.",
            retry_after=wait,
        )
    return Unauthorized()


def _public_base() -> str:
    """Where clients reach the service: the configured public URL, else a loopback Host.

    :raises InvalidValue: without a public URL, for any Host that is not loopback: a URL in
        an answer built from a Host the client chose would send the next client elsewhere.
    """
    current: Request = request._get_current_object()  # type: ignore[attr-defined]
    configured: str | None = _state()["settings"].public_url
    if configured:
        return configured + current.script_root
    host = current.host.lower()
    name = host[: host.find("]") + 1] if host.startswith("[") else host.rsplit(":", 1)[0]
    if name not in _LOOPBACK_HOSTS:
        raise InvalidValue(
            "This service answers only on its public URL; its administrator sets SCIM_PUBLIC_URL."
        )
    return _host_url(current.scheme, current.host) + current.script_root


@lru_cache(maxsize=64)
def _host_url(scheme: str, host: str) -> str:
    """``scheme://host`` as werkzeug's ``request.host_url`` gives it, without the slash.

    Worked out once per scheme and Host (only loopback names get here: a few per process):
    werkzeug converts the URL to an IRI and back each time, most of what ``host_url`` costs.
    """
    return get_current_url(scheme, host).rstrip("/")


def _register_handlers(app: Flask, url_prefix: str, ops_prefix: str, own_app: bool) -> None:
    ops_paths = {ops_prefix + path for path in metrics.OPS_PATHS}
    below_prefix = url_prefix.rstrip("/") + "/"

    def ours(path: str | None = None) -> bool:
        """Whether this request (or ``path``) is the service's: in a host app, only under its
        prefix."""
        if own_app:
            return True
        if path is None:
            path = request.path
        return path in ops_paths or path == url_prefix or path.startswith(below_prefix)

    # The host's own handlers, as registered so far: requests that are not ours keep them.
    host = {code: dict(found) for code, found in app.error_handler_spec.get(None, {}).items()}

    def scoped(code: int | None, handler: Callable[[Any], Response]) -> Callable[[Any], Any]:
        def answer(error: Any) -> Any:
            if ours():
                return handler(error)
            for kind in type(error).__mro__:
                theirs = host.get(code, {}).get(kind) or host.get(None, {}).get(kind)
                if theirs is not None:
                    return theirs(error)
            if isinstance(error, HTTPException):
                return error  # Flask's own page for it
            raise error

        return answer

    def start_timer() -> None:
        started = time.perf_counter()
        offered = request.headers.get("X-Request-Id", "")
        # 128 random bits in 32 hex digits: unique enough, and no UUID object to build.
        request_id = offered if _REQUEST_ID.match(offered) else os.urandom(16).hex()
        state = g._get_current_object()
        state.scim_started = started
        state.scim_request_id = request_id

    # First of the app's before-request functions: a host app's own check that answers early
    # (registered before this extension) must still find the request id and start time.
    app.before_request_funcs.setdefault(None, []).insert(0, start_timer)

    @app.after_request
    def log_request(response: Response) -> Response:
        # The request and g looked up once: each use of flask's proxies costs a look-up.
        current: Request = request._get_current_object()  # type: ignore[attr-defined]
        path: str = current.path
        if not ours(path):
            return response
        state = g._get_current_object()
        if "scim_request_id" not in state:
            start_timer()
        request_id: str = state.scim_request_id
        response.headers["X-Request-Id"] = request_id
        elapsed = time.perf_counter() - state.scim_started
        method: str = current.method
        status = response.status_code
        principal: str | None = state.get("scim_principal")
        root = current.script_root
        route = metrics.route_of(path, root + url_prefix, root + ops_prefix)
        metrics.observe_request(route, method, status, principal, elapsed)
        if request_log.isEnabledFor(logging.INFO):
            request_log.info(
                "%s %s %s",
                method,
                path,
                status,
                extra={
                    "request_id": request_id,
                    "method": method,
                    "path": path,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 2),
                    "principal": principal,
                },
            )
        return response

    def not_found(_: HTTPException) -> Response:
        return _error(NotFound(f"No endpoint at {request.path}."))

    def not_allowed(_: HTTPException) -> Response:
        return _error(MethodNotAllowed(f"{request.method} is not allowed on {request.path}."))

    def too_large(_: HTTPException) -> Response:
        limit = _state()["settings"].service.max_body_bytes
        return _error(PayloadTooLarge(f"The request body is over the limit of {limit} bytes."))

    def scim_error(error: ScimError) -> Response:
        return _error(error)

    def http_error(error: HTTPException) -> Response:
        code = error.code or 500
        kind = _HTTP_ERRORS.get(code, InvalidSyntax if code < 500 else InternalError)
        return _error(kind(error.description or error.name))

    def unexpected(error: Exception) -> Response:
        log.error(
            "unhandled %s", type(error).__name__, extra={"request_id": g.get("scim_request_id")}
        )
        return _error(InternalError(f"Internal error; request id {g.get('scim_request_id')}."))

    handlers: list[tuple[int | type[Exception], int | None, Callable[[Any], Response]]] = [
        (404, 404, not_found),
        (405, 405, not_allowed),
        (413, 413, too_large),
        (ScimError, None, scim_error),
        (HTTPException, None, http_error),
        (Exception, None, unexpected),
    ]
    for key, code, handler in handlers:
        app.register_error_handler(key, scoped(code, handler))


def _ops_blueprint() -> Blueprint:
    """``/healthz`` (the process is up), ``/readyz`` (the directory answers) and ``/metrics``."""
    blueprint = Blueprint("scim_ops", __name__)

    @blueprint.get("/healthz")
    def healthz() -> Response:
        return Response('{"status":"ok"}', 200, content_type="application/json")

    @blueprint.get("/readyz")
    def readyz() -> Response:
        try:
            _state()["service"].check_ready()
        except ScimError as error:
            metrics.observe_readiness(False)
            return _error(error)
        metrics.observe_readiness(True)
        return Response('{"status":"ready"}', 200, content_type="application/json")

    @blueprint.get("/metrics")
    def metrics_endpoint() -> Response:
        # Behind the same bearer tokens as /scim/v2: a scraper sends one (Prometheus's
        # `authorization` setting); the counts name callers, which is not for everyone.
        if _state()["settings"].identify(request.headers.get("Authorization")) is None:
            return _error(_failed_authentication())
        return Response(metrics.scrape(), 200, content_type=metrics.CONTENT_TYPE)

    return blueprint


def create_app(
    config: Mapping[str, Any] | None = None,
    *,
    settings: AppSettings | None = None,
    backend: Backend | None = None,
) -> Flask:
    """Build the WSGI app: SCIM under ``/scim/v2``, ``/healthz`` and ``/readyz`` beside it.

    :param config: Flask config overrides.
    :param settings: the settings; read from ``SCIM_*`` environment variables when omitted.
    :param backend: a ready backend; loaded by name from the settings when omitted.
    :raises scim_core.config.ConfigError: naming a bad or missing setting.
    """
    settings = settings or AppSettings.from_environ(os.environ)
    configure_logging(settings.log_level)
    app = Flask("scim_flask")
    app.config.update(config or {})
    ScimExtension(app, settings=settings, backend=backend, own_app=True)
    if settings.trusted_proxies:
        app.wsgi_app = TrustedProxies(app.wsgi_app, settings.trusted_proxies)  # type: ignore[method-assign]
    return app
