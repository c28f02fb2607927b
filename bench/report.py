"""The benchmark targets, and the results as JSON, a markdown table and a PNG chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["evaluate", "markdown", "write_chart", "write_json"]

_MB = 1024 * 1024


def _target(name: str, figure: str, limit: str, passed: bool) -> dict[str, Any]:
    return {"target": name, "figure": figure, "limit": limit, "passed": bool(passed)}


def _cpu_note(scenario: dict[str, Any]) -> str:
    cpu = scenario.get("cpu_ratio")
    return f" (CPU-cost ratio {cpu:.2f}x)" if cpu is not None else ""


def evaluate(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each benchmark target with the measured figure and PASS/FAIL (of what was run)."""
    s = results["scenarios"]
    targets: list[dict[str, Any]] = []

    def service(key: str, figure: str) -> float:
        return float(s[key]["service"][figure])

    for key in ("filter_hit", "filter_miss", "get_by_id"):
        if key not in s:
            continue
        label, ratio = s[key]["label"], s[key]["ratio"]
        targets.append(
            _target(
                f"{label}: throughput vs floor",
                f"{ratio:.2f}x{_cpu_note(s[key])}",
                ">= 0.85x",
                ratio >= 0.85,
            )
        )
        p99, connections = service(key, "p99_ms"), s[key]["connections"]
        targets.append(
            _target(
                f"{label}: p99 at {connections} connections", f"{p99:.1f} ms", "<= 15 ms", p99 <= 15
            )
        )
    if "patch_noop" in s and "filter_hit" in s:
        noop = service("patch_noop", "rps") / max(service("filter_hit", "rps"), 1e-9)
        targets.append(
            _target(
                "PATCH replayed (no change): throughput vs filtered GET (hit)",
                f"{noop:.2f}x",
                ">= 0.8x",
                noop >= 0.8,
            )
        )
    for key in ("post_user", "patch_user"):
        if key not in s:
            continue
        ratio = s[key]["ratio"]
        targets.append(
            _target(
                f"{s[key]['label']}: throughput vs floor ({s[key]['floor_label']})",
                f"{ratio:.2f}x{_cpu_note(s[key])}",
                ">= 0.7x",
                ratio >= 0.7,
            )
        )
    if "page_deep" in s:
        deep, start = service("page_deep", "p50_ms"), s["page_deep"]["start_index"]
        if "page_first" in s:
            first = service("page_first", "p50_ms")
            targets.append(
                _target(
                    f"Deep page: p50 at startIndex {start} vs startIndex 1",
                    f"{deep / max(first, 1e-9):.2f}x ({deep:.1f} / {first:.1f} ms)",
                    "<= 1.5x",
                    deep <= 1.5 * first,
                )
            )
        targets.append(
            _target(
                f"Deep page: p50 at startIndex {start}", f"{deep:.1f} ms", "< 150 ms", deep < 150
            )
        )
    export = results.get("export")
    if export:
        targets += [
            _target(
                f"Full export of {export['total_results']:,} users (count={export['count']})",
                f"{export['seconds']:.1f} s",
                "< 40 s",
                export["seconds"] < 40 and export["complete"],
            ),
            _target(
                "Full export: worker peak RSS (VmHWM)",
                f"{export['peak_rss_kib'] / 1024:.0f} MB",
                "< 150 MB",
                export["peak_rss_kib"] * 1024 < 150 * _MB,
            ),
            _target(
                "Full export: slowest request",
                f"{export['max_request_ms']:.0f} ms ({export['requests_over_600ms']} over 600 ms)",
                "< 600 ms",
                export["requests_over_600ms"] == 0,
            ),
            _target(
                "Full export: user created just before the first page is listed",
                "listed" if export["probe_listed"] else "missing",
                "listed",
                export["probe_listed"],
            ),
        ]
    if "group_get" in s:
        group = service("group_get", "p50_ms")
        targets.append(
            _target(s["group_get"]["label"] + ": p50", f"{group:.1f} ms", "< 400 ms", group < 400)
        )
    if "group_patch" in s:
        patch = service("group_patch", "p50_ms")
        targets.append(
            _target(
                "Membership PATCH, excludedAttributes=members: p50",
                f"{patch:.1f} ms",
                "< 30 ms",
                patch < 30,
            )
        )
    failing = [
        k for k, v in s.items() if v["service"]["errors"] or (v["floor"] or {}).get("errors")
    ]
    targets.append(
        _target(
            "Every scenario answered without errors (service and floor)",
            ", ".join(failing) if failing else "no errors",
            "no errors",
            not failing,
        )
    )
    return targets


def _ms(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _rps(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _cpu(side: dict[str, Any] | None) -> str:
    """``app + slapd`` CPU milliseconds per request."""
    if not side or side.get("app_cpu_ms") is None:
        return "-"
    return f"{side['app_cpu_ms']:.2f} + {side['slapd_cpu_ms']:.2f}"


def markdown(results: dict[str, Any]) -> str:
    """The results as markdown: the scenario table, the export, the targets, the profile."""
    machine, config, dataset = results["machine"], results["config"], results["dataset"]
    lines = [
        f"# scim-ldap benchmark, {results['date']}",
        "",
        f"Machine: {machine['cpu']} ({machine['cores']} cores), {machine['memory_gib']:.0f} GiB, "
        f"Linux {machine['kernel']}, Python {machine['python']}, {machine['openldap']}, "
        f"ldap3 {machine['ldap3']}, gunicorn {machine['gunicorn']} "
        f"({config['workers']} sync workers, scim_flask.gunicorn_conf), load: "
        f"{config['generator']}."
        + (
            ""
            if config.get("fast_path", True)
            else " Service on plain ldap3 (SCIM_LDAP_FAST_PATH=off)."
        ),
        f"Directory: {dataset['users']:,} users, one group of {dataset['members']:,} members "
        f"(slapadd, {dataset['load_seconds']:.0f} s). "
        f"Each scenario: {config['warmup_s']:g} s warm-up, then {config['rounds']} rounds of "
        f"{config['duration_s']:g} s alternating service and floor; figures are medians over the "
        "rounds. The floor is bench/floor_app.py (Flask + ldap3, the same directory work, nothing "
        "else) under the same gunicorn config; ratio = service req/s / floor req/s. CPU ms/req: "
        "CPU time of all gunicorn workers + of slapd, per completed request (from /proc; less "
        "sensitive to other load on the machine than req/s).",
        *(
            [
                "",
                f"Load average when the run started: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)"
                + (" - other work was running, figures are noisier." if load[0] > 0.7 else "."),
            ]
            if (load := results.get("load_average_start"))
            else []
        ),
        "",
        "| Scenario | Conns | req/s | p50 ms | p99 ms | CPU ms/req app + slapd | Floor | "
        "Floor req/s | Floor p50 ms | Floor p99 ms | Floor CPU ms/req | Ratio |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for value in results["scenarios"].values():
        own, floor = value["service"], value["floor"]
        errors = f" ({own['errors']} errors)" if own["errors"] else ""
        ratio = f"{value['ratio']:.2f}x" if value["ratio"] is not None else "-"
        lines.append(
            f"| {value['label']}{errors} | {value['connections']} | {_rps(own['rps'])} | "
            f"{_ms(own['p50_ms'])} | {_ms(own['p99_ms'])} | {_cpu(own)} | "
            f"{value['floor_label'] or '-'} | {_rps(floor['rps']) if floor else '-'} | "
            f"{_ms(floor['p50_ms']) if floor else '-'} | "
            f"{_ms(floor['p99_ms']) if floor else '-'} | {_cpu(floor)} | {ratio} |"
        )
    grown = {k: v for k, v in results["scenarios"].items() if "worker_growth_kib" in v["service"]}
    if grown:
        lines += [
            "",
            "Group scenarios, one service worker's memory: its peak (VmHWM, reset before the "
            "scenario) over its resident memory before it, the largest of the workers; and the "
            "answer's body.",
            "",
            "| Scenario | Worker peak growth MB | Worker peak MB | Body bytes |",
            "|---|---:|---:|---:|",
        ]
        for value in grown.values():
            own = value["service"]
            lines.append(
                f"| {value['label']} | {own['worker_growth_kib'] / 1024:.1f} | "
                f"{own['worker_peak_kib'] / 1024:.0f} | {own['body_bytes']:,} |"
            )
    export = results.get("export")
    if export:
        lines += [
            "",
            f"Full export (one client, count={export['count']}): {export['requests']} requests, "
            f"{export['seconds']:.1f} s, {export['collected']:,} users collected of "
            f"{export['total_results']:,}, slowest request {export['max_request_ms']:.0f} ms, "
            f"p50 {export['p50_ms']:.0f} ms, worker peak RSS "
            f"{export['peak_rss_kib'] / 1024:.0f} MB ("
            + ("VmHWM reset before the export" if export["peak_reset"] else "VmHWM since start")
            + "), user created just before: "
            + ("listed." if export["probe_listed"] else "MISSING.")
            + (f" Incomplete: {export['error']}." if export.get("error") else ""),
        ]
    lines += [
        "",
        "| Target | Figure | Limit | Result |",
        "|---|---:|---:|---|",
    ]
    for target in results["targets"]:
        verdict = "PASS" if target["passed"] else "**FAIL**"
        lines.append(f"| {target['target']} | {target['figure']} | {target['limit']} | {verdict} |")
    for key, profile in (results.get("profile") or {}).items():
        if not profile.get("samples"):
            lines += ["", f"Profile of {key}: {profile.get('error', 'no samples')}"]
            continue
        lines += [
            "",
            f"Profile of one worker under {profile['label']} ({profile['connections']} "
            f"connections, py-spy --gil {profile['seconds']} s at {profile['rate']} Hz): the "
            f"worker used {profile.get('worker_user_cpu_percent', '?')}% user + "
            f"{profile.get('worker_system_cpu_percent', '?')}% system CPU (/proc) and held the "
            f"GIL in {profile['gil_percent']}% of the samples; GIL samples by package: "
            + ", ".join(f"{p['function']} {p['percent']}%" for p in profile["by_package"][:10])
            + ".",
            "",
            "| Top self time | % samples | Top inclusive time | % samples |",
            "|---|---:|---|---:|",
        ]
        own, inclusive = profile["top_self"], profile["top_inclusive"]
        for row in range(max(len(own), len(inclusive))):
            a = own[row] if row < len(own) else {"function": "", "percent": ""}
            b = inclusive[row] if row < len(inclusive) else {"function": "", "percent": ""}
            lines.append(
                f"| `{a['function']}` | {a['percent']} | `{b['function']}` | {b['percent']} |"
            )
    return "\n".join(lines) + "\n"


def write_json(results: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_chart(results: dict[str, Any], path: Path) -> bool:
    """Latency against startIndex, and throughput per scenario; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    scenarios = results["scenarios"]
    pages = [scenarios[k] for k in ("page_first", "page_half", "page_deep") if k in scenarios]
    if not pages:
        return False
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(14, 6.5), gridspec_kw={"width_ratios": [1, 1.6]}
    )
    starts = [p["start_index"] for p in pages]
    for side, colour in (("service", "tab:blue"), ("floor", "tab:gray")):
        p50 = [p[side]["p50_ms"] if p[side] else None for p in pages]
        p99 = [p[side]["p99_ms"] if p[side] else None for p in pages]
        if None in p50:
            continue
        left.plot(starts, p50, "o-", color=colour, label=f"{side} p50")
        left.plot(starts, p99, "o--", color=colour, alpha=0.6, label=f"{side} p99")
    left.set_xlabel("startIndex (count=100)")
    left.set_ylabel("latency, ms")
    left.set_ylim(bottom=0)
    left.set_title(f"GET /Users pages, {pages[0]['connections']} client")
    left.grid(True, alpha=0.3)
    left.legend()
    keys = list(scenarios)
    labels = [scenarios[k]["label"].replace("GET /Users?", "?") for k in keys]
    own = [scenarios[k]["service"]["rps"] for k in keys]
    floor = [(scenarios[k]["floor"] or {}).get("rps", 0) for k in keys]
    positions = range(len(keys))
    height = 0.4
    right.barh([p - height / 2 for p in positions], own, height, label="service", color="tab:blue")
    right.barh([p + height / 2 for p in positions], floor, height, label="floor", color="tab:gray")
    right.set_yticks(list(positions))
    right.set_yticklabels(
        [
            f"{label} [{scenarios[k]['connections']}c]"
            for k, label in zip(keys, labels, strict=True)
        ],
        fontsize=8,
    )
    right.invert_yaxis()
    right.set_xscale("log")
    right.set_xlabel("requests/s (median of rounds, log scale)")
    right.set_title("Throughput per scenario")
    right.grid(True, axis="x", alpha=0.3)
    right.legend(loc="best")
    machine = results["machine"]
    figure.suptitle(
        f"scim-ldap benchmark {results['date']} - {results['dataset']['users']:,} users, "
        f"{machine['cores']} cores ({machine['cpu']})",
        fontsize=11,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True
