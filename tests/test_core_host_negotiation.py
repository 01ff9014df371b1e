"""4.3 on the host side: a server whose initialize lacks experimental.acp, or announces another major
version, is used as plain MCP by the core's host client: no _meta.acp, never credentials, no acp/configure.
The server is the bare-SDK fixture server, which records every request it receives."""

import json
import sys
from pathlib import Path

import pytest
from analytics_acp.host import AcpClient, NotAcpServer, ProtocolError, negotiate

RAW_SERVER = Path(__file__).parent / "build_fixtures" / "raw_acp_server.py"
SECRET = "HUNTER2-0b9e77"
META = {"credentials": {"type": "url", "url": f"postgresql://u:{SECRET}@127.0.0.1/db"}, "row_limit": 3,
        "session_id": "s1"}


async def _session(tmp_path, flags):
    record = tmp_path / "requests.jsonl"
    async with AcpClient.stdio([sys.executable, str(RAW_SERVER), *flags], env={"RAW_ACP_RECORD": str(record)}) as client:
        reason = client.plain_mcp_reason
        if reason is not None:
            with pytest.raises(NotAcpServer) as err:
                await client.configure(credentials=META["credentials"])
            assert SECRET not in str(err.value) and "plain MCP" in str(err.value)
        else:
            with pytest.raises(ProtocolError):  # sent; this bare server has no acp/configure handler
                await client.configure(credentials=META["credentials"])
        res = await client.call_tool("hello", {}, meta=META)
        assert res.model_response == {"hello": "world"}
        announced, negotiated = client.announced_capability, client.server_capability
    requests = [r for r in map(json.loads, record.read_text().splitlines()) if not r["method"].startswith("notifications/")]
    return reason, announced, negotiated, requests, record.read_text()


@pytest.mark.asyncio
@pytest.mark.parametrize("flags,why", [
    (["--no-acp"], "does not announce capabilities.experimental.acp"),
    (["--acp-version", "2.0"], "announces ACP 2.0"),
    (["--acp-version", "0.9"], "announces ACP 0.9"),
])
async def test_a_server_without_acp_1_is_plain_mcp_and_gets_nothing_of_acp(tmp_path, flags, why):
    reason, announced, negotiated, requests, raw = await _session(tmp_path, flags)
    assert negotiated is None and why in reason and "plain MCP" in reason
    if flags != ["--no-acp"]:
        assert announced["version"] == flags[1]  # still visible to whoever wants to report it
    assert [r["method"] for r in requests] == ["initialize", "tools/call"]  # no acp/configure
    call = requests[1]["params"]
    assert "acp" not in (call.get("_meta") or {})
    assert SECRET not in raw and "credentials" not in raw and "row_limit" not in raw


@pytest.mark.asyncio
async def test_an_acp_1_minor_version_is_used_as_acp(tmp_path):
    # The control case: the same recorder sees configure and _meta.acp once ACP is negotiated (4.3: minors are compatible).
    reason, _, negotiated, requests, _ = await _session(tmp_path, ["--acp-version", "1.7"])
    assert reason is None and negotiated["version"] == "1.7"
    assert [r["method"] for r in requests] == ["initialize", "acp/configure", "tools/call"]
    assert requests[2]["params"]["_meta"]["acp"]["row_limit"] == 3


def test_negotiate_rules():
    def init(acp):
        return {"capabilities": {"experimental": {"acp": acp}}}

    assert negotiate(init({"version": "1.0"}))[0] == {"version": "1.0"}
    assert negotiate(init({"version": "1"}))[1] is None
    for bad in ({"version": "2.0"}, {"version": "10.1"}, {}, {"version": 1}, "1.0", None):
        cap, reason = negotiate(init(bad) if bad is not None else {"capabilities": {}})
        assert cap is None and "plain MCP server (4.3)" in reason, bad


def test_the_host_dispatcher_is_given_its_resolver_at_construction():
    """Issue 38.7: the resolver is a constructor argument (it was set on the dispatcher afterwards); whether the
    server speaks ACP is read when a request arrives, so a plain MCP server is refused host tables (4.3)."""
    import anyio
    from analytics_acp.errors import HostTablesUnsupported
    from analytics_acp.host.client import _HostDispatcher
    from mcp.shared.exceptions import MCPError

    async def resolver(ref, call_id):
        return {"ref": ref, "call_id": call_id}

    send, receive = anyio.create_memory_object_stream(1)
    speaks_acp = [False]
    dispatcher = _HostDispatcher(receive, send, resolver=resolver, uses_acp=lambda: speaks_acp[0])
    with pytest.raises(MCPError) as refused:
        anyio.run(dispatcher._read_table, {"ref": "t1", "call_id": "c1"})
    assert refused.value.error.code == HostTablesUnsupported.code
    speaks_acp[0] = True
    assert anyio.run(dispatcher._read_table, {"ref": "t1", "call_id": "c1"}) == {"ref": "t1", "call_id": "c1"}
    send.close()
    receive.close()
