"""What the backends report about their directory operations, for whoever counts them.

The core counts nothing itself and imports no metrics library: an adapter (``scim_flask``'s
Prometheus metrics, another team's StatsD) registers an observer, and a backend reports each
operation it sends through :func:`directory_operation`. With no observer registered the cost is
one clock read per operation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["DirectoryObserver", "add_directory_observer", "directory_operation"]

DirectoryObserver = Callable[[str, str, float], None]
"""Called once per directory operation with its kind (``search``, ``modify``, ``add``,
``delete``, ``rename``, ``password``), its outcome (``success``, the directory's result name
such as ``noSuchObject``, or ``unavailable``) and its duration in seconds."""

_observers: list[DirectoryObserver] = []


def add_directory_observer(observer: DirectoryObserver) -> Callable[[], None]:
    """Register ``observer`` for every directory operation of this process; returns a function
    that removes it again. Registering the same observer twice has no further effect."""
    if observer not in _observers:
        _observers.append(observer)

    def remove() -> None:
        if observer in _observers:
            _observers.remove(observer)

    return remove


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
