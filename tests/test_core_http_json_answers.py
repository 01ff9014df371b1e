"""Streamable HTTP answers a call that has nothing to send before its answer as one JSON body (issue 39, bench
case 4b round 5: an SSE stream per request cost about a fifth of a small call's CPU). Which calls: a tools/call
with no progress token, of a tool with no ``table_ref`` argument (8.8). A call that asks for progress, or whose
tool may ask the host for a table, keeps its SSE stream; every other request is the SDK's as before. A client
that closes the connection still cancels a JSON-answered call (issue 28.2), and the SDK's session checks stay.
Stopping is read from the server's CPU, never from a timed assertion."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import httpx
import pytest
from analytics_acp.kit.wire import cpu_settled, cpu_ticks, tool_call, until
from core_helpers import CREDS, HTTP_HEADERS, http_mini_process, open_http_session, sse_messages

ACP = {"acp": {"credentials": CREDS}}
ARGS = {"n": 3, "resource_id": "acc1"}
EXTRACT = tool_call(1, "extract", ARGS, ACP)


@pytest.fixture(scope="module")
def served():
    with http_mini_process(module="mini_asker") as (url, pid):  # the mini connector plus ask_host
        yield url, pid


def _result(answer: httpx.Response) -> dict:
    if answer.headers["content-type"].startswith("application/json"):
        return answer.json()
    return [m for m in sse_messages(answer.text.splitlines()) if "id" in m][-1]


def test_a_plain_call_is_one_json_body_and_a_call_asking_progress_keeps_its_stream(served):
    url, _ = served
    with httpx.Client(timeout=60) as http:
        session = open_http_session(http, url)
        plain = http.post(url, json=EXTRACT, headers=session)
        assert plain.status_code == 200 and plain.headers["content-type"] == "application/json"
        assert plain.headers["mcp-session-id"] == session["Mcp-Session-Id"]
        with_progress = http.post(url, json=tool_call(2, "extract", ARGS, {**ACP, "progressToken": 5}),
                                  headers=session)
        assert with_progress.headers["content-type"].startswith("text/event-stream")
        null_token = http.post(url, json=tool_call(3, "extract", ARGS, {**ACP, "progressToken": None}),
                               headers=session)
        assert null_token.headers["content-type"].startswith("text/event-stream")  # asked, even if unusable
        listed = http.post(url, json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, headers=session)
        assert listed.headers["content-type"].startswith("text/event-stream")  # not a call: the SDK's answer
    first, second = _result(plain), _result(with_progress)
    assert first["id"] == 1 and second["id"] == 2
    # The same call answers the same on both paths (8.2, 8.5): the model's text and the host's table.
    assert first["result"]["content"] == second["result"]["content"]
    tables = [r["result"]["_meta"]["acp"]["system_data"] for r in (first, second)]
    assert tables[0]["table"] == tables[1]["table"] and len(tables[0]["table"]) == 3


def test_a_tool_that_may_ask_the_host_for_a_table_keeps_its_stream(served):
    url, _ = served
    call = tool_call(1, "sum_table", {"table_ref": "t1", "column": "v"})
    with httpx.Client(timeout=60) as http:
        session = open_http_session(http, url, host_tables=True)
        with http.stream("POST", url, json=call, headers=session) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            messages = sse_messages(response.iter_lines())
            asked = next(messages)
            assert asked["method"] == "acp/read_table" and asked["params"]["ref"] == "t1"
            table = {"format": "inline", "headers": [{"name": "v", "type": "number"}], "table": [{"v": 2}, {"v": 3}]}
            answered = http.post(url, json={"jsonrpc": "2.0", "id": asked["id"], "result": table}, headers=session)
            assert answered.status_code == 202
            result = next(m for m in messages if m.get("id") == 1)
    assert json.loads(result["result"]["content"][0]["text"])["sum"] == 5


def test_a_tool_asking_the_host_outside_a_table_ref_gets_a_typed_error_at_once_when_answered_as_json(served):
    # A JSON-answered call has no stream for acp/read_table (8.8): the tool gets ACP_HOST_TABLES_UNSUPPORTED, not a
    # wait for a host that never hears the question; asking for progress gives it the stream, and the table.
    url, _ = served
    with httpx.Client(timeout=60) as http:
        session = open_http_session(http, url, host_tables=True)
        plain = http.post(url, json=tool_call(1, "ask_host", {"name": "t1"}), headers=session)
        assert plain.headers["content-type"] == "application/json"
        result = plain.json()["result"]
        error = json.loads(result["content"][0]["text"])["error"]
        assert result["isError"] and error["name"] == "ACP_HOST_TABLES_UNSUPPORTED" and error["code"] == -32020
        assert "'t1'" in error["message"] and "table_ref" in error["message"]
        streamed = tool_call(2, "ask_host", {"name": "t1"}, {"progressToken": 1})
        with http.stream("POST", url, json=streamed, headers=session) as response:
            messages = sse_messages(response.iter_lines())
            asked = next(m for m in messages if m.get("method") == "acp/read_table")
            table = {"format": "inline", "headers": [{"name": "v", "type": "number"}], "table": [{"v": 2}, {"v": 3}]}
            http.post(url, json={"jsonrpc": "2.0", "id": asked["id"], "result": table}, headers=session)
            answer = next(m for m in messages if m.get("id") == 2)
    assert json.loads(answer["result"]["content"][0]["text"])["rows"] == 2


def _post_raw(url: str, session: dict[str, str], message: dict) -> socket.socket:
    """Send one POST on a socket of its own and read nothing: the test decides when the client goes away."""
    where = urlsplit(url)
    body = json.dumps(message).encode()
    head = [f"POST {where.path} HTTP/1.1", f"Host: {where.netloc}", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in session.items()]
    sock = socket.create_connection((where.hostname, where.port), timeout=10)
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    return sock


def test_a_json_answered_call_stops_when_its_client_closes_the_connection(served):
    url, pid = served
    with httpx.Client(timeout=60) as http:
        session = open_http_session(http, url)
        start = cpu_ticks(pid)
        sock = _post_raw(url, session, tool_call(7, "spin", {}, ACP))  # no progress token: a JSON answer
        try:
            until(lambda: cpu_ticks(pid) - start >= 50, "the spin running (half a second of the server's CPU)")
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)  # nothing sent yet: an SSE stream would have sent its headers at once
        finally:
            sock.close()
        until(cpu_settled(pid), "the server's CPU going idle after the client closed the connection", tries=300,
              every_s=0.1)
        again = http.post(url, json=EXTRACT, headers=session)  # the session goes on
        assert again.status_code == 200 and again.json()["id"] == 1


def _spin_in_background(http: httpx.Client, url: str, session: dict[str, str], pid: int, request_id: int):
    """POST a JSON-answered ``spin`` from a thread of its own; returns its future once the server runs it."""
    import concurrent.futures

    pool = concurrent.futures.ThreadPoolExecutor(1)
    start = cpu_ticks(pid)
    answer = pool.submit(http.post, url, json=tool_call(request_id, "spin", {}, ACP), headers=session)
    pool.shutdown(wait=False)
    until(lambda: cpu_ticks(pid) - start >= 30, "the spin running (a third of a second of the server's CPU)")
    return answer


def test_a_cancelled_json_answered_call_is_answered_as_its_stream_would_be(served):
    # The SDK's client ignores a late answer on a stream but fails its whole connection on a late JSON body (seen
    # in CI: the kit's client closing while the answer to the call it had just cancelled was on its way). So the
    # cancel's error comes as the stream path sends it, one SSE event, whenever it comes.
    url, pid = served
    with httpx.Client(timeout=60) as http:
        session = open_http_session(http, url)
        answer = _spin_in_background(http, url, session, pid, 11)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}}
        assert http.post(url, json=cancel, headers=session).status_code == 202
        cancelled = answer.result(timeout=60)
        assert cancelled.headers["content-type"].startswith("text/event-stream")
        (error,) = [m for m in sse_messages(cancelled.text.splitlines()) if "id" in m]
        assert error["id"] == 11 and error["error"]["code"] == -32800  # the SDK's answer to a cancelled request
        again = http.post(url, json=EXTRACT, headers=session)  # the session goes on, its plain calls still JSON
        assert again.headers["content-type"] == "application/json" and again.json()["id"] == 1
        # A cancel can overtake its request (they are two POSTs): the request then runs to its end, and its
        # answer, which the client no longer waits for, comes as a stream too.
        early = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 13}}
        assert http.post(url, json=early, headers=session).status_code == 202
        overtaken = http.post(url, json=tool_call(13, "extract", ARGS, ACP), headers=session)
        assert overtaken.headers["content-type"].startswith("text/event-stream")
        (late,) = [m for m in sse_messages(overtaken.text.splitlines()) if "id" in m]
        assert late["id"] == 13 and len(late["result"]["_meta"]["acp"]["system_data"]["table"]) == 3


def test_a_json_answered_call_whose_session_ends_gets_the_streams_answer(served):
    # DELETE ends the session with the call in flight (28.2): the stream path ends its stream without an event;
    # the JSON path does the same (it used to answer a 500 JSON body, which a closing SDK client fails on).
    url, pid = served
    with httpx.Client(timeout=60) as http:
        session = open_http_session(http, url)
        answer = _spin_in_background(http, url, session, pid, 12)
        assert http.delete(url, headers=session).status_code == 200
        ended = answer.result(timeout=60)
    assert ended.status_code == 200 and ended.headers["content-type"].startswith("text/event-stream")
    assert not [m for m in sse_messages(ended.text.splitlines()) if "id" in m]


def test_the_json_path_keeps_the_sdks_session_checks(served):
    url, _ = served
    with httpx.Client(timeout=60) as http:
        session = open_http_session(http, url)
        missing = http.post(url, json=EXTRACT, headers=HTTP_HEADERS)
        assert missing.status_code == 400 and "Missing session ID" in missing.text
        unknown = http.post(url, json=EXTRACT, headers={**session, "Mcp-Session-Id": "0" * 32})
        assert unknown.status_code == 404
        only_sse = http.post(url, json=EXTRACT, headers={**session, "Accept": "text/event-stream"})
        assert only_sse.status_code == 406  # the SDK's answer: a client must accept both


def test_which_requests_are_answered_as_json(monkeypatch):
    from analytics_acp.http_app import JsonAnswers
    from analytics_acp.plugins import load_connector
    from analytics_acp.runtime import build_server
    from core_helpers import FIXTURES, MINI

    monkeypatch.syspath_prepend(str(FIXTURES))  # what env() puts on a served mini connector's PYTHONPATH

    answers = JsonAnswers(build_server(load_connector(MINI)))
    assert answers(EXTRACT) and answers(tool_call(1, "spin", {}))
    assert answers(tool_call(1, "no_such_tool", {}))  # answered at once, with the typed error
    assert answers(tool_call(1, "extract", {}, {"acp": {}, "other": 1}))
    for streamed in (tool_call(1, "extract", {}, {"progressToken": 0}), tool_call(1, "extract", {}, {"progressToken": None}),
                     tool_call(1, "sum_table", {"table_ref": "t", "column": "v"}),
                     {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["extract"]},
                     {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 7}}):
        assert not answers(streamed), streamed
