"""Stdio transport of the host client: spawn the server, frame JSON-RPC lines, stop it cleanly.

Why not the SDK's ``stdio_client``: it validates every incoming line as the union of the four
JSON-RPC message models, which for a result carrying 1,000 inline rows costs ~2.3 ms a call
(bench case 1). Responses are routed by id only and their ``result`` is validated (or kept
raw) by whoever awaits it, so here a response envelope is built without validation from one
orjson parse (~0.5 ms); requests, notifications and errors still go through the SDK's models.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
import mcp_types as types
import orjson
from mcp.shared.message import SessionMessage

STOP_GRACE_S = 2.0  # for the server to exit after its stdin closes (MCP lifecycle: close stdin, wait, signal)
KILL_GRACE_S = 2.0


def parse_line(line: bytes) -> SessionMessage | Exception:
    """One stdout line as a SessionMessage, or the parse error as a value (the session surfaces it)."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return exc
    if (
        isinstance(data, dict)
        and data.get("jsonrpc") == "2.0"
        and isinstance(data.get("result"), dict)
        and isinstance(data.get("id"), (int, str))
        and "method" not in data
        and "error" not in data
    ):
        return SessionMessage(types.JSONRPCResponse.model_construct(jsonrpc="2.0", id=data["id"], result=data["result"]))
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(data, by_name=False))
    except ValueError as exc:
        return exc


# Process ids (= process groups) of the servers this process started and has not stopped yet: a host
# that is stopped by a signal stops them too (issue 15.2), synchronously, from its signal handler.
LIVE_SERVERS: set[int] = set()


def stop_live_servers(bound_s: float = 8.0) -> None:
    """SIGTERM every live server's process group, wait (bounded) for them to exit, SIGKILL the rest."""
    import time

    pids = list(LIVE_SERVERS)
    for pid in pids:
        with suppress(OSError):
            os.killpg(pid, signal.SIGTERM)  # each server cancels its own queries (stopping.py)
    deadline = time.monotonic() + bound_s
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            if _exited_unreaped(pid):
                waiting.discard(pid)
        if waiting:
            time.sleep(0.02)
    for pid in waiting:
        with suppress(OSError):
            os.killpg(pid, signal.SIGKILL)


def _exited_unreaped(pid: int) -> bool:
    """Whether child ``pid`` has exited, leaving it for its owner to reap.

    The owner is the event loop's child watcher (``anyio.open_process``): a loop still running (the page's
    lifespan, a bridge stopped by a signal) waits on the pid itself. Reaping it here raced that watcher,
    which then logged "Unknown child process pid N, will report returncode 255" on stderr; WNOWAIT only
    looks. Where ``os.waitid`` is missing (macOS before Python 3.13) the old reaping poll is kept.
    """
    try:
        if hasattr(os, "waitid"):
            return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:  # already reaped by its owner, or not our child
        return True


@asynccontextmanager
async def stdio_transport(
    command: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None, errlog: TextIO | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn ``command`` (own process group) and yield the (read, write) streams a ClientSession takes."""
    process = await anyio.open_process(command, env=env, cwd=cwd, stderr=errlog or sys.stderr, start_new_session=True)
    LIVE_SERVERS.add(process.pid)
    stdout, stdin = process.stdout, process.stdin
    assert stdout is not None and stdin is not None  # open_process pipes both by default
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        pending: list[bytes] = []  # pieces of a line longer than one read (big inline tables)
        async with read_writer:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                async for chunk in stdout:
                    start = 0
                    while (end := chunk.find(b"\n", start)) >= 0:
                        piece = chunk[start:end]
                        if pending:
                            piece, pending = b"".join([*pending, piece]), []
                        if piece.strip():
                            await read_writer.send(parse_line(piece))
                        start = end + 1
                    if start < len(chunk):
                        pending.append(chunk[start:])

    async def writer() -> None:
        async with write_reader:
            try:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send(data.encode() + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                # The server stopped reading: end the session instead of leaving a request hanging.
                await read_writer.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
                LIVE_SERVERS.discard(process.pid)
                with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stdout.aclose()
            tg.cancel_scope.cancel()


async def _stop(process: Any) -> None:
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if await _exited(process, STOP_GRACE_S):
        return
    for stop in (process.terminate, process.kill) if sys.platform == "win32" else (_group(signal.SIGTERM, process), _group(signal.SIGKILL, process)):
        with suppress(ProcessLookupError, PermissionError, OSError):
            stop()
        if await _exited(process, KILL_GRACE_S):
            return


def _group(sig: int, process: Any) -> Any:
    # The whole process group: a server may have children (database drivers, a browser).
    return lambda: os.killpg(process.pid, sig)


async def _exited(process: Any, timeout: float) -> bool:
    # Poll returncode: process.wait() also waits for pipe EOF, which a grandchild holding the pipe delays.
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None
