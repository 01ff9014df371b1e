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
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
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
        assert answer["error"]["data"]["name"] == "ACP_INVALID_ARGUMENTS" and "1 MiB" in answer["error"]["message"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _stdio_line(proc, message: dict) -> None:
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def test_stdio_line_past_the_limit_is_refused_unparsed_and_the_server_goes_on():
    proc = subprocess.Popen(serve_command(), env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        _stdio_line(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"},
            "capabilities": {"experimental": {"acp": {"version": "1.0"}}}}})
        assert json.loads(proc.stdout.readline())["id"] == 1
        _stdio_line(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        # 50 MB in one request: refused as soon as the line passes the limit, never parsed (so its id is unknown)
        _stdio_line(proc, {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "extract", "arguments": {"n": 1, "resource_id": "acc1", "note": "z" * (50 * 1024 * 1024)}}})
        _stdio_line(proc, {"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
        refused = json.loads(proc.stdout.readline())
        assert refused["id"] is None and refused["error"]["code"] == -32017, refused
        assert refused["error"]["data"] == {"name": "ACP_INVALID_ARGUMENTS", "max_arguments_bytes": ACP_MAX_ARGUMENTS_BYTES,
                                            "max_message_bytes": ACP_MAX_MESSAGE_BYTES}
        assert f"larger than {ACP_MAX_MESSAGE_BYTES:,} bytes" in refused["error"]["message"]
        listed = json.loads(proc.stdout.readline())  # the next request is answered: the process is healthy
        assert listed["id"] == 8 and any(t["name"] == "extract" for t in listed["result"]["tools"])
    finally:
        proc.kill()
        proc.wait()


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
