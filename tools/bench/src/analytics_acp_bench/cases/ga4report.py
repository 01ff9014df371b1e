"""Case 7: a GA4 report of 300k rows paged from a Data API fake, ga4 connector + bridge -> acp-data CSV, vs the bare
google-analytics-data client paging the same report (offset until rowCount) into a CSV, in the same run.

The fake runs in its own process (fixtures/ga4fake_proc.py; 100k rows per page, like a real API that
returns less than asked). Ours: one ``bench__run_report`` call on a running bridge, timed from request to
answer (the answer comes once the full CSV is in acp-data). Baseline: BetaAnalyticsDataClient (REST, same
endpoint, same service account) created once, then run_report pages iterated with proto-plus and written
with csv.writer. A small untimed report warms both up (imports, token, the fake's grouping). The
connector's peak RSS is watched (target <= 300 MB); the first round checks the CSV has every row.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..fixtures.bridgehost import SOURCE, BridgeHost, PeakRss, vm_hwm_mib
from ..fixtures.ga4fake_proc import REPORT
from ..fixtures.stdio import StdioHost
from ..runner import Case, SkipCase


class GA4Report:
    """State of the case: the fake process, a running bridge with a ga4 source, a bare client."""

    def __init__(self, rows: int, page_size: int):
        self.rows, self.page_size = rows, page_size
        self.facts: dict[str, Any] = {"rows": rows, "fake_page_size": page_size}
        self.host: StdioHost | None = None
        self.fake: subprocess.Popen[str] | None = None
        self.checked = False

    def setup(self) -> None:
        try:
            import analytics_acp_ga4  # noqa: F401
            from google.analytics.data_v1beta import BetaAnalyticsDataClient
        except ImportError as exc:
            raise SkipCase(f"the ga4 connector is not installed ({exc})") from None
        self.tmp = Path(tempfile.mkdtemp(prefix="acp-bench-ga4-"))
        self.fake = subprocess.Popen([sys.executable, "-m", "analytics_acp_bench.fixtures.ga4fake_proc", str(self.rows),
                                      str(self.page_size)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.fake.stdout is not None
        hello = json.loads(self.fake.stdout.readline())
        self.url, self.property, creds = hello["url"], hello["property"], hello["credentials"]
        self.host = StdioHost()
        self.bridge = BridgeHost(self.host, self.tmp, None)
        self.bridge.sources.write_text(json.dumps({"defaults": {"row_limit": 25}, "sources": [{
            "id": SOURCE, "acp": "ga4", "label": "Bench (GA4 fake)", "default_resource_id": self.property,
            "credentials": creds, "config": {"api_endpoint": self.url}}]}))
        self.bridge.start()
        self.bridge_proc, children = self.bridge.processes()
        self.connector_proc = children[0] if children else None
        self.peaks = {"bridge": 0.0, "connector": 0.0}
        _, texts = self.bridge.call(f"{SOURCE}__run_report", {**REPORT, "limit": 10})  # imports, token, fake grouping
        self.bridge.drop_dataset(self.bridge.dataset_of(texts))
        from google.oauth2 import service_account

        info = json.loads(creds["service_account"])
        self.client = BetaAnalyticsDataClient(
            credentials=service_account.Credentials.from_service_account_info(
                info, scopes=["https://www.googleapis.com/auth/analytics.readonly"]),
            transport="rest", client_options={"api_endpoint": self.url})
        self._bare(limit=10)

    def _bare(self, limit: int | None = None) -> int:
        from google.analytics.data_v1beta import DateRange, Dimension, Metric, RunReportRequest

        out = self.tmp / "baseline.csv"
        offset, total = 0, None
        with open(out, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow([*REPORT["dimensions"], *REPORT["metrics"]])
            while total is None or offset < total:
                resp = self.client.run_report(RunReportRequest(
                    property=f"properties/{self.property}", dimensions=[Dimension(name=d) for d in REPORT["dimensions"]],
                    metrics=[Metric(name=m) for m in REPORT["metrics"]],
                    date_ranges=[DateRange(start_date=REPORT["start_date"], end_date=REPORT["end_date"])],
                    offset=offset, limit=limit or 250_000))
                for row in resp.rows:
                    writer.writerow([v.value for v in row.dimension_values] + [v.value for v in row.metric_values])
                offset += len(resp.rows)
                total = limit if limit is not None else resp.row_count
                if not resp.rows:
                    break
        out.unlink()
        return offset

    def ours(self) -> float:
        with PeakRss({"bridge": self.bridge_proc, "connector": self.connector_proc}) as rss:
            elapsed, texts = self.bridge.call(f"{SOURCE}__run_report", REPORT)
        for label, peak in rss.peaks.items():
            self.peaks[label] = max(self.peaks[label], peak)
        dataset = self.bridge.dataset_of(texts)
        if not self.checked:
            self.checked = True
            with open(self.bridge.data_dir / f"{dataset}.csv", newline="", encoding="utf-8") as handle:
                self.facts["csv_rows"] = sum(1 for _ in csv.reader(handle)) - 1
            self.facts["csv_all_rows"] = self.facts["csv_rows"] == self.rows
            self.facts["model_context_bytes"] = sum(len(t.encode()) for t in texts)
        self.bridge.drop_dataset(dataset)
        return elapsed

    def baseline(self) -> None:
        read = self._bare()
        self.facts["baseline_rows"] = read

    def extra(self) -> dict[str, Any]:
        facts = dict(self.facts)
        facts["bridge_peak_rss_mib"] = round(self.peaks["bridge"], 1)
        facts["connector_peak_rss_mib"] = round(self.peaks["connector"], 1)
        facts["connector_vm_hwm_mib"] = vm_hwm_mib(self.connector_proc)
        facts["connector_rss_target_mib"] = 300
        facts["connector_rss_met"] = self.peaks["connector"] <= 300 and (facts["connector_vm_hwm_mib"] or 0) <= 300
        return facts

    def teardown(self) -> None:
        try:
            if self.host is not None:
                self.host.close()
        finally:
            if self.fake is not None:
                try:
                    assert self.fake.stdin is not None
                    self.fake.stdin.close()
                    self.fake.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    self.fake.kill()
            shutil.rmtree(self.tmp, ignore_errors=True)


def cases(quick: bool) -> list[Case]:
    """The GA4 report (3,000 rows in pages of 1,000 with quick; 300,000 in pages of 100,000)."""
    rows, page = (3_000, 1_000) if quick else (300_000, 100_000)
    s = GA4Report(rows, page)
    return [Case(
        key="ga4_report", title=f"7. GA4 report ({rows:,} rows x 5, Data API fake paged -> acp-data CSV)",
        target="<= 1.5", target_value=1.5, ours=s.ours, baseline=s.baseline, setup=s.setup, teardown=s.teardown,  # type: ignore[arg-type]
        extra=s.extra, ours_label="bridge + ga4 -> acp-data/<id>.csv", baseline_label="google-analytics-data paging -> csv",
    )]
