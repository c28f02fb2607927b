"""``make run``: a throwaway directory seeded with the examples, and the service under gunicorn.

``DIRECTORY`` chooses the directory: ``openldap`` (slapd, the default), ``389ds`` (389
Directory Server) or ``ad`` (a Samba Active Directory domain controller). Prints the base URL,
a bearer token and the directory coordinates, one ``KEY=value`` per line; Ctrl-C or SIGTERM
stops gunicorn and the directory and leaves no process behind.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: DIRECTORY -> (module, class) of its throwaway launcher in scim_core.testing.
LAUNCHERS = {
    "openldap": ("scim_core.testing.slapd", "SlapdInstance"),
    "389ds": ("scim_core.testing.dirsrv", "DirsrvInstance"),
    "ad": ("scim_core.testing.samba", "SambaDcInstance"),
}


def launcher(name: str) -> Any:
    """A new (not yet started) throwaway directory of the kind ``name``."""
    if name not in LAUNCHERS:
        raise SystemExit(f"DIRECTORY={name}: expected one of {', '.join(LAUNCHERS)}")
    module, cls = LAUNCHERS[name]
    return getattr(importlib.import_module(module), cls)()


def main() -> int:
    port = int(os.environ.get("SCIM_PORT", "8080"))
    token = os.environ.get("SCIM_DEV_TOKEN") or secrets.token_urlsafe(32)
    # A fresh temporary folder, removed again by close().
    directory = launcher(os.environ.get("DIRECTORY") or "openldap")
    directory.start()
    gunicorn: subprocess.Popen[bytes] | None = None

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        env = dict(os.environ)
        env.update(
            {
                **directory.service_settings(),
                "SCIM_TOKENS_SHA256": "dev=" + hashlib.sha256(token.encode()).hexdigest(),
                "SCIM_PORT": str(port),
                "SCIM_WORKERS": env.get("SCIM_WORKERS", "2"),
            }
        )
        # One key for both workers, made for this run: cursor pages work out of the box.
        env.setdefault("SCIM_CURSOR_SECRET", secrets.token_urlsafe(48))
        gunicorn = subprocess.Popen(
            [sys.executable, "-m", "scim_flask.cli", "serve"],
            env=env,
            cwd=ROOT,
        )
        lines = [
            f"SCIM_BASE=http://127.0.0.1:{port}/scim/v2",
            f"SCIM_TOKEN={token}",
            f"DIRECTORY={directory.dialect}",
            *(f"{key}={value}" for key, value in directory.environment().items()),
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
        directory.close()


if __name__ == "__main__":
    raise SystemExit(main())
