"""``make run``: a throwaway slapd seeded with the examples, and the service under gunicorn.

Prints the base URL, a bearer token and the directory coordinates, one ``KEY=value`` per line;
Ctrl-C or SIGTERM stops gunicorn and slapd and leaves no process behind.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

from scim_core.testing.slapd import SlapdInstance

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    port = int(os.environ.get("SCIM_PORT", "8080"))
    token = os.environ.get("SCIM_DEV_TOKEN") or secrets.token_urlsafe(32)
    slapd = SlapdInstance()  # a fresh temporary folder, removed again by close()
    slapd.start()
    gunicorn: subprocess.Popen[bytes] | None = None

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        env = dict(os.environ)
        env.update(
            {
                **slapd.service_settings(),
                "SCIM_TOKENS_SHA256": "dev=" + hashlib.sha256(token.encode()).hexdigest(),
                "SCIM_PORT": str(port),
                "SCIM_WORKERS": env.get("SCIM_WORKERS", "2"),
            }
        )
        gunicorn = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "examples" / "gunicorn.conf.py")],
            env=env,
            cwd=ROOT,
        )
        lines = [
            f"SCIM_BASE=http://127.0.0.1:{port}/scim/v2",
            f"SCIM_TOKEN={token}",
            f"LDAP_URL={slapd.url}",
            f"LDAP_USERS_BASE={slapd.users_base}",
            f"LDAP_GROUPS_BASE={slapd.groups_base}",
            f"LDAP_ADMIN_DN={slapd.admin_dn}",
            f"LDAP_ADMIN_PASSWORD={slapd.admin_password}",
        ]
        print("\n".join(lines), flush=True)
        print("Serving; press Ctrl-C to stop.", file=sys.stderr, flush=True)
        return gunicorn.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if gunicorn is not None and gunicorn.poll() is None:
            gunicorn.terminate()
            try:
                gunicorn.wait(timeout=15)
            except subprocess.TimeoutExpired:
                gunicorn.kill()
                gunicorn.wait()
        slapd.close()


if __name__ == "__main__":
    raise SystemExit(main())
