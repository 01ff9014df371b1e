"""An ACP host client on the MCP SDK's ``ClientSession`` (4.1, 5, 8.5, 8.8).

Used by the tests, the conformance kit, the bridge and ``analytics-acp check``. It declares
the client capability in its own initialize request (``ClientSession.initialize`` cannot send
``experimental``), configures, calls with ``_meta.acp``, loads ``table_uri`` files and answers
the server's ``acp/read_table`` from a resolver it is given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import mcp_types as types
import orjson
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from .. import sdk_private
from ..constants import ACP_KEY, ACP_METHOD_READ_TABLE, ACP_PROTOCOL_VERSION, MCP_HANDSHAKE_VERSION
from ..errors import AcpError, HostTablesUnsupported, UpstreamError, error_from_payload
from ..setup_check import VALIDATE_ONLY_KEY, check_offline, supports_validate_only

Resolver = Callable[[str, "str | None"], Awaitable[dict[str, Any]]]

ProgressFn = ProgressFnT  # async (progress, total, message) -> None

VALIDATE_TIMEOUT_S = 15.0  # a set-up check runs offline: a server that takes longer is stuck

FULL_HOST = {
    "version": ACP_PROTOCOL_VERSION,
    "stores_system_data": True,
    "multi_table": True,
    "host_tables": True,
    "autocontext_delivery": "on_first_call",
}


class NotAcpServer(Exception):
    """An ACP-only request (acp/configure) to a server used as plain MCP (4.3); nothing was sent."""


def negotiate(initialize_result: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """4.3 from the host's side: the server's usable ACP capability, or None and why it is plain MCP
    (a clause that follows "The server ...").

    A server without ``capabilities.experimental.acp``, or announcing another major version than
    this host's, is used as a plain MCP server: no ``_meta.acp``, no credentials, no ``acp/configure``.
    """
    exp = (initialize_result.get("capabilities") or {}).get("experimental") or {}
    cap = exp.get(ACP_KEY) if isinstance(exp, dict) else None
    if cap is None:
        return None, "does not announce capabilities.experimental.acp, so it is used as a plain MCP server (4.3)."
    version = cap.get("version") if isinstance(cap, dict) else None
    if not isinstance(version, str) or not version:
        return None, "announces capabilities.experimental.acp without a version, so it is used as a plain MCP server (4.3)."
    if version.split(".")[0] != ACP_PROTOCOL_VERSION.split(".")[0]:
        return None, (
            f"announces ACP {version} and this host speaks ACP {ACP_PROTOCOL_VERSION}; a different major "
            "version means it is used as a plain MCP server (4.3)."
        )
    return cap, None


class ProtocolError(Exception):
    """A JSON-RPC error answer (e.g. -32016 from acp/configure)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.data = code, message, data


class _HostDispatcher(JSONRPCDispatcher):
    """Routes the server's ``acp/read_table`` to the host's resolver; everything else to the SDK.

    ``resolver`` and ``uses_acp`` are given at construction. ``uses_acp`` answers whether the server turned
    out to speak ACP: a plain MCP server gets no host tables either (4.3), whatever the resolver.
    """

    def __init__(self, read: Any, write: Any, *, resolver: Resolver | None, uses_acp: Callable[[], bool]) -> None:
        super().__init__(read, write)
        self._resolver = resolver
        self._uses_acp = uses_acp

    async def run(self, on_request: Any, on_notify: Any, on_notify_intercept: Any = None, *,
                  task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        async def route(dctx: Any, method: str, params: Any) -> Any:
            if method == ACP_METHOD_READ_TABLE:
                return await self._read_table(params or {})
            return await on_request(dctx, method, params)

        return await super().run(route, on_notify, on_notify_intercept, task_status=task_status)

    async def _read_table(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._resolver is None or not self._uses_acp():
            err = HostTablesUnsupported("This host does not resolve host tables.")
            raise MCPError(code=err.code, message=err.message)
        try:
            return await self._resolver(str(params.get("ref", "")), params.get("call_id"))
        except AcpError as exc:  # 8.8: typed errors travel as JSON-RPC errors of the request
            raise MCPError(code=exc.code, message=exc.message, data=exc.data) from None


class ToolResult:
    """A tools/call result split into the three parts of 8."""

    def __init__(self, raw: dict[str, Any], http_token: str | None = None):
        self.raw = raw
        self._http_token = http_token
        self._tables: list[Any] | None = None

    @property
    def content(self) -> list[dict[str, Any]]:
        """Every content block (content[0] is model_response)."""
        return self.raw.get("content") or []

    @property
    def text(self) -> str:
        """content[0].text."""
        return self.content[0].get("text", "") if self.content else ""

    @property
    def is_error(self) -> bool:
        """isError of the result."""
        return bool(self.raw.get("isError"))

    @property
    def model_response(self) -> Any:
        """content[0].text parsed as JSON (what the model sees)."""
        return orjson.loads(self.text) if self.text else None

    @property
    def acp(self) -> dict[str, Any] | None:
        """result._meta.acp."""
        return (self.raw.get("_meta") or {}).get(ACP_KEY)

    @property
    def system_info(self) -> dict[str, Any] | None:
        """_meta.acp.system_info."""
        return (self.acp or {}).get("system_info")

    @property
    def system_data(self) -> dict[str, Any] | None:
        """_meta.acp.system_data as received (table_uri not yet loaded)."""
        return (self.acp or {}).get("system_data")

    @property
    def error(self) -> dict[str, Any] | None:
        """_meta.acp.error ({code, name, message, data?}) or None."""
        return (self.acp or {}).get("error")

    def tables(self) -> list[Any]:
        """Full tables of system_data, loading (and deleting) file:// tables and fetching one-time URLs."""
        if self._tables is None:
            from .tables import load_system_data

            self._tables = load_system_data(self.system_data, http_token=self._http_token)
        return self._tables


class AcpClient:
    """One connection to an ACP server, as a host."""

    def __init__(self, session: ClientSession, capability: dict[str, Any] | None, http_token: str | None = None):
        self.session = session
        self.capability = capability
        self.http_token = http_token
        self.initialize_result: dict[str, Any] = {}

    @classmethod
    @asynccontextmanager
    async def stdio(
        cls,
        command: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        capability: dict[str, Any] | bool | None = None,
        resolver: Resolver | None = None,
        errlog: TextIO | None = None,
        read_timeout: float | None = None,
    ) -> AsyncIterator[AcpClient]:
        """Spawn ``command`` as a stdio server, initialize as an ACP host and yield the client."""
        from .stdio import stdio_transport

        full_env = {**os.environ, **(env or {})}
        async with stdio_transport(list(command), env=full_env, cwd=cwd, errlog=errlog or sys.stderr) as (read, write):
            async with cls._session(read, write, capability, resolver, None, read_timeout) as client:
                yield client

    @classmethod
    @asynccontextmanager
    async def http(
        cls,
        url: str,
        *,
        token: str | None = None,
        capability: dict[str, Any] | bool | None = None,
        resolver: Resolver | None = None,
        read_timeout: float | None = None,
    ) -> AsyncIterator[AcpClient]:
        """Connect to a Streamable HTTP server (Bearer ``token`` when given)."""
        from mcp.client.streamable_http import streamable_http_client
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with sdk_private.mcp_http_client(headers) as http_client:
            async with streamable_http_client(url, http_client=http_client, max_sse_event_size=None) as (read, write):
                async with cls._session(read, write, capability, resolver, token, read_timeout) as client:
                    yield client

    @classmethod
    @asynccontextmanager
    async def _session(cls, read: Any, write: Any, capability: Any, resolver: Resolver | None, token: str | None,
                       read_timeout: float | None) -> AsyncIterator[AcpClient]:
        if capability is None or capability is True:
            capability = dict(FULL_HOST)
        elif capability is False:
            capability = None
        client: AcpClient | None = None

        def uses_acp() -> bool:  # read once the server answered initialize (None before: no tables yet)
            return client is not None and client.server_capability is not None

        dispatcher = _HostDispatcher(read, write, resolver=resolver, uses_acp=uses_acp)
        async with ClientSession(dispatcher=dispatcher, read_timeout_seconds=read_timeout) as session:
            client = cls(session, capability, token)
            await client._initialize()
            yield client

    async def _initialize(self) -> None:
        caps = types.ClientCapabilities(experimental={ACP_KEY: self.capability} if self.capability else None)
        init = await self.session.send_request(
            types.InitializeRequest(
                params=types.InitializeRequestParams(
                    protocol_version=MCP_HANDSHAKE_VERSION,
                    capabilities=caps,
                    client_info=types.Implementation(name="analytics-acp-host", version=ACP_PROTOCOL_VERSION),
                )
            ),
            types.InitializeResult,
        )
        self.session.adopt(init)
        await self.session.send_notification(types.InitializedNotification())
        self.initialize_result = init.model_dump(by_alias=True, mode="json", exclude_none=True)

    @property
    def server_capability(self) -> dict[str, Any] | None:
        """capabilities.experimental.acp when this host can use it, None for a server used as plain MCP (4.3)."""
        return negotiate(self.initialize_result)[0]

    @property
    def announced_capability(self) -> dict[str, Any] | None:
        """capabilities.experimental.acp exactly as announced (even another major version), or None."""
        exp = (self.initialize_result.get("capabilities") or {}).get("experimental") or {}
        cap = exp.get(ACP_KEY) if isinstance(exp, dict) else None
        return cap if isinstance(cap, dict) else None

    @property
    def plain_mcp_reason(self) -> str | None:
        """Why this server is used as plain MCP (4.3), or None when ACP was negotiated."""
        return negotiate(self.initialize_result)[1]

    @property
    def server_info(self) -> dict[str, Any]:
        """serverInfo of the initialize result."""
        return self.initialize_result.get("serverInfo") or {}

    @property
    def instructions(self) -> str | None:
        """instructions of the initialize result."""
        return self.initialize_result.get("instructions")

    async def raw_request(self, method: str, params: dict[str, Any] | None = None,
                          on_progress: ProgressFn | None = None) -> dict[str, Any]:
        """Send any JSON-RPC request; JSON-RPC errors raise ProtocolError.

        With ``on_progress`` the request carries a progress token and the server's
        ``notifications/progress`` for it reach ``on_progress(progress, total, message)``. Cancelling
        the awaiting task sends ``notifications/cancelled`` to the server (the SDK's dispatcher).
        """
        # Straight to the dispatcher: the typed path drops None values, and acp/configure needs
        # an explicit ``credentials: null`` to clear a session's credentials (5.1).
        opts = CallOptions(on_progress=on_progress) if on_progress is not None else None
        try:
            return await sdk_private.send_raw_request(self.session, method, dict(params or {}), opts)
        except MCPError as exc:
            raise ProtocolError(exc.code, exc.message, exc.data) from None

    async def configure(self, **params: Any) -> dict[str, Any]:
        """acp/configure (5.1): returns ``{ok, effective}``; invalid input raises ProtocolError.

        Raises NotAcpServer, without sending anything, to a server used as plain MCP (4.3).
        """
        reason = self.plain_mcp_reason
        if reason is not None:
            raise NotAcpServer(f"acp/configure not sent: the server {reason}")
        result = await self.raw_request("acp/configure", params)
        result.pop("_meta", None)
        return result

    @property
    def supports_validate_only(self) -> bool:
        """True when the server (an ACP 1.x server) advertises validate-only acp/configure (setup_check.py)."""
        return self.server_capability is not None and supports_validate_only(self.initialize_result)

    async def validate_setup(self, setup: dict[str, Any], *, timeout: float = VALIDATE_TIMEOUT_S) -> AcpError | None:
        """Check one source's set-up (acp/configure's fields: limits, credentials, config, tables,
        default_resource_id) without changing this connection's session; the typed error, or None when it holds.

        A server that advertises validate-only acp/configure checks it all, its connector's own offline check
        included (a key that must load, a file that must exist); any other ACP server is checked here against
        its published setup schemas (``setup_check.check_offline``), and a plain MCP server has nothing to check.
        Bounded by ``timeout``: a server that does not answer in time gives ACP_UPSTREAM_ERROR saying so.
        """
        capability = self.server_capability
        if capability is None:
            return None
        if not self.supports_validate_only:
            return check_offline(capability, setup)
        params = {**setup, "_meta": {VALIDATE_ONLY_KEY: True}}
        with anyio.move_on_after(timeout) as scope:
            try:
                await self.raw_request("acp/configure", params)
            except ProtocolError as exc:
                if -32049 <= exc.code <= -32010:  # the ACP range: a typed set-up problem
                    return error_from_payload({"code": exc.code, "message": exc.message, "data": exc.data})
                return UpstreamError(f"The ACP server refused the set-up check ({exc.code}: {exc.message}).")
        if scope.cancelled_caught:
            return UpstreamError(f"The ACP server did not answer the set-up check within {timeout:g} s.")
        return None

    async def list_tools(self) -> list[dict[str, Any]]:
        """tools/list as wire dicts (follows pagination)."""
        tools: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await self.session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, meta: dict[str, Any] | None = None,
                        on_progress: ProgressFn | None = None) -> ToolResult:
        """tools/call with ``_meta.acp`` = ``meta``; returns the split result (``on_progress``: see raw_request).

        To a server used as plain MCP (4.3) ``meta`` is never sent: it carries credentials and limits
        that only an ACP 1.x server may receive.
        """
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta is not None and self.server_capability is not None:
            params["_meta"] = {ACP_KEY: meta}
        # The raw path keeps the result as parsed JSON: nulls inside _meta.acp survive, and a big
        # system_data is not validated into a model and dumped back (the per-call cost, bench case 1).
        return ToolResult(await self.raw_request("tools/call", params, on_progress), self.http_token)
