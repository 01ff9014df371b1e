"""Smoke test: every benchmark case runs on tiny inputs (no timing is asserted, by design)."""

import json
import subprocess
import sys


def test_bench_quick_runs_every_case(tmp_path):
    out = tmp_path / "latest.json"
    proc = subprocess.run(
        [sys.executable, "-m", "analytics_acp_bench", "--quick", "--rounds", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=900,
    )
    assert out.exists(), proc.stderr
    data = json.loads(out.read_text())
    keys = {c["key"] for c in data["cases"]}
    assert {"per_call", "build_declared", "build_inferred"} <= keys
    assert any(k.startswith("cold_start_") for k in keys)
    errors = {c["key"]: c["error"] for c in data["cases"] if c["error"]}
    assert not errors, errors
    assert "| case |" in proc.stdout and data["machine"]["cores"]
    assert proc.returncode == 0, proc.stderr
