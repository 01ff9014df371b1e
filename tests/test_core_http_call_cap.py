"""The cap on calls in progress per Streamable HTTP session (issue 38.6; the gate itself: test_core_call_cap.py).

One server with a cap of 2 and a 0.2 s wait for a place. Two ``sum_table`` calls stay in progress for as
long as the test leaves their ``acp/read_table`` (8.8) unanswered: a deterministic "busy", no slow tool.
"""

from __future__ import annotations

import json
from contextlib import ExitStack

import httpx
import pytest
from core_helpers import http_mini, open_http_session, sse_messages

CAP = 2


@pytest.fixture(scope="module")
def url():
    with http_mini(ACP_MAX_CALLS_IN_PROGRESS=str(CAP), ACP_BUSY_WAIT_S="0.2") as served:
        yield served


def _tools_list(http: httpx.Client, url: str, session: dict[str, str], request_id: int) -> httpx.Response:
    return http.post(url, json={"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}, headers=session)


def test_a_request_past_the_cap_waits_then_gets_a_typed_refusal_and_the_session_goes_on(url):
    with httpx.Client(timeout=60) as http, ExitStack() as streams:
        session = open_http_session(http, url, host_tables=True)
        calls, asked = [], []
        for i in (1, 2):  # two calls in progress: each waits for the client's table
            response = streams.enter_context(http.stream("POST", url, headers=session, json={
                "jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "sum_table", "arguments": {"table_ref": f"t{i}", "column": "v"}}}))
            calls.append(sse_messages(response.iter_lines()))
            asked.append(next(calls[-1]))
            assert asked[-1]["method"] == "acp/read_table"

        refused = _tools_list(http, url, session, 3)
        assert refused.status_code == 429 and refused.headers["content-type"] == "application/json"
        assert refused.headers["retry-after"] == "1"
        body = refused.json()
        assert body["id"] == 3 and body["error"]["code"] == -32051
        assert body["error"]["data"] == {"name": "SERVER_BUSY", "max_calls_in_progress": CAP}
        assert body["error"]["message"].startswith(f"The server already has {CAP} calls in progress")
        assert "within 0.2 s; wait for an answer, then send it again" in body["error"]["message"]

        other = open_http_session(http, url, host_tables=True)  # another session has its own places
        assert _tools_list(http, url, other, 1).status_code == 200
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        assert http.post(url, json=note, headers=session).status_code == 202  # notifications never wait

        for events, request in zip(calls, asked, strict=True):  # the client's answers never wait either
            table = {"format": "inline", "headers": [{"name": "v", "type": "integer"}], "table": [{"v": 4}, {"v": 5}]}
            answer = http.post(url, json={"jsonrpc": "2.0", "id": request["id"], "result": table}, headers=session)
            assert answer.status_code == 202
            assert json.loads(next(events)["result"]["content"][0]["text"])["sum"] == 9
        listed = _tools_list(http, url, session, 4)
        assert listed.status_code == 200 and "sum_table" in listed.text  # places came back


def test_past_the_bytes_waiting_requests_may_hold_the_next_is_refused_at_once():
    """In memory, through the wrappers the HTTP app stacks (RequestIdGuard parses the body once, SessionCallCap
    reads what it found): CAP requests in progress, CAP more waiting (each holds its body while it waits), and the
    next one, past the bytes waiting requests may hold, refused at once instead of joining them (they were
    unbounded)."""
    import anyio
    from analytics_acp.call_cap import CapSettings
    from analytics_acp.http_app import RequestIdGuard
    from analytics_acp.http_call_cap import SessionCallCap

    release = anyio.Event()
    served: list[int] = []
    answers: dict[int, tuple[int, dict]] = {}

    async def app(scope, receive, send):  # the SDK stand-in: answers once released
        body = json.loads((await receive())["body"])
        await release.wait()
        served.append(body["id"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    def body_of(i: int) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"pad": "x" * 1000}}).encode()

    size = len(body_of(99))
    stack = RequestIdGuard(SessionCallCap(app, CapSettings(max_calls=CAP, busy_wait_s=60), wait_bytes=CAP * size))

    async def post(i: int) -> None:
        sent: list[dict] = []
        body = body_of(i)
        incoming = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            return incoming.pop(0) if incoming else await anyio.sleep_forever()

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"mcp-session-id", b"s1")]}
        await stack(scope, receive, send)
        answers[i] = (sent[0]["status"], json.loads(sent[1]["body"]) if sent[1]["body"] != b"{}" else {})

    async def main():
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                for i in range(2 * CAP):  # CAP take the places, CAP wait for one
                    tg.start_soon(post, i)
                await anyio.wait_all_tasks_blocked()
                await post(99)  # refused at once: nothing waited 60 s
                assert list(answers) == [99] and not served
                release.set()

    anyio.run(main)
    status, body = answers[99]
    assert status == 429 and body["error"]["code"] == -32051 and body["id"] == 99
    assert (f"the requests already waiting for a place hold {CAP * (size - 1):,} bytes (at most {CAP * size:,}); "
            "wait for an answer, then send it again") in body["error"]["message"]
    assert sorted(served) == list(range(2 * CAP)) and all(answers[i][0] == 200 for i in range(2 * CAP))


def test_a_post_body_is_parsed_once_before_the_sdk(monkeypatch):
    """RequestIdGuard parses the body; the calls cap and the cancel of a closed stream read what it found on the scope
    (they each buffered and parsed it again)."""
    import anyio
    import orjson
    from analytics_acp.call_cap import CapSettings
    from analytics_acp.http_app import RequestIdGuard
    from analytics_acp.http_call_cap import SessionCallCap
    from analytics_acp.http_cancel import CancelOnClose

    parses = []
    loads = orjson.loads
    monkeypatch.setattr(orjson, "loads", lambda raw: parses.append(len(raw)) or loads(raw))
    got: list[dict] = []

    async def app(scope, receive, send):  # the SDK stand-in: reads the body, then the client goes away
        message = await receive()
        if message["type"] == "http.request":
            got.append(json.loads(message["body"]))
        await receive()

    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t"}}).encode()
    incoming = [{"type": "http.request", "body": body, "more_body": False}, {"type": "http.disconnect"}]

    async def receive():
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message):
        pass

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"mcp-session-id", b"s1")]}
    stack = RequestIdGuard(SessionCallCap(CancelOnClose(app), CapSettings(max_calls=CAP, busy_wait_s=1)))
    anyio.run(stack, scope, receive, send)
    assert parses == [len(body)]
    assert got[0]["id"] == 7 and got[1]["method"] == "notifications/cancelled" and got[1]["params"]["requestId"] == 7
