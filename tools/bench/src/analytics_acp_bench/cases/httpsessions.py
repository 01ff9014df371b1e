"""Case 4b: 50 concurrent Streamable HTTP sessions, each with its own SQLite credentials, 20 small calls each.

Ours: ``analytics-acp serve databases --http``; every session is an ACP host (``AcpClient.http``)
that sends ``acp/configure`` with its own ``{"type": "sqlite", "path": ...}`` credentials and a
default resource, then calls ``execute_sql`` 20 times. Baseline: a bare SDK low-level HTTP server
(fixtures/bare_http_server.py) whose one tool opens the session's SQLite file and runs the same
query per call. Both servers run for the whole case; each round opens 50 fresh sessions per side
(untimed), then all sessions call at once; every call is timed from request to answer.

One round of work gives three numbers per side: p50 and p99 of the 1,000 call latencies and the
wall time of the call phase (1,000 / throughput). The p50 case runs the rounds; the p99 and wall
cases replay the numbers recorded by the same rounds (no second workload).

Floor (issue 39.2): a third server, fixtures/floor_http_server.py, is the bare one plus the per-call steps ACP
cannot skip (the query off the event loop, the guard's SQL parse, typed rows, the three-part result of the same
size; its docstring lists them). Its round runs right after the bare one in every round of the p50 case; the
three floor cases compare ours with it on the same numbers (target: within 10%).

Checks beside the timing: every call's rows are the 10 ids asked for, and once per session a
``MAX(id)`` query proves the session reads its own database (they differ in size by design).
"""

from __future__ import annotations

import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import orjson

from ..fixtures.benchdb import TABLE, create_bench_db
from ..runner import Case

QUERY = "SELECT id, channel, day, amount, qty, note FROM items WHERE id > {k} ORDER BY id LIMIT 10"
BARE = [sys.executable, "-m", "analytics_acp_bench.fixtures.bare_http_server"]
FLOOR = [sys.executable, "-m", "analytics_acp_bench.fixtures.floor_http_server"]
OURS = [sys.executable, "-m", "analytics_acp", "serve", "databases", "--http", "--port"]
BASE_ROWS = 500  # session s has BASE_ROWS + s rows


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server did not listen on {port} within {timeout} s")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


class HttpSessions:
    """Both servers, the per-session databases and the numbers recorded per round."""

    def __init__(self, sessions: int, calls: int):
        self.sessions, self.calls = sessions, calls
        self.procs: list[subprocess.Popen] = []
        self.recorded: dict[str, list[dict[str, float]]] = {"ours": [], "bare": [], "floor": []}
        self.replay: dict[tuple[str, str, str], int] = {}
        self.facts: dict[str, Any] = {"sessions": sessions, "calls_per_session": calls}
        self.checked_calls = 0
        self.own_db_checked = 0

    def setup(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="acp-bench-http-"))
        self.dbs = [create_bench_db(self.tmp / f"s{s}.sqlite", BASE_ROWS + s) for s in range(self.sessions)]
        self.ports = {"ours": _free_port(), "bare": _free_port(), "floor": _free_port()}
        log = open(self.tmp / "servers.log", "w")  # noqa: SIM115 - closed with the processes' folder
        commands = {"ours": OURS, "bare": BARE, "floor": FLOOR}
        for side, cmd in ((side, [*command, str(self.ports[side])]) for side, command in commands.items()):
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, cwd=self.tmp)
            self.procs.append(proc)
            _wait_port(self.ports[side], proc)
        # A small untimed round per side: lazy imports (SQLAlchemy, sqlglot) are cold-start cost (case 4).
        full = self.sessions, self.calls
        self.sessions, self.calls = min(2, self.sessions), 1
        try:
            for side in commands:
                self.round(side, record=False)
        finally:
            self.sessions, self.calls = full

    def url(self, side: str) -> str:
        return f"http://127.0.0.1:{self.ports[side]}/mcp"

    # -- one round -------------------------------------------------------------------------
    def round(self, side: str, record: bool = True) -> dict[str, float]:
        latencies, wall = anyio.run(self._round, side)
        stats = {"p50": _percentile(latencies, 0.50), "p99": _percentile(latencies, 0.99), "wall": wall}
        if record:
            self.recorded[side].append(stats)
        return stats

    async def _round(self, side: str) -> tuple[list[float], float]:
        latencies: list[float] = []
        ready = anyio.Event()
        opened = [0]
        started: list[float] = []
        async def one(s: int) -> None:
            if side == "ours":
                await self._ours_session(s, ready, opened, latencies)
            else:
                await self._bare_session(s, ready, opened, latencies, side)

        async with anyio.create_task_group() as tg:
            for s in range(self.sessions):
                tg.start_soon(one, s)
            while opened[0] < self.sessions:
                await anyio.sleep(0.005)
            started.append(time.perf_counter())
            ready.set()
        return latencies, time.perf_counter() - started[0]

    async def _ours_session(self, s: int, ready: anyio.Event, opened: list[int], latencies: list[float]) -> None:
        from analytics_acp.host import AcpClient

        async with AcpClient.http(self.url("ours")) as client:
            await client.configure(credentials={"type": "sqlite", "path": str(self.dbs[s])},
                                   default_resource_id=self.dbs[s].stem)
            first = await client.call_tool("execute_sql", {"sql": f"SELECT MAX(id) AS m FROM {TABLE}"})
            self._check_own_db(s, first.model_response["rows"][0], first.text)
            opened[0] += 1
            await ready.wait()
            for i in range(self.calls):
                k = (s * 7 + i * 13) % BASE_ROWS
                t0 = time.perf_counter()
                res = await client.call_tool("execute_sql", {"sql": QUERY.format(k=k)})
                latencies.append(time.perf_counter() - t0)
                if res.is_error:
                    raise RuntimeError(f"execute_sql failed: {res.text[:300]}")
                self._check_rows(k, res.model_response["rows"])

    async def _bare_session(self, s: int, ready: anyio.Event, opened: list[int], latencies: list[float],
                            side: str = "bare") -> None:
        from analytics_acp import sdk_private  # the SDK's private names have one home (issue 27.3)
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        db = str(self.dbs[s])
        def rows(res: Any) -> list[Any]:  # bare: the rows as JSON; floor: the model's JSON, rows inside
            loaded = orjson.loads(res.content[0].text)
            return loaded if side == "bare" else loaded["rows"]

        async with sdk_private.mcp_http_client(None) as http, streamable_http_client(self.url(side), http_client=http) as (
            read, write), ClientSession(read, write) as session:
            await session.initialize()
            first = await session.call_tool("query", {"db": db, "sql": f"SELECT MAX(id) AS m FROM {TABLE}"})
            self._check_own_db(s, rows(first)[0], first.content[0].text)  # type: ignore[union-attr]
            opened[0] += 1
            await ready.wait()
            for i in range(self.calls):
                k = (s * 7 + i * 13) % BASE_ROWS
                t0 = time.perf_counter()
                res = await session.call_tool("query", {"db": db, "sql": QUERY.format(k=k)})
                latencies.append(time.perf_counter() - t0)
                if res.is_error:
                    raise RuntimeError(f"{side} query failed: {res.content}")
                self._check_rows(k, rows(res))

    def _check_own_db(self, s: int, row: Any, text: str) -> None:
        value = row["m"] if isinstance(row, dict) else row[0]
        if value != BASE_ROWS + s:
            raise RuntimeError(f"session {s} read another database: MAX(id)={value!r} ({text[:200]})")
        self.own_db_checked += 1

    def _check_rows(self, k: int, rows: list[Any]) -> None:
        ids = [r["id"] if isinstance(r, dict) else r[0] for r in rows]
        if ids != list(range(k + 1, k + 11)):
            raise RuntimeError(f"wrong rows for id > {k}: {ids}")
        self.checked_calls += 1

    # -- what the three cases call -----------------------------------------------------------
    def run_p50(self, side: str) -> float:
        p50 = self.round(side)["p50"]
        if side == "bare":
            self.round("floor")  # in the same round, right after the bare one; the floor cases read it
        return p50

    def replayed(self, case: str, metric: str, side: str) -> float:
        i = self.replay.get((case, metric, side), 0)
        self.replay[(case, metric, side)] = i + 1
        return self.recorded[side][i][metric]

    def extra(self) -> dict[str, Any]:
        facts = dict(self.facts)
        total = self.sessions * self.calls
        for side in ("ours", "bare", "floor"):
            walls = [r["wall"] for r in self.recorded[side]]
            if walls:
                facts[f"{side}_calls_per_s"] = round(total / statistics.median(walls), 1)
        facts["calls_checked"] = self.checked_calls
        facts["own_database_checked_sessions"] = self.own_db_checked
        return facts

    def teardown(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def cases(quick: bool) -> list[Case]:
    """p50 (runs the rounds), p99 and wall (replay the same rounds), then the same three against the floor; 3 x 3
    with quick."""
    sessions, calls = (3, 3) if quick else (50, 20)
    s = HttpSessions(sessions, calls)
    what = f"{sessions} HTTP sessions x {calls} execute_sql"
    ours_label = "analytics-acp serve databases --http (ACP host per session)"
    labels: dict[str, Any] = dict(ours_label=ours_label,
                                  baseline_label="bare mcp SDK HTTP server, same SQLite query per call")
    floor: dict[str, Any] = dict(ours_label=ours_label, baseline_label="floor: the bare server plus the steps ACP cannot "
                                 "skip (query off the loop, guard parse, typed rows, same-size three-part result)")
    within: dict[str, Any] = dict(target="<= 1.1 (within 10% of the floor)", target_value=1.1)
    return [
        Case(key="http_sessions_p50", title=f"4b. {what}, p50 latency", target="<= 1.5", target_value=1.5,
             ours=lambda: s.run_p50("ours"), baseline=lambda: s.run_p50("bare"), setup=s.setup,
             **labels),
        Case(key="http_sessions_p99", title=f"4b. {what}, p99 latency (same rounds)", target="<= 1.5",
             target_value=1.5, ours=lambda: s.replayed("p99", "p99", "ours"),
             baseline=lambda: s.replayed("p99", "p99", "bare"), **labels),
        Case(key="http_sessions_wall", title=f"4b. {what}, wall = 1/throughput (same rounds)",
             target="<= 1.5 (throughput >= 0.67x)", target_value=1.5, ours=lambda: s.replayed("wall", "wall", "ours"),
             baseline=lambda: s.replayed("wall", "wall", "bare"), extra=s.extra, **labels),
        Case(key="http_sessions_floor_p50", title=f"4b floor. {what}, p50 latency against the floor (same rounds)",
             ours=lambda: s.replayed("floor", "p50", "ours"), baseline=lambda: s.replayed("floor", "p50", "floor"),
             **within, **floor),
        Case(key="http_sessions_floor_p99", title=f"4b floor. {what}, p99 latency against the floor (same rounds)",
             ours=lambda: s.replayed("floor", "p99", "ours"), baseline=lambda: s.replayed("floor", "p99", "floor"),
             **within, **floor),
        Case(key="http_sessions_floor_wall", title=f"4b floor. {what}, wall against the floor (same rounds)",
             ours=lambda: s.replayed("floor", "wall", "ours"), baseline=lambda: s.replayed("floor", "wall", "floor"),
             teardown=s.teardown, extra=s.extra, **within, **floor),
    ]
