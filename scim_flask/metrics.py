"""Prometheus metrics of the HTTP adapter, counted across every gunicorn worker.

With ``PROMETHEUS_MULTIPROC_DIR`` set (the shipped gunicorn config sets it to a folder of its
own before the workers start, and forgets a worker's files when it exits), each worker writes its
samples there and ``/metrics`` adds them up, so one scrape sees the whole server whichever worker
answers it. Without it (an app embedded in a single process) the process's own registry is used.

Labels are bounded: the route is a template (``/Users/{id}``, never an id), the principal is a
configured token name or a JWT's principal claim, refusals have a fixed set of reasons, and a
dropped attribute is named only when RFC 7643 defines it.
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

__all__ = [
    "CONTENT_TYPE",
    "OPS_PATHS",
    "observe_directory_operation",
    "observe_dropped_attribute",
    "observe_readiness",
    "observe_request",
    "refused",
    "route_of",
    "scrape",
]

CONTENT_TYPE = CONTENT_TYPE_LATEST

REQUESTS = Counter(
    "scim_requests_total",
    "Requests answered, by route template, method, status and caller.",
    ["route", "method", "status", "principal"],
)
LATENCY = Histogram(
    "scim_request_duration_seconds",
    "Time from the request's arrival at the application to its answer.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
REFUSED = Counter(
    "scim_refused_requests_total",
    "Requests refused before the service: no or a wrong token, or a rate limit.",
    ["reason"],
)
DIRECTORY_OPERATIONS = Counter(
    "scim_directory_operations_total",
    "Directory operations sent, by kind (search, modify, add, delete, rename, password) and "
    "outcome (success, the directory's result name, or unavailable).",
    ["kind", "outcome"],
)
DIRECTORY_LATENCY = Histogram(
    "scim_directory_operation_duration_seconds",
    "Time from sending a directory operation to its answer.",
    ["kind"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
)
DROPPED_ATTRIBUTES = Counter(
    "scim_dropped_attributes_total",
    "Attributes clients wrote that nothing stores (skipped), by resource type and RFC 7643 "
    "name (any other name counts as other).",
    ["resource_type", "attribute"],
)
DIRECTORY_READY = Gauge(
    "scim_directory_ready",
    "1 when the last readiness check reached the directory, else 0.",
    multiprocess_mode="mostrecent",
)

_ENDPOINTS = frozenset({"users", "groups", "schemas", "resourcetypes", "serviceproviderconfig"})


#: The health and metrics endpoints, under the extension's ``ops_prefix``.
OPS_PATHS = ("/healthz", "/readyz", "/metrics")


def route_of(path: str, prefix: str, ops_prefix: str = "") -> str:
    """The route template of ``path``: ids become ``{id}``, anything unknown ``other``."""
    if path.startswith(ops_prefix) and path[len(ops_prefix) :] in OPS_PATHS:
        return path
    if not path.startswith(prefix):
        return "other"
    endpoint, _, rest = path[len(prefix) :].lstrip("/").partition("/")
    if endpoint.lower() not in _ENDPOINTS:
        return prefix + "/" if not endpoint else "other"
    template = f"{prefix}/{endpoint}"
    if rest == ".search":
        return template + "/.search"
    return template + "/{id}" if rest else template


# The labelled children already made, by their labels: prometheus_client's ``labels`` checks
# and joins its arguments on every call, which costs more than the count itself. The labels are
# bounded (above), and prometheus_client keeps every child made anyway: these hold no more.
_request_children: dict[tuple[str, str, int, str | None], tuple[Any, Any]] = {}
_operation_children: dict[tuple[str, str], tuple[Any, Any]] = {}


def observe_request(
    route: str, method: str, status: int, principal: str | None, seconds: float
) -> None:
    """Count one answered request and its duration."""
    key = (route, method, status, principal)
    children = _request_children.get(key)
    if children is None:
        children = _request_children[key] = (
            REQUESTS.labels(route, method, str(status), principal or "-"),
            LATENCY.labels(route, method),
        )
    children[0].inc()
    children[1].observe(seconds)


def refused(reason: str) -> None:
    """Count one request refused before the service (``unauthenticated``, ``rate_limited``,
    ``authentication_throttled``)."""
    REFUSED.labels(reason).inc()


def observe_directory_operation(kind: str, outcome: str, seconds: float) -> None:
    """Count one directory operation and its duration (a :mod:`scim_core.observe` observer)."""
    key = (kind, outcome)
    children = _operation_children.get(key)
    if children is None:
        children = _operation_children[key] = (
            DIRECTORY_OPERATIONS.labels(kind, outcome),
            DIRECTORY_LATENCY.labels(kind),
        )
    children[0].inc()
    children[1].observe(seconds)


def observe_dropped_attribute(resource_type: str, attribute: str) -> None:
    """Count one attribute a client wrote that nothing stores (a :mod:`scim_core.observe`
    observer; the name is an RFC 7643 one or ``other``)."""
    DROPPED_ATTRIBUTES.labels(resource_type, attribute).inc()


def observe_readiness(ready: bool) -> None:
    """Record the outcome of a readiness check."""
    DIRECTORY_READY.set(1 if ready else 0)


def scrape() -> bytes:
    """Every sample in the text format: all workers' when they share a multiprocess folder."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)
    return generate_latest()
