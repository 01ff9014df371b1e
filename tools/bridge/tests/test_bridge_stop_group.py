"""Ctrl-C in the terminal that runs the bridge (issue 15.2) while a SQLite extraction runs: the terminal
sends SIGINT to the whole foreground process group, not to one pid. The bridge exits promptly with
128 + SIGINT, its ACP server (started in its own session, so the terminal's signal does not reach it)
is stopped by the bridge, and nothing is left behind: no partial dataset in acp-data/, no temp folder
of the bridge or of its server. Real processes and signals; every wait is bounded and on an observable
event (the connector's DEBUG line when the model's SQL starts, the exit)."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading

import psutil
from analytics_acp.kit.wire import StdioWire, tool_call

# Hours of work for SQLite: only the stop can end it within the test's bounds.
LONG = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) AS n FROM c"



def test_ctrl_c_to_the_bridges_process_group_mid_sqlite_extraction(tmp_path, write_sources, until):
    db = tmp_path / "shop.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
    project = tmp_path / "p"
    write_sources(project / "sources.json", {"sources": [
        {"id": "shop", "acp": "databases", "credentials": {"type": "sqlite", "path": str(db)}}]})
    temp = tmp_path / "tmp"  # TMPDIR of the bridge and (inherited) of its server
    temp.mkdir()
    log = tmp_path / "bridge.log"
    env = {**os.environ, "TMPDIR": str(temp), "ANALYTICS_ACP_LOG_LEVEL": "DEBUG"}
    wire = StdioWire([sys.executable, "-m", "analytics_acp_bridge", "--project", str(project)], cwd=str(project),
                     stderr=log.open("w"), env=env,
                     start_new_session=True)  # its own process group, as a shell gives a foreground job
    proc = wire.proc
    try:
        wire.initialize(plain=True)
        wire.send(tool_call(2, "shop__execute_sql", {"sql": LONG}))
        answers: list[str] = []  # an answer before the query is seen running means it failed: show it
        threading.Thread(target=lambda: answers.extend(proc.stdout), daemon=True).start()

        def running() -> bool:
            assert not answers, f"answered before the query ran: {answers[0][:500]}\nlog: {log.read_text()[-2000:]}"
            return "running the model's SQL" in log.read_text()

        until(running, "the model's SQL running in the bridge's server")
        servers = psutil.Process(proc.pid).children(recursive=True)
        assert servers and list(temp.iterdir())  # a server runs; temp folders exist
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        assert proc.wait(timeout=30) == 128 + signal.SIGINT
        gone, alive = psutil.wait_procs(servers, timeout=30)
        assert not alive, [p.pid for p in alive]
        data = project / "acp-data"
        left = sorted(p.name for p in data.iterdir()) if data.exists() else []
        assert not [name for name in left if name.endswith((".csv", ".tmp", ".meta.json"))], left
        assert not list(temp.iterdir()), sorted(p.name for p in temp.iterdir())  # bridge's and server's temp dirs
        assert not answers  # no answer (least of all a partial table) went out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
