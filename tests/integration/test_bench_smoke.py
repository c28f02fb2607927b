"""The benchmark cannot rot: ``python -m bench --smoke`` runs end to end in seconds.

A tiny directory (300 users, a 50-member group), one short round per scenario and the Python
load generator (so ``make test`` needs no wrk; when wrk is installed the smoke run also drives
it once through bench/load.lua). The results must name every benchmark scenario with nonzero
throughput for the service and its floor.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The benchmark's scenarios: removing one from the bench must fail this test.
SCENARIOS = {
    "filter_hit": True,  # True: the scenario has a floor counterpart
    "filter_miss": True,
    "get_by_id": True,
    "patch_noop": False,
    "page_first": True,
    "page_half": True,
    "page_deep": True,
    "group_get": True,
    "group_get_nomembers": True,
    "group_patch": True,
    "post_user": True,
    "patch_user": True,
    "put_user": True,
}


@pytest.mark.slapd
def test_bench_smoke_run_covers_every_scenario(tmp_path):
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bench", "--smoke", "--output", str(tmp_path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the bench smoke run took over 240 s:\n{error.stderr}", pytrace=False)
    assert done.returncode == 0, f"bench --smoke failed:\n{done.stdout}\n{done.stderr[-4000:]}"
    results = json.loads((tmp_path / "latest.json").read_text(encoding="utf-8"))
    assert (tmp_path / "latest.md").read_text(encoding="utf-8").startswith("# scim-ldap benchmark")

    assert results["smoke"] is True
    assert set(results["scenarios"]) == set(SCENARIOS)
    for key, has_floor in SCENARIOS.items():
        scenario = results["scenarios"][key]
        assert scenario["service"]["rps"] > 0, key
        assert scenario["service"]["requests"] > 0, key
        assert scenario["problems"] == [], (key, scenario["problems"])
        if has_floor:
            assert scenario["floor"]["rps"] > 0, key
            assert scenario["ratio"] > 0, key
        else:
            assert scenario["floor"] is None, key
    # Writes really wrote; reads answered: no scenario saw an error status.
    errors = {k: v["service"]["errors"] for k, v in results["scenarios"].items()}
    assert not any(errors.values()), errors

    export = results["export"]
    assert export["complete"], export
    assert export["probe_listed"], export
    assert export["total_results"] >= 300
    assert export["peak_rss_kib"] > 0

    targets = {t["target"] for t in results["targets"]}
    assert any("Deep page" in t for t in targets)
    assert any("Full export" in t for t in targets)
    check = results["wrk_check"]
    if check["ran"]:
        assert check["ok"], check


def test_the_per_directory_bench_runs_end_to_end(tmp_path):
    """``python -m bench.directories --smoke`` on OpenLDAP and 389-DS (the Samba DC of the full
    run takes 127.0.0.1's fixed ports, which this test session's own DC holds)."""
    command = [sys.executable, "-m", "bench.directories", "--smoke"]
    command += ["--directories", "openldap,389ds", "--output", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr[-4000:]}"
    results = json.loads((tmp_path / "directories.json").read_text(encoding="utf-8"))
    assert set(results["directories"]) == {"openldap", "389ds"}
    for name, measured in results["directories"].items():
        assert measured["ok"] and not measured["problems"], (name, measured["problems"])
        assert measured["filter"]["rps"] > 0 and measured["filter"]["errors"] == 0, name
        assert measured["group"]["members"] == 50 and measured["group"]["wrong_answers"] == 0, name


def test_the_hostile_suite_finds_every_rule_kept(tmp_path):
    """``python -m bench.hostile --smoke``: the shipped gunicorn setup under attack keeps every
    rule (SCIM bodies only, no 5xx but by design, no canary, the body limit, a stalled body
    answered, availability with idle and slow clients held open, 503 in an outage)."""
    command = [sys.executable, "-m", "bench.hostile", "--smoke", "--output", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    results = json.loads((tmp_path / "hostile.json").read_text(encoding="utf-8"))
    assert results["broken"] == [], results["broken"]
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr[-4000:]}"
    assert results["attacks"]["tried"] >= 200
    assert results["held"]["polls"] > 0 and results["held"]["availability"] == 1.0
    assert results["memory"]["chunked"]["status"] == 413
    assert results["outage"]["statuses"] == {"503": results["outage"]["requests"]}
