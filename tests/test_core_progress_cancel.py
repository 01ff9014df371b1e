"""Progress and cancellation over the wire (issue 28.1, 28.2, core part): ``ctx.progress`` becomes
``notifications/progress`` with the request's token, throttled, increasing, the last one always sent;
``notifications/cancelled`` interrupts a statement running in the tool's worker thread, the request gets
no answer and the session keeps working. Measured by the server's CPU, never by a timed assertion."""

from __future__ import annotations

from analytics_acp.kit.wire import StdioWire, cpu_settled, tool_call, until
from core_helpers import CREDS, env, serve_command

META = {"acp": {"credentials": CREDS}}


class Wire(StdioWire):
    """A raw stdio client of ``serve mini_connector``, initialized (host stores system data)."""

    def __init__(self) -> None:
        super().__init__(serve_command(), env=env())
        assert self.initialize(0, acp={"stores_system_data": True})["result"]["capabilities"]["experimental"]["acp"]


def _call(request_id, name, arguments, token=None) -> dict:
    return tool_call(request_id, name, arguments, {**META, "progressToken": token} if token is not None else META)


def test_progress_reaches_the_client_with_its_token_throttled_increasing_and_the_last_one_sent():
    wire = Wire()
    try:
        wire.send(_call(1, "steps", {"n": 30, "step_s": 0.03}, token="tok-1"))
        seen = wire.through(1)
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
        seen = wire.through(1)
    finally:
        wire.close()
    assert not [m for m in seen if m.get("method") == "notifications/progress"]
    assert seen[-1]["result"]["isError"] is False


def test_a_cancelled_statement_stops_the_request_gets_no_answer_and_the_session_goes_on():
    wire = Wire()
    try:
        wire.send(_call(1, "spin", {}, token=7))
        assert wire.next_notification("notifications/progress")["params"]["message"] == "running"
        wire.cancel(1, reason="user")
        # The CPU goes idle: the statement was interrupted (without the interrupt it never ends on its own).
        until(cpu_settled(wire.proc.pid), "the server's CPU going idle after the cancel", tries=300, every_s=0.1)
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        seen = wire.through(2)
        assert not [m for m in seen if m.get("id") == 1]  # a cancelled request gets no answer (MCP)
        wire.send(_call(3, "steps", {"n": 2, "step_s": 0.0}))
        assert wire.through(3)[-1]["result"]["isError"] is False  # the session keeps working
    finally:
        wire.close()
