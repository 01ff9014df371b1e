"""The cap on calls in progress (issue 38.6): the stdio gate in memory, its settings, the HTTP request parser.

The gate runs here between two memory streams, as it runs between the stdio transport and the SDK's serve
loop: "reading paused" means it no longer receives from the transport (which then stops reading stdin).
The processes: tests/test_core_server_stdio.py (stdio) and tests/test_core_http_call_cap.py (HTTP).
"""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from analytics_acp.call_cap import (
    BUSY_CODE,
    DEFAULT_BUSY_WAIT_S,
    DEFAULT_MAX_CALLS,
    OWN_ANSWER,
    CallGate,
    CapSettingError,
    CapSettings,
    settings_from_env,
)
from analytics_acp.requestids import request_in
from mcp.shared.message import SessionMessage

BOUND_S = 10  # every wait in these tests is bounded; none is expected to come near it


async def _settle():
    """Let every task run until it waits again: in memory, with no thread or I/O, a message crosses the gate in
    a handful of event-loop turns (anyio.wait_all_tasks_blocked does the same but polls every 0.1 s on asyncio)."""
    for _ in range(50):
        await anyio.lowlevel.checkpoint()


def _request(i, method="tools/call"):
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=i, method=method, params={"name": "t"}))


def _answer(i, server_request=False):
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=i, result={}))


def _read_table(i):
    """The server's own request (8.8), written to the client: until the client answers it, the client owes."""
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=i, method="acp/read_table", params={"ref": "t"}))


def _cancel(i):
    return SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled",
                                                    params={"requestId": i}))


class _Wire:
    """The gate between a transport's streams (held here) and the serve loop, which takes all it is handed."""

    def __init__(self, gate, up, written):
        self.gate, self.up, self.written = gate, up, written
        self.got = []  # what the serve loop was handed, not looked at yet

    def reads(self, item) -> bool:
        """Whether the gate takes ``item`` from the transport now (it is waiting to read): True, it took it."""
        try:
            self.up.send_nowait(item)
        except anyio.WouldBlock:
            return False
        return True

    async def send(self, item):
        with anyio.fail_after(BOUND_S):
            await self.up.send(item)
        await _settle()  # the gate has done all it can with it

    async def handed(self):
        """The next message the serve loop got."""
        await _settle()
        assert self.got, "nothing was handed to the serve loop"
        return self.got.pop(0)

    async def nothing_handed(self) -> bool:
        await _settle()
        return not self.got

    async def answered(self, item):
        """The server's answer is on the wire (the stdio transport's writer reports it)."""
        self.gate.written(item)
        await _settle()


async def _gated(cap, body, **options):
    up_send, up_receive = anyio.create_memory_object_stream(0)
    out_send, out_receive = anyio.create_memory_object_stream(100)  # what the gate writes itself (refusals)
    gate = CallGate(cap, **options)
    ended = anyio.Event()
    async with up_send, out_receive, gate.streams(up_receive, out_send) as (down, _write):
        wire = _Wire(gate, up_send, out_receive)
        wire.ended = ended

        async def serve_loop():
            async with down:
                async for item in down:
                    wire.got.append(item)
            ended.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_loop)
            await body(wire)
            tg.cancel_scope.cancel()


async def test_at_the_cap_reading_pauses_and_one_answer_lets_one_call_in():
    async def body(wire):
        for i in range(1, 4):
            await wire.send(_request(i))
        assert [(await wire.handed()).message.id for _ in range(2)] == [1, 2]
        assert wire.gate.in_progress == 2 and wire.gate.taken == 2
        assert await wire.nothing_handed()  # call 3 was read and waits for a place
        assert not wire.reads(_request(4))  # reading has paused: call 4 stays with the transport (the pipe)
        await wire.answered(_answer(2))
        assert (await wire.handed()).message.id == 3
        assert wire.reads(_request(4))  # reading goes on
        await _settle()
        assert await wire.nothing_handed() and wire.gate.in_progress == 2

    await _gated(2, body)


async def test_an_uncapped_gate_reads_on_which_is_what_the_pause_test_tells_apart():
    async def body(wire):
        for i in range(1, 4):
            await wire.send(_request(i))
        assert [(await wire.handed()).message.id for _ in range(3)] == [1, 2, 3]
        assert wire.reads(_request(4))

    await _gated(100, body)


async def test_notifications_keep_their_place_and_answers_to_the_server_never_wait():
    async def body(wire):
        for i in (1, 2, 3):
            await wire.send(_request(i))  # 3 waits for a place
        assert [(await wire.handed()).message.id for _ in range(2)] == [1, 2]
        await wire.answered(_read_table(7))
        assert wire.gate.client_owes
        note = SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/roots/list_changed"))
        await wire.send(note)  # read (the client owes an answer), kept behind call 3
        await wire.send(_answer(7))  # the client's answer overtakes the held call: call 1 needs it to finish
        first = await wire.handed()
        assert isinstance(first.message, types.JSONRPCResponse) and first.message.id == 7
        assert not wire.gate.client_owes and await wire.nothing_handed()
        await wire.answered(_answer(1))
        assert (await wire.handed()).message.id == 3
        assert (await wire.handed()).message.method == "notifications/roots/list_changed"

    await _gated(2, body)


async def test_while_the_client_owes_an_answer_calls_are_held_up_to_the_cap_then_refused():
    # The client's answer to acp/read_table may come after more calls in the pipe: reading must go on.
    async def body(wire):
        for i in (1, 2):
            await wire.send(_request(i))
            await wire.handed()
        await wire.answered(_read_table(1))
        for i in (3, 4, 5):
            await wire.send(_request(i))  # 3 and 4 held (not run), 5 refused: nothing waits unread
        assert await wire.nothing_handed() and wire.gate.in_progress == 2
        refusal = wire.written.receive_nowait()
        assert refusal.metadata is OWN_ANSWER and refusal.message.id == 5
        error = refusal.message.error
        assert error.code == BUSY_CODE and error.data["name"] == "SERVER_BUSY" and error.data["max_calls_in_progress"] == 2
        assert "2 calls in progress" in error.message and "acp/read_table" in error.message
        await wire.answered(refusal)  # a refusal written ends no call in progress
        assert wire.gate.in_progress == 2
        await wire.send(_answer(1))
        assert (await wire.handed()).message.id == 1  # the answer reached the server
        await wire.answered(_answer(1))
        assert (await wire.handed()).message.id == 3

    await _gated(2, body)


async def test_a_cancelled_call_frees_its_place_and_a_held_one_never_reaches_the_server():
    async def body(wire):
        await wire.send(_request(1))
        running = await wire.handed()
        await wire.answered(_read_table(9))
        await wire.send(_request(2))
        await wire.send(_cancel(2))  # held: dropped with its cancel, so no answer is ever written for it
        await wire.send(_cancel(1))  # running: the server gets the cancel
        assert (await wire.handed()).message.method == "notifications/cancelled"
        assert wire.gate.in_progress == 1
        await running.metadata.on_request_unanswered()  # the SDK settles a cancelled call without an answer
        assert wire.gate.in_progress == 0
        await wire.send(_request(3))
        assert (await wire.handed()).message.id == 3

    await _gated(1, body)


async def test_ids_seven_and_seven_as_text_are_two_calls_and_a_reused_id_counts_twice():
    async def body(wire):
        for request_id in (7, "7", 7):
            await wire.send(_request(request_id))
            await wire.handed()
        assert wire.gate.in_progress == 3
        await wire.answered(_answer("7"))
        await wire.answered(_answer("8"))  # not a call in progress: changes nothing
        assert wire.gate.in_progress == 2
        await wire.answered(_answer(7))
        await wire.answered(_answer(7))
        assert wire.gate.in_progress == 0

    await _gated(5, body)


async def test_an_answer_or_a_cancel_with_the_id_as_text_correlates_as_the_sdk_does():
    # The SDK takes "7" and 7 as one id when it correlates answers and cancels (coerce_request_id, as the TS SDK):
    # the gate must too, or the client's answer "7" leaves it owed for ever (no line limit, calls held then refused).
    async def body(wire):
        await wire.send(_request(1))
        await wire.handed()
        await wire.answered(_read_table(7))
        await wire.send(_request(2))  # held while the client owes the answer
        await wire.send(_cancel("2"))  # the held call is dropped: the SDK never sees it, nor its cancel
        await wire.send(_answer("7"))
        assert (await wire.handed()).message.id == "7" and not wire.gate.client_owes
        assert await wire.nothing_handed()
        await wire.answered(_answer(1))
        await wire.send(_request(3))
        assert (await wire.handed()).message.id == 3  # call 2 never ran

    await _gated(1, body)


async def test_stdin_ending_answers_held_calls_connection_closed_and_ends_the_loop():
    async def body(wire):
        await wire.send(_request(1))
        await wire.handed()
        await wire.answered(_read_table(1))
        await wire.send(_request(2))
        await wire.up.aclose()  # EOF
        await _settle()
        closed = wire.written.receive_nowait()
        assert closed.message.id == 2 and closed.message.error.code == types.CONNECTION_CLOSED
        assert await wire.nothing_handed() and wire.ended.is_set()  # the serve loop saw its stream end

    await _gated(1, body)


async def test_stdin_ending_lets_the_calls_in_progress_answer_before_the_loop_ends():
    # The SDK cancels the handlers still running when its read stream ends: the gate holds EOF back until the
    # calls it handed on are answered (`cat requests | serve` got only initialize's answer before).
    async def body(wire):
        await wire.send(_request(1))
        await wire.send(_request(2))
        assert [(await wire.handed()).message.id for _ in range(2)] == [1, 2]
        await wire.up.aclose()  # EOF with both calls running
        await _settle()
        assert not wire.ended.is_set()
        await wire.answered(_answer(1))
        assert not wire.ended.is_set()  # call 2 still runs
        await wire.answered(_answer(2))
        with anyio.fail_after(BOUND_S):
            await wire.ended.wait()

    await _gated(4, body)


async def test_a_call_that_never_answers_holds_the_end_of_stdin_back_no_longer_than_the_grace():
    async def body(wire):
        await wire.send(_request(1))
        await wire.handed()
        await wire.up.aclose()
        with anyio.fail_after(BOUND_S):  # the grace here is 0.05 s: only a bounded wait ends before BOUND_S
            await wire.ended.wait()
        assert wire.gate.in_progress == 1  # it ended without the answer: the SDK cancels the handler

    await _gated(4, body, eof_grace_s=0.05)


def test_settings_from_the_environment():
    assert settings_from_env({}) == CapSettings(DEFAULT_MAX_CALLS, DEFAULT_BUSY_WAIT_S) == CapSettings(32, 30.0)
    assert settings_from_env({"ACP_MAX_CALLS_IN_PROGRESS": " 4 ", "ACP_BUSY_WAIT_S": "0.5"}) == CapSettings(4, 0.5)
    for bad in ("0", "-3", "many", "1.5", "10001"):
        with pytest.raises(CapSettingError, match="ACP_MAX_CALLS_IN_PROGRESS must be a whole number from 1 to 10,000"):
            settings_from_env({"ACP_MAX_CALLS_IN_PROGRESS": bad})
    for bad in ("-1", "soon", "nan", "3601"):
        with pytest.raises(CapSettingError, match="ACP_BUSY_WAIT_S must be a number of seconds"):
            settings_from_env({"ACP_BUSY_WAIT_S": bad})


def test_only_a_request_counts_as_a_call():
    assert request_in(b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call"}')["id"] == 3
    assert request_in(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}') is None
    assert request_in(b'{"jsonrpc": "2.0", "id": 3, "result": {"table": [{"method": 1}]}}') is None
    assert request_in(b'{"jsonrpc": "2.0", "id": 1, "result": {"rows": [1, 2]}}') is None  # no "method": not parsed
    assert request_in(b'[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]') is None  # a batch: the SDK refuses it
    assert request_in(b'{"jsonrpc": "2.0", "id": 3, "method": ') is None
    assert request_in(b'{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "method": "ping"}')["id"] == \
        123456789012345678901234567890  # not orjson's float
