"""Ctrl-C / SIGTERM while a SQLite or DuckDB query runs (issue 15.2): `analytics-acp serve databases`
interrupts the query (``interrupt()`` on the connection, from the stop handler) and exits promptly with
128 + the signal. Real processes, real signals; every wait is bounded and on an observable event (the
connector's DEBUG line when the model's SQL starts, the exit)."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys

import pytest
from analytics_acp.kit.wire import StdioWire, tool_call, until

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


@pytest.mark.parametrize(("kind", "signum"), [("sqlite", signal.SIGINT), ("sqlite", signal.SIGTERM), ("duckdb", signal.SIGINT)],
                         ids=["sqlite-SIGINT", "sqlite-SIGTERM", "duckdb-SIGINT"])
def test_embedded_query_interrupted_on_stop(tmp_path, kind, signum):
    if kind == "duckdb":
        pytest.importorskip("duckdb")
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        wire = StdioWire([sys.executable, "-m", "analytics_acp", "serve", "databases"], stderr=stderr,
                         env={**os.environ, "ANALYTICS_ACP_LOG_LEVEL": "DEBUG"})
    proc = wire.proc
    try:
        wire.initialize()
        wire.send(tool_call(2, "execute_sql", {"sql": LONG[kind]}, {"acp": {
            "credentials": {"type": kind, "path": _database(kind, tmp_path)}, "config": {"statement_timeout_s": 3600},
            "autocontext_delivered": True}}))
        until(lambda: "running the model's SQL" in log.read_text(), "the query running")
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == 128 + signum
        assert "cancelled 1 query in flight" in log.read_text()  # interrupt() reached the running query
    finally:
        wire.kill()
