"""The bridge passes progress and cancellation through, and acp_query reports and stops (issue 28.3): a client's progressToken on
``<source>__<tool>`` gets the ACP server's progress under that token, in order; a client's
notifications/cancelled cancels the forwarded call at the ACP server (its statement stops), the request
gets no answer and no dataset appears in acp-data/. Raw JSON-RPC over stdio, as an MCP client speaks;
every wait bounded and on an observable event (the server's DEBUG line, its CPU going idle)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
from types import SimpleNamespace

import psutil
import pytest
from analytics_acp.kit.wire import StdioWire

LONG = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e15) SELECT count(*) AS n FROM c"


class RawBridge(StdioWire):
    """The bridge over raw stdio, initialized as a plain MCP client; answers are read by a thread."""

    def __init__(self, project, log, env: dict | None = None) -> None:
        env = {**os.environ, "ANALYTICS_ACP_LOG_LEVEL": "DEBUG", **(env or {})}
        super().__init__([sys.executable, "-m", "analytics_acp_bridge", "--project", str(project)], cwd=str(project),
                         stderr=log.open("w"), env=env, bound_s=180, read_ahead=True)
        self.initialize(0, plain=True)

    def close(self, bound_s: float = 60) -> int | None:
        """End the bridge (it stops its ACP servers first: a longer bound than a server's)."""
        return super().close(bound_s)


def _project(tmp_path, write_sources, rows: int = 0):
    db = tmp_path / "shop.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (i INTEGER, s TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", ((i, f"r{i}") for i in range(rows)))
    project = tmp_path / "p"
    write_sources(project / "sources.json", {"sources": [
        {"id": "shop", "acp": "databases", "credentials": {"type": "sqlite", "path": str(db)}}]})
    return project


def test_progress_of_a_forwarded_call_reaches_the_client_under_its_token(tmp_path, write_sources):
    project = _project(tmp_path, write_sources, rows=120_000)
    bridge = RawBridge(project, tmp_path / "bridge.log")
    try:
        bridge.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "shop__execute_sql", "arguments": {"sql": "SELECT i, s FROM t"}, "_meta": {"progressToken": "client-7"}}})
        answer = bridge.wait_for(lambda m: m.get("id") == 1)
    finally:
        bridge.close()
    assert answer["result"]["isError"] is False
    progress = [m["params"] for m in bridge.seen if m.get("method") == "notifications/progress"]
    assert progress and all(p["progressToken"] == "client-7" for p in progress)
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values)) and values[-1] == 120_000


def test_a_cancelled_forwarded_call_stops_at_the_server_and_leaves_no_dataset(tmp_path, write_sources, until):
    project = _project(tmp_path, write_sources)
    log = tmp_path / "bridge.log"
    bridge = RawBridge(project, log)
    try:
        bridge.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "shop__execute_sql", "arguments": {"sql": LONG}}})
        until(lambda: "running the model's SQL" in log.read_text(), "the model's SQL running in the ACP server")
        servers = psutil.Process(bridge.proc.pid).children(recursive=True)
        assert servers
        bridge.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})

        def idle() -> bool:
            before = sum(s.cpu_times().user + s.cpu_times().system for s in servers)
            threading.Event().wait(1.0)
            return sum(s.cpu_times().user + s.cpu_times().system for s in servers) - before < 0.05

        until(idle, "the ACP server idle after the cancel", tries=120)
        bridge.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "shop__execute_sql", "arguments": {"sql": "SELECT 1 AS one"}}})
        assert bridge.wait_for(lambda m: m.get("id") == 2)["result"]["isError"] is False
        assert not [m for m in bridge.seen if m.get("id") == 1]  # a cancelled request gets no answer
    finally:
        bridge.close()
    datasets = [p for p in (project / "acp-data").glob("*.csv")] if (project / "acp-data").exists() else []
    assert len(datasets) == 1  # only the SELECT 1 of the second call


# ----- acp_query, the bridge's own SQL tool (issue 28.3) -----
# The four acp_query tests share one bridge without sources (a bridge start, about 2.5 CPU-s, saved per
# test). Each has a dataset of its own in acp-data, its own request ids, and reads only the messages
# and log lines that arrived after it began.
RECURSIVE = ("WITH RECURSIVE c(x) AS (SELECT max(i) FROM {table} UNION ALL SELECT x + 1 FROM c WHERE x < 1e15) "
             "SELECT count(*) AS n FROM c")
TABLES = {"big_order": 300_000, "big_quiet": 1000, "big_stmt": 10_000, "big_load": 1_000_000}


def _write_dataset(data, name: str, rows: int) -> None:
    """acp-data/``name`` (i, s) of ``rows`` rows, as an extraction stores it."""
    with (data / f"{name}.csv").open("w", newline="") as handle:
        handle.write("i,s\r\n")
        handle.writelines(f"{i},r{i}\r\n" for i in range(rows))
    meta = {"id": name, "origin": "acp", "source": "shop", "acp": "databases", "tool": "execute_sql", "row_count": rows,
            "headers": [{"name": "i", "type": "integer"}, {"name": "s", "type": "string"}]}
    (data / f"{name}.meta.json").write_text(json.dumps(meta))


class Since:
    """What one test of the shared bridge sees: the messages and the log text that arrived after it began."""

    def __init__(self, shared) -> None:
        self.bridge, self.project, self._log = shared.bridge, shared.project, shared.log
        self._first = len(self.bridge.seen)
        self._offset = self._log.stat().st_size

    def seen(self) -> list[dict]:
        """The bridge's messages since this test began (a copy: the reader thread appends to ``seen``)."""
        return list(self.bridge.seen[self._first:])

    def log(self) -> str:
        """The bridge's log since this test began."""
        return self._log.read_bytes()[self._offset:].decode("utf-8", "replace")


@pytest.fixture(scope="module")
def query_bridge(tmp_path_factory, write_sources):
    """One bridge (no sources, DEBUG log) over a project whose acp-data holds the TABLES."""
    base = tmp_path_factory.mktemp("acp_query")
    project = base / "q"
    write_sources(project / "sources.json", {"sources": []})
    data = project / "acp-data"
    data.mkdir(parents=True)
    for name, rows in TABLES.items():
        _write_dataset(data, name, rows)
    log = base / "bridge.log"
    bridge = RawBridge(project, log, env={"ACP_BRIDGE_LOG": "DEBUG"})
    yield SimpleNamespace(bridge=bridge, project=project, log=log)
    bridge.close()


def _query(bridge: RawBridge, request_id: int, sql: str, token: str | None = None) -> None:
    params: dict = {"name": "acp_query", "arguments": {"sql": sql}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    bridge.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def _answer(bridge: RawBridge, request_id: int) -> dict:
    result = bridge.wait_for(lambda m: m.get("id") == request_id)["result"]
    assert result["isError"] is False, result
    return json.loads(result["content"][0]["text"])


def _leftovers(project) -> list[str]:
    """Everything in acp-data but the datasets and finished results: temp CSVs of a query that did not finish."""
    return sorted(p.name for p in (project / "acp-data").iterdir() if p.name.startswith("."))


def _csvs(project) -> set[str]:
    return {p.name for p in (project / "acp-data").glob("*.csv")}


def test_acp_query_reports_its_load_in_order_with_a_final_notification(query_bridge):
    rows = TABLES["big_order"]
    test = Since(query_bridge)
    bridge = test.bridge
    _query(bridge, 101, "SELECT count(*) AS n FROM big_order", token="q-1")
    assert _answer(bridge, 101)["rows"] == [{"n": rows}]
    seen = test.seen()
    progress = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert progress and all(p["progressToken"] == "q-1" for p in progress)
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values))  # strictly increasing (MCP)
    assert all(p["total"] == rows + 1 for p in progress)  # every row loaded, then the query itself
    assert progress[-1]["progress"] == rows + 1 and "1 result row" in progress[-1]["message"]
    answer_at = next(i for i, m in enumerate(seen) if m.get("id") == 101)
    assert all(i < answer_at for i, m in enumerate(seen) if m.get("method") == "notifications/progress")


def test_acp_query_without_a_token_sends_no_progress(query_bridge):
    test = Since(query_bridge)
    _query(test.bridge, 201, "SELECT count(*) AS n FROM big_quiet")
    assert _answer(test.bridge, 201)["rows"] == [{"n": TABLES["big_quiet"]}]
    assert not [m for m in test.seen() if m.get("method") == "notifications/progress"]


def test_a_cancelled_acp_query_statement_is_interrupted_and_the_bridge_keeps_answering(query_bridge, until):
    test = Since(query_bridge)
    bridge, project = test.bridge, test.project
    before = _csvs(project)
    _query(bridge, 301, RECURSIVE.format(table="big_stmt"))
    until(lambda: "acp_query: running the statement" in test.log(), "the recursive statement running")
    bridge.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 301}})
    until(lambda: "acp_query interrupted (cancelled)" in test.log(), "SQLite interrupted by the cancel")
    _query(bridge, 302, "SELECT count(*) AS n FROM big_stmt")
    assert _answer(bridge, 302)["rows"] == [{"n": TABLES["big_stmt"]}]
    assert not [m for m in bridge.seen if m.get("id") == 301]  # a cancelled request gets no answer
    after = _csvs(project)
    assert len(after - before) == 1 and "big_stmt.csv" in after  # the second query's result, nothing of the first
    assert _leftovers(project) == []
    # The activity record (issue 37.1) keeps the cancelled call, with no dataset, and the next one.
    record = project / "acp-data" / "activity.jsonl"

    def last_two() -> list[dict]:
        return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()][-2:] if record.exists() else []

    until(lambda: [e["arguments"]["sql"] for e in last_two()][-1:] == ["SELECT count(*) AS n FROM big_stmt"],
          "the answered query recorded")
    cancelled, answered = last_two()
    assert cancelled["outcome"] == "cancelled" and "datasets" not in cancelled and "big_stmt" in cancelled["arguments"]["sql"]
    assert answered["outcome"] == "ok" and answered["rows"] == 1 and len(answered["datasets"]) == 1


def test_a_cancelled_acp_query_load_leaves_no_partial_table_in_the_cache(query_bridge, until):
    rows = TABLES["big_load"]
    test = Since(query_bridge)
    bridge, project = test.bridge, test.project
    _query(bridge, 401, "SELECT count(*) AS n FROM big_load", token="load")
    first = bridge.wait_for(lambda m: m.get("method") == "notifications/progress"
                            and m["params"]["progressToken"] == "load")["params"]
    assert first["progress"] < rows  # the load is under way
    bridge.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 401}})
    until(lambda: "acp_query interrupted (cancelled) while loading «big_load»" in test.log(), "the load stopped")
    # A half-loaded table kept in the query cache would count fewer rows here.
    _query(bridge, 402, "SELECT count(*) AS n, max(i) AS top FROM big_load")
    assert _answer(bridge, 402)["rows"] == [{"n": rows, "top": rows - 1}]
    assert not [m for m in bridge.seen if m.get("id") == 401]
    assert test.log().count("acp_query: loading «big_load»") == 2  # loaded again: nothing was kept of the first
    assert _leftovers(project) == []
