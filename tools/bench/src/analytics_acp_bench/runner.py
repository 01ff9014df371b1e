"""Runs cases: ours and baseline alternate within each round; medians and ours/baseline ratios."""

from __future__ import annotations

import json
import logging
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

RESULTS = Path(__file__).resolve().parents[2] / "results"


class SkipCase(Exception):
    """Raised by a case's setup when it cannot run here (e.g. a peer is not installable): reported, not failed."""


@dataclass
class Case:
    """One benchmark: ``ours`` and ``baseline`` are callables returning seconds (or None to time them).

    A size case (``unit="bytes"``, or ``"MiB"`` for a peak memory) returns that instead; its ratio is then a ratio of sizes.
    """

    key: str
    title: str
    target: str  # e.g. "<= 1.15"
    target_value: float
    ours: Callable[[], float]
    baseline: Callable[[], float]
    setup: Callable[[], None] | None = None
    teardown: Callable[[], None] | None = None
    extra: Callable[[], dict[str, Any]] | None = None  # measured facts beside the timing (RSS, bytes...)
    ours_label: str = "ours"
    baseline_label: str = "baseline"
    unit: str = "s"


@dataclass
class CaseResult:
    """Medians, ratio and raw samples of a case."""

    key: str
    title: str
    target: str
    target_value: float
    ours_label: str
    baseline_label: str
    ours_s: list[float] = field(default_factory=list)
    baseline_s: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    skipped: str | None = None
    wall_s: float = 0.0  # the whole case: setup, rounds, teardown
    unit: str = "s"  # "bytes" for a size case: the *_median_s and *_samples_s fields then hold bytes

    @property
    def ratio(self) -> float | None:
        """median(ours) / median(baseline)."""
        if not self.ours_s or not self.baseline_s:
            return None
        return statistics.median(self.ours_s) / statistics.median(self.baseline_s)

    @property
    def meets_target(self) -> bool | None:
        """None where there is no number to compare (a reported-only target, a skip, an error)."""
        ratio = self.ratio
        if ratio is None or self.target_value == float("inf"):
            return None
        return ratio <= self.target_value

    def to_json(self) -> dict[str, Any]:
        """JSON form written to results/latest.json."""
        ratio = self.ratio
        return {
            "key": self.key,
            "title": self.title,
            "ours": self.ours_label,
            "baseline": self.baseline_label,
            "ours_median_s": statistics.median(self.ours_s) if self.ours_s else None,
            "baseline_median_s": statistics.median(self.baseline_s) if self.baseline_s else None,
            "ratio": ratio,
            "target": self.target,
            "meets_target": self.meets_target,
            "skipped": self.skipped,
            "case_wall_s": round(self.wall_s, 2),
            "unit": self.unit,
            "ours_samples_s": self.ours_s,
            "baseline_samples_s": self.baseline_s,
            "extra": self.extra,
            "error": self.error,
        }


def _timed(fn: Callable[[], float | None]) -> float:
    start = time.perf_counter()
    value = fn()
    return float(value) if isinstance(value, (int, float)) else time.perf_counter() - start


def run_case(case: Case, rounds: int) -> CaseResult:
    """Alternate ours/baseline (order flipped every round) so drift hits both sides equally."""
    result = CaseResult(case.key, case.title, case.target, case.target_value, case.ours_label, case.baseline_label,
                        unit=case.unit)
    began = time.perf_counter()
    try:
        if case.setup:
            case.setup()
        for i in range(rounds):
            pairs = [("ours", case.ours), ("baseline", case.baseline)]
            if i % 2:
                pairs.reverse()
            for side, fn in pairs:
                (result.ours_s if side == "ours" else result.baseline_s).append(_timed(fn))
        if case.extra:
            result.extra.update(case.extra())
    except SkipCase as exc:
        result.skipped = str(exc)
    except Exception as exc:  # a failing case is reported, the others still run
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        if case.teardown:
            try:
                case.teardown()
            except Exception as exc:  # the case's result stands; the next case still runs
                log.debug("teardown of %s failed: %s", case.key, type(exc).__name__)
        result.wall_s = time.perf_counter() - began
    return result


def machine_info() -> dict[str, Any]:
    """Where the numbers come from."""
    def cmd(*args: str) -> str:
        try:
            return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:
            return ""

    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "sqlite3_cli": cmd("sqlite3", "--version").split(" ")[0],
        "node": cmd("node", "--version"),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def markdown(results: list[CaseResult], machine: dict[str, Any]) -> str:
    """The table printed at the end of a run."""
    lines = [
        f"Machine: {machine['cpu']} ({machine['cores']} cores, {machine['memory_gb']} GB), {machine['platform']}, "
        f"Python {machine['python']}, sqlite3 {machine['sqlite3_cli'] or 'missing'}, node {machine['node'] or 'missing'}; "
        f"{machine.get('rounds', '?')} rounds{' (quick)' if machine.get('quick') else ''}, {machine['date']}",
        "",
        "Ratio = median(ours) / median(baseline), lower is better; ours and baseline alternate within each round.",
        "",
        "| case | ours | baseline | ours median | baseline median | ratio | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        j = r.to_json()
        if r.error:
            lines.append(f"| {r.title} | {r.ours_label} | {r.baseline_label} | error: {r.error} | | | {r.target} | no |")
            continue
        if r.skipped:
            lines.append(f"| {r.title} | {r.ours_label} | {r.baseline_label} | skipped: {r.skipped} | | | {r.target} | - |")
            continue
        ours, base = (_amount(j["ours_median_s"], r.unit), _amount(j["baseline_median_s"], r.unit))
        lines.append(
            f"| {r.title} | {r.ours_label} | {r.baseline_label} | {ours} | "
            f"{base} | {j['ratio']:.2f} | {r.target} | {_met(j['meets_target'])} |"
        )
    extras = [(r.title, r.extra) for r in results if r.extra and not r.skipped]
    if extras:
        lines += ["", "Measured beside the timings:"]
        for title, extra in extras:
            lines.append(f"- {title}: " + ", ".join(f"{k}={v}" for k, v in extra.items()))
    return "\n".join(lines)


def _amount(value: float, unit: str) -> str:
    if unit == "bytes":
        return f"{value:,.0f} B"
    return f"{value:,.1f} MiB" if unit == "MiB" else f"{value:.4f} s"


def _met(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "no")


def write_results(results: list[CaseResult], machine: dict[str, Any], path: Path | None = None) -> Path:
    """Atomically write results/latest.json."""
    path = path or RESULTS / "latest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"machine": machine, "cases": [r.to_json() for r in results]}, indent=2))
    os.replace(tmp, path)
    return path
