"""The bridge upward: a plain MCP stdio server (mcp's low-level Server), not an ACP server (16.1).

Its stdio is the ACP servers' (analytics_acp.stdio_streams): a line past 4 MiB (ACP_MAX_MESSAGE_BYTES) is
refused with the JSON-RPC error -32017 before it is parsed (with the id its first bytes name), requests
with an invalid id are answered, and at most ACP_MAX_CALLS_IN_PROGRESS calls are in progress (issue 38.6).
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types as types
from analytics_acp.signals import progress_sender
from analytics_acp.stopping import install_stop_handlers
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError

from .. import __version__
from ..bridge import Bridge
from ..factory import Factory
from ..paths import Paths
from ..query import sql as query  # noqa: F401  acp_query's parser (sqlglot) loaded at start, not on the first query
from ..sources.redact import RedactingFilter
from ..sources.watch import stamp, watch
from ..view import apps
from . import skillpub

INSTRUCTIONS = (
    "ACP Bridge: analytics sources as tools named <source>__<tool>. Extractions return a sample; the full "
    "table is saved as a dataset in acp-data. Use acp_query (SQLite over dataset ids) for totals and filters "
    "over all rows, acp_datasets to list datasets, acp_sources to see sources and their errors. Pass dataset "
    "ids (never rows) to table_ref arguments. Credentials live in sources.json and are never shown."
)
RESOURCE_NOT_FOUND = -32002  # MCP's code for resources/read of an unknown URI
NOTIFY_BOUND_S = 5.0  # a client that does not read its stdin must not hold a reload up
# The tools capability says listChanged: a saved sources.json can change the tools (issue 34.3).
NOTIFICATIONS = NotificationOptions(tools_changed=True)


def build_server(bridge: Bridge) -> Server[Any]:
    """The MCP server publishing the bridge's tools and every source's tools (and, for a client that negotiates
    MCP Apps, the dataset view: view/apps.py); it tells its client when they change
    (``notifications/tools/list_changed``, on the connection of the client's initialize: stdio has one)."""
    client: list[Any] = []  # the session of the connection's initialize request

    async def remember_client(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "initialize":
            client[:] = [ctx.session]
        return result

    async def tools_changed() -> None:
        for session in client:
            with anyio.move_on_after(NOTIFY_BOUND_S):
                await session.send_tool_list_changed()

    bridge.on_tools_changed = tools_changed

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        await bridge.wait_ready()  # the servers starting locally (never a source's network probe)
        tools = apps.tools_for_apps(bridge.tools, bridge.viewed) if _apps(ctx) else bridge.tools
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        with_apps = _apps(ctx)
        answer = await bridge.run(params.name, params.arguments, progress=progress_sender(ctx), with_apps=with_apps)
        result: dict[str, Any] = {"content": answer.blocks, "isError": answer.is_error}
        if with_apps and params.name in bridge.viewed:
            result["_meta"] = apps.result_meta(answer.datasets)  # the texts stay those of any client
        return types.CallToolResult.model_validate(result)

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        listed = await anyio.to_thread.run_sync(bridge.skills.resources)  # reads the skill folders
        return types.ListResourcesResult.model_validate({"resources": listed + ([apps.resource()] if _apps(ctx) else [])})

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        view = apps.read(uri)
        if view is not None:
            return types.ReadResourceResult.model_validate({"contents": [view]})
        text = await anyio.to_thread.run_sync(bridge.skills.read, uri)
        if text is None:
            published = await anyio.to_thread.run_sync(bridge.skills.resources)
            raise MCPError(RESOURCE_NOT_FOUND, f"No resource {params.uri}. The bridge publishes its skills: "
                           + ", ".join(r["uri"] for r in published))
        return types.ReadResourceResult.model_validate({"contents": [{"uri": uri, "mimeType": skillpub.MIME, "text": text}]})

    async def negotiate_apps(ctx: Any, call_next: Any) -> Any:
        """Declare MCP Apps in the initialize result of a client that negotiated it (and only then)."""
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(ctx.params, dict) and apps.negotiated(ctx.params.get("capabilities")):
            result = apps.advertise(dict(result))
        return result

    server: Server[Any] = Server(
        "analytics-acp-bridge",
        version=__version__,
        title="ACP Bridge",
        instructions=INSTRUCTIONS + skillpub.instructions(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    server.middleware.append(negotiate_apps)
    server.middleware.append(remember_client)
    return server


def _apps(ctx: Any) -> bool:
    """Whether this connection's client negotiated MCP Apps (its initialize capabilities)."""
    return apps.negotiated(ctx.session.client_capabilities)


async def serve_stdio(paths: Paths, max_calls: int | None = None) -> None:
    """Serve MCP on stdin/stdout until the client closes it; the sources start in the background.

    ``max_calls``: calls in progress on the client's connection (default: ACP_MAX_CALLS_IN_PROGRESS, else 32).
    """
    from analytics_acp.stdio_streams import stdio_streams

    since = stamp(paths.sources)  # before the file is read: an edit from now on is seen
    bridge = Factory(paths).bridge()
    install_stop_handlers(bridge.stop_now)  # Ctrl-C / SIGTERM: prompt, idle or busy (issue 15.2)
    # Every log record leaving this process is scrubbed (16.8), whichever library wrote it.
    scrub = RedactingFilter(bridge.secrets.log_redactor)
    for handler in [*logging.getLogger().handlers, logging.lastResort]:
        if handler is not None:
            handler.addFilter(scrub)
    server = build_server(bridge)
    async with anyio.create_task_group() as tg:
        try:
            await bridge.start(tg)
            tg.start_soon(lambda: watch(paths.sources, bridge.reload, since=since))
            async with stdio_streams(max_calls=max_calls) as (read, write):
                await server.run(read, write, server.create_initialization_options(NOTIFICATIONS))
        finally:
            await bridge.aclose()
            tg.cancel_scope.cancel()
