"""Ctrl-C / SIGTERM while a query runs, over HTTP (issue 15.2): `analytics-acp serve databases --http`
exits promptly with 128 + the signal and the query is cancelled at the database, as over stdio (uvicorn's
graceful shutdown would wait for the running request). Real processes, real signals; every wait is
bounded and on an observable event (the query seen running, the exit)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import uuid

import httpx
import pytest
import sqlalchemy as sa
from analytics_acp.kit.wire import INITIALIZED, initialize_request, tool_call, until

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LONG_SQLITE = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) "
               "SELECT count(*) AS {marker} FROM c")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class HttpServe:
    """`serve databases --http` in its own process; stderr (DEBUG) kept for the test to read."""

    def __init__(self, tmp_path):
        self.port = _free_port()
        self.log = tmp_path / "stderr.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "analytics_acp", "serve", "databases", "--http", "--port", str(self.port)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log.open("w"),
            env={**os.environ, "ANALYTICS_ACP_LOG_LEVEL": "DEBUG"})
        until(lambda: self.proc.poll() is not None or _listening(self.port), "the HTTP port listening")
        assert self.proc.poll() is None, self.log.read_text()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.client = httpx.Client(timeout=httpx.Timeout(10, read=None))

    def start_call(self, credentials: dict, sql: str, resource_id: str | None = None) -> None:
        """Handshake, then the execute_sql call in a thread (its answer never comes: the server is stopped)."""
        answer = self.client.post(self.url, headers=HEADERS, content=json.dumps(initialize_request(1)))
        assert answer.status_code == 200, answer.text
        headers = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        self.client.post(self.url, headers=headers, content=json.dumps(INITIALIZED))
        arguments = {"sql": sql, **({"resource_id": resource_id} if resource_id else {})}
        call = tool_call(2, "execute_sql", arguments, {"acp": {"credentials": credentials, "config": {"statement_timeout_s": 3600},
                                                               "autocontext_delivered": True}})

        def post() -> None:
            try:
                self.client.post(self.url, headers=headers, content=json.dumps(call))
            except httpx.HTTPError:  # the connection ends with the process
                pass

        threading.Thread(target=post, daemon=True).start()

    def stop(self, signum: int) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=30)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.client.close()


@pytest.fixture
def served(tmp_path):
    server = HttpServe(tmp_path)
    try:
        yield server
    finally:
        server.close()


@pytest.mark.services
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_http_postgresql_query_cancelled_on_stop(need, served, signum):
    need(5432, "PostgreSQL")
    psutil = pytest.importorskip("psutil")
    marker = f"acp_stop_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    seen: set[int] = set()

    def own_ports() -> list[int]:
        # This server's connections only: other servers (other tests) share the application_name.
        conns = psutil.Process(served.proc.pid).net_connections(kind="tcp")
        return [c.laddr.port for c in conns if c.raddr and c.raddr.port == 5432]

    def running() -> bool:
        # The connector streams through a server-side cursor: while the query runs, pg_stat_activity
        # shows `FETCH FORWARD ... FROM "c_..."`, not the SQL (or the DECLARE holding the marker).
        with admin.connect() as conn:
            pids = conn.exec_driver_sql(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'analytics-acp-databases' "
                "AND state = 'active' AND client_port = ANY(%(ports)s) AND (query LIKE 'FETCH%%' OR query LIKE %(m)s)",
                {"ports": own_ports(), "m": f"%{marker}%"}).scalars().all()
        seen.update(pids)
        return bool(pids)

    def still_active() -> bool:
        with admin.connect() as conn:
            return bool(conn.exec_driver_sql(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%(pids)s) AND state = 'active'",
                {"pids": sorted(seen)}).scalar())

    creds = {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "user": "postgres", "database": "test"}
    try:
        served.start_call(creds, f"SELECT pg_sleep(3600) AS {marker}", "test")
        until(running, "the query running at the database")
        assert served.stop(signum) == 128 + signum
        until(lambda: not still_active(), "the query cancelled at the database")
    finally:
        if seen:  # a failed run must not leave its query running on the shared server
            with admin.connect() as conn:
                conn.exec_driver_sql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = ANY(%(p)s)",
                                     {"p": sorted(seen)})
        admin.dispose()


def test_http_sqlite_query_stops_promptly(served, tmp_path):
    db = tmp_path / "a.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
    served.start_call({"type": "sqlite", "path": str(db)}, LONG_SQLITE.format(marker="acp_stop"))
    until(lambda: "running the model's SQL" in served.log.read_text(), "the query running")
    assert served.stop(signal.SIGINT) == 128 + signal.SIGINT
    assert "cancelled 1 query in flight" in served.log.read_text()
