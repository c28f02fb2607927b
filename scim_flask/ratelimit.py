"""Per-token rate limiting: one token bucket per caller name, in this worker process.

The service keeps no state across instances, and neither does this limiter: each gunicorn
worker (and each replica) has its own buckets, so a deployment of N workers lets a token through
at up to N times ``SCIM_RATE_LIMIT``. Buckets are keyed by the token's configured name, so their
number is bounded by the configuration, never by what clients send. Keyed by something a
client chooses (its address, for failed authentications), the buckets are capped at
``max_names``: the least recently seen name is forgotten first.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

__all__ = ["TokenBuckets"]


class TokenBuckets:
    """``rate`` requests per second per name, with bursts of one second's worth (at least 1).

    :param rate: requests per second each name may make; must be above 0.
    :param burst: the requests a name may make at once (default: one second's worth, at
        least 1).
    :param max_names: the most names remembered at once (None: no bound).
    :param clock: a monotonic clock in seconds (replaceable in tests).
    """

    def __init__(
        self,
        rate: float,
        *,
        burst: float | None = None,
        max_names: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0:
            raise ValueError("the rate must be above 0")
        self.rate = rate
        self.max_names = max_names
        self.burst = burst if burst is not None else max(1.0, rate)
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # name -> (tokens, when counted)

    def acquire(self, name: str) -> int:
        """Take one request from ``name``'s bucket.

        :returns: 0 when the request may go ahead, else the whole seconds to wait before the
            bucket holds a request again (the ``Retry-After`` value, at least 1).
        """
        with self._lock:
            now = self._clock()
            tokens, counted = self._buckets.pop(name, (self.burst, now))
            if self.max_names is not None and len(self._buckets) >= self.max_names:
                del self._buckets[next(iter(self._buckets))]  # the least recently seen
            tokens = min(self.burst, tokens + (now - counted) * self.rate)
            if tokens >= 1.0:
                self._buckets[name] = (tokens - 1.0, now)
                return 0
            self._buckets[name] = (tokens, now)
            return max(1, math.ceil((1.0 - tokens) / self.rate))
