"""Messages the SDK would swallow (3.2, 4.3, 12.1): requests with an invalid JSON-RPC id get an error
(-32600, id null) instead of silence, over stdio and Streamable HTTP; a second initialize on a live
connection is refused and the session keeps its state."""

import json

import httpx
import pytest
from analytics_acp.host import AcpClient, ProtocolError
from analytics_acp.kit.wire import INITIALIZED, StdioWire, initialize_request
from core_helpers import CREDS, env, http_mini, mini_client, serve_command

BAD_IDS = ['{"a": 1}', "[1]", "true", "false", "1.5", "2.0", "1e999999", "NaN", "-Infinity", "null"]
INIT = initialize_request(plain=True)["params"]


def _bad_lines():
    for bad in BAD_IDS:
        for method in ("tools/list", "no/such_method"):
            yield f'{{"jsonrpc": "2.0", "id": {bad}, "method": "{method}"}}'


def test_invalid_ids_get_an_error_over_stdio():
    with StdioWire(serve_command(), env=env()) as wire:
        lines = [json.dumps(initialize_request(0, plain=True)), json.dumps(INITIALIZED), *_bad_lines(),
                 '{"jsonrpc": "2.0", "id": "last", "method": "ping"}']
        wire.send_raw("\n".join(lines) + "\n")
        # every line before the ping's answer; on a silent server only init and ping come back
        answers = wire.through("last")[:-1]
    errors = [a for a in answers if "error" in a]
    assert len(errors) == len(BAD_IDS) * 2
    for error in errors:
        assert error["id"] is None and error["error"]["code"] == -32600
        assert "must be a string or an integer" in error["error"]["message"]


def test_invalid_ids_get_400_and_an_error_over_http():
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with http_mini() as url, httpx.Client(timeout=30) as http:
        init = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}, headers=headers)
        assert init.status_code == 200
        session = {**headers, "Mcp-Session-Id": init.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        for line in _bad_lines():
            for hdrs in (session, headers):  # inside a session and without one
                answer = http.post(url, content=line, headers=hdrs)
                assert answer.status_code == 400, line
                body = answer.json()
                assert body["id"] is None and body["error"]["code"] == -32600, line
        # Good ids still work (strings and integers, big ones included), and so do notifications.
        for good in ('"abc"', "7", "123456789012345678901234567890"):
            answer = http.post(url, content=f'{{"jsonrpc": "2.0", "id": {good}, "method": "ping"}}', headers=session)
            assert answer.status_code == 200 and "error" not in answer.text, good
        note = http.post(url, content='{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}',
                         headers=session)
        assert note.status_code == 202


async def _second_initialize_is_refused(client):
    await client.configure(row_limit=7, credentials=CREDS)
    with pytest.raises(ProtocolError) as err:  # without experimental.acp: would turn the session into plain MCP
        await client.raw_request("initialize", INIT)
    assert err.value.code == -32600 and "already initialized" in err.value.message
    assert (await client.configure())["effective"]["row_limit"] == 7
    assert (await client.configure())["effective"]["has_credentials"] is True
    # Still an ACP session: _meta.acp is honoured (a plain MCP session would ignore it and use 7).
    res = await client.call_tool("extract", {"n": 12, "resource_id": "acc1"}, meta={"row_limit": 3})
    assert res.model_response["returned_rows"] == 3 and res.system_info["row_limit"] == 3


@pytest.mark.asyncio
async def test_second_initialize_is_refused_over_stdio_4_3():
    async with mini_client() as client:
        await _second_initialize_is_refused(client)


@pytest.mark.asyncio
async def test_second_initialize_is_refused_over_http_4_3():
    with http_mini() as url:
        async with AcpClient.http(url) as client:
            await _second_initialize_is_refused(client)


def test_id_screening_rules():
    from analytics_acp.requestids import invalid_id_error

    assert invalid_id_error('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}')["error"]["code"] == -32600
    # A key spelled with a \u escape is still "method" to a JSON parser, so it is still screened.
    assert invalid_id_error(b'{"jsonrpc": "2.0", "id": true, "\\u006dethod": "ping"}') is not None
    assert invalid_id_error(b'[{"jsonrpc": "2.0", "id": 1, "method": "a"}, {"jsonrpc": "2.0", "id": [], "method": "b"}]')
    # Responses are never answered, whatever their id; notifications and good ids pass; so does junk (the SDK's).
    for fine in ('{"jsonrpc": "2.0", "id": 1.5, "result": {"method": 1}}', '{"jsonrpc": "2.0", "id": null, "error": {}}',
                 '{"jsonrpc": "2.0", "method": "notifications/initialized"}', '{"jsonrpc": "2.0", "id": -7, "method": "x"}',
                 '{"jsonrpc": "2.0", "id": "", "method": "x"}', '{"jsonrpc": "2.0", "id": 18446744073709551617, "method": "x"}',
                 "not json", '{"method": '):
        assert invalid_id_error(fine) is None, fine
