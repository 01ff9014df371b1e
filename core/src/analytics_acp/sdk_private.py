"""Every use of the mcp SDK's private names, in one place (issue 27.3).

The core needs five things the SDK has no public API for: the stdio fd claim and diversion
(server_stdio.py reads and writes the wire itself), context-carrying memory streams, per-connection
state (one dict per stdio connection or HTTP session), the HTTP client with the SDK's timeouts
and the dispatcher's raw request path (the host
client keeps nulls inside ``_meta.acp`` and skips model validation of big results). They are pinned to
``MCP_VERSION``: tests/test_core_sdk_private.py fails loudly on another SDK version or when one of
them moves, and fails when any other core module reaches for a private SDK name.
Imports happen on use, so importing this module costs nothing (the host client imports it).
"""

from __future__ import annotations

from typing import Any

MCP_VERSION = "2.3.0"  # the SDK these names were read from


def claim_fd(fd: int, stream: Any, mode: str, diversion: Any) -> tuple[Any, Any]:
    """``mcp.server.stdio._claim_fd``: take fd 0/1 for the wire and point the original at a diversion."""
    from mcp.server.stdio import _claim_fd

    return _claim_fd(fd, stream, mode, diversion)  # type: ignore[arg-type]


def is_backed_by_fd(stream: Any, fd: int) -> bool:
    """``mcp.server.stdio._is_backed_by_fd``: whether ``stream`` (sys.stdin/stdout) really is ``fd``."""
    from mcp.server.stdio import _is_backed_by_fd

    return bool(_is_backed_by_fd(stream, fd))


def stdin_diversion() -> Any:
    """``mcp.server.stdio._open_stdin_diversion`` (what fd 0 points at while serving)."""
    from mcp.server.stdio import _open_stdin_diversion

    return _open_stdin_diversion


def stdout_diversion() -> Any:
    """``mcp.server.stdio._open_stdout_diversion`` (where stray prints go while serving)."""
    from mcp.server.stdio import _open_stdout_diversion

    return _open_stdout_diversion


def context_streams() -> Any:
    """``mcp.shared._context_streams.create_context_streams`` (memory streams that carry the context)."""
    from mcp.shared._context_streams import create_context_streams

    return create_context_streams


def mcp_http_client(headers: dict[str, str] | None) -> Any:
    """``mcp.shared._httpx_utils.create_mcp_http_client``: the httpx client with the SDK's timeouts."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    return create_mcp_http_client(headers=headers)


def connection_state(ctx: Any) -> dict[str, Any]:
    """The per-connection scratch dict of a request context (``session._connection.state``).

    ``Connection.state`` is public, but the ``ServerRequestContext`` that mcp 2.3.0's runner hands handlers
    reaches the connection only through the session's private ``_connection`` (the public
    ``Context.connection`` belongs to a context the runner does not build yet)."""
    state: dict[str, Any] = ctx.session._connection.state
    return state


async def send_raw_request(session: Any, method: str, params: dict[str, Any], opts: Any) -> dict[str, Any]:
    """The client session's dispatcher path for any JSON-RPC request (``session._dispatcher``)."""
    result: dict[str, Any] = await session._dispatcher.send_raw_request(method, params, opts)
    return result
