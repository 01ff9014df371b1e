"""The kit's raw JSON-RPC stdio client and bounded waits (issue 38.7: one helper instead of a copy per test
folder). The server here is a few lines of Python that echoes each request as its answer, after a
notification, so the tests need no connector."""

from __future__ import annotations

import sys

import pytest
from analytics_acp.kit.wire import INITIALIZED, StdioWire, initialize_request, tool_call, until

ECHO = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    if 'id' in m:\n"
    "        print(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/progress', 'params': {'of': m['id']}}))\n"
    "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {'echo': m}}), flush=True)\n"
)
SILENT = "import sys\nsys.stdin.read()\n"  # answers nothing until its stdin closes


@pytest.mark.parametrize("read_ahead", [False, True], ids=["on-demand", "read-ahead"])
def test_answers_notifications_and_the_handshake(read_ahead):
    with StdioWire([sys.executable, "-c", ECHO], read_ahead=read_ahead) as wire:
        init = wire.initialize(7, acp={"host_tables": True})["result"]["echo"]
        assert init["params"]["capabilities"]["experimental"]["acp"] == {"version": "1.0", "host_tables": True}
        wire.send(tool_call(1, "t", {"a": 1}, {"acp": {}}), tool_call(2, "t", {}))
        assert wire.answer(2)["result"]["echo"]["params"] == {"name": "t", "arguments": {}}
        assert wire.answer(1)["result"]["echo"]["params"]["_meta"] == {"acp": {}}  # passed over before: found
        wire.send({"jsonrpc": "2.0", "id": "x", "method": "ping"})
        span = wire.through("x")
        assert [m.get("method") for m in span] == ["notifications/progress", None] and span[0]["params"] == {"of": "x"}
    assert wire.proc.returncode == 0  # closing stdin ended it


def test_a_silent_server_fails_the_wait_instead_of_hanging_the_suite():
    with StdioWire([sys.executable, "-c", SILENT], bound_s=0.5) as wire:
        wire.send(initialize_request(1), INITIALIZED)
        with pytest.raises(AssertionError, match="no line within"):
            wire.answer(1)
    with StdioWire([sys.executable, "-c", SILENT], bound_s=0.5, read_ahead=True) as wire:
        with pytest.raises(AssertionError, match="no message within"):
            wire.next()


def test_a_closed_stdout_fails_the_wait_with_what_happened():
    with StdioWire([sys.executable, "-c", "pass"]) as wire:
        with pytest.raises(AssertionError, match="the stream closed"):
            wire.next()


def test_until_returns_once_the_check_holds_and_names_what_never_happened():
    calls = []
    until(lambda: calls.append(1) or len(calls) == 3, "three polls", every_s=0)
    assert len(calls) == 3
    with pytest.raises(AssertionError, match="never happened: the moon"):
        until(lambda: False, "the moon", tries=3, every_s=0)
