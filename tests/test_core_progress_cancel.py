"""Progress and cancellation over the wire (issue 28.1, 28.2, core part): ``ctx.progress`` becomes
``notifications/progress`` with the request's token, throttled, increasing, the last one always sent;
``notifications/cancelled`` interrupts a statement running in the tool's worker thread, the request gets
no answer and the session keeps working. Measured by the server's CPU, never by a timed assertion."""

from __future__ import annotations

import subprocess
import time

import orjson
from core_helpers import CREDS, env, serve_command

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"},
    "capabilities": {"experimental": {"acp": {"version": "1.0", "stores_system_data": True}}}}}
META = {"acp": {"credentials": CREDS}}


class Wire:
    """A raw stdio client of ``serve mini_connector``: lines in, lines out."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(serve_command(), env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.send(INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert self.until(0)[-1]["result"]["capabilities"]["experimental"]["acp"]

    def send(self, *messages: dict) -> None:
        self.proc.stdin.write(b"".join(orjson.dumps(m) + b"\n" for m in messages))
        self.proc.stdin.flush()

    def until(self, request_id) -> list[dict]:
        """Every message up to and including the answer to ``request_id``."""
        seen = []
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed stdout"
            seen.append(orjson.loads(line))
            if seen[-1].get("id") == request_id and "method" not in seen[-1]:
                return seen

    def next_notification(self, method: str) -> dict:
        while True:
            message = orjson.loads(self.proc.stdout.readline())
            if message.get("method") == method:
                return message

    def cpu_ticks(self) -> int:
        fields = open(f"/proc/{self.proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def _call(request_id, name, arguments, token=None) -> dict:
    meta = {**META, "progressToken": token} if token is not None else META
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}}


def test_progress_reaches_the_client_with_its_token_throttled_increasing_and_the_last_one_sent():
    wire = Wire()
    try:
        wire.send(_call(1, "steps", {"n": 30, "step_s": 0.03}, token="tok-1"))
        seen = wire.until(1)
    finally:
        wire.close()
    progress = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert progress and all(p["progressToken"] == "tok-1" for p in progress)
    values = [p["progress"] for p in progress]
    assert values == sorted(set(values))  # strictly increasing (MCP)
    assert len(values) < 30  # throttled: not one per step
    assert progress[-1] == {"progressToken": "tok-1", "progress": 30, "total": 30, "message": "step 30 of 30"}
    assert seen[-1]["result"]["isError"] is False


def test_no_token_no_progress_notification():
    wire = Wire()
    try:
        wire.send(_call(1, "steps", {"n": 5, "step_s": 0.01}))
        seen = wire.until(1)
    finally:
        wire.close()
    assert not [m for m in seen if m.get("method") == "notifications/progress"]
    assert seen[-1]["result"]["isError"] is False


def test_a_cancelled_statement_stops_the_request_gets_no_answer_and_the_session_goes_on():
    wire = Wire()
    try:
        wire.send(_call(1, "spin", {}, token=7))
        assert wire.next_notification("notifications/progress")["params"]["message"] == "running"
        wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "user"}})
        # The CPU goes idle: the statement was interrupted (without the interrupt it never ends on its own).
        last, still = wire.cpu_ticks(), 0
        for _ in range(300):  # bounded poll, ~30 s at most
            time.sleep(0.1)
            now = wire.cpu_ticks()
            still = still + 1 if now == last else 0
            last = now
            if still >= 10:
                break
        assert still >= 10, "the server kept burning CPU after the cancel"
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        seen = wire.until(2)
        assert not [m for m in seen if m.get("id") == 1]  # a cancelled request gets no answer (MCP)
        wire.send(_call(3, "steps", {"n": 2, "step_s": 0.0}))
        assert wire.until(3)[-1]["result"]["isError"] is False  # the session keeps working
    finally:
        wire.close()
