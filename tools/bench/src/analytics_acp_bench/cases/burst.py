"""Case 11 (issue 38.6): peak RSS of one stdio server under a burst from a client that reads nothing for a while.

10,000 ``tools/call`` of 1,000 rows each (25 shown; the whole table inline in ``_meta.acp.system_data``)
are written to one server's stdin, as fast as the pipe takes them, while stdout is not read until the
server has done all it can (its CPU time stops moving). Then the client reads every answer, writing what
the server did not take yet, and checks that each answer carries its 1,000-row table. The figure is the
server process's VmHWM (the kernel's peak resident set). The calls-in-progress cap keeps it bounded: the
server stops reading stdin at the cap, so the pipe (and the client) hold the waiting calls, not the
server's memory. "Before" is the same run on main at 06c9b4b (no cap), kept here as a figure (the issue
measured 3.98 GiB with its own client; this one keeps the tables inline whatever their size).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from ..runner import Case

SERVER = [sys.executable, "-m", "analytics_acp", "serve", "analytics_acp_bench.fixtures.rows_connector"]
LIMIT_MIB = 400  # issue 38.6's target
BEFORE_COMMIT, BEFORE_MIB = "06c9b4b", 4991.2  # measured with this case on main, 2026-12-06 (no cap)
STILL_S = 1.0  # the server has done all it can once its CPU time stops moving for this long (0.3 s quick)
SILENT_MAX_S = 600.0  # bound on the silent phase
ANSWERS_MAX_S = 900.0  # bound on reading every answer


def _requests(calls: int, rows: int) -> list[bytes]:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "clientInfo": {"name": "bench", "version": "1"},
        "capabilities": {"experimental": {"acp": {"version": "1.0", "stores_system_data": True}}}}}
    lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "rows", "arguments": {"n": rows}, "_meta": {"acp": {"row_limit": 25, "inline_max_bytes": 50_000_000}}}}
        for i in range(1, calls + 1)]
    return [orjson.dumps(m) + b"\n" for m in lines]


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _vm_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmHWM in /proc/<pid>/status")


class _Writer:
    """The requests still to write, written non-blocking as the server's stdin pipe takes them."""

    def __init__(self, fd: int, lines: list[bytes]):
        self.fd, self.data, self.sent = fd, memoryview(b"".join(lines)), 0
        os.set_blocking(fd, False)

    @property
    def done(self) -> bool:
        return self.sent >= len(self.data)

    def push(self) -> None:
        while not self.done:
            try:
                self.sent += os.write(self.fd, self.data[self.sent:self.sent + (1 << 16)])
            except BlockingIOError:
                return


def run_burst(calls: int, rows: int, env: dict[str, str] | None = None, still_s: float = STILL_S) -> dict[str, Any]:
    """Run one burst; the facts: the server's VmHWM, answers with their whole table, phases' seconds."""
    began = time.perf_counter()
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})})
    assert proc.stdin is not None and proc.stdout is not None
    try:
        writer = _Writer(proc.stdin.fileno(), _requests(calls, rows))
        still_since, last, deadline = time.monotonic(), -1, time.monotonic() + SILENT_MAX_S
        while time.monotonic() < deadline:  # silent phase: stdout is never read
            writer.push()
            now = _cpu_ticks(proc.pid)
            if now != last:
                still_since, last = time.monotonic(), now
            elif time.monotonic() - still_since >= still_s and last > 0:
                break
            time.sleep(0.05)
        silent_s = time.perf_counter() - began
        written_when_stuck = writer.sent
        whole = _read_answers(proc, writer, calls, rows)
        hwm, cpu_s = _vm_hwm_mib(proc.pid), _cpu_ticks(proc.pid) / os.sysconf("SC_CLK_TCK")
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return {"calls": calls, "rows": rows, "server_vm_hwm_mib": hwm, "answers_with_whole_table": whole,
            "request_bytes": len(writer.data), "request_bytes_taken_while_silent": written_when_stuck,
            "server_cpu_s": round(cpu_s, 1), "silent_phase_s": round(silent_s, 1), "total_s": round(time.perf_counter() - began, 1)}


def _read_answers(proc: subprocess.Popen[bytes], writer: _Writer, calls: int, rows: int) -> int:
    """Read until every call is answered (writing the rest meanwhile); the count of answers with ``rows`` rows."""
    assert proc.stdout is not None
    out = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(out, selectors.EVENT_READ)
    sel.register(writer.fd, selectors.EVENT_WRITE)
    pending, whole = b"", 0
    answered: set[int] = set()
    deadline = time.monotonic() + ANSWERS_MAX_S
    while len(answered) < calls:
        writer.push()
        if writer.done and writer.fd in sel.get_map():
            sel.unregister(writer.fd)
        if time.monotonic() > deadline:
            raise TimeoutError(f"{calls - len(answered)} calls unanswered after {ANSWERS_MAX_S:.0f} s")
        ready = {key.fd for key, _ in sel.select(1.0)}
        if out not in ready:
            continue
        chunk = os.read(out, 1 << 20)
        if not chunk:
            raise RuntimeError(f"the server closed stdout with {calls - len(answered)} calls unanswered")
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            message = orjson.loads(line)
            if not isinstance(message.get("id"), int) or message["id"] == 0:
                continue
            answered.add(message["id"])
            data = message.get("result", {}).get("_meta", {}).get("acp", {}).get("system_data") or {}
            whole += isinstance(data.get("table"), list) and len(data["table"]) == rows
    return whole


class Burst:
    """One burst in setup; every round reports its figure (a peak, not a time)."""

    def __init__(self, calls: int, rows: int, still_s: float):
        self.calls, self.rows, self.still_s = calls, rows, still_s
        self.facts: dict[str, Any] = {}

    def setup(self) -> None:
        self.facts = run_burst(self.calls, self.rows, still_s=self.still_s)
        if self.facts["answers_with_whole_table"] != self.calls:
            raise AssertionError(f"{self.calls - self.facts['answers_with_whole_table']} answers lost their table")

    def ours(self) -> float:
        return float(self.facts["server_vm_hwm_mib"])

    def baseline(self) -> float:
        return BEFORE_MIB

    def extra(self) -> dict[str, Any]:
        return {**self.facts, "before": {"commit": BEFORE_COMMIT, "server_vm_hwm_mib": BEFORE_MIB}, "limit_mib": LIMIT_MIB,
                "within_limit": self.facts["server_vm_hwm_mib"] <= LIMIT_MIB}


def cases(quick: bool) -> list[Case]:
    """One case: the server's peak RSS under 10,000 queued calls of 1,000 rows (tiny with quick)."""
    calls, rows = (100, 50) if quick else (10_000, 1_000)
    s = Burst(calls, rows, 0.3 if quick else STILL_S)
    return [Case(
        key="burst", title=f"11. peak RSS, {calls:,} queued calls of {rows:,} rows, one stdio server, silent client",
        target=f"<= {LIMIT_MIB} MiB", target_value=LIMIT_MIB / BEFORE_MIB, ours=s.ours,
        baseline=s.baseline, setup=s.setup, extra=s.extra, ours_label="this tree",
        baseline_label=f"main at {BEFORE_COMMIT}", unit="MiB",
    )]
