"""The bridge passes progress and cancellation through (issue 28.3): a client's progressToken on
``<source>__<tool>`` gets the ACP server's progress under that token, in order; a client's
notifications/cancelled cancels the forwarded call at the ACP server (its statement stops), the request
gets no answer and no dataset appears in acp-data/. Raw JSON-RPC over stdio, as an MCP client speaks;
every wait bounded and on an observable event (the server's DEBUG line, its CPU going idle)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading

import psutil

LONG = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e15) SELECT count(*) AS n FROM c"


class RawBridge:
    def __init__(self, project, log) -> None:
        env = {**os.environ, "ANALYTICS_ACP_LOG_LEVEL": "DEBUG"}
        self.proc = subprocess.Popen([sys.executable, "-m", "analytics_acp_bridge", "--project", str(project)], cwd=project,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log.open("w"), text=True, env=env)
        self.seen: list[dict] = []
        self._arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"}, "capabilities": {}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.wait_for(lambda m: m.get("id") == 0)

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self._arrived:
                self.seen.append(json.loads(line))
                self._arrived.notify_all()

    def send(self, *messages: dict) -> None:
        self.proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        self.proc.stdin.flush()

    def wait_for(self, match, timeout: float = 180) -> dict:
        with self._arrived:
            found = self._arrived.wait_for(lambda: next((m for m in self.seen if match(m)), None), timeout)
        assert found, "never arrived"
        return found

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


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
