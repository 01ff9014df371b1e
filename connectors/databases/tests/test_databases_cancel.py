"""notifications/cancelled stops execute_sql at the database, progress counts rows (issue 28, databases).
Real processes over raw stdio; every wait is bounded and on an observable event (the query seen running
at the database, the server's CPU going idle), never a timed assertion."""

from __future__ import annotations

import sqlite3
import sys
import threading
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from analytics_acp.kit.wire import StdioWire, tool_call, until
from dbactivity import mariadb_query_running, pg_extraction_running

FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e15) SELECT count(*) AS n FROM c"


class Wire(StdioWire):
    """``analytics-acp serve databases`` spoken to line by line, initialized; answers are read by a thread."""

    def __init__(self) -> None:
        super().__init__([sys.executable, "-m", "analytics_acp", "serve", "databases"], read_ahead=True)
        self.initialize(0)

    def call(self, request_id, credentials: dict, sql: str, token=None) -> None:
        meta: dict = {"acp": {"credentials": credentials}}
        if token is not None:
            meta["progressToken"] = token
        self.send(tool_call(request_id, "execute_sql", {"sql": sql}, meta))


def idle(wire: Wire) -> bool:
    """True once the server's CPU time has not moved for a second."""
    last = wire.cpu_ticks()
    for _ in range(10):
        threading.Event().wait(0.1)
        if wire.cpu_ticks() != last:
            return False
    return True


def _cancel_and_go_on(wire: Wire, credentials: dict, stopped) -> None:
    wire.cancel(7)
    until(stopped, "the statement stopped after notifications/cancelled", every_s=0.1)
    wire.call(8, credentials, "SELECT 1 AS one")
    answer = wire.wait_for(lambda m: m.get("id") == 8)
    assert answer["result"]["isError"] is False  # the session keeps working
    assert not [m for m in wire.seen if m.get("id") == 7]  # a cancelled request gets no answer


def test_a_cancelled_sqlite_query_is_interrupted(tmp_path: Path):
    db = tmp_path / "one.sqlite"
    sqlite3.connect(db).close()
    credentials = {"type": "sqlite", "path": str(db)}
    wire = Wire()
    try:
        wire.call(7, credentials, FOREVER)
        until(lambda: not idle(wire), "the query burning CPU", every_s=0.1)
        _cancel_and_go_on(wire, credentials, lambda: idle(wire))
    finally:
        wire.close()


def test_progress_counts_the_rows_streamed(tmp_path: Path):
    db = tmp_path / "rows.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (i INTEGER, s TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", ((i, f"r{i}") for i in range(120_000)))
    wire = Wire()
    try:
        wire.call(1, {"type": "sqlite", "path": str(db)}, "SELECT i, s FROM t", token="rows")
        answer = wire.wait_for(lambda m: m.get("id") == 1)
    finally:
        wire.close()
    assert answer["result"]["isError"] is False
    progress = [m["params"] for m in wire.seen if m.get("method") == "notifications/progress"]
    assert progress and all(p["progressToken"] == "rows" and "total" not in p for p in progress)
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values)) and values[-1] == 120_000 and progress[-1]["message"] == "120000 rows"


@pytest.mark.services
def test_a_cancelled_postgresql_query_is_cancelled_at_the_database(need):
    need(5432, "PostgreSQL")
    marker = f"acp_cancel_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    with admin.connect() as conn:
        since = conn.exec_driver_sql("SELECT now()").scalar()
    credentials = {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "user": "postgres", "database": "test"}
    wire = Wire()
    try:
        wire.call(7, credentials, f"SELECT pg_sleep(3600) AS {marker}")
        until(lambda: pg_extraction_running(admin, since, marker), "the query running at PostgreSQL", tries=1200, every_s=0.1)
        _cancel_and_go_on(wire, credentials, lambda: not pg_extraction_running(admin, since, marker))
    finally:
        wire.close()
        admin.dispose()


@pytest.mark.services
def test_a_cancelled_mariadb_query_is_killed(need):
    need(3306, "MariaDB")
    marker = f"acp_cancel_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine("mysql+pymysql://root@127.0.0.1:3306/test")

    def running() -> bool:
        return mariadb_query_running(admin, marker)

    credentials = {"type": "server", "dialect": "mariadb", "host": "127.0.0.1", "user": "root", "database": "test"}
    wire = Wire()
    try:
        wire.call(7, credentials, f"SELECT SLEEP(600) AS {marker}")
        until(running, "the query running at MariaDB", tries=1200, every_s=0.1)
        _cancel_and_go_on(wire, credentials, lambda: not running())
    finally:
        wire.close()
        admin.dispose()
