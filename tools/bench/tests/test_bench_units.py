"""The bench's memory facts are named for their unit: the values are MiB (2**20 bytes), so the keys end
in ``_mib`` (issue 15.8: sizes printed as MB were MiB). No case is run: each case's ``extra()`` is
called on recorded peaks."""

import pytest
from analytics_acp_bench.cases.bigextract import BigExtract
from analytics_acp_bench.cases.bigquery import BigQueryExtract
from analytics_acp_bench.cases.ga4report import GA4Report


@pytest.mark.parametrize("case", [BigExtract, BigQueryExtract, GA4Report])
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
