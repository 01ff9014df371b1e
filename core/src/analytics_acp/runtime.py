"""The ACP server on the MCP SDK's low-level ``Server`` (3, 4, 5.1, 8.8).

- A middleware edits the initialize result to add ``capabilities.experimental.acp``
  (works on stdio and Streamable HTTP) and records the client's ACP capability per connection.
- ``acp/configure`` is a custom request handler; its state lives on the connection
  (one per stdio process, one per HTTP session). Its validate-only form (setup_check.py) is advertised
  beside ``acp`` in ``capabilities.experimental`` and changes nothing.
- ``acp/read_table`` is sent back to the client on the request's own channel.
- ``server/discover`` answers -32601 so clients fall back to the initialize handshake
  (ACP needs the 2025-11-25 era; DESIGN.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from pydantic import ConfigDict

from . import gcsettle, sdk_private, server_stdio
from .constants import ACP_KEY, ACP_METHOD_CONFIGURE, ACP_METHOD_READ_TABLE, VALIDATE_ONLY_CAPABILITY, VALIDATE_ONLY_KEY
from .context import ClientInfo, HostTable
from .effective import SessionConfig
from .errors import AcpError, HostTablesUnsupported, UpstreamError, error_from_payload
from .plugins import LoadedConnector
from .runtime_state import RuntimeState
from .runtime_tools import capability, tool_list
from .server_stdio import DeferredMeta
from .signals import progress_sender

if TYPE_CHECKING:
    from .calls import ConnectorRuntime

log = logging.getLogger("analytics_acp")
_SESSION_KEY = "analytics_acp.session"
_CLIENT_KEY = "analytics_acp.client"
_CONFIGURE_LOCK_KEY = "analytics_acp.configure_lock"
# The HTTP app puts its one-time table URL maker on each request's ASGI scope under this key (as an auth
# middleware puts the user there): request -> (Path -> URL). The tools/call handler reads it off ctx.request.
FILE_URL_SCOPE_KEY = "analytics_acp.file_url"


class _OpenParams(types.RequestParams):
    """Params of ACP's custom methods: snake_case keys kept as extras (mcp models alias camelCase)."""

    model_config = ConfigDict(extra="allow")


class _OpenResult(types.Result):
    model_config = ConfigDict(extra="allow")


class ReadTableRequest(types.Request[_OpenParams, str]):
    """Server -> client ``acp/read_table`` (8.8)."""

    method: str = ACP_METHOD_READ_TABLE


def parse_client_capability(params: Any) -> ClientInfo:
    """The client's experimental.acp (4.1). A different major version means plain MCP (4.3)."""
    try:
        raw = (params or {}).get("capabilities", {}).get("experimental", {}).get(ACP_KEY)
    except AttributeError:
        raw = None
    if not isinstance(raw, dict):
        return ClientInfo()
    version = str(raw.get("version", ""))
    if version.split(".")[0] != "1":
        return ClientInfo(acp=False, version=version)
    return ClientInfo(
        acp=True,
        version=version,
        stores_system_data=bool(raw.get("stores_system_data")),
        multi_table=bool(raw.get("multi_table")),
        host_tables=bool(raw.get("host_tables")),
        autocontext_delivery=raw.get("autocontext_delivery"),
    )


@dataclass(frozen=True)
class ServeState:
    """What a transport hands the SDK's serve loop for one connection (``lifespan_state``), which the
    handlers read back as ``ctx.lifespan_context``: the wiring arrives by construction, per connection,
    and nothing is assigned on ``AcpServer`` (issue 27.3). Over HTTP the SDK's default (an empty dict)
    stands for "nothing deferred"."""

    deferred_meta: DeferredMeta | None = None  # the stdio transport that writes answers with orjson


def _state(ctx: Any) -> dict[str, Any]:
    # Per-connection scratch state: one dict per stdio connection or HTTP session (DESIGN.md).
    return sdk_private.connection_state(ctx)


class AcpServer:
    """One connector served over MCP. ``server`` is the SDK object transports run."""

    def __init__(self, loaded: LoadedConnector):
        self.loaded = loaded
        self.state = RuntimeState.build(loaded)  # all initialize and tools/list read
        self._runtime: ConnectorRuntime | None = None
        info = loaded.info
        self.server: Server[Any] = Server(
            info.id,
            version=info.version,
            title=info.name,
            description=info.description,
            instructions=info.instructions or None,
            on_list_tools=self._list_tools,
            on_call_tool=cast(Any, self._call_tool),  # the SDK takes the result as a plain dict too
        )
        self.server.add_request_handler(ACP_METHOD_CONFIGURE, _OpenParams, self._configure)
        self.server.add_request_handler("server/discover", types.RequestParams, self._no_discover)
        self.server.middleware.append(self._handshake)
        self._tools: types.ListToolsResult | None = None
        self._warmed = False

    @property
    def runtime(self) -> ConnectorRuntime:
        """The steps of acp/configure and tools/call, imported and built at the first of them: a cold start
        (spawn, initialize, tools/list: bench case 4) does not load the call path (results, files, checks)."""
        if self._runtime is None:
            from .calls import ConnectorRuntime

            self._runtime = ConnectorRuntime(self.loaded, self.state)
        return self._runtime

    async def _handshake(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method == "initialize" and _CLIENT_KEY in _state(ctx):
            # A live session keeps its client capability and acp/configure state: a second initialize
            # must not silently turn it into plain MCP (4.3). Refused before the SDK commits anything.
            raise MCPError(
                code=types.INVALID_REQUEST,
                message="This connection is already initialized; a second initialize is refused and the session "
                "keeps its state. Open a new connection to start a new session.",
            )
        result = await call_next(ctx)
        if ctx.method == "initialize":
            _state(ctx)[_CLIENT_KEY] = parse_client_capability(ctx.params)
            result = dict(result)
            caps = dict(result.get("capabilities") or {})
            experimental = dict(caps.get("experimental") or {})
            experimental[ACP_KEY] = capability(self.state)
            experimental[VALIDATE_ONLY_KEY] = dict(VALIDATE_ONLY_CAPABILITY)
            caps["experimental"] = experimental
            result["capabilities"] = caps
        elif not self._warmed:
            # After the first answer that follows initialize (tools/list, as a rule), not after initialize:
            # a warm-up thread importing client libraries holds the GIL while the host's hand-shake still
            # waits for tools/list (bench case 4: ga4 and gsc started 3% slower with it running there).
            self._warm_up()
        return result

    def _warm_up(self) -> None:
        """Run the connector_ready hooks once, in a daemon thread (they must never delay an answer)."""
        if self._warmed or not self.loaded.pm.hook.connector_ready.get_hookimpls():
            return
        self._warmed = True

        def ready() -> None:
            try:
                self.loaded.hook.connector_ready()
            except Exception:  # warm-up only: the first call will do the work itself
                log.exception("connector_ready failed")

        threading.Thread(target=ready, name="acp-connector-ready", daemon=True).start()

    async def _no_discover(self, ctx: Any, params: Any) -> Any:
        raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data="server/discover")

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        if self._tools is None:
            self._tools = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tool_list(self.state)])
        return self._tools

    async def _configure(self, ctx: Any, params: _OpenParams) -> dict[str, Any]:
        from .setup_check import validate_only_requested

        state = _state(ctx)
        values = dict(params.model_extra or {})
        validate_only = validate_only_requested(params.meta)  # setup_check.py: check, change nothing
        # The connector's check runs off the event loop: two acp/configure of one session must not both start
        # from the same session and the second drop what the first merged (5.1: each merges into the last).
        lock = state.setdefault(_CONFIGURE_LOCK_KEY, anyio.Lock())
        async with lock if not validate_only else contextlib.nullcontext():
            session = state.get(_SESSION_KEY) or SessionConfig()
            try:
                new, result = await self.runtime.configure(session, values, validate_only=validate_only)
            except AcpError as exc:  # 5.1: protocol error, the session stays unchanged
                raise MCPError(code=exc.code, message=exc.message, data=exc.data) from None
            if not validate_only:
                state[_SESSION_KEY] = new
        gcsettle.after_call()  # a connector's check may import its driver
        return result

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        runtime = self.runtime  # first: it imports the call path
        state = _state(ctx)
        lock = state.get(_CONFIGURE_LOCK_KEY)
        if lock is not None and lock.locked():
            # 5.1: a call sent after acp/configure runs with what it set, even while the connector's check (bounded,
            # setup_check.py) runs in a thread: requests are handled concurrently, in the order they came.
            async with lock:
                pass
        session = state.get(_SESSION_KEY) or SessionConfig()
        client = state.get(_CLIENT_KEY) or ClientInfo()
        meta = (ctx.meta or {}).get(ACP_KEY) if isinstance(ctx.meta, dict) else None
        if not client.acp:
            meta = None  # 4.3: a plain MCP client gets no ACP extensions

        async def read_table(ref: str, call_id: str | None = None) -> HostTable:
            return await _read_table(ctx, ref, call_id)

        result = await runtime.call(
            params.name, params.arguments, meta, session, client, read_table=read_table, file_url=_file_url(ctx),
            send_progress=progress_sender(ctx),
        )
        gcsettle.after_call()  # the first calls import the connector's heavy modules: keep them out of full GC passes
        served = ctx.lifespan_context
        if isinstance(served, ServeState) and served.deferred_meta is not None:
            result = served.deferred_meta.park(result, ctx.request_id)  # the big _meta skips the SDK's pydantic passes
        return result

    def shutdown(self) -> None:
        """Let the connector release what it holds: its connector_shutdown hooks, then its state (state.py:
        engines disposed, clients closed). Safe to call more than once."""
        try:
            self.loaded.hook.connector_shutdown()
        except Exception:  # shutting down anyway
            log.exception("connector_shutdown failed")
        self.loaded.state.close()


def _file_url(ctx: Any) -> Callable[[Path], str] | None:
    """Path -> one-time URL for this call's big tables over HTTP (8.5); None elsewhere (a file:// path)."""
    request = ctx.request
    scope = getattr(request, "scope", None)
    factory = scope.get(FILE_URL_SCOPE_KEY) if isinstance(scope, dict) else None
    return factory(request) if factory is not None else None


async def _read_table(ctx: Any, ref: str, call_id: str | None) -> HostTable:
    """Send acp/read_table to the client during this call (8.8) and load the table it returns."""
    params: dict[str, Any] = {"ref": ref}
    if call_id:
        params["call_id"] = call_id
    try:
        result = await ctx.session.send_request(
            ReadTableRequest(params=_OpenParams(**params)),
            _OpenResult,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )
    except NoBackChannelError:
        # A call answered as one JSON body (http_app.JsonAnswers: its tool has no table_ref argument) has no
        # stream to carry the request: a typed answer at once instead of a host that never hears the question.
        raise HostTablesUnsupported(
            f"This tool asked the host for table {ref!r} outside a table_ref argument, so this call cannot send "
            "acp/read_table; the connector must declare the argument as a table_ref (8.8)."
        ) from None
    except MCPError as exc:
        if -32049 <= exc.code <= -32010:  # ACP codes pass through with the host's message (11.6)
            raise error_from_payload({"code": exc.code, "message": exc.message, "data": exc.data}) from None
        raise UpstreamError(f"The host could not read table {ref!r}: {exc.message}") from None
    return load_host_table(ref, dict(result.model_extra or {}))


def load_host_table(ref: str, data: dict[str, Any]) -> HostTable:
    """An AcpHostTable (inline or file) as a HostTable with all rows (8.8)."""
    from .tablefile import read_table_uri

    headers = list(data.get("headers") or [])
    if data.get("format") == "file" or data.get("table_uri"):
        uri = data.get("table_uri")
        if not isinstance(uri, str) or not uri.startswith("file://"):
            raise UpstreamError(f"The host returned table {ref!r} with an unreadable table_uri.")
        rows = read_table_uri(uri)
    else:
        inline = data.get("table")
        if not isinstance(inline, list):
            raise UpstreamError(f"The host returned table {ref!r} without rows.")
        rows = inline
    return HostTable(ref=ref, headers=headers, rows=rows)


def build_server(loaded: LoadedConnector) -> AcpServer:
    """The ACP server for a loaded connector."""
    return AcpServer(loaded)


async def serve_stdio(acp: AcpServer, on_eof: Callable[[], None] | None = None, max_calls: int | None = None) -> None:
    """Serve over stdio in the handshake era (3.2): stdout carries only protocol messages.

    stdin is read here (not by the SDK) so that requests with an invalid id get an answer
    (requestids.py); like the SDK, fd 0 points at the null device while serving so a child
    process (a driver, a browser) cannot read protocol bytes. ``on_eof`` is called when stdin ends
    (stopping.EofExit bounds how long calls still running may keep the process). At most ``max_calls``
    calls are in progress (default: ACP_MAX_CALLS_IN_PROGRESS, else 32; call_cap.py): stdin is not read past
    them. The streams: stdio_streams.py.
    """
    from mcp.server.runner import serve_loop

    from .stdio_streams import stdio_streams

    # Big _meta skips the SDK's pydantic passes on our transport only (orjson writes it back); the SDK's own
    # in-place transport dumps results itself.
    deferred = server_stdio.DeferredMeta() if server_stdio.usable() else None
    try:
        async with stdio_streams(deferred, on_eof=on_eof, max_calls=max_calls) as (read, write):
            await serve_loop(acp.server, read, write, lifespan_state=ServeState(deferred_meta=deferred))
    finally:
        acp.shutdown()


def configure_logging() -> None:
    """Logs go to stderr only (3.2), WARNING by default (ANALYTICS_ACP_LOG_LEVEL to change)."""

    level = os.environ.get("ANALYTICS_ACP_LOG_LEVEL", "WARNING").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level, logging.WARNING))
    # The SDK's own loggers may log message bodies at debug level (10.5: bodies hold credentials).
    logging.getLogger("mcp").setLevel(max(root.level, logging.WARNING))

