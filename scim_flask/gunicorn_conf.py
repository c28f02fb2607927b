"""The service's gunicorn configuration: ``scim-ldap serve`` runs it, and so does
``gunicorn -c python:scim_flask.gunicorn_conf``.

The service's own worker (``scim_flask.worker.ScimWorker``, gunicorn's thread worker that reads
each request in full before a thread runs it): idle and slow clients wait in the worker's event
loop, not in a thread, and a request has ``SCIM_READ_TIMEOUT`` seconds to arrive. Each thread
keeps one reused directory connection. The service keeps no state between requests, so scale
by workers and instances. Where it listens and HTTPS come from the ``SCIM_*`` variables of
:data:`scim_flask.settings.SERVER_SETTINGS`.
"""

import gc
import os
import shutil
import ssl
import sys
import tempfile
from typing import Any

from scim_core.config import ConfigError, read_settings
from scim_flask.settings import SERVER_SETTINGS
from scim_flask.tls import server_context

try:
    _server = read_settings(SERVER_SETTINGS, os.environ)
    if not _server["SCIM_TLS_CERT_FILE"]:
        for _needs_cert in ("SCIM_TLS_KEY_FILE", "SCIM_TLS_CLIENT_CA_FILE"):
            if _server[_needs_cert]:
                raise ConfigError(f"{_needs_cert} needs SCIM_TLS_CERT_FILE.")
    else:  # a key that does not match, a file that is no certificate: said now, in one line
        try:
            server_context(
                _server["SCIM_TLS_CERT_FILE"],
                _server["SCIM_TLS_KEY_FILE"],
                _server["SCIM_TLS_CLIENT_CA_FILE"],
            )
        except (OSError, ssl.SSLError) as _tls_error:
            raise ConfigError(
                f"SCIM_TLS_CERT_FILE / SCIM_TLS_KEY_FILE: cannot serve TLS with them: {_tls_error}"
            ) from None
except ConfigError as _error:
    print(f"scim-ldap: configuration error: {_error}", file=sys.stderr)
    raise SystemExit(2) from None

# Every worker writes its metrics here and /metrics adds them up (a folder per server start,
# removed when it stops). Set before prometheus_client is imported: it decides then.
_metrics_dir: str | None = None
if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
    _metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="scim-metrics-")

from prometheus_client import multiprocess  # noqa: E402

wsgi_app = "scim_flask.wsgi:app"
bind = _server["SCIM_BIND"] or "127.0.0.1:" + os.environ.get("SCIM_PORT", "8080")
workers = _server["SCIM_WORKERS"] or 2 * (os.cpu_count() or 1)
# SCIM_WORKER_CLASS=sync compares with gunicorn's plain sync workers (make bench does).
worker_class = os.environ.get("SCIM_WORKER_CLASS", "scim_flask.worker.ScimWorker")
# One thread per worker: requests reach it complete, so a thread never waits for a client, and
# a worker runs one request at a time as a sync worker does (more threads only contend for the
# GIL: make bench measured a higher p99 for writes with 4).
threads = int(os.environ.get("SCIM_THREADS", 1))
worker_connections = 1000
# 0 is gunicorn's own bound of 1 MiB, not unlimited: a filter at the service's limit of 4,096
# characters, percent-encoded, can be three times as long as gunicorn's default line of 4 KiB.
limit_request_line = 0
timeout = 30
graceful_timeout = 10
keepalive = 5
max_requests = 10000
max_requests_jitter = 1000
# gunicorn's control socket (for gunicornc) is not used: nothing to create on a read-only system.
control_socket_disable = True
# Forwarded headers are the application's to judge (SCIM_TRUSTED_PROXIES): gunicorn trusts none.
forwarded_allow_ips = ""

# HTTPS: gunicorn wraps connections when a certificate is set; the context is the service's
# (TLS 1.2 floor, forward-secret suites, client certificates from SCIM_TLS_CLIENT_CA_FILE).
certfile = _server["SCIM_TLS_CERT_FILE"]
keyfile = _server["SCIM_TLS_KEY_FILE"]
ca_certs = _server["SCIM_TLS_CLIENT_CA_FILE"]


def ssl_context(config: Any, default_ssl_context_factory: Any) -> ssl.SSLContext:
    """The service's TLS context for gunicorn (read from the files again on each reload)."""
    return server_context(config.certfile, config.keyfile, config.ca_certs)


def post_worker_init(worker: Any) -> None:
    """Take what loading the app made out of the garbage collector's sight (``gc.freeze``,
    after one last collection so that no garbage is kept for good). The modules, schemas and
    grammar are some 40,000 objects that each full collection visited again, about 13 ms
    once every 25 or so list pages; after the freeze a full collection takes 0.2 ms."""
    gc.collect()
    gc.freeze()


def child_exit(server: Any, worker: Any) -> None:
    """Forget an exited worker's live gauges (its counters stay in the totals)."""
    multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


def on_exit(server: Any) -> None:
    """Remove the metrics folder this configuration made."""
    if _metrics_dir is not None:
        shutil.rmtree(_metrics_dir, ignore_errors=True)


accesslog = None  # the app writes one structured line per request itself
errorlog = "-"
loglevel = "warning"
