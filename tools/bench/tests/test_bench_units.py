"""The bench's memory facts are named for their unit: the values are MiB (2**20 bytes), so the keys end
in ``_mib`` (issue 15.8: sizes printed as MB were MiB). No case is run: each case's ``extra()`` is
called on recorded peaks."""

import pytest
from analytics_acp_bench.cases.bigextract import BigExtract, BigExtractFloor
from analytics_acp_bench.cases.bigquery import BigQueryExtract
from analytics_acp_bench.cases.ga4report import GA4Report


@pytest.mark.parametrize("case", [BigExtract, BigExtractFloor, BigQueryExtract, GA4Report])
def test_memory_facts_are_keyed_in_mib(case):
    run = object.__new__(case)  # no setup: only the facts of recorded peaks
    run.facts = {}
    run.peaks = {"bridge": 100.0, "connector": 120.0}
    run.bridge_proc = run.connector_proc = None
    facts = run.extra()
    sizes = [k for k in facts if "rss" in k or "hwm" in k]
    assert "connector_peak_rss_mib" in facts and facts["connector_peak_rss_mib"] == 120.0
    assert not [k for k in sizes if k.endswith("_mb")], facts
    assert all(k.endswith(("_mib", "_met")) for k in sizes), facts


def test_tools_list_case_measures_the_running_bridge():
    """Case 10 (issue 23.3): the bytes come from a real bridge's tools/list line; the table prints bytes."""
    from analytics_acp_bench.cases import toolslist
    from analytics_acp_bench.runner import markdown, run_case

    case = toolslist.cases(quick=True)[0]  # 10b (MCP Apps) runs in the smoke test
    result = run_case(case, rounds=1)
    assert result.error is None and result.unit == "bytes"
    after = result.extra["after"]
    assert after["tools"] == 32 and set(after["per_source_bytes"]) == {"bridge", "db", "ga", "sc", "bq", "fc"}
    # Per-source sums are the tools' own JSON: together a little less than the whole response line.
    assert 0 < after["total_bytes"] - sum(after["per_source_bytes"].values()) < 200
    assert result.ours_s == [float(after["total_bytes"])] and result.baseline_s == [41_681.0]
    assert after["total_bytes"] <= toolslist.LIMIT_BYTES and result.meets_target is True
    assert after["largest_tool"][1] <= toolslist.TOOL_LIMIT_BYTES and after["approx_tokens"] == after["total_bytes"] // 4
    assert f"{after['total_bytes']:,} B | 41,681 B |" in markdown([result], {
        "cpu": "x", "cores": 2, "memory_gb": 1, "platform": "p", "python": "3", "sqlite3_cli": "", "node": "", "date": "d"})


def test_case_1_floor_types_every_value_as_the_protocol_asks():
    """Case 1's floor (issue 39.2) does the step ACP cannot skip, not less: every value is checked against
    its declared type (8.6) and each row comes back in header order; a wrong value is refused."""
    from analytics_acp_bench.fixtures.floor_server import HEADERS, typed
    from analytics_acp_bench.fixtures.rows import make_rows

    rows = make_rows(5)
    rows[2] = dict(reversed(list(rows[2].items())))  # the tool's own key order differs
    out = typed(rows)
    assert [list(r) for r in out] == [[h["name"] for h in HEADERS]] * 5
    assert out[3] == make_rows(5)[3]
    for column, wrong in [("id", "7"), ("amount", "1.5"), ("amount", float("nan")), ("paid", 1), ("channel", 3),
                          ("day", "2026-13-01"), ("day", 20260101)]:
        bad = make_rows(3)
        bad[1][column] = wrong
        with pytest.raises(ValueError):
            typed(bad)
