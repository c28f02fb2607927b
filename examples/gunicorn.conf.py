"""Production gunicorn settings for scim-ldap: ``gunicorn -c examples/gunicorn.conf.py``.

The service's own worker (``scim_flask.worker.ScimWorker``, gunicorn's thread worker that reads
each request in full before a thread runs it): idle and slow clients wait in the worker's event
loop, not in a thread, and a request has ``SCIM_READ_TIMEOUT`` seconds to arrive. Each thread
keeps one reused directory connection. The service keeps no state between requests, so scale
by workers and instances.
"""

import multiprocessing
import os
import shutil
import tempfile

# Every worker writes its metrics here and /metrics adds them up (a folder per server start,
# removed when it stops). Set before prometheus_client is imported: it decides then.
if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
    _metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="scim-metrics-")
else:
    _metrics_dir = None

from prometheus_client import multiprocess

wsgi_app = "scim_flask.wsgi:app"
bind = os.environ.get("SCIM_BIND", "127.0.0.1:" + os.environ.get("SCIM_PORT", "8080"))
workers = int(os.environ.get("SCIM_WORKERS", multiprocessing.cpu_count() * 2))
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


def child_exit(server, worker):
    """Forget an exited worker's live gauges (its counters stay in the totals)."""
    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    """Remove the metrics folder this configuration made."""
    if _metrics_dir is not None:
        shutil.rmtree(_metrics_dir, ignore_errors=True)


accesslog = None  # the app writes one structured line per request itself
errorlog = "-"
loglevel = "warning"
