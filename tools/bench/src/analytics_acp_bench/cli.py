"""``analytics-acp bench``: run the cases, print the Markdown table, write results/latest.json."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from .fixtures.bridgehost import close_quick_bridges
from .runner import machine_info, markdown, run_case, write_results

CASE_MODULES = ["percall", "bigextract", "peers", "coldstart", "httpsessions", "acpquery", "building", "ga4report",
                "gscextract", "bigquery", "toolslist", "burst", "datasetview"]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks against their baselines.

    ``analytics-acp bench [--only CASES] [--quick]``.
    """
    parser = argparse.ArgumentParser(prog="analytics-acp bench", description="Benchmarks: ours vs baselines, same run.")
    parser.add_argument("--quick", action="store_true", help="tiny inputs (smoke test), 2 rounds")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per case (default 5, quick 2)")
    parser.add_argument("--only", default="", help="comma-separated case modules: " + ", ".join(CASE_MODULES))
    parser.add_argument("--out", default=None, help="results file (default tools/bench/results/latest.json)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (2 if args.quick else 5)
    wanted = [m.strip() for m in args.only.split(",") if m.strip()] or CASE_MODULES
    results = []
    for name in wanted:
        try:
            module = importlib.import_module(f"analytics_acp_bench.cases.{name}")
        except ModuleNotFoundError as exc:
            print(f"bench: case module {name} unavailable ({exc})", file=sys.stderr)
            continue
        for case in module.cases(args.quick):
            print(f"bench: {case.title} ...", file=sys.stderr, flush=True)
            results.append(run_case(case, rounds))
    close_quick_bridges()
    machine = machine_info()
    machine.update(rounds=rounds, quick=args.quick)

    path = write_results(results, machine, Path(args.out) if args.out else None)
    print(markdown(results, machine))
    print(f"\nResults written to {path}")
    return 1 if any(r.error for r in results) else 0


def run() -> None:
    """Console-script entry."""
    sys.exit(main())
