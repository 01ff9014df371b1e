"""The server's own stdio transport: responses written once by orjson, same JSON as the SDK's pydantic dump.

Speed lives in ``make bench`` (case 1); these tests pin what must not change on the wire.
"""

from __future__ import annotations

import subprocess

import mcp_types as types
import orjson
from analytics_acp.constants import ACP_MAX_MESSAGE_BYTES
from analytics_acp.kit.wire import INITIALIZED, Lines, cpu_settled, initialize_request, until
from analytics_acp.server_stdio import DEFERRED_KEY, DeferredMeta, encode, parse
from core_helpers import CREDS, env, serve_command

RESULT = {
    "content": [{"type": "text", "text": "{\"rows\": 2}"}],
    "isError": False,
    "_meta": {"acp": {"error": None, "system_data": {"format": "inline", "table": [{"a": 1, "b": None}, {"a": 2.5}]}}},
}


def _pydantic_line(result):
    return types.JSONRPCResponse(jsonrpc="2.0", id=9, result=result).model_dump_json(by_alias=True, exclude_unset=True)


def test_parked_meta_comes_back_whole_on_the_wire():
    deferred = DeferredMeta()
    parked = deferred.park(RESULT, 9)
    assert parked["_meta"] == {DEFERRED_KEY: parked["_meta"][DEFERRED_KEY]} and parked["content"] == RESULT["content"]
    line = encode(types.JSONRPCResponse(jsonrpc="2.0", id=9, result=parked), deferred)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert orjson.loads(line) == orjson.loads(_pydantic_line(RESULT))  # nulls inside _meta.acp kept
    assert DEFERRED_KEY.encode() not in line


def test_results_without_meta_and_other_messages_are_unchanged():
    deferred = DeferredMeta()
    plain = {"tools": [{"name": "x", "inputSchema": {"type": "object"}}]}
    assert deferred.park(plain, "a") is plain
    assert orjson.loads(encode(types.JSONRPCResponse(jsonrpc="2.0", id="a", result=plain), deferred)) == {
        "jsonrpc": "2.0", "id": "a", "result": plain}
    error = types.JSONRPCError(jsonrpc="2.0", id=3, error=types.ErrorData(code=-32601, message="Method not found"))
    assert encode(error, deferred) == error.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def test_every_parked_meta_waits_for_its_answer_however_many_are_pending():
    # Issue 27.1: a count-based eviction (64) sent samples without their tables, as if whole.
    deferred = DeferredMeta()
    placeholders = {i: deferred.park(RESULT, i)["_meta"] for i in range(500)}
    assert len(deferred) == 500
    for i in reversed(range(500)):
        assert deferred.restore({"content": [], "_meta": placeholders[i]})["_meta"] == RESULT["_meta"]
    assert len(deferred) == 0


def test_a_cancelled_requests_parked_meta_is_forgotten_and_ids_keep_their_type():
    deferred = DeferredMeta()
    as_int, as_text = deferred.park(RESULT, 7)["_meta"], deferred.park(RESULT, "7")["_meta"]
    assert as_int != as_text  # 7 and "7" are two requests
    deferred.discard(7)
    assert len(deferred) == 1 and "_meta" not in deferred.restore({"content": [], "_meta": as_int})
    assert deferred.restore({"content": [], "_meta": as_text})["_meta"] == RESULT["_meta"]


def test_a_cancel_naming_the_id_as_text_forgets_the_one_parked_meta_it_means():
    deferred = DeferredMeta()
    deferred.park(RESULT, 7)
    deferred.discard("7")  # the SDK cancels request 7 for it (coerce_request_id): no answer comes, nothing is kept
    assert len(deferred) == 0
    as_int, as_text = deferred.park(RESULT, 8)["_meta"], deferred.park(RESULT, "8")["_meta"]
    deferred.discard(" 8")  # two requests it could mean: neither is dropped (a sample must never lose its table)
    assert deferred.restore({"content": [], "_meta": as_int})["_meta"] == RESULT["_meta"]
    assert deferred.restore({"content": [], "_meta": as_text})["_meta"] == RESULT["_meta"]


def test_values_orjson_refuses_fall_back_to_pydantic():
    result = {"content": [], "_meta": {"acp": {1: "int key"}}}
    line = encode(types.JSONRPCResponse(jsonrpc="2.0", id=1, result=result), None)
    assert orjson.loads(line)["result"]["_meta"] == {"acp": {"1": "int key"}}


def test_parse_keeps_the_sdk_validation():
    assert isinstance(parse(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}').message, types.JSONRPCRequest)
    assert isinstance(parse(b"not json"), Exception)


def _messages(*extra):
    lines = [initialize_request(0, acp={"stores_system_data": True}), INITIALIZED, *extra]
    return b"".join(orjson.dumps(m) + b"\n" for m in lines)


def _answers(stdout: bytes) -> dict:
    return {m["id"]: m for m in map(orjson.loads, stdout.splitlines()) if "id" in m}


def test_long_lines_both_ways_over_pipes():
    # A request line and a response line far beyond one 64 KiB read: framing reassembles both.
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "extract", "arguments": {"n": 3000, "resource_id": "acc1"},
        "_meta": {"pad": "x" * 300_000, "acp": {"row_limit": 5, "inline_max_bytes": 10_000_000}}}}
    proc = subprocess.Popen(serve_command(), env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    configure = {"jsonrpc": "2.0", "id": 5, "method": "acp/configure", "params": {"credentials": CREDS}}
    proc.stdin.write(_messages(configure, call))
    proc.stdin.flush()
    stdout = Lines(proc.stdout)
    while orjson.loads(line := stdout.next()).get("id") != 1:
        pass
    proc.stdin.close()
    proc.wait(timeout=60)
    assert len(line) > 100_000 and DEFERRED_KEY.encode() not in line
    result = orjson.loads(line)["result"]
    table = result["_meta"]["acp"]["system_data"]["table"]
    assert len(table) == 3000 and table[2999]["n"] == 2999
    assert orjson.loads(result["content"][0]["text"])["returned_rows"] == 5


def test_stdin_from_a_regular_file(tmp_path):
    # epoll cannot wait on a regular file: reads go through a worker thread and still frame lines.
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(_messages({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    with open(requests, "rb") as stdin:
        proc = subprocess.run(serve_command(), env=env(), stdin=stdin, capture_output=True, timeout=60)
    answers = _answers(proc.stdout)
    assert answers[0]["result"]["capabilities"]["experimental"]["acp"]
    assert "extract" in {t["name"] for t in answers[1]["result"]["tools"]}  # answered before the server ends


def test_requests_written_then_stdin_closed_at_once_are_all_answered():
    # `cat requests | analytics-acp serve ...`: stdin ends before the calls run. The SDK cancels the handlers still
    # running at EOF, so before the fix only initialize was answered; calls in progress now answer first (bounded
    # by stopping.EOF_GRACE_S), as the bare SDK server does for its quick handlers.
    configure = {"jsonrpc": "2.0", "id": 1, "method": "acp/configure", "params": {"credentials": CREDS}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "extract", "arguments": {"n": 40, "resource_id": "acc1"}, "_meta": {"acp": {"row_limit": 5}}}}
    proc = subprocess.run(serve_command(), env=env(), input=_messages(configure, listing, call), capture_output=True,
                          timeout=60)
    answers = _answers(proc.stdout)
    assert proc.returncode == 0 and sorted(answers) == [0, 1, 2, 3]
    assert "extract" in {t["name"] for t in answers[2]["result"]["tools"]}
    assert len(answers[3]["result"]["_meta"]["acp"]["system_data"]["table"]) == 40
    assert CREDS["api_key"].encode() not in proc.stdout + proc.stderr


# --- pre-serialized inline tables (results/table.py SerializedRows): sent as built, byte for byte ---

def _built_result(rows, headers=None, row_limit=2):
    from analytics_acp.declarations import Extraction, Header
    from analytics_acp.envelope import CallRecord, success
    from analytics_acp.results import BuildSettings, build_extraction

    out = Extraction(rows=rows, headers=[Header(*h) for h in headers or []], description="d")
    built = build_extraction(out, BuildSettings(row_limit=row_limit))
    record = CallRecord(connector_id="x", tool="t", kind="extraction", arguments={}, row_limit=row_limit, cost_limit_usd=0)
    return success(record, built.model_response, built.system_data)


def _plain(value):
    """The same value with every list a plain list (what the writer serialized before)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _same_line_as_before(result):
    from analytics_acp.results.table import SerializedRows

    table = result["_meta"]["acp"]["system_data"].get("table")
    deferred = DeferredMeta()
    line = encode(types.JSONRPCResponse(jsonrpc="2.0", id=4, result=deferred.park(result, 4)), deferred)
    before = orjson.dumps({"jsonrpc": "2.0", "id": 4, "result": _plain(result)}, option=orjson.OPT_APPEND_NEWLINE)
    assert line == before
    return table if isinstance(table, SerializedRows) else None


def test_inline_table_goes_out_as_built_and_byte_identical(monkeypatch):
    import analytics_acp.server_stdio as server_stdio

    rows = [{"id": i, "day": f"2026-01-{i % 28 + 1:02d}", "v": i * 1.5, "ok": i % 2 == 0, "t": f"é{i}"} for i in range(300)]
    headers = [("id", "integer"), ("day", "date"), ("v", "number"), ("ok", "boolean"), ("t", "string")]
    table = _same_line_as_before(_built_result(rows, headers))
    assert table is not None and orjson.loads(table.json) == rows  # 8.5 table, 8.6 values unchanged
    # the writer uses those bytes instead of serializing the rows again
    marker = orjson.dumps([{"marker": True}])
    table.json = marker
    line = encode(types.JSONRPCResponse(jsonrpc="2.0", id=4, result=_built_result_with(table)), None)
    assert marker in line
    monkeypatch.setattr(server_stdio, "SerializedRows", tuple)  # nothing pre-serialized: plain orjson path
    assert marker not in encode(types.JSONRPCResponse(jsonrpc="2.0", id=4, result=_built_result_with(table)), None)


def _built_result_with(table):
    return {"content": [], "_meta": {"acp": {"system_data": {"format": "inline", "row_count": 1, "table": table}}}}


def test_mixed_and_late_columns_and_big_ints_stay_byte_identical():
    # a mixed undeclared column is finished after the stream (8.6): the finished rows are what is sent
    assert _same_line_as_before(_built_result([{"a": 1}, {"a": "x", "b": 2}, {"a": 2.5}])) is not None
    # ints beyond 64 bits: orjson refuses them, the pydantic fallback writes the whole line
    result = _built_result([{"n": 2**70}, {"n": 1}], row_limit=0)  # (model_response itself takes no such ints)
    message = types.JSONRPCResponse(jsonrpc="2.0", id=4, result=result)
    line = encode(message, None)
    assert line == message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
    assert f'"table":[{{"n":{2**70}}},{{"n":1}}]'.encode() in line


def test_multitable_parts_go_out_as_built():
    from analytics_acp.declarations import MultiExtraction, TableOutput
    from analytics_acp.envelope import CallRecord, success
    from analytics_acp.results import BuildSettings, build_multitable
    from analytics_acp.results.table import SerializedRows

    out = MultiExtraction(tables=[TableOutput(name="a", rows=[{"x": 1}, {"x": 2}]), TableOutput(name="b", rows=[{"y": "z"}])],
                          description="d")
    built = build_multitable(out, BuildSettings())
    record = CallRecord(connector_id="x", tool="t", kind="extraction", arguments={}, row_limit=25, cost_limit_usd=0)
    result = success(record, built.model_response, built.system_data)
    parts = result["_meta"]["acp"]["system_data"]["tables"]
    assert all(isinstance(p["table"], SerializedRows) for p in parts)
    line = encode(types.JSONRPCResponse(jsonrpc="2.0", id=4, result=result), None)
    assert line == orjson.dumps({"jsonrpc": "2.0", "id": 4, "result": _plain(result)}, option=orjson.OPT_APPEND_NEWLINE)
    # the SDK's pydantic dump (HTTP, text-stream stdio) still takes the list
    assert orjson.loads(_pydantic_line(result))["result"] == orjson.loads(line)["result"]


def test_a_burst_of_calls_to_a_client_that_reads_nothing_for_a_while_loses_no_table():
    # Issue 27.1, as a host would: 200 tools/call on one connection, stdout not read until the
    # server has done all it can (its CPU time stops moving), then every answer must carry its table.

    calls = [{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {
        "name": "extract", "arguments": {"n": 40, "resource_id": "acc1"},
        "_meta": {"acp": {"credentials": CREDS, "row_limit": 3}}}} for i in range(200)]
    proc = subprocess.Popen(serve_command(), env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(_messages(*calls))
        proc.stdin.flush()
        until(cpu_settled(proc.pid), "the server stuck on its full stdout", tries=600, every_s=0.1)
        answers: dict = {}
        stdout = Lines(proc.stdout)
        while len(answers) < 201:  # initialize + 200 calls; stdin stays open (its close ends the session)
            message = orjson.loads(stdout.next())
            answers[message.get("id")] = message
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    tables = [answers[100 + i]["result"].get("_meta", {}).get("acp", {}).get("system_data") for i in range(200)]
    assert all(t is not None and len(t["table"]) == 40 for t in tables), sum(t is None for t in tables)


async def test_a_burst_of_calls_over_http_with_slow_readers_loses_no_table():
    # Issue 27.1, the HTTP equivalent: 200 concurrent tools/call POSTs on one session, each body read
    # only after every request was sent; every answer carries its full table.
    import anyio
    import httpx
    from core_helpers import http_mini

    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with http_mini() as url:
        async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=200)) as http:
            answer = await http.post(url, json=initialize_request(0, acp={"stores_system_data": True}), headers=headers)
            session = {**headers, "Mcp-Session-Id": answer.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"}
            await http.post(url, json=INITIALIZED, headers=session)
            sent = anyio.Event()
            started = 0
            tables: dict[int, object] = {}

            async def call(i: int) -> None:
                nonlocal started
                request = http.build_request("POST", url, headers=session, json={
                    "jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                        "name": "extract", "arguments": {"n": 40, "resource_id": "acc1"},
                        "_meta": {"acp": {"credentials": CREDS, "row_limit": 3}}}})
                response = await http.send(request, stream=True)
                started += 1
                if started == 200:
                    sent.set()
                await sent.wait()  # nobody reads a body before every request has its response head
                body = (await response.aread()).decode()
                await response.aclose()
                messages = ([orjson.loads(line[5:]) for line in body.splitlines() if line.startswith("data:")]
                            if body.lstrip().startswith(("event:", "data:")) else [orjson.loads(body)])
                payload = next(m for m in messages if m.get("id") == i)
                tables[i] = payload["result"].get("_meta", {}).get("acp", {}).get("system_data")

            async with anyio.create_task_group() as tg:
                for i in range(200):
                    tg.start_soon(call, i)
    assert len(tables) == 200
    assert all(t is not None and len(t["table"]) == 40 for t in tables.values())  # type: ignore[index]


def _unread_bytes(fd: int) -> int:
    import array
    import fcntl
    import termios

    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)  # bytes in the pipe that the server has not read
    return count[0]


def test_at_the_cap_the_server_stops_reading_and_answers_every_call_once_the_client_reads():
    # Issue 38.6: with a cap of 4 and a client that reads nothing, the server takes 4 calls (their answers
    # wait on a full stdout) and reads no further: the rest stays in the pipe and the client's writes block.
    import fcntl
    import os
    import threading

    cap, calls, rows = 4, 40, 200
    pad = "x" * 16_000  # 16 KB lines: the bytes the server took from the pipe count its lines closely
    lines = [orjson.dumps({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {
        "name": "extract", "arguments": {"n": rows, "resource_id": "acc1"},
        "_meta": {"pad": pad, "acp": {"credentials": CREDS, "row_limit": 3}}}}) + b"\n" for i in range(calls)]
    head = _messages()
    data = memoryview(head + b"".join(lines))
    sent = 0

    def write() -> None:  # blocking writes of at most PIPE_BUF bytes: each lands in the pipe whole or not at all
        nonlocal sent
        while sent < len(data):
            sent += os.write(proc.stdin.fileno(), data[sent:sent + 4096])

    proc = subprocess.Popen(serve_command(), env=env(ACP_MAX_CALLS_IN_PROGRESS=str(cap), ANALYTICS_ACP_LOG_LEVEL="DEBUG"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, 4096)  # one answer (~9 KB) fills stdout
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        # The server says when it pauses; 5 requests = initialize + 4 calls, whose answers cannot be written.
        Lines(proc.stderr).until("stdio reading paused: 4 calls in progress", "5 requests taken")
        taken_lines = (sent - _unread_bytes(proc.stdin.fileno()) - len(head)) / len(lines[0])
        # 4 running, 1 waiting for a place, 1 parsed and waiting for the gate, at most one 64 KiB read (4 lines).
        assert taken_lines <= cap + 6, taken_lines
        assert writer.is_alive() and sent < len(data) / 2  # most calls wait with the client: backpressure
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # DEBUG lines from here on
        answers: dict = {}
        stdout = Lines(proc.stdout)
        while len(answers) < calls + 1:
            message = orjson.loads(stdout.next())
            answers[message.get("id")] = message
        writer.join(timeout=60)
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    tables = [answers[100 + i]["result"]["_meta"]["acp"]["system_data"]["table"] for i in range(calls)]
    assert [len(t) for t in tables] == [rows] * calls and all(t[rows - 1]["n"] == rows - 1 for t in tables)


def test_calls_waiting_for_the_clients_tables_never_deadlock_the_capped_reader():
    # Issue 38.6: at the cap, calls blocked on acp/read_table (8.8) need the client's answers, which it writes
    # after more calls: the server reads on, holds those up to the cap and refuses the rest (SERVER_BUSY).
    cap = 2
    init = initialize_request(0, acp={"stores_system_data": True, "host_tables": True})
    calls = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "sum_table", "arguments": {"table_ref": f"t{i}", "column": "v"}, "_meta": {"acp": {}}}} for i in range(1, 6)]
    proc = subprocess.Popen(serve_command(), env=env(ACP_MAX_CALLS_IN_PROGRESS=str(cap)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(orjson.dumps(init) + b"\n")
        proc.stdin.flush()
        stdout = Lines(proc.stdout)
        stdout.next()
        proc.stdin.write(b"".join(orjson.dumps(m) + b"\n" for m in
                                  [INITIALIZED, *calls]))
        proc.stdin.flush()
        answers: dict = {}
        while len(answers) < len(calls):
            message = orjson.loads(stdout.next())
            if message.get("method") == "acp/read_table":  # answered only now, behind every call in the pipe
                ref = message["params"]["ref"]
                table = {"format": "inline", "headers": [{"name": "v", "type": "integer"}],
                         "table": [{"v": int(ref[1:])}, {"v": 10}]}
                proc.stdin.write(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": table}) + b"\n")
                proc.stdin.flush()
            else:
                answers[message["id"]] = message
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    sums = {i: orjson.loads(answers[i]["result"]["content"][0]["text"])["sum"] for i in range(1, 5)}
    assert sums == {i: i + 10 for i in range(1, 5)}  # two ran, two were held (read past the cap) and ran next
    busy = answers[5]["error"]
    assert busy["code"] == -32051 and busy["data"] == {"name": "SERVER_BUSY", "max_calls_in_progress": cap}
    assert "2 calls in progress" in busy["message"] and "then send it again" in busy["message"]


def test_only_the_clients_answers_skip_the_line_limit_while_it_owes_one():
    # Issue 38.6 review: while the client owes the answer to acp/read_table, its requests keep the 4 MiB line limit
    # (only an answer may be big: an inline host table); an answer naming the id as text ends the debt as the SDK
    # reads it (correlation_key), so the next big request is refused too.
    init = initialize_request(0, acp={"stores_system_data": True, "host_tables": True})
    big = "x" * (ACP_MAX_MESSAGE_BYTES + 1000)

    def big_call(i):
        return orjson.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
            "name": "sum_table", "arguments": {"table_ref": big, "column": "v"}}}) + b"\n"

    proc = subprocess.Popen(serve_command(), env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "sum_table", "arguments": {"table_ref": "t", "column": "v"}}}
        proc.stdin.write(b"".join(orjson.dumps(m) + b"\n" for m in
                                  [init, INITIALIZED, call]))
        proc.stdin.flush()
        stdout = Lines(proc.stdout)
        asked = orjson.loads(stdout.until('"acp/read_table"'))
        proc.stdin.write(big_call(2))  # a request while the client owes: refused unread, with its id
        proc.stdin.flush()
        refused = orjson.loads(stdout.until('"id":2'))
        assert refused["error"]["code"] == -32017 and "larger than" in refused["error"]["message"]
        rows = [{"v": 1, "pad": big[:1_000_000]}] * 5  # a table past 4 MiB
        answer = {"jsonrpc": "2.0", "id": str(asked["id"]), "result": {
            "format": "inline", "headers": [{"name": "v", "type": "integer"}, {"name": "pad", "type": "string"}],
            "table": rows}}
        line = orjson.dumps(answer) + b"\n"
        assert len(line) > ACP_MAX_MESSAGE_BYTES
        proc.stdin.write(line)
        proc.stdin.flush()
        summed = orjson.loads(stdout.until('"id":1'))
        assert not summed["result"].get("isError"), summed
        assert orjson.loads(summed["result"]["content"][0]["text"])["sum"] == len(rows)
        proc.stdin.write(big_call(3))  # the debt is paid: the limit holds again
        proc.stdin.flush()
        assert orjson.loads(stdout.until('"id":3'))["error"]["code"] == -32017
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
