"""Ctrl-C / SIGTERM to the bridge during an extraction (issue 15.2): it exits promptly, its ACP server
is stopped and cancels the query at the database, and no partial dataset is left in acp-data/.
A real bridge process and real signals; every wait is bounded and on an observable event."""

from __future__ import annotations

import signal
import sys
import threading
import uuid

import pytest
from analytics_acp.kit.wire import StdioWire, tool_call

sa = pytest.importorskip("sqlalchemy")
pytestmark = pytest.mark.services



@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_bridge_stops_mid_extraction(tmp_path, write_sources, until, signum):
    import socket

    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=1).close()
    except OSError:
        pytest.skip("PostgreSQL is not running on 127.0.0.1:5432")
    marker = f"acp_stop_{uuid.uuid4().hex[:8]}"
    project = tmp_path / "p"
    write_sources(project / "sources.json", {"sources": [{"id": "pg", "acp": "databases", "default_resource_id": "test",
        "credentials": {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "user": "postgres", "database": "test"}}]})
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    with admin.connect() as conn:
        since = conn.exec_driver_sql("SELECT now()").scalar()

    def running() -> bool:
        # The connector streams through a server-side cursor: while the query runs, pg_stat_activity shows
        # `FETCH FORWARD n FROM "c_..."`, not the SQL, so its backend is found by application_name and start.
        with admin.connect() as conn:
            return bool(conn.exec_driver_sql(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'analytics-acp-databases' "
                "AND backend_start >= %(t)s AND state = 'active' AND (query LIKE 'FETCH%%' OR query LIKE %(q)s)",
                {"t": since, "q": f"%{marker}%"}).scalar())

    log = tmp_path / "bridge.log"
    wire = StdioWire([sys.executable, "-m", "analytics_acp_bridge", "--project", str(project)], cwd=str(project),
                     stderr=log.open("w"))
    proc = wire.proc
    try:
        wire.initialize(plain=True)
        wire.send(tool_call(2, "pg__execute_sql", {"sql": f"SELECT pg_sleep(3600) AS {marker}"}))
        answers: list[str] = []  # an answer before the query is seen running means it failed: show it
        threading.Thread(target=lambda: answers.extend(proc.stdout), daemon=True).start()

        def seen_running() -> bool:
            assert not answers, (f"the call answered before its query was seen running: {answers[0][:500]}\n"
                                 f"bridge log: {log.read_text()[-2000:]}")
            return running()

        until(seen_running, "the extraction running at the database")
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == 128 + signum
        until(lambda: not running(), "the query cancelled at the database", tries=600)
        data = project / "acp-data"
        left = sorted(p.name for p in data.iterdir()) if data.exists() else []
        assert not [name for name in left if name.endswith((".csv", ".tmp", ".meta.json"))], left
    finally:
        wire.kill()
        admin.dispose()
