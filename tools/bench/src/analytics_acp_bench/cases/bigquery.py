"""Case 9: a 1M x 6 BigQuery result paged from the fake REST API: bigquery connector + bridge -> CSV vs the bare client.

Ours: one ``bench__execute_query`` call on a running bridge (dry run, job with maximumBytesBilled, every
getQueryResults page converted and streamed to the table file, the bridge writing acp-data/<id>.csv),
timed from request to answer. Baseline: google-cloud-bigquery in this process, ``client.query(sql)
.result(page_size=10000)`` iterated to the last Row (the same pages, the same fake, nothing written).
The fake runs in its own process with cached pages (fixtures/bqfake.py). Peak RSS of the connector and
bridge are polled as in case 2.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..fixtures.bridgehost import SOURCE, BridgeHost, PeakRss, vm_hwm_mib
from ..fixtures.stdio import StdioHost
from ..runner import Case

log = logging.getLogger(__name__)

PAGE_ROWS = 10_000


class BigQueryExtract:
    """State: the fake's process, a bridge with a bigquery source, the bare client and the facts."""

    def __init__(self, rows: int):
        self.rows = rows
        self.facts: dict[str, Any] = {"rows": rows, "columns": 6}
        self.host: StdioHost | None = None
        self.fake: subprocess.Popen | None = None
        self.checked = False

    def setup(self) -> None:
        from ..fixtures import bqfake

        self.tmp = Path(tempfile.mkdtemp(prefix="acp-bench-bq-"))
        self.fake = subprocess.Popen([sys.executable, "-m", "analytics_acp_bench.fixtures.bqfake", "--rows", str(self.rows)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.fake.stdout is not None
        hello = json.loads(self.fake.stdout.readline())
        self.url, self.credentials, self.sql = hello["url"], hello["credentials"], bqfake.SQL
        self.host = StdioHost()
        self.bridge = BridgeHost(self.host, self.tmp, None)
        self.bridge.sources.write_text(json.dumps({"defaults": {"row_limit": 25}, "sources": [{
            "id": SOURCE, "acp": "bigquery", "label": "Bench (fake BigQuery)",
            "default_resource_id": f"{bqfake.PROJECT}.{bqfake.DATASET}",
            "credentials": self.credentials, "config": {"api_endpoint": self.url}, "cost_limit_usd": 1,
        }]}))
        self.bridge.start()
        self.bridge_proc, children = self.bridge.processes()
        self.connector_proc = children[0] if children else None
        self.peaks = {"bridge": 0.0, "connector": 0.0}
        # Untimed warm-up: the connector imports google-cloud-bigquery and gets its token on first use
        # (cold-start cost, case 4), and the fake encodes its pages once.
        _, texts = self.bridge.call(f"{SOURCE}__execute_query", {"query": self.sql})
        self.bridge.drop_dataset(self.bridge.dataset_of(texts))
        self.client = self._bare_client()

    def _bare_client(self) -> Any:
        from google.cloud import bigquery
        from google.oauth2 import service_account

        info = json.loads(self.credentials["service_account"])
        creds = service_account.Credentials.from_service_account_info(info, scopes=["https://www.googleapis.com/auth/bigquery"])
        return bigquery.Client(project=info["project_id"], credentials=creds, client_options={"api_endpoint": self.url})

    def ours(self) -> float:
        with PeakRss({"bridge": self.bridge_proc, "connector": self.connector_proc}) as rss:
            elapsed, texts = self.bridge.call(f"{SOURCE}__execute_query", {"query": self.sql})
        for label, peak in rss.peaks.items():
            self.peaks[label] = max(self.peaks[label], peak)
        dataset = self.bridge.dataset_of(texts)
        path = self.bridge.data_dir / f"{dataset}.csv"
        if not self.checked:
            self.checked = True
            with open(path, encoding="utf-8") as handle:
                self.facts["csv_lines"] = sum(1 for _ in handle)
            self.facts["csv_every_row"] = self.facts["csv_lines"] == self.rows + 1
            self.facts["csv_bytes"] = path.stat().st_size
            meta = json.loads(path.with_name(dataset + ".meta.json").read_text())
            self.facts["csv_types"] = ",".join(h["type"] for h in meta["headers"])
        self.bridge.drop_dataset(dataset)
        return elapsed

    def baseline(self) -> None:
        count = 0
        for _ in self.client.query(self.sql).result(page_size=PAGE_ROWS):
            count += 1
        assert count == self.rows

    def extra(self) -> dict[str, Any]:
        facts = dict(self.facts)
        facts["bridge_peak_rss_mib"] = round(self.peaks["bridge"], 1)
        facts["connector_peak_rss_mib"] = round(self.peaks["connector"], 1)
        facts["connector_vm_hwm_mib"] = vm_hwm_mib(self.connector_proc)
        facts["rss_target_mib"] = 400
        facts["rss_met"] = self.peaks["connector"] <= 400 and (facts["connector_vm_hwm_mib"] or 0) <= 400
        return facts

    def teardown(self) -> None:
        try:
            if self.host is not None:
                self.host.close()
            try:
                self.client.close()
            except Exception as exc:  # the measurement is taken; a client that will not close is not a result
                log.debug("BigQuery client close failed: %s", type(exc).__name__)
        finally:
            if self.fake is not None:
                self.fake.stdin.close()  # type: ignore[union-attr]
                try:
                    self.fake.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.fake.kill()
            shutil.rmtree(self.tmp, ignore_errors=True)


def cases(quick: bool) -> list[Case]:
    """The BigQuery extraction (3,000 rows with quick)."""
    n = 3_000 if quick else 1_000_000
    s = BigQueryExtract(n)
    label = f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n:,}"
    return [Case(
        key="bigquery_extraction", title=f"9. BigQuery extraction ({label} rows x 6, fake REST API -> acp-data CSV)",
        target="<= 1.5", target_value=1.5, ours=s.ours, baseline=s.baseline, setup=s.setup, teardown=s.teardown,  # type: ignore[arg-type]
        extra=s.extra, ours_label="bridge + bigquery -> acp-data/<id>.csv", baseline_label="google-cloud-bigquery result() iteration",
    )]
