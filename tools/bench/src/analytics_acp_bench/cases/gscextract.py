"""Case 8: a Search Console extraction of 200k rows (8+ pages of 25,000) through bridge + gsc vs the bare client.

Both sides ask the same fake Search Console (connectors/gsc/tests/gscfake.py on the shared loopback
FakeServer, in this process) for the same query: dimensions query and date over 40 days, 5,000
queries a day. Ours: one ``gsc__search_analytics`` call on a running bridge, timed from request to
answer (the answer comes once the full CSV is in acp-data; it includes the aggregate totals query).
Baseline: google-api-python-client with the same static discovery document and credentials,
paging ``searchanalytics.query`` by startRow until a short page, rows kept in a list. One untimed
call on each side first (token fetch, lazy imports: cold start is case 4, which covers gsc too).
After each timed call of ours the case waits, untimed, until the bridge's acp_query preload worker
has exited (it starts once the CSV is saved), so the next round, ours or the baseline, does not
share the machine with it.
The fake's row ceiling and the connector's ``row_ceiling`` are above 200k, so no day splitting.
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..fixtures.bridgehost import BridgeHost
from ..fixtures.stdio import StdioHost
from ..runner import Case

ROOT = Path(__file__).resolve().parents[5]
SOURCE = "gsc"
SITE = "sc-domain:example.com"
DAYS = 40


def _fakes_on_path() -> None:
    for sub in ("connectors/google/tests", "connectors/gsc/tests"):
        path = str(ROOT / sub)
        if path not in sys.path:
            sys.path.insert(0, path)


class GscExtract:
    """A fake Search Console, a bridge with a gsc source, and the bare client."""

    def __init__(self, queries: int):
        self.queries = queries
        self.facts: dict[str, Any] = {"rows": queries * DAYS, "page_size": 25_000}

    def setup(self) -> None:
        _fakes_on_path()
        import gscfake

        self.tmp = Path(tempfile.mkdtemp(prefix="acp-bench-gsc-"))
        final = dt.date(2026, 9, 22)
        self.window = ((final - dt.timedelta(days=DAYS - 1)).isoformat(), final.isoformat())
        self._fakes = gscfake.running_fakes(final)
        self.fakes = self._fakes.__enter__()
        self.fakes.gsc.row_ceiling = 10_000_000
        site = self.fakes.gsc.sites[SITE]
        site.queries, site.first_date = self.queries, final - dt.timedelta(days=DAYS + 5)
        self.credentials = self.fakes.service_account()
        self.args = {"dimensions": ["query", "date"], "start_date": self.window[0], "end_date": self.window[1]}
        self.host = StdioHost()
        self.bridge = BridgeHost(self.host, self.tmp, None, extra_sources=[{
            "id": SOURCE, "acp": "gsc", "label": "Search Console (fake)", "default_resource_id": SITE,
            "credentials": self.credentials,
            "config": {**self.fakes.config, "row_ceiling": 10_000_000},
        }])
        self.bridge.start()
        self._bare_setup()
        self.ours_untimed()
        self.baseline()

    def _bare_setup(self) -> None:
        import json

        import google_auth_httplib2
        import httplib2
        from google.oauth2 import service_account
        from googleapiclient.discovery import build

        info = json.loads(self.credentials["service_account"])
        creds = service_account.Credentials.from_service_account_info(
            info, scopes=["https://www.googleapis.com/auth/webmasters.readonly"])
        self.http = google_auth_httplib2.AuthorizedHttp(creds, http=httplib2.Http(timeout=60, proxy_info=None))
        self.service = build("searchconsole", "v1", http=self.http, static_discovery=True,
                             client_options={"api_endpoint": self.fakes.server.url + "/"})

    def ours_untimed(self) -> None:
        _, texts = self.bridge.call(f"{SOURCE}__search_analytics", {**self.args, "row_cap": 10})
        self.bridge.drop_dataset(self.bridge.dataset_of(texts))
        self.bridge.wait_background()

    def ours(self) -> float:
        elapsed, texts = self.bridge.call(f"{SOURCE}__search_analytics", self.args)
        dataset = self.bridge.dataset_of(texts)
        path = self.bridge.data_dir / f"{dataset}.csv"
        with open(path, encoding="utf-8") as handle:
            self.facts["csv_rows"] = sum(1 for _ in handle) - 1
        self.facts["model_context_bytes"] = sum(len(t.encode()) for t in texts)
        self.bridge.drop_dataset(dataset)
        # Untimed, as case 2: the acp_query preload of this dataset runs after the answer, so the
        # baseline that follows must not share the machine with it (a fair baseline).
        self.bridge.wait_background()
        return elapsed

    def baseline(self) -> float:
        start, rows, pages = time.perf_counter(), [], 0  # type: ignore[var-annotated]
        body = {"startDate": self.window[0], "endDate": self.window[1], "dimensions": ["query", "date"],
                "type": "web", "rowLimit": 25_000, "startRow": 0}
        while True:
            page = self.service.searchanalytics().query(siteUrl=SITE, body=body).execute(http=self.http)
            pages += 1
            got = page.get("rows") or []
            rows.extend(got)
            if len(got) < 25_000:
                break
            body["startRow"] += 25_000  # type: ignore[operator]
        self.facts["bare_rows"], self.facts["pages"] = len(rows), pages
        return time.perf_counter() - start

    def extra(self) -> dict[str, Any]:
        facts = dict(self.facts)
        facts["same_rows"] = facts.get("csv_rows") == facts.get("bare_rows")
        return facts

    def teardown(self) -> None:
        try:
            if getattr(self, "host", None) is not None:
                self.host.close()
        finally:
            if getattr(self, "_fakes", None) is not None:
                self._fakes.__exit__(None, None, None)
            shutil.rmtree(self.tmp, ignore_errors=True)


def cases(quick: bool) -> list[Case]:
    """The 200k-row GSC extraction (2,000 rows with quick)."""
    if not (ROOT / "connectors" / "gsc" / "tests" / "gscfake.py").exists():
        return []
    s = GscExtract(50 if quick else 5_000)
    n = s.facts["rows"]
    return [Case(
        key="gsc_extraction", title=f"8. GSC extraction ({n:,} rows, {max(1, -(-n // 25_000))}+ pages, fake Search Console)",
        target="<= 1.5", target_value=1.5, ours=s.ours, baseline=s.baseline, setup=s.setup, teardown=s.teardown,
        extra=s.extra, ours_label="bridge + gsc -> acp-data/<id>.csv", baseline_label="googleapiclient paging startRow",
    )]
