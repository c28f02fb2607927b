"""Behind a reverse proxy: forwarded headers believed from the configured proxies only.

werkzeug's :class:`~werkzeug.middleware.proxy_fix.ProxyFix` does the parsing (one hop of
``X-Forwarded-For``, ``-Proto``, ``-Host``, ``-Port`` and ``-Prefix``). It trusts whoever sent
the request, so this middleware hands it only requests whose peer address is a configured
proxy; from any other peer the forwarded headers are removed before the application runs, so
no client can choose the address the rate limits count or the URLs the answers carry.
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import IPv4Network, IPv6Network, ip_address
from typing import TYPE_CHECKING, Any

from werkzeug.middleware.proxy_fix import ProxyFix

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["TrustedProxies"]

#: The WSGI keys of the forwarded headers ProxyFix reads.
_FORWARDED = tuple(
    f"HTTP_X_FORWARDED_{name}" for name in ("FOR", "PROTO", "HOST", "PORT", "PREFIX")
)


class TrustedProxies:
    """WSGI middleware applying :class:`ProxyFix` to requests from ``proxies`` only.

    :param app: the WSGI application.
    :param proxies: the networks (or single addresses) of the reverse proxies.
    """

    def __init__(self, app: WSGIApplication, proxies: Iterable[IPv4Network | IPv6Network]) -> None:
        self._app = app
        self._fixed = ProxyFix(app, x_for=1, x_proto=1, x_host=1, x_port=1, x_prefix=1)
        self._proxies = tuple(proxies)

    def _trusted(self, peer: str) -> bool:
        try:
            address = ip_address(peer)
        except ValueError:  # a Unix socket, or no peer address at all
            return False
        return any(address in network for network in self._proxies)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Any:
        if self._trusted(environ.get("REMOTE_ADDR", "")):
            return self._fixed(environ, start_response)
        for key in _FORWARDED:
            environ.pop(key, None)
        return self._app(environ, start_response)
