"""Case 12 (issue 36): the dataset view of MCP Apps: a page's latency anywhere in 1M rows, sorted too, and the view's bytes.

A bridge runs as an MCP stdio server for a client that negotiates MCP Apps (``io.modelcontextprotocol/ui``),
so its app-only tools are listed; one real extraction (databases connector) saves 1M x 6 rows in acp-data,
and the bridge loads the table for acp_query (and the view) once the CSV is saved.

- "page": ``acp_dataset_page`` with ``limit`` 100 at offsets spread over the whole dataset (first, quarters,
  last, and the same random ones every round), after one untimed page; each round reports the median, and
  the slowest page of the run is kept beside it (issue 36's bar: under 100 ms anywhere). Baseline: the same
  windows as ``acp_query`` ``SELECT * ... LIMIT 100 OFFSET k``, a growing OFFSET over the same cached table
  (acp_query also saves each result as a dataset: that is what a client without the view would do).
- "sorted page": the same, sorted by ``amount`` (the first sorted page, untimed, builds the column's index
  in the cached table), plus one ``next_cursor`` page; baseline ``ORDER BY amount LIMIT 100 OFFSET k``.
- "view bytes": the ``ui://analytics-acp/dataset`` resource as a host reads it (resources/read), against the
  reference view runtime a view would otherwise bundle (``@modelcontextprotocol/ext-apps``'s
  ``app-with-deps.js``: its size in tests/external/node_modules, or the 2.0.4 figure).
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
from pathlib import Path
from typing import Any

from ..fixtures.benchdb import TABLE, shared_db
from ..fixtures.bridgehost import SOURCE, BridgeHost, quick_bridge
from ..fixtures.stdio import StdioHost
from ..runner import Case

ROOT = Path(__file__).resolve().parents[5]
PAGE_ROWS = 100
PAGE_BAR_S = 0.100  # issue 36: a page of 100 rows anywhere in 1M rows, once the table is loaded
VIEW_URI = "ui://analytics-acp/dataset"
VIEW_LIMIT_BYTES = 32_000
APP_WITH_DEPS = ROOT / "tests/external/node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"
APP_WITH_DEPS_BYTES = 541_828  # @modelcontextprotocol/ext-apps 2.0.4, when node_modules is absent


class ViewState:
    """One bridge (MCP Apps client) with the extracted dataset, shared by the three cases."""

    def __init__(self, rows: int, quick: bool):
        self.rows, self.quick = rows, quick
        self.bridge: BridgeHost | None = None
        self.host: StdioHost | None = None
        self.users = 3
        self.facts: dict[str, Any] = {"rows": rows, "page_rows": PAGE_ROWS}

    def acquire(self) -> None:
        if self.bridge is not None:
            return
        if self.quick:
            _, self.bridge = quick_bridge(shared_db(self.rows), apps=True)
        else:
            self.host = StdioHost()
            self.bridge = BridgeHost(self.host, Path(tempfile.mkdtemp(prefix="acp-bench-view-")), shared_db(self.rows),
                                     apps=True)
            self.bridge.start()
        bridge = self.bridge
        assert {"acp_dataset_page", "acp_dataset_summary"} <= bridge.tool_names, "the app-only tools are not listed"
        _, texts = bridge.call(f"{SOURCE}__execute_sql", {"sql": f"SELECT * FROM {TABLE}"})
        self.dataset = bridge.dataset_of(texts)
        bridge.wait_background()  # the table loads for acp_query after the answer: "once the table is loaded"
        total = self.page({"offset": 0})["total_rows"]
        assert total == self.rows, (total, self.rows)
        rng = random.Random(36)
        last = self.rows - PAGE_ROWS
        self.offsets = sorted({0, self.rows // 4, self.rows // 2, 3 * self.rows // 4, last,
                               *(rng.randrange(0, last) for _ in range(3))})
        self.facts["offsets"] = self.offsets

    def release(self) -> None:
        self.users -= 1
        if self.users <= 0 and self.bridge is not None:
            self.bridge.drop_dataset(self.dataset)
            if self.host is not None:
                self.host.close()
            self.bridge = None

    @property
    def live(self) -> BridgeHost:
        assert self.bridge is not None
        return self.bridge

    def page(self, arguments: dict[str, Any]) -> dict[str, Any]:
        _, texts = self.live.call("acp_dataset_page", {"dataset_id": self.dataset, "limit": PAGE_ROWS, **arguments})
        return dict(json.loads(texts[0]))

    def timed_page(self, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        elapsed, texts = self.live.call("acp_dataset_page", {"dataset_id": self.dataset, "limit": PAGE_ROWS, **arguments})
        return elapsed, dict(json.loads(texts[0]))

    def query_page(self, sql: str) -> tuple[float, dict[str, Any]]:
        elapsed, texts = self.live.call("acp_query", {"sql": sql})
        answer = dict(json.loads(texts[0]))
        if answer.get("dataset"):  # keep acp-data small: the baseline's saved result is not the point
            self.live.drop_dataset(answer["dataset"])
        return elapsed, answer


class PageCase:
    """Ours: acp_dataset_page at the spread offsets; baseline: acp_query with a growing OFFSET."""

    def __init__(self, state: ViewState, sort: str | None):
        self.state, self.sort = state, sort
        self.samples: list[float] = []
        self.facts: dict[str, Any] = {}

    def setup(self) -> None:
        self.state.acquire()
        if self.sort:  # the first sort by a column builds its index in the cached table: untimed, reported
            elapsed, _ = self.state.timed_page({"offset": 0, "sort": {"column": self.sort}})
            self.facts["first_sorted_page_s"] = round(elapsed, 4)
        ours = self.state.page(self._args(self.state.offsets[2]))["rows"]
        _, theirs = self.state.query_page(self._sql(self.state.offsets[2]))
        self.facts["same_rows_as_acp_query"] = [list(r.values()) for r in theirs["rows"]][:50] == ours[:50]

    def _args(self, offset: int) -> dict[str, Any]:
        return {"offset": offset, **({"sort": {"column": self.sort}} if self.sort else {})}

    def _sql(self, offset: int) -> str:
        order = f"ORDER BY {self.sort}, rowid " if self.sort else ""
        return f"SELECT * FROM {self.state.dataset} {order}LIMIT {PAGE_ROWS} OFFSET {offset}"

    def ours(self) -> float:
        times = []
        for offset in self.state.offsets:
            elapsed, page = self.state.timed_page(self._args(offset))
            times.append(elapsed)
            if self.sort and page["next_cursor"]:  # a keyset page after it
                elapsed, _ = self.state.timed_page({"cursor": page["next_cursor"]})
                times.append(elapsed)
        self.samples += times
        return statistics.median(times)

    def baseline(self) -> float:
        return statistics.median(self.state.query_page(self._sql(offset))[0] for offset in self.state.offsets)

    def extra(self) -> dict[str, Any]:
        slowest = max(self.samples) if self.samples else None
        return {**self.state.facts, **self.facts, "sort": self.sort, "pages_timed": len(self.samples),
                "slowest_page_s": slowest, "bar_s": PAGE_BAR_S,
                "within_bar": slowest is not None and slowest < PAGE_BAR_S}


class ViewBytes:
    """The view resource's bytes (resources/read, as a host loads it) against the reference view runtime."""

    def __init__(self, state: ViewState):
        self.state = state
        self.size = 0

    def setup(self) -> None:
        self.state.acquire()
        bridge = self.state.live
        read = bridge.host.call(bridge.session.read_resource, VIEW_URI)
        content = read.contents[0]
        assert content.mime_type == "text/html;profile=mcp-app", content.mime_type
        self.size = len(content.text.encode())

    def ours(self) -> float:
        return float(self.size)

    def baseline(self) -> float:
        return float(APP_WITH_DEPS.stat().st_size if APP_WITH_DEPS.is_file() else APP_WITH_DEPS_BYTES)

    def extra(self) -> dict[str, Any]:
        return {"view_bytes": self.size, "limit_bytes": VIEW_LIMIT_BYTES, "within_limit": self.size <= VIEW_LIMIT_BYTES}


def cases(quick: bool) -> list[Case]:
    """Page latency (unsorted, sorted) and the view's size, through one MCP Apps client of the bridge."""
    state = ViewState(2_000 if quick else 1_000_000, quick)
    plain, ordered, size = PageCase(state, None), PageCase(state, "amount"), ViewBytes(state)
    base = "acp_query LIMIT 100 OFFSET k"
    return [
        Case(key="view_page", title=f"12. dataset view: a page of {PAGE_ROWS} rows anywhere in {state.rows:,} rows",
             target=f"slowest page < {PAGE_BAR_S * 1000:.0f} ms (ratio reported)", target_value=float("inf"),
             ours=plain.ours, baseline=plain.baseline, setup=plain.setup, teardown=state.release, extra=plain.extra,
             ours_label="acp_dataset_page (rowid seek)", baseline_label=base),
        Case(key="view_page_sorted", title=f"12b. dataset view: a sorted page of {PAGE_ROWS} rows in {state.rows:,} rows",
             target="reported", target_value=float("inf"), ours=ordered.ours, baseline=ordered.baseline,
             setup=ordered.setup, teardown=state.release, extra=ordered.extra,
             ours_label="acp_dataset_page sorted (index, keyset)", baseline_label=f"{base} ORDER BY amount"),
        Case(key="view_bytes", title="12c. dataset view: bytes of ui://analytics-acp/dataset", unit="bytes",
             target=f"<= {VIEW_LIMIT_BYTES:,} B", target_value=VIEW_LIMIT_BYTES / APP_WITH_DEPS_BYTES,
             ours=size.ours, baseline=size.baseline, setup=size.setup, teardown=state.release, extra=size.extra,
             ours_label="hand-written view", baseline_label="ext-apps app-with-deps.js"),
    ]
