"""Smoke test: every benchmark case runs on tiny inputs (no timing is asserted, by design).

Peers that are not installed are skipped with a reason (quick runs never install them); any
other case must run without error.
"""

import json
import subprocess
import sys

EVERY_CASE = {
    "per_call", "per_call_floor", "big_extraction", "big_extraction_floor", "peer_mcp_alchemy", "peer_dbhub", "acp_query_first",
    "acp_query_repeated",
    "acp_query_first_extracted", "acp_query_after_pause",
    "build_declared", "build_inferred", "ga4_report", "http_sessions_p50", "http_sessions_p99", "http_sessions_wall",
    "http_sessions_floor_p50", "http_sessions_floor_p99", "http_sessions_floor_wall",
    "bigquery_extraction", "gsc_extraction", "tools_list", "burst", "tools_list_apps", "view_page", "view_page_sorted",
    "view_bytes",
}
MAY_SKIP = {"peer_mcp_alchemy", "peer_dbhub"}


def test_bench_quick_runs_every_case(tmp_path):
    out = tmp_path / "latest.json"
    proc = subprocess.run(
        [sys.executable, "-m", "analytics_acp_bench", "--quick", "--rounds", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=900,
    )
    assert out.exists(), proc.stderr
    data = json.loads(out.read_text())
    cases = {c["key"]: c for c in data["cases"]}
    assert EVERY_CASE <= set(cases), sorted(EVERY_CASE - set(cases))
    assert any(k.startswith("cold_start_") for k in cases)
    errors = {k: c["error"] for k, c in cases.items() if c["error"]}
    assert not errors, errors
    wrongly_skipped = {k: c["skipped"] for k, c in cases.items() if c["skipped"] and k not in MAY_SKIP}
    assert not wrongly_skipped, wrongly_skipped
    for key, case in cases.items():
        if not case["skipped"]:
            assert case["ratio"] is not None and case["ratio"] > 0, key
    assert cases["big_extraction"]["extra"]["csv_same_rows"] is True
    floor = cases["big_extraction_floor"]["extra"]  # the floor's CSVs (both forms) hold the sqlite3 shell's rows
    assert floor["csv_same_rows"] is True and floor["floor_csv_same_rows"] is True and floor["plain_floor_csv_same_rows"] is True
    assert cases["acp_query_first"]["extra"]["same_result_as_duckdb"] is True
    assert cases["bigquery_extraction"]["extra"]["csv_every_row"] is True
    assert cases["acp_query_first_extracted"]["extra"]["just_extracted_same_groups_as_duckdb"] is True
    assert cases["acp_query_after_pause"]["extra"]["after_pause_same_groups_as_duckdb"] is True
    assert cases["ga4_report"]["extra"]["csv_all_rows"] is True and cases["ga4_report"]["extra"]["baseline_rows"] == 3000
    gsc = cases["gsc_extraction"]["extra"]  # every row of the fake reached the CSV, as the bare client paged them
    assert gsc["same_rows"] is True and gsc["csv_rows"] == gsc["bare_rows"] == gsc["rows"]
    assert cases["tools_list"]["extra"]["after"]["tools"] == 32 and cases["tools_list"]["unit"] == "bytes"
    burst = cases["burst"]["extra"]  # every queued call answered with its whole table, the peak read from the kernel
    assert burst["answers_with_whole_table"] == burst["calls"] and burst["server_vm_hwm_mib"] > 0
    assert cases["tools_list_apps"]["extra"]["after"]["tools"] == 34 and cases["tools_list_apps"]["extra"]["within_limit"]
    for key in ("view_page", "view_page_sorted"):  # the view's rows are acp_query's rows
        assert cases[key]["extra"]["same_rows_as_acp_query"] is True and cases[key]["extra"]["pages_timed"] >= 5, key
    assert cases["view_bytes"]["extra"]["within_limit"] is True
    http = cases["http_sessions_floor_wall"]["extra"]  # ours, bare and the floor: every call's rows checked
    assert http["calls_checked"] >= 3 * http["sessions"] * http["calls_per_session"] and http["floor_calls_per_s"] > 0
    assert "| case |" in proc.stdout and data["machine"]["cores"]
    assert proc.returncode == 0, proc.stderr
