"""Handshake (4), client capability (4.1, 4.3), plain MCP clients (2.2), stdio hygiene (3.2)."""

import sys

import pytest
from core_helpers import CREDS, MINI, mini_client

pytestmark = pytest.mark.asyncio


async def test_capability_fields_4_2():
    async with mini_client() as c:
        cap = c.server_capability
        assert cap["version"] == "1.0"
        assert cap["defaults"] == {"row_limit": 5, "cost_limit_usd": 1.0, "field_limit": 3, "tables": ["events"]}
        assert cap["credentials_schema"]["oneOf"][0]["properties"]["type"]["const"] == "api_key"
        assert cap["config_schema"]["properties"]["region"]["default"] == "eu"
        assert cap["resource_id"]["format"] == "<account>[.<table>]"
        assert cap["resource_id"]["title"] == "Account or table"
        assert cap["autocontext"] == {"cache_ttl_s": 3600, "delivery": ["inject", "suggest", "on_first_call"]}
        assert cap["cost"] == {"currency": "USD", "model": "per_row", "description": "0.01 USD per requested row."}
        assert cap["extraction_tools"][0] == "extract"  # 4.2: the default tool first
        assert set(cap["extraction_tools"]) == {"extract", "paid", "multi", "steps", "spin"}
        assert [t["name"] for t in cap["table_catalog"]] == ["events", "pages", "extra"]
        assert cap["table_catalog"][1]["required"] is True
        assert c.server_info["name"] == "mini"
        assert c.initialize_result["protocolVersion"] == "2025-11-25"


async def test_tools_list_injections_6_2_7_8_7():
    async with mini_client() as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        assert {"autocontext", "autocontext_data"} <= set(tools)
        rid = tools["extract"]["inputSchema"]["properties"]["resource_id"]
        assert rid == {"type": "string", "description": "Account id, optionally followed by .table"}
        assert "resource_id" not in tools["extract"]["inputSchema"].get("required", [])
        assert "resource_id" not in tools["sum_table"]["inputSchema"]["properties"]  # 6.2: no resource, no property
        tables = tools["multi"]["inputSchema"]["properties"]["tables"]
        assert tables["items"]["enum"] == ["events", "pages", "extra"]
        assert "tables" not in tools["extract"]["inputSchema"]["properties"]
        ac = tools["autocontext"]["inputSchema"]["properties"]
        assert ac["request_data"]["items"]["enum"] == ["fields", "broken", "table_stats"]
        assert tools["extract"]["inputSchema"]["properties"]["start_date"]["x-acp-date"] == "start"


async def test_plain_mcp_client_gets_text_and_credentials_missing_2_2():
    async with mini_client(capability=False) as c:
        assert c.server_capability is not None  # the server still announces ACP
        res = await c.call_tool("extract", {"n": 2, "resource_id": "acc1"}, meta={"credentials": CREDS})
        # 4.3: without the client capability _meta.acp is ignored -> no credentials
        assert res.is_error
        assert res.model_response["error"]["name"] == "ACP_CREDENTIALS_MISSING"
        message = res.model_response["error"]["message"]  # tells the host author why (issue 15.6)
        assert "did not declare capabilities.experimental.acp" in message and "ignores _meta.acp" in message
        assert "none were configured" not in message
        listing = await c.call_tool("autocontext", {}, meta={"credentials": CREDS})
        assert "did not declare capabilities.experimental.acp" in listing.model_response["error"]["message"]
        data = await c.call_tool("autocontext_data", {})
        assert not data.is_error and data.model_response[0]["id"] == "fields"


async def test_other_major_version_is_plain_mcp_4_3():
    async with mini_client(capability={"version": "2.0", "stores_system_data": True}) as c:
        res = await c.call_tool("extract", {"n": 1, "resource_id": "acc1"}, meta={"credentials": CREDS})
        assert res.model_response["error"]["name"] == "ACP_CREDENTIALS_MISSING"
        assert "declared ACP 2.0, a major version this server does not speak" in res.model_response["error"]["message"]


async def test_acp_client_without_credentials_is_asked_for_them():
    async with mini_client() as c:
        res = await c.call_tool("extract", {"n": 1, "resource_id": "acc1"})
        assert res.error["message"].startswith("This source needs credentials and none were configured.")


async def test_stdout_only_protocol(tmp_path):
    # 3.2: a print() inside a tool must not corrupt the stream: the SDK diverts fd 1 to stderr.
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "analytics_acp", "serve", MINI],
        input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"not json\n',
        capture_output=True,
        timeout=60,
        env=__import__("core_helpers").env(),
    )
    for line in proc.stdout.decode().splitlines():
        assert line.startswith("{") and '"jsonrpc"' in line
