"""``python -m bench.fast_path``: what the LDAP plugin's own BER buys (``SCIM_LDAP_FAST_PATH``).

The benchmark of ``python -m bench`` twice on the same machine, with the same scenarios and
options: first the service as shipped, then with ``SCIM_LDAP_FAST_PATH=off`` (ldap3 for every
directory operation), each on a freshly loaded slapd. Writes ``fast-path.json`` and
``fast-path.md`` (bench/results/ by default): per scenario the medians of each run and the
ratios on/off of throughput, p50 and the workers' CPU per request. The floor is the same
program in both runs: its figures show how much the machine itself moved between them.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import run as bench
from bench.servers import ROOT

DEFAULT_SCENARIOS = (
    "filter_hit",
    "get_by_id",
    "post_user",
    "patch_user",
    "page_first",
    "group_get",
)


def _ratio(on: float | None, off: float | None) -> str:
    return f"{on / off:.2f}x" if on and off else "-"


def _cpu(side: dict[str, Any]) -> str:
    if side.get("app_cpu_ms") is None:
        return "-"
    return f"{side['app_cpu_ms']:.2f} + {side['slapd_cpu_ms']:.2f}"


def markdown(on: dict[str, Any], off: dict[str, Any]) -> str:
    """The two runs side by side."""
    machine, config = on["machine"], on["config"]
    lines = [
        f"# SCIM_LDAP_FAST_PATH on and off, {on['date']}",
        "",
        f"Machine: {machine['cpu']} ({machine['cores']} cores), Python {machine['python']}, "
        f"{machine['openldap']}, ldap3 {machine['ldap3']}, {config['workers']} sync workers "
        f"(scim_flask.gunicorn_conf), load: {config['generator']}. "
        f"{config['users']:,} users, a group of {config['members']:,} members. Each scenario: "
        f"{config['warmup_s']:g} s warm-up, {config['rounds']} rounds of "
        f"{config['duration_s']:g} s alternating service and floor; figures are medians over "
        "the rounds. "
        + (
            "First the run on plain ldap3, then the one with the fast path (the default), "
            if on.get("plain_first")
            else "First the run with the fast path (the default), then the one on plain ldap3, "
        )
        + "each on a fresh slapd. "
        "CPU ms/req: the gunicorn workers' CPU per completed request (slapd's beside it). "
        "Floor: bench/floor_app.py, the same in both runs (how much the machine moved).",
        "",
        f"Load average at the start: {on['load_average_start'][0]:.2f} (on), "
        f"{off['load_average_start'][0]:.2f} (off).",
        "",
        "| Scenario | Conns | req/s on | req/s off | req/s on/off | p50 ms on | p50 ms off | "
        "CPU ms/req on | CPU ms/req off | CPU off/on | Floor req/s (on run / off run) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, with_it in on["scenarios"].items():
        without = off["scenarios"].get(key)
        if without is None:
            continue
        a, b = with_it["service"], without["service"]
        floor_on, floor_off = with_it.get("floor") or {}, without.get("floor") or {}
        floors = (
            f"{floor_on['rps']:.0f} / {floor_off['rps']:.0f}"
            if floor_on.get("rps") and floor_off.get("rps")
            else "-"
        )
        lines.append(
            f"| {with_it['label']} | {with_it['connections']} | {a['rps']:.1f} | {b['rps']:.1f} | "
            f"{_ratio(a['rps'], b['rps'])} | {a['p50_ms']:.1f} | {b['p50_ms']:.1f} | "
            f"{_cpu(a)} | {_cpu(b)} | "
            f"{_ratio(b['app_cpu_ms'], a['app_cpu_ms'])} | {floors} |"
        )
    errors = sum(
        side["service"]["errors"] for run in (on, off) for side in run["scenarios"].values()
    )
    lines += ["", f"Errors (both runs, service): {errors}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fast_path", description=__doc__)
    parser.add_argument("--only", default=",".join(DEFAULT_SCENARIOS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds in total")
    parser.add_argument(
        "--plain-first", action="store_true", help="the run on plain ldap3 first (a 2nd sample)"
    )
    parser.add_argument("--load", choices=("wrk", "python"), default="wrk")
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    only = tuple(k.strip() for k in args.only.split(",") if k.strip())
    config = replace(
        bench.SMOKE if args.smoke else bench.FULL,
        only=only,
        profile_seconds=0,
        generator=args.load,
        **({} if args.smoke else {"rounds": args.rounds, "duration_s": args.duration}),
    )
    if config.generator == "wrk":
        bench.ensure_wrk(install=True)
    runs = {}
    for plain in (True, False) if args.plain_first else (False, True):
        with tempfile.TemporaryDirectory(prefix="scim-fast-path-") as folder:
            runs[plain] = bench.run(replace(config, plain_ldap3=plain), Path(folder))
    on, off = runs[False], runs[True]
    on["plain_first"] = args.plain_first
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "fast-path.json").write_text(
        json.dumps({"on": on, "off": off}, indent=1, default=str) + "\n", encoding="utf-8"
    )
    text = markdown(on, off)
    (args.output / "fast-path.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
