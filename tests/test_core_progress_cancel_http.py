"""Cancellation over Streamable HTTP (issue 28.2, 3.2): ``notifications/cancelled`` posted for a running call,
a client that closes the call's response stream, and a DELETE of the session each stop the tool: the mini
connector's ``spin`` (a SQLite statement that never ends unless ``ctx.on_cancel`` interrupts it) lets the
server's CPU go idle. Measured by the server's CPU, never by a timed assertion; the server keeps answering."""

from __future__ import annotations

import json

import httpx
import pytest
from analytics_acp.kit.wire import cpu_settled, tool_call, until
from core_helpers import CREDS, http_mini_process, open_http_session

SPIN = tool_call(1, "spin", {}, {"acp": {"credentials": CREDS}, "progressToken": 7})


def _until_running(lines) -> None:
    """Read the call's SSE stream up to the tool's first progress ("running": the statement has started)."""
    for line in lines:
        if line.startswith("data:") and json.loads(line[5:]).get("method") == "notifications/progress":
            assert json.loads(line[5:])["params"]["message"] == "running"
            return
    raise AssertionError("the call's stream ended before the tool ran")


def _ping(http: httpx.Client, url: str, session: dict[str, str]) -> dict:
    answer = http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=session)
    return json.loads(next(line[5:] for line in answer.text.splitlines() if line.startswith("data:")))


@pytest.mark.parametrize("how", ["notifications/cancelled", "closed stream", "DELETE"])
def test_a_running_call_stops_when_the_http_client_cancels_it(how):
    with http_mini_process() as (url, pid), httpx.Client(timeout=60) as http:
        session = open_http_session(http, url)
        with http.stream("POST", url, json=SPIN, headers=session) as stream:
            lines = stream.iter_lines()
            _until_running(lines)
            if how == "notifications/cancelled":
                note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "user"}}
                assert http.post(url, json=note, headers=session).status_code == 202
                rest = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
                # The SDK ends the stream of a cancelled request on this 2025 wire; never with a result.
                assert not [m for m in rest if "result" in m]
            elif how == "DELETE":
                assert http.delete(url, headers=session).status_code == 200
        # "closed stream": leaving the block closed the response stream mid-call, nothing else was sent.
        until(cpu_settled(pid), f"the server's CPU going idle after the client's {how}", tries=300, every_s=0.1)
        if how == "DELETE":
            session = open_http_session(http, url)  # the server goes on: a new session works
        assert _ping(http, url, session) == {"jsonrpc": "2.0", "id": 2, "result": {}}


def _through_cancel_on_close(body: bytes, answer_first: bool) -> list[tuple[dict, bytes]]:
    """The (scope, body) pairs the wrapped app got for one POST whose client disconnects (RequestIdGuard outside,
    as the HTTP app stacks them: it parses the body once and CancelOnClose reads the request it found)."""
    import anyio
    from analytics_acp.http_app import RequestIdGuard
    from analytics_acp.http_cancel import CancelOnClose

    calls = []

    async def app(scope, receive, send):
        got = await receive()
        calls.append((scope, got.get("body", b"")))
        if answer_first:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}", "more_body": False})
        await receive()  # the disconnect (an SSE response listens for it)

    incoming = [{"type": "http.request", "body": body, "more_body": False}, {"type": "http.disconnect"}]

    async def receive():
        return incoming.pop(0)

    async def send(message):
        pass

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"mcp-session-id", b"s1"), (b"cookie", b"x")]}
    anyio.run(RequestIdGuard(CancelOnClose(app)), scope, receive, send)
    return calls


def test_only_an_unanswered_request_is_cancelled_and_in_its_own_session():
    call = b'{"jsonrpc": "2.0", "id": "a7", "method": "tools/call", "params": {}}'
    calls = _through_cancel_on_close(call, answer_first=False)
    assert len(calls) == 2
    scope, body = calls[1]
    assert json.loads(body) == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": "a7", "reason": "The client closed the request's stream."}}
    assert (b"mcp-session-id", b"s1") in scope["headers"] and (b"cookie", b"x") not in scope["headers"]
    assert len(_through_cancel_on_close(call, answer_first=True)) == 1  # answered: a later close cancels nothing
    for never in (b'{"jsonrpc": "2.0", "id": 0, "method": "initialize"}',  # MCP: initialize is never cancelled
                  b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', b'{"jsonrpc": "2.0", "id": 3, "result": {}}',
                  b"not json"):
        assert len(_through_cancel_on_close(never, answer_first=False)) == 1, never
    assert _through_cancel_on_close(b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', answer_first=False) == []
