"""The MCP Inspector v2 CLI (@modelcontextprotocol/inspector --cli, pinned) against the example server:
tools/list and tools/call over stdio and Streamable HTTP. A third-party plain MCP client sees every tool
and gets the ACP result with its `_meta.acp` intact (2.1, 2.2)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from analytics_acp.kit.served import START_TIMEOUT_S

sys.path.insert(0, str(Path(__file__).parent / "external"))
import acp_external  # noqa: E402

pytestmark = pytest.mark.external
INSPECTOR = acp_external.NODE_MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"


# The Inspector starts stdio servers with a minimal environment: forward what the suite's fence needs.
FORWARD_ENV = ("PYTHONPATH", "ANALYTICS_ACP_NETGUARD", "ACP_CACHE_DIR", "ACP_TMP_DIR")
# The Inspector gives a server 15 s to answer initialize, and over stdio that includes the server's cold start
# (Python, the SDK, the connector): on a loaded CI machine that took longer ("Connection timed out after
# 15000 ms"). Our own start bound (the kit's serve_http, the bridge's fleet) is START_TIMEOUT_S: use it here.
CONNECT_TIMEOUT = ("--connect-timeout", str(int(START_TIMEOUT_S * 1000)))


def inspector(tmp_path, target, *args, returncode=0):
    """Run `inspector --cli <target> <args>` with Node 22; returns the parsed JSON it prints.

    The CLI exits 5 when the tool result has isError (the result is still printed on stdout).
    """
    acp_external.require_npm_clients()
    env = acp_external.node_env()
    env["MCP_CATALOG_PATH"] = str(tmp_path / "inspector-catalog.json")  # never the user's ~/.mcp-inspector
    forwarded = [] if target[0].startswith("http") else [a for k in FORWARD_ENV if k in env for a in ("-e", f"{k}={env[k]}")]
    proc = subprocess.run([str(acp_external.NODE), str(INSPECTOR), "--cli", *CONNECT_TIMEOUT, *forwarded, *target, *args],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=START_TIMEOUT_S + 60)
    assert proc.returncode == returncode, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_inspector_lists_the_tools(tmp_path):
    listing = inspector(tmp_path, acp_external.SERVE_EXAMPLE, "--method", "tools/list")
    tools = {t["name"]: t for t in listing["tools"]}
    assert list(tools)[:2] == ["autocontext", "autocontext_data"]
    assert {"query_orders", "list_customers", "capture_session", "premium_report", "table_stats"} <= set(tools)
    props = tools["query_orders"]["inputSchema"]["properties"]
    assert props["start_date"]["x-acp-date"] == "start" and props["end_date"]["x-acp-date"] == "end"
    assert tools["table_stats"]["inputSchema"]["properties"]["table_ref"]["x-acp-input"] == "table_ref"
    assert tools["capture_session"]["inputSchema"]["properties"]["tables"]["items"]["enum"] == ["events", "pages", "cookies"]


def test_inspector_call_keeps_result_meta(tmp_path):
    result = inspector(tmp_path, acp_external.SERVE_EXAMPLE, "--method", "tools/call",
                       "--tool-name", "autocontext_data", "--tool-arg", "resource_id=acct01.orders")
    assert result.get("isError") is not True
    blocks = json.loads(result["content"][0]["text"])
    assert [b["id"] for b in blocks] == ["table_schema", "channels", "quota"]  # applies_to: table level
    acp = result["_meta"]["acp"]
    assert acp["kind"] == "autocontext_data" and acp["version"] == "1.0"
    assert acp["system_info"]["resource_id"] == "acct01.orders"  # normalized by the connector's hook


def test_inspector_call_error_is_typed(tmp_path):
    result = inspector(tmp_path, acp_external.SERVE_EXAMPLE, "--method", "tools/call",
                       "--tool-name", "query_orders", "--tool-arg", "resource_id=acct01", returncode=5)
    assert result["isError"] is True
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["name"] == "ACP_CREDENTIALS_MISSING"  # a plain client sends no credentials (2.2)
    assert result["_meta"]["acp"]["error"] == error


def test_inspector_over_streamable_http(tmp_path):
    acp_external.require_npm_clients()
    with acp_external.http_example(tmp_path / "server") as url:
        listing = inspector(tmp_path, [url], "--method", "tools/list")
        result = inspector(tmp_path, [url], "--method", "tools/call", "--tool-name", "autocontext")
    assert {"autocontext", "query_orders"} <= {t["name"] for t in listing["tools"]}
    suggestions = json.loads(result["content"][0]["text"])
    assert suggestions["total_available"] == 8  # public accounts: listing needs no credentials (12.3)
    assert result["_meta"]["acp"]["system_info"]["resource_id"] is None
