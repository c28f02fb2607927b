"""The scale curve cannot rot: ``python -m bench.scale --smoke`` runs end to end in seconds.

Two tiny directories (300 and 1,000 users) with a few samples each. The table must hold every
figure with a number for each size, and the target columns; the figures' values are not
judged here (speed is the benchmark's business, not the test's). Without OpenLDAP the run
fails, and so does this test.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SIZES = ("300 users", "1,000 users")
# The figures of the table, each named by the start of its label: removing one from the bench
# must fail this test. True: the row has a target (and so a verdict).
ROWS = {
    "users listed": False,
    "time for this size": False,
    "loading": False,
    "load average (1 min) at start": False,
    "load average (1 min) at end": False,
    "GET /Users?filter=userName eq": True,
    "GET /Users/{id}": True,
    "index page (count=100) at the start": False,
    "index page in the middle": False,
    "index page at the end": False,
    "any index page": True,
    "first index page after a write": True,
    "first index page after a user is deleted": True,
    "first index page after a user is renamed": True,
    "whole cursor walk": True,
    "pages of that walk (every user once": False,
    "cursor page at the start": False,
    "cursor page in the middle": False,
    "cursor page at the end": False,
    "any cursor page of the walk": True,
    "cursor page right after a write": False,
    "cursor page while a user is modified": True,
    "pages of that walk (bounded)": False,
    "writes made during it": False,
    "slapd peak RSS growth": True,
    "slapd anonymous memory growth": False,
    "members of the group": False,
    "GET /Groups/{id} with members": True,
    "that GET: this process's peak memory growth": True,
    "that GET: body size": False,
    "PATCH /Groups/{id}?excludedAttributes=members": True,
}
VERDICT = re.compile(r"(met|\*\*not met\*\*|not measured)( \([^)]*\))?")
NUMBER = re.compile(r"-?[\d,]+(\.\d+)?")


@pytest.mark.slapd
def test_scale_smoke_prints_every_figure_for_every_size(tmp_path):
    output = tmp_path / "scale.md"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bench.scale", "--smoke", "--output", str(output)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the scale smoke run took over 240 s:\n{error.stderr}", pytrace=False)
    assert done.returncode == 0, f"bench.scale --smoke failed:\n{done.stdout}\n{done.stderr}"
    text = output.read_text(encoding="utf-8")
    assert text == done.stdout
    assert "no HTTP" in text
    assert "Machine:" in text and "cores" in text and "Total run time:" in text

    table = [line for line in text.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert header == ["figure", *SIZES, "target", "met?"]
    rows = {}
    for line in table[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert len(cells) == len(header), line
        rows[cells[0]] = cells[1:]
    for start, has_target in ROWS.items():
        found = [label for label in rows if label.startswith(start)]
        assert len(found) == 1, (start, list(rows))
        *figures, target, verdict = rows[found[0]]
        for figure in figures:
            assert NUMBER.fullmatch(figure), (found[0], figure)
        if has_target:
            assert target, found[0]
            for part in verdict.split("; "):
                assert VERDICT.fullmatch(part), (found[0], verdict)
        else:
            assert target == verdict == "", found[0]
    assert len(rows) == len(ROWS), sorted(rows)  # no figure the test does not know
