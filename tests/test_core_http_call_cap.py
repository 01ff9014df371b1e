"""The cap on calls in progress per Streamable HTTP session (issue 38.6; the gate itself: test_core_call_cap.py).

One server with a cap of 2 and a 0.2 s wait for a place. Two ``sum_table`` calls stay in progress for as
long as the test leaves their ``acp/read_table`` (8.8) unanswered: a deterministic "busy", no slow tool.
"""

from __future__ import annotations

import json
from contextlib import ExitStack

import httpx
import pytest
from core_helpers import http_mini

CAP = 2
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"},
    "capabilities": {"experimental": {"acp": {"version": "1.0", "stores_system_data": True, "host_tables": True}}}}}


@pytest.fixture(scope="module")
def url():
    with http_mini(ACP_MAX_CALLS_IN_PROGRESS=str(CAP), ACP_BUSY_WAIT_S="0.2") as served:
        yield served


def _session(http: httpx.Client, url: str) -> dict[str, str]:
    answer = http.post(url, json=INIT, headers=HEADERS)
    session = {**HEADERS, "Mcp-Session-Id": answer.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"}
    assert http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session).status_code == 202
    return session


def _events(lines):
    """The JSON-RPC messages of a call's SSE stream, as they come."""
    for line in lines:
        if line.startswith("data:"):
            yield json.loads(line[5:])


def _tools_list(http: httpx.Client, url: str, session: dict[str, str], request_id: int) -> httpx.Response:
    return http.post(url, json={"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}, headers=session)


def test_a_request_past_the_cap_waits_then_gets_a_typed_refusal_and_the_session_goes_on(url):
    with httpx.Client(timeout=60) as http, ExitStack() as streams:
        session = _session(http, url)
        calls, asked = [], []
        for i in (1, 2):  # two calls in progress: each waits for the client's table
            response = streams.enter_context(http.stream("POST", url, headers=session, json={
                "jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "sum_table", "arguments": {"table_ref": f"t{i}", "column": "v"}}}))
            calls.append(_events(response.iter_lines()))
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

        other = _session(http, url)  # another session has its own places
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
