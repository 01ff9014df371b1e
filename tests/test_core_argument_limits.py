"""Huge arguments (issue 15.3): a request's arguments are at most 1 MiB of JSON (ACP_INVALID_ARGUMENTS
saying the limit; over HTTP a body past the transport limit gets a JSON-RPC error, not plain text),
and long strings are echoed cut in system_info.arguments with their full length."""

import json
import socket
import subprocess
import threading
import urllib.error
import urllib.request

import pytest
from analytics_acp.constants import ACP_ECHO_MAX_CHARS, ACP_MAX_ARGUMENTS_BYTES, ACP_MAX_MESSAGE_BYTES
from analytics_acp.kit.wire import StdioWire
from core_helpers import CREDS, env, mini_client, serve_command

M = {"credentials": CREDS, "autocontext_delivered": True}


@pytest.mark.asyncio
async def test_arguments_over_the_maximum_are_refused_and_not_echoed_whole():
    huge = "x" * (2 * ACP_MAX_ARGUMENTS_BYTES)
    async with mini_client() as c:
        res = await c.call_tool("extract", {"n": 1, "resource_id": "acc1", "note": huge}, meta=M)
        assert res.error["name"] == "ACP_INVALID_ARGUMENTS"
        assert "the maximum is 1,048,576 bytes (1 MiB)" in res.error["message"]
        echoed = res.system_info["arguments"]["note"]
        assert len(echoed) < ACP_ECHO_MAX_CHARS + 100 and echoed.endswith(f"[cut: {len(huge):,} characters in full]")
        assert len(json.dumps(res.raw)) < 100_000  # nothing echoes the 2 MB back


@pytest.mark.asyncio
async def test_long_string_under_the_maximum_is_echoed_cut():
    long_text = "y" * (ACP_ECHO_MAX_CHARS * 3)
    async with mini_client() as c:
        res = await c.call_tool("extract", {"n": 1, "resource_id": "acc1", "note": long_text}, meta=M)
        echoed = res.system_info["arguments"]["note"]  # refused as an unknown argument; echoed cut
        assert echoed.startswith("y" * 100) and echoed.endswith(f"[cut: {len(long_text):,} characters in full]")
        short = await c.call_tool("extract", {"n": 1, "resource_id": "acc1"}, meta=M)
        assert short.system_info["arguments"]["n"] == 1 and "note" not in short.system_info["arguments"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_body_past_the_transport_limit_gets_a_json_rpc_error():
    port = _free_port()
    proc = subprocess.Popen(serve_command("--http", "--port", str(port)), env=env(), stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        body = json.dumps({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
                           "params": {"name": "extract", "arguments": {"sql": "z" * (5 * 1024 * 1024)}}}).encode()
        for _ in range(600):  # readiness wait on the port (bounded), not a timed assertion
            if proc.poll() is not None:
                raise AssertionError("the server exited")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                threading.Event().wait(0.05)
        request = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=60)
        assert caught.value.code == 413
        answer = json.loads(caught.value.read())
        assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == -32017
        assert answer["id"] == "call-1"  # read from the body's first bytes (issue 23.4)
        assert answer["error"]["data"]["name"] == "ACP_INVALID_ARGUMENTS" and "1 MiB" in answer["error"]["message"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_stdio_line_past_the_limit_is_refused_unparsed_and_the_server_goes_on():
    wire = StdioWire(serve_command(), env=env())
    try:
        wire.initialize()
        # 50 MB in one request: refused as soon as the line passes the limit, never parsed whole; its id,
        # written before params, is read from the first bytes (issue 23.4)
        wire.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "extract", "arguments": {"n": 1, "resource_id": "acc1", "note": "z" * (50 * 1024 * 1024)}}})
        # The same with the id after params: it cannot be known without reading the whole line (id null).
        wire.send({"jsonrpc": "2.0", "method": "tools/call", "params": {
            "name": "extract", "arguments": {"note": "z" * (5 * 1024 * 1024)}}, "id": "late"})
        wire.send({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
        refused = wire.next()
        assert refused["id"] == 7 and refused["error"]["code"] == -32017, refused
        late = wire.next()
        assert late["id"] is None and late["error"]["code"] == -32017, late
        assert refused["error"]["data"] == {"name": "ACP_INVALID_ARGUMENTS", "max_arguments_bytes": ACP_MAX_ARGUMENTS_BYTES,
                                            "max_message_bytes": ACP_MAX_MESSAGE_BYTES}
        assert f"larger than {ACP_MAX_MESSAGE_BYTES:,} bytes" in refused["error"]["message"]
        listed = wire.next()  # the next request is answered: the process is healthy
        assert listed["id"] == 8 and any(t["name"] == "extract" for t in listed["result"]["tools"])
    finally:
        wire.kill()


@pytest.mark.asyncio
async def test_stdio_answer_to_read_table_is_not_cut_at_the_line_limit():
    rows = [{"v": i, "pad": "p" * 100} for i in range(ACP_MAX_MESSAGE_BYTES // 100)]  # an inline table past the limit

    async def resolver(ref, call_id):
        return {"format": "inline", "row_count": len(rows), "headers": [{"name": "v", "type": "integer"},
                {"name": "pad", "type": "string"}], "table": rows}

    async with mini_client(resolver=resolver, read_timeout=120) as c:  # bound: a cut answer would never come
        assert len(json.dumps(rows)) > ACP_MAX_MESSAGE_BYTES
        r = await c.call_tool("sum_table", {"table_ref": "big", "column": "v"}, meta={})
        assert r.model_response["rows"] == len(rows) and r.model_response["sum"] == sum(range(len(rows)))


@pytest.mark.parametrize(("prefix", "expected"), [
    (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"note":"zzz', 7),
    (b'{"jsonrpc": "2.0", "method": "tools/call", "id": "a\\"b", "params": {', 'a"b'),  # escapes decoded
    (b'  {\n "id" : -4 ,', -4),
    (b'{"jsonrpc":"2.0","method":"tools/call","params":{"id":5},"id":6}', None),  # params first: not read
    (b'{"id":12', None),  # the number may go on past the prefix
    (b'{"id":"unterminated', None),
    (b'{"id":1.5,"method":"x"', None),  # not a string or an integer (3.2): answered with null
    (b'{"id":null,', None),
    (b'{"id":true,', None),
    (b'[{"id":1,"method":"x"}]', None),  # a batch has no single id
    (b'not json', None),
])
def test_id_is_read_from_the_first_bytes_of_a_refused_message(prefix, expected):
    from analytics_acp.argument_limits import too_large_error
    from analytics_acp.requestids import id_in_prefix

    assert id_in_prefix(prefix) == expected
    assert too_large_error(10, "line", prefix)["id"] == expected


def test_id_search_is_bounded_to_the_prefix():
    from analytics_acp.requestids import ID_PREFIX_BYTES, head, id_in_prefix

    padding = b'{"method":"' + b"m" * ID_PREFIX_BYTES + b'","id":3,"params":{}}'
    assert id_in_prefix(padding) is None  # the id lies past the bytes that are read
    pieces = [b"a" * 1000] * 100
    assert head(pieces) == b"a" * ID_PREFIX_BYTES and head([b"ab", b"cd"]) == b"abcd"
