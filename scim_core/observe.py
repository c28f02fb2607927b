"""What the core and the backends report, for whoever counts it: directory operations, and
attributes a client writes that nothing stores.

The core counts nothing itself and imports no metrics library: an adapter (``scim_flask``'s
Prometheus metrics, another team's StatsD) registers an observer, and a backend reports each
operation it sends through :func:`directory_operation`. With no observer registered the cost is
one clock read per operation.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "DirectoryObserver",
    "DroppedAttributeObserver",
    "add_directory_observer",
    "add_dropped_attribute_observer",
    "directory_operation",
    "dropped_attribute",
]

log = logging.getLogger("scim.attributes")

DroppedAttributeObserver = Callable[[str, str], None]
"""Called once per attribute a client wrote that nothing stores, with the resource type and the
attribute's name: a lower-case RFC 7643 name (``phonenumbers``, ``name.middlename``), or
``other`` for any name the specification does not define (client text never becomes a label)."""

#: Names logged by this process so far: each once, and at most this many (client text).
_LOGGED_AT_MOST = 256
_logged: set[tuple[str, str]] = set()
_dropped_observers: list[DroppedAttributeObserver] = []

DirectoryObserver = Callable[[str, str, float], None]
"""Called once per directory operation with its kind (``search``, ``modify``, ``add``,
``delete``, ``rename``, ``password``), its outcome (``success``, the directory's result name
such as ``noSuchObject``, or ``unavailable``) and its duration in seconds."""

_observers: list[DirectoryObserver] = []


def _register(observers: list[Any], observer: Any) -> Callable[[], None]:
    if observer not in observers:
        observers.append(observer)

    def remove() -> None:
        if observer in observers:
            observers.remove(observer)

    return remove


def add_directory_observer(observer: DirectoryObserver) -> Callable[[], None]:
    """Register ``observer`` for every directory operation of this process; returns a function
    that removes it again. Registering the same observer twice has no further effect."""
    return _register(_observers, observer)


def add_dropped_attribute_observer(observer: DroppedAttributeObserver) -> Callable[[], None]:
    """Register ``observer`` for every attribute dropped in this process; returns a function
    that removes it again."""
    return _register(_dropped_observers, observer)


def dropped_attribute(resource_type: str, name: str, *, standard: bool) -> None:
    """Report that a client wrote the attribute ``name`` of a ``resource_type`` and nothing
    stores it (it was skipped). The first time a process sees a name it logs it at INFO (the
    name only, never a value), so an admin sees what the identity provider sends and the
    directory loses; observers count it.

    :param standard: ``name`` is an RFC 7643 attribute (then it is its own label).
    """
    shown = name.lower()[:64]
    key = (resource_type, shown)
    if key not in _logged and len(_logged) < _LOGGED_AT_MOST:
        _logged.add(key)
        log.info("%s attribute %r is not stored here; skipped (logged once)", resource_type, shown)
    label = shown if standard else "other"
    for observer in tuple(_dropped_observers):
        observer(resource_type, label)


@contextmanager
def directory_operation(
    kind: str, outcome_of: Callable[[BaseException], str] = lambda _: "unavailable"
) -> Iterator[None]:
    """Time one operation of ``kind`` and report it to every observer.

    :param outcome_of: names the outcome of an exception leaving the block (a backend maps
        its library's result codes); ``unavailable`` by default.
    """
    outcome = "success"
    start = time.perf_counter()
    try:
        yield
    except BaseException as error:
        outcome = outcome_of(error)
        raise
    finally:
        if _observers:
            seconds = time.perf_counter() - start
            for observer in tuple(_observers):
                observer(kind, outcome, seconds)
