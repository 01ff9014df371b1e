"""Ctrl-C / SIGTERM while a query runs (issue 15.2): `analytics-acp serve databases` exits promptly and
the query is cancelled at the database (PostgreSQL cancel, MariaDB KILL QUERY). Real processes, real
signals; every wait is bounded and on an observable event (the query seen running, the exit)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import uuid

import pytest
import sqlalchemy as sa
from dbactivity import pg_extraction_running

pytestmark = pytest.mark.services


def _serve():
    return subprocess.Popen([sys.executable, "-m", "analytics_acp", "serve", "databases"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _start_call(proc, credentials: dict, sql: str, config: dict | None = None) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"},
        "capabilities": {"experimental": {"acp": {"version": "1.0"}}}}}
    proc.stdin.write(json.dumps(init) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "execute_sql", "arguments": {"sql": sql, "resource_id": "test"}, "_meta": {"acp": {"credentials": credentials, **({"config": config} if config else {})}}}}
    proc.stdin.write(json.dumps(call) + "\n")
    proc.stdin.flush()


def _until(check, what: str, tries: int = 2400) -> None:
    """Bounded wait for an observable condition (not a timed assertion; generous, CI runs under load)."""
    for _ in range(tries):
        if check():
            return
        threading.Event().wait(0.05)
    raise AssertionError(f"never happened: {what}")


def _stop_while_running(signum, credentials, sql, running) -> None:
    proc = _serve()
    try:
        _start_call(proc, credentials, sql)
        answers: list[str] = []  # an answer before the query is seen running means it failed: show it
        threading.Thread(target=lambda: answers.extend(proc.stdout), daemon=True).start()

        def seen_running() -> bool:
            assert not answers, f"the call answered before its query was seen running: {answers[0][:500]}"
            return running()

        _until(seen_running, "the query running at the database")
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == 128 + signum
        _until(lambda: not running(), "the query cancelled at the database", tries=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


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
    proc = _serve()
    try:
        # An hour's statement timeout: only the server noticing its client gone can end the query in the wait below.
        _start_call(proc, creds, f"SELECT pg_sleep(3600) AS {marker}",
                    {"statement_timeout_s": 3600})
        _until(lambda: pg_extraction_running(admin, since, marker, fetch_only=True), "the long FETCH running")
        proc.kill()
        proc.wait(timeout=30)
        _until(lambda: not pg_extraction_running(admin, since, marker), "the query ended at the database", tries=200)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        admin.dispose()


def test_mariadb_query_killed_on_stop(need):
    need(3306, "MariaDB")
    marker = f"acp_stop_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine("mysql+pymysql://root@127.0.0.1:3306/test")

    def running() -> bool:
        with admin.connect() as conn:
            return bool(conn.exec_driver_sql(
                "SELECT count(*) FROM information_schema.processlist WHERE info LIKE %s AND command = 'Query' "
                "AND id <> CONNECTION_ID()", (f"%{marker}%",)).scalar())

    creds = {"type": "server", "dialect": "mariadb", "host": "127.0.0.1", "user": "root", "database": "test"}
    try:
        _stop_while_running(signal.SIGINT, creds, f"SELECT SLEEP(120) AS {marker}", running)
    finally:
        admin.dispose()
