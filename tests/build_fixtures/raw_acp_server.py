"""A hand-written ACP server on the bare MCP SDK (not the analytics_acp runtime): the "anyone's server" of
the install and check tests. Flags make it deliberately broken in one way each:

  --no-acp        do not announce capabilities.experimental.acp (a plain MCP server)
  --acp-version V announce ACP version V (default 1.0; another major makes hosts use it as plain MCP, 4.3)
  --no-reserved   do not publish autocontext / autocontext_data
  --dirty         write a file inside its own folder on every tools/call (13.1 forbids it)
  --open-http     in HTTP mode, ignore ACP_HTTP_TOKEN (13.3 requires it)
  --name NAME     serverInfo.name (default tinyconn)
  --http --port N serve Streamable HTTP (requires ACP_HTTP_TOKEN when set, like 13.3)

With RAW_ACP_RECORD=<file> every request it receives (method and params) is appended to that file
as a JSON line, so tests can prove what a host sent it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

HERE = Path(__file__).resolve().parent
CAPABILITY = {
    "version": "1.0",
    "defaults": {"row_limit": 25, "cost_limit_usd": 0},
    "credentials_schema": {"type": "object", "properties": {}},
    "resource_id": {"title": "Nothing", "description": "No resources.", "format": "none", "examples": []},
    "autocontext": {"cache_ttl_s": 3600, "delivery": ["inject", "suggest"]},
    "cost": {"currency": "USD", "model": "free", "description": "No cost."},
    "extraction_tools": [],
}


def _tools(reserved: bool) -> list[dict[str, Any]]:
    out = [{"name": "hello", "description": "Say hello.", "inputSchema": {"type": "object", "properties": {}}}]
    if reserved:
        out += [
            {"name": "autocontext_data", "description": "List the autocontext blocks.",
             "inputSchema": {"type": "object", "properties": {}}},
            {"name": "autocontext", "description": "Return the autocontext.",
             "inputSchema": {"type": "object", "properties": {"request_data": {"type": "array", "items": {"type": "string"}}}}},
        ]
    return out


def build(args: argparse.Namespace) -> Server:
    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in _tools(not args.no_reserved)])

    async def call_tool(ctx, params):
        if args.dirty:
            (HERE / "written-at-runtime.txt").write_text(datetime.now(UTC).isoformat())
        info = {"acp": args.name, "acp_version": "1.0", "tool": params.name, "kind": "info", "resource_id": None,
                "arguments": params.arguments or {}, "row_limit": 25, "cost_limit_usd": 0, "cost_estimate_usd": 0,
                "cost_actual_usd": None, "duration_ms": 0, "fetched_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "autocontext_attached": False, "messages": [], "warnings": []}
        body = [] if params.name.startswith("autocontext") else {"hello": "world"}
        return {"content": [{"type": "text", "text": json.dumps(body)}], "isError": False,
                "_meta": {"acp": {"version": "1.0", "kind": info["kind"], "system_info": info}}}

    server: Server = Server(args.name, version="0.0.1", on_list_tools=list_tools, on_call_tool=call_tool)

    async def handshake(ctx, call_next):
        record = os.environ.get("RAW_ACP_RECORD")
        if record:
            with open(record, "a", encoding="utf-8") as out:
                out.write(json.dumps({"method": ctx.method, "params": ctx.params}, default=str) + "\n")
        result = await call_next(ctx)
        if ctx.method == "initialize" and not args.no_acp:
            result = dict(result)
            caps = dict(result.get("capabilities") or {})
            caps["experimental"] = {**(caps.get("experimental") or {}), "acp": {**CAPABILITY, "version": args.acp_version}}
            result["capabilities"] = caps
        return result

    server.middleware.append(handshake)
    return server


async def serve_stdio(server: Server) -> None:
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await serve_loop(server, read, write, lifespan_state={})


def main() -> int:
    p = argparse.ArgumentParser()
    for flag in ("--no-acp", "--no-reserved", "--dirty", "--http", "--open-http"):
        p.add_argument(flag, action="store_true")
    p.add_argument("--name", default="tinyconn")
    p.add_argument("--acp-version", default="1.0")
    p.add_argument("--port", type=int, default=int(os.environ.get("ACP_PORT", "7413")))
    args = p.parse_args()
    server = build(args)
    if not args.http:
        anyio.run(serve_stdio, server)
        return 0
    import uvicorn

    token = None if args.open_http else os.environ.get("ACP_HTTP_TOKEN")
    inner = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")

    async def app(scope, receive, send):
        # 13.3: with ACP_HTTP_TOKEN set, every request needs "Authorization: Bearer <token>".
        if scope["type"] == "http" and token:
            auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode()
            if auth != f"Bearer {token}":
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await inner(scope, receive, send)

    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
