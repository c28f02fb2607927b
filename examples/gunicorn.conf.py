"""Production gunicorn settings for scim-ldap: ``gunicorn -c examples/gunicorn.conf.py``.

Sync workers, one reused directory connection each: measured better p99 than gthread on this
stack. The service keeps no state between requests, so scale by workers and instances.
"""

import multiprocessing
import os

wsgi_app = "scim_flask.wsgi:app"
bind = os.environ.get("SCIM_BIND", "127.0.0.1:" + os.environ.get("SCIM_PORT", "8080"))
workers = int(os.environ.get("SCIM_WORKERS", multiprocessing.cpu_count() * 2))
worker_class = "sync"
timeout = 30
graceful_timeout = 10
keepalive = 5
max_requests = 10000
max_requests_jitter = 1000
accesslog = None  # the app writes one structured line per request itself
errorlog = "-"
loglevel = "warning"
