"""A big group's GET in one process, without HTTP: time and peak memory growth per request.

``python -m bench.big_group USERS MEMBERS [--max-members N]`` loads a throwaway slapd with
``bench/data.py`` (USERS users, a group of the first MEMBERS), then answers ``GET
/Groups/{id}`` three times through :class:`~scim_core.ScimService` with the LDAP plugin's
default ``SCIM_LDAP_MAX_MEMBERS`` (and twice more with ``--max-members``), iterating the
chunks of each answer. Printed per request: status, body size, seconds, and the growth of this
process's peak memory (``VmHWM``, reset before the request) over its ``VmRSS``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench.data import GROUP_CN, map_size, prepare
from bench.servers import reset_peak_rss, vm_kib
from scim_core import ScimRequest, ScimService
from scim_core.backends.ldap import LdapBackend
from scim_core.backends.ldap.settings import LdapSettings
from scim_core.testing.slapd import SlapdInstance

_POOLS = {"read": 4, "noop": 1, "patch": 4, "put": 4, "toggle": 1}


def _measure(service: ScimService, label: str, times: int) -> None:
    request = ScimRequest("GET", f"/Groups/{GROUP_CN}", base_url="http://127.0.0.1/scim/v2")
    pid = os.getpid()
    for _ in range(times):
        reset_peak_rss(pid)
        before = vm_kib(pid, "VmRSS") or 0
        started = time.perf_counter()
        response = service.handle(request)
        size = sum(len(chunk) for chunk in response.iter_bytes())
        seconds = time.perf_counter() - started
        growth = ((vm_kib(pid, "VmHWM") or 0) - before) / 1024
        print(
            f"{label}: {response.status}, {size:,} B in {seconds:.2f} s, "
            f"peak memory growth {growth:.1f} MB",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("users", type=int)
    parser.add_argument("members", type=int)
    parser.add_argument("--max-members", type=int, default=0)
    args = parser.parse_args()
    slapd = SlapdInstance(sssvlv_max=64, sssvlv_maxperconn=8, maxsize=map_size(args.users))
    slapd.start()
    try:
        started = time.perf_counter()
        prepare(slapd, Path(tempfile.mkdtemp()), args.users, args.members, _POOLS)
        print(f"loaded in {time.perf_counter() - started:.0f} s", flush=True)
        environ = {**os.environ, **slapd.service_settings()}
        limits = [None, *([str(args.max_members)] if args.max_members else [])]
        for limit in limits:
            settings = {**environ, **({"SCIM_LDAP_MAX_MEMBERS": limit} if limit else {})}
            backend = LdapBackend(LdapSettings.from_environ(settings))
            try:
                label = f"SCIM_LDAP_MAX_MEMBERS={limit or 'default'}"
                _measure(ScimService(backend), label, 3 if limit is None else 2)
            finally:
                backend.close()
    finally:
        slapd.close()


if __name__ == "__main__":
    main()
