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
