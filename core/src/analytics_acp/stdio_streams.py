"""This process's stdin/stdout as the (read, write) pair a serve loop takes: one home for every stdio server here.

The ACP servers (runtime.serve_stdio) and the ACP Bridge's own MCP server (issue 38.6) serve stdio the same
way: requests with an invalid id answered (requestids.py), a line past ACP_MAX_MESSAGE_BYTES refused
(-32017) before it is parsed, at most ACP_MAX_CALLS_IN_PROGRESS calls in progress (call_cap.py), and fd 0
pointed at the null device while serving so a child process cannot read protocol bytes.

When fd 0 and 1 back sys.stdin and sys.stdout, server_stdio.py reads and writes them itself. When they were
replaced by text streams (an embedding host), the SDK's transport serves them in place, with the same id
screen and cap; that path has no line limit (the SDK reads whole lines) and ``deferred`` is not used.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server as sdk_stdio_server
from mcp.shared.message import SessionMessage

from . import server_stdio
from .call_cap import OWN_ANSWER, CallGate, settings_from_env
from .requestids import ScreenedLines
from .server_stdio import DeferredMeta


@asynccontextmanager
async def stdio_streams(
    deferred: DeferredMeta | None = None, on_eof: Callable[[], None] | None = None, max_calls: int | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of this process's stdio for ``serve_loop`` or ``Server.run``.

    ``deferred``: where the tools/call handler parks big ``_meta`` (server_stdio.DeferredMeta); ``on_eof``:
    called once stdin has ended; ``max_calls``: the cap on calls in progress (default:
    ACP_MAX_CALLS_IN_PROGRESS, else 32). ``deferred`` and ``on_eof`` apply to the fd path only
    (``server_stdio.usable()``): a caller that parks ``_meta`` checks it first.
    """
    if max_calls is None:
        max_calls = settings_from_env().max_calls
    if server_stdio.usable():  # our transport: same fd claim, invalid ids screened, orjson writes
        async with server_stdio.stdio_server(deferred, on_eof=on_eof, max_calls=max_calls) as streams:
            yield streams
        return
    # sys.stdin/stdout replaced by text streams: the SDK's transport serves them in place
    private_fd, wire = _claim_stdin()
    try:
        async with _in_place(wire, max_calls) as streams:
            yield streams
    finally:
        if private_fd is not None:  # fd 0 back on the wire
            with contextlib.suppress(OSError):
                os.dup2(private_fd, 0)


@asynccontextmanager
async def _in_place(wire: Any, max_calls: int) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport reading ``wire``, requests with an invalid id screened out and answered,
    at most ``max_calls`` calls in progress (the gate counts an answer once the SDK's writer has taken it)."""
    # The screen is built with the channel its errors leave by: the SDK's write stream only exists once
    # its transport runs. No buffer: a client that reads nothing holds the screen up, nothing piles up.
    errors_in, errors_out = anyio.create_memory_object_stream[dict[str, Any]](0)
    stdin = ScreenedLines(anyio.wrap_file(io.TextIOWrapper(wire, encoding="utf-8", errors="replace")), answer=errors_in.send)
    async with errors_in, errors_out, sdk_stdio_server(stdin=cast(Any, stdin)) as (read, write):

        async def answer() -> None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for error in errors_out:
                    await write.send(SessionMessage(types.JSONRPCError.model_validate(error), metadata=OWN_ANSWER))

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            async with CallGate(max_calls).streams(read, write, report_writes=True) as streams:
                yield streams
            tg.cancel_scope.cancel()  # stdin ended: no screen error can come any more


def _claim_stdin() -> tuple[int | None, Any]:
    """(private fd, reader) of the wire on fd 0, with fd 0 itself pointed at the null device."""
    try:
        private = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    except OSError:
        return None, sys.stdin.buffer
    # closefd=False: a worker thread may still block reading it after the transport exits.
    return private, os.fdopen(private, "rb", closefd=False)
