"""A pure MCP client (the SDK's ClientSession: no ACP capability, no _meta) against the example
connector (spec 2.2, 4.3, 12.3): it sees every tool, gets model_response as text in content[0],
and ACP_CREDENTIALS_MISSING where the source needs credentials."""

import json
import os
import sys
from contextlib import asynccontextmanager

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


@asynccontextmanager
async def plain_session():
    params = StdioServerParameters(command=sys.executable, args=["-m", "analytics_acp", "serve", "example"],
                                   env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            yield session, init


def text_of(result):
    assert result.content and result.content[0].type == "text"
    return json.loads(result.content[0].text)


async def test_plain_client_sees_every_tool_and_the_capability_is_harmless():
    async with plain_session() as (session, init):
        names = [t.name for t in (await session.list_tools()).tools]
        assert names[:2] == ["autocontext", "autocontext_data"]
        assert {"query_orders", "capture_session", "table_stats", "premium_report"} <= set(names)
        # The server still announces ACP; a plain client simply ignores it (2.1).
        assert init.capabilities.experimental["acp"]["version"] == "1.0"


async def test_plain_client_gets_model_response_as_text():
    async with plain_session() as (session, _):
        blocks = text_of(await session.call_tool("autocontext_data", {}))
        assert {b["id"] for b in blocks} == {"tables", "table_schema", "channels", "quota"}
        # 12.3: listing works without credentials here (the public accounts).
        listing = text_of(await session.call_tool("autocontext", {}))
        assert listing["total_available"] == 8
        assert [r["resource_id"] for r in listing["resources"]][:2] == ["acct01", "acct02"]


async def test_plain_client_gets_credentials_missing_where_needed():
    async with plain_session() as (session, _):
        for tool, args in [
            ("query_orders", {"resource_id": "acct01"}),
            ("capture_session", {"resource_id": "acct01"}),
            ("account_info", {"resource_id": "acct01"}),
        ]:
            result = await session.call_tool(tool, args)
            assert result.is_error
            error = text_of(result)["error"]
            assert error["name"] == "ACP_CREDENTIALS_MISSING" and error["code"] == -32011
            assert "credentials" in error["message"]


async def test_plain_client_without_host_tables_gets_a_typed_error():
    async with plain_session() as (session, _):
        result = await session.call_tool("table_stats", {"table_ref": "ds1"})
        assert result.is_error
        assert text_of(result)["error"]["name"] == "ACP_HOST_TABLES_UNSUPPORTED"
