"""The shipped gunicorn configuration freezes what loading the app made, in each worker."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc, os, weakref
os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
import scim_flask.gunicorn_conf as conf
class Cycle:
    pass
junk = Cycle(); junk.me = junk; left = weakref.ref(junk); del junk  # garbage in a cycle
assert gc.get_freeze_count() == 0
conf.post_worker_init(None)
frozen = gc.get_freeze_count()
assert frozen > 1000, frozen  # the loaded modules' objects
assert left() is None  # collected first, not frozen with the rest
conf.on_exit(None)
print("frozen", frozen)
"""


def test_a_worker_freezes_what_loading_made_after_collecting() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("frozen ")
