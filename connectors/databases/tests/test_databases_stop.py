"""Ctrl-C / SIGTERM while a query runs (issue 15.2): `analytics-acp serve databases` exits promptly and
the query is cancelled at the database (PostgreSQL cancel, MariaDB KILL QUERY). Real processes, real
signals; every wait is bounded and on an observable event (the query seen running, the exit)."""

from __future__ import annotations

import signal
import sys
import threading
import uuid

import pytest
import sqlalchemy as sa
from analytics_acp.kit.wire import StdioWire, tool_call, until
from dbactivity import mariadb_query_running, pg_extraction_running

pytestmark = pytest.mark.services


def _serve() -> StdioWire:
    return StdioWire([sys.executable, "-m", "analytics_acp", "serve", "databases"])


def _start_call(wire: StdioWire, credentials: dict, sql: str, config: dict | None = None) -> None:
    wire.initialize()
    acp = {"credentials": credentials, **({"config": config} if config else {})}
    wire.send(tool_call(2, "execute_sql", {"sql": sql, "resource_id": "test"}, {"acp": acp}))


def _stop_while_running(signum, credentials, sql, running) -> None:
    wire = _serve()
    proc = wire.proc
    try:
        _start_call(wire, credentials, sql)
        answers: list[str] = []  # an answer before the query is seen running means it failed: show it
        threading.Thread(target=lambda: answers.extend(proc.stdout), daemon=True).start()

        def seen_running() -> bool:
            assert not answers, f"the call answered before its query was seen running: {answers[0][:500]}"
            return running()

        until(seen_running, "the query running at the database", tries=2400)
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == 128 + signum
        until(lambda: not running(), "the query cancelled at the database", tries=600)
    finally:
        wire.kill()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_postgresql_query_cancelled_on_stop(need, signum):
    need(5432, "PostgreSQL")
    marker = f"acp_stop_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    with admin.connect() as conn:
        since = conn.exec_driver_sql("SELECT now()").scalar()

    creds = {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "user": "postgres", "database": "test"}
    try:
        _stop_while_running(signum, creds, f"SELECT pg_sleep(3600) AS {marker}",
                            lambda: pg_extraction_running(admin, since, marker))
    finally:
        admin.dispose()


def test_postgresql_query_ends_when_the_server_is_killed(need):
    """Issue 38.8: the cancel at the database must not depend on winning a race with the process's exit. A
    server killed outright (no handler runs: the host's bound, the OOM killer; or a stop whose cancel landed
    between the DECLARE and the long FETCH) leaves no query running: PostgreSQL ends it once it sees the
    client gone, long before its 60 s statement timeout."""
    need(5432, "PostgreSQL")
    marker = f"acp_kill_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    with admin.connect() as conn:
        since = conn.exec_driver_sql("SELECT now()").scalar()
    creds = {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "user": "postgres", "database": "test"}
    wire = _serve()
    proc = wire.proc
    try:
        # An hour's statement timeout: only the server noticing its client gone can end the query in the wait below.
        _start_call(wire, creds, f"SELECT pg_sleep(3600) AS {marker}",
                    {"statement_timeout_s": 3600})
        until(lambda: pg_extraction_running(admin, since, marker, fetch_only=True), "the long FETCH running", tries=2400)
        proc.kill()
        proc.wait(timeout=30)
        until(lambda: not pg_extraction_running(admin, since, marker), "the query ended at the database", tries=200)
    finally:
        wire.kill()
        admin.dispose()


def test_mariadb_query_killed_on_stop(need):
    need(3306, "MariaDB")
    marker = f"acp_stop_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine("mysql+pymysql://root@127.0.0.1:3306/test")

    def running() -> bool:
        return mariadb_query_running(admin, marker)

    creds = {"type": "server", "dialect": "mariadb", "host": "127.0.0.1", "user": "root", "database": "test"}
    try:
        _stop_while_running(signal.SIGINT, creds, f"SELECT SLEEP(120) AS {marker}", running)
    finally:
        admin.dispose()
