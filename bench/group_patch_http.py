"""A membership PATCH on a big group over HTTP, one request at a time: what a client waits.

``python -m bench.group_patch_http [--users 1000000] [--patches 40]`` loads a throwaway slapd
with ``bench/data.py`` (the users and a group of a tenth of them; about 20 s at 1,000,000),
starts the service with the shipped gunicorn configuration on 127.0.0.1, then sends
``PATCH /Groups/{id}?excludedAttributes=members`` adding then removing one user (not a
member) alternately: ``--patches`` on a new connection each, then as many on one kept-alive
connection, after two unmeasured ones. Prints the p50, min and max of each, in ms.
``make bench-scale`` measures the same PATCH in one process without HTTP.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from bench.data import map_size, prepare
from bench.load import call
from bench.servers import Gunicorn
from scim_core.testing.slapd import SlapdInstance, find_free_port

_TOKEN = "group-patch-over-http-token-0123456789"
_PATCH_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


def _operation(index: int, user_id: str) -> dict[str, object]:
    if index % 2 == 0:
        operation: dict[str, object] = {
            "op": "add",
            "path": "members",
            "value": [{"value": user_id}],
        }
    else:
        operation = {"op": "remove", "path": f'members[value eq "{user_id}"]'}
    return {"schemas": [_PATCH_URN], "Operations": [operation]}


def _summary(label: str, samples: list[float]) -> str:
    return (
        f"{label}: p50 {statistics.median(samples):.1f} ms, min {min(samples):.1f}, "
        f"max {max(samples):.1f} (n={len(samples)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--patches", type=int, default=40)
    args = parser.parse_args(argv)
    members = max(1, args.users // 10)
    with (
        tempfile.TemporaryDirectory(prefix="scim-patch-http-") as folder,
        SlapdInstance(maxsize=map_size(args.users)) as slapd,
    ):
        data = prepare(slapd, Path(folder), args.users, members, {"toggle": 1})
        env = {
            **slapd.service_settings(),
            "SCIM_TOKENS_SHA256": "bench=" + hashlib.sha256(_TOKEN.encode()).hexdigest(),
            "PATH": "/usr/bin:/bin",
        }
        server = Gunicorn("service", find_free_port(), env, Path(folder) / "gunicorn.log")
        server.start()
        try:
            user_id = data.pools.toggle[0].id
            path = f"/scim/v2/Groups/{quote(data.group_cn)}?excludedAttributes=members"
            fresh: list[float] = []
            for index in range(args.patches + 2):
                status, body, seconds = call(
                    server.base_url, "PATCH", path, _operation(index, user_id), _TOKEN
                )
                if status not in (200, 204):
                    raise SystemExit(f"PATCH answered {status}: {body!r:.200}")
                if index >= 2:
                    fresh.append(seconds * 1000)
            kept: list[float] = []
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            headers = {"Authorization": f"Bearer {_TOKEN}", "Content-Type": "application/scim+json"}
            try:
                for index in range(args.patches):
                    started = time.perf_counter()
                    body_text = json.dumps(_operation(index, user_id))
                    connection.request("PATCH", path, body=body_text, headers=headers)
                    answer = connection.getresponse()
                    answer.read()
                    if answer.status not in (200, 204):
                        raise SystemExit(f"PATCH answered {answer.status}")
                    kept.append((time.perf_counter() - started) * 1000)
            finally:
                connection.close()
        finally:
            server.stop()
    print(f"{args.users:,} users, a group of {members:,}: membership PATCH over HTTP")
    print(_summary("a new connection each", fresh))
    print(_summary("one kept-alive connection", kept))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
