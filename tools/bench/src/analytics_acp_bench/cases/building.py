"""Case 6: result building alone (typing, normalization, sampling, system_data file) vs orjson dumping."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import orjson

from ..fixtures.rows import COLUMNS, make_rows
from ..fixtures.rows_connector import HEADERS
from ..runner import Case


def cases(quick: bool) -> list[Case]:
    """Declared headers (the databases path) and inferred types (tools that declare nothing)."""
    n = 2_000 if quick else 1_000_000
    label = "1M" if n == 1_000_000 else f"{n:,}"
    state: dict = {}
    tmp = Path(tempfile.mkdtemp(prefix="acp-bench-build-"))

    def setup():
        rows = make_rows(n)
        state["dicts"] = rows
        state["tuples"] = [tuple(r[c] for c in COLUMNS) for r in rows]

    def ours(declared: bool):
        def run() -> float:
            from analytics_acp.declarations import Extraction
            from analytics_acp.results import BuildSettings, build_extraction

            out = Extraction(rows=iter(state["tuples"]), columns=COLUMNS, headers=HEADERS if declared else None,
                             description="bench")
            start = time.perf_counter()
            built = build_extraction(out, BuildSettings(row_limit=25, tmp_dir=tmp, file_prefix="bench"))
            elapsed = time.perf_counter() - start
            assert built.total_rows == n
            for f in built.files:
                Path(f).unlink(missing_ok=True)
            return elapsed
        return run

    def baseline() -> float:
        start = time.perf_counter()
        (tmp / "orjson.json").write_bytes(orjson.dumps(state["dicts"]))
        return time.perf_counter() - start

    return [
        Case(key="build_declared", title=f"6. result building, declared headers ({label} x 6)", target="report",
             target_value=float("inf"), ours=ours(True), baseline=baseline, setup=setup,
             ours_label="build_extraction -> file", baseline_label="orjson.dumps(rows) -> file"),
        Case(key="build_inferred", title=f"6. result building, inferred types ({label} x 6)", target="report",
             target_value=float("inf"), ours=ours(False), baseline=baseline, setup=setup,
             ours_label="build_extraction -> file", baseline_label="orjson.dumps(rows) -> file"),
    ]
