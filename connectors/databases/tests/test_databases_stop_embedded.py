"""Ctrl-C / SIGTERM while a SQLite or DuckDB query runs (issue 15.2): `analytics-acp serve databases`
interrupts the query (``interrupt()`` on the connection, from the stop handler) and exits promptly with
128 + the signal. Real processes, real signals; every wait is bounded and on an observable event (the
connector's DEBUG line when the model's SQL starts, the exit)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest
from analytics_acp.kit.wire import until

# Hours of work for either engine: only the stop can end them within the test's bounds.
LONG = {
    "sqlite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) AS n FROM c",
    "duckdb": "SELECT count(*) AS n FROM range(1000000000000) AS t(x) WHERE hash(x) % 7 = 3",
}


def _database(kind: str, tmp_path) -> str:
    path = tmp_path / f"shop.{kind}"
    if kind == "sqlite":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE t (x INTEGER)")
    else:
        import duckdb

        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE t (x INTEGER)")
        con.close()
    return str(path)


def _start_call(proc, credentials: dict, sql: str) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"},
        "capabilities": {"experimental": {"acp": {"version": "1.0"}}}}}
    proc.stdin.write(json.dumps(init) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "execute_sql", "arguments": {"sql": sql},
        "_meta": {"acp": {"credentials": credentials, "config": {"statement_timeout_s": 3600}, "autocontext_delivered": True}}}}
    proc.stdin.write(json.dumps(call) + "\n")
    proc.stdin.flush()


@pytest.mark.parametrize(("kind", "signum"), [("sqlite", signal.SIGINT), ("sqlite", signal.SIGTERM), ("duckdb", signal.SIGINT)],
                         ids=["sqlite-SIGINT", "sqlite-SIGTERM", "duckdb-SIGINT"])
def test_embedded_query_interrupted_on_stop(tmp_path, kind, signum):
    if kind == "duckdb":
        pytest.importorskip("duckdb")
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "analytics_acp", "serve", "databases"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=stderr, text=True,
                                env={**os.environ, "ANALYTICS_ACP_LOG_LEVEL": "DEBUG"})
    try:
        _start_call(proc, {"type": kind, "path": _database(kind, tmp_path)}, LONG[kind])
        until(lambda: "running the model's SQL" in log.read_text(), "the query running")
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == 128 + signum
        assert "cancelled 1 query in flight" in log.read_text()  # interrupt() reached the running query
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
