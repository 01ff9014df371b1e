"""Server stdio transport: the SDK's framing and fd claim, with responses serialized once by orjson.

Why not the SDK's ``stdio_server`` as is: a tools/call result goes through pydantic twice
(``serialize_server_result`` validates and dumps the whole result, then the writer dumps the
JSON-RPC envelope), which for 1,000 inline rows in ``_meta.acp.system_data`` costs more than
building them (bench case 1), and every line read, write and flush is a worker-thread hop.

Here the result's ``_meta`` (the only big, free-form part) is parked in ``DeferredMeta`` by the
tools/call handler and replaced by a one-key placeholder, so the SDK still validates the MCP
result shape (content, isError, structuredContent) on a small dict; this writer puts the real
``_meta`` back and writes the response with one ``orjson.dumps``. The bytes on the wire are
the same JSON a pydantic dump gives. Every other message is written by the SDK model as before.
An inline table that the result builder already serialized (``SerializedRows``) goes out as
those bytes (an ``orjson.Fragment``), so its rows are not serialized a second time.

Pipes and sockets are read and written non-blocking on the event loop (no thread per line);
anything else (a regular file as stdin, Windows) uses a worker thread per read/write, as the
SDK does. fd 0/1 are claimed and diverted exactly as the SDK's ``stdio_server`` does, so
stray prints from handlers or children never reach the wire. Requests with an invalid id are
answered here (requestids.py), as on the SDK path. A line past ACP_MAX_MESSAGE_BYTES is refused as
soon as it is that long (with the id its first bytes name) and the rest dropped as it arrives (a 50 MB
request is never held or parsed),
except the client's answer while the server waits for it (a big inline host table): a line whose first bytes show a
``result`` or an ``error`` (requestids.answer_in_prefix).

Calls in progress are capped per connection (call_cap.py, ``ACP_MAX_CALLS_IN_PROGRESS``, default 32): at
the cap stdin is not read until an answer is written, so a client that writes calls and reads nothing fills
the pipe, not the server's memory.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as types
import orjson
from mcp.shared.message import SessionMessage

from . import sdk_private
from .argument_limits import too_large_error
from .call_cap import DEFAULT_MAX_CALLS, OWN_ANSWER, CallGate
from .constants import ACP_KEY, ACP_MAX_MESSAGE_BYTES
from .requestids import answer_in_prefix, correlation_key, head, id_key, invalid_id_error
from .rowjson import SerializedRows

DEFERRED_KEY = "analytics_acp/deferred-meta"
READ_CHUNK = 1 << 16


class DeferredMeta:
    """``_meta`` values parked between the tools/call handler and the write path, keyed by request id.

    An entry lives until its answer is written, or its request is cancelled (``notifications/cancelled``:
    no answer comes), or the connection ends (this object dies with it). There is no count-based
    eviction: dropping one would send a sample without its table as if it were whole. Memory is
    bounded by backpressure instead: the write stream has no buffer, so while the client reads
    nothing, finished handlers wait on it and the server holds exactly the answers it owes.
    """

    def __init__(self) -> None:
        self._pending: dict[str, Any] = {}
        self._lock = threading.Lock()

    def park(self, result: dict[str, Any], request_id: Any) -> dict[str, Any]:
        """The result with its ``_meta`` replaced by a placeholder naming ``request_id`` (unchanged if it has none)."""
        meta = result.get("_meta")
        if not isinstance(meta, dict) or not meta:
            return result
        key = id_key(request_id)
        with self._lock:
            self._pending[key] = meta
        return {**result, "_meta": {DEFERRED_KEY: key}}

    def restore(self, result: dict[str, Any]) -> dict[str, Any]:
        """The result with its parked ``_meta`` back (a result without a placeholder is returned as is)."""
        meta = result.get("_meta")
        if not isinstance(meta, dict) or len(meta) != 1 or DEFERRED_KEY not in meta:
            return result
        with self._lock:
            real = self._pending.pop(meta[DEFERRED_KEY], None)
        out = dict(result)
        if real is None:
            out.pop("_meta")
        else:
            out["_meta"] = real
        return out

    def discard(self, request_id: Any) -> None:
        """Forget the parked ``_meta`` of a cancelled request (its answer is never written).

        A cancel may name the id as text ("7" for 7: the SDK cancels request 7, requestids.correlation_key); then
        the one parked entry it can mean goes, and none when two could (a kept entry is memory until the connection
        ends; a wrong one dropped would send a sample without its table)."""
        with self._lock:
            if self._pending.pop(id_key(request_id), None) is not None:
                return
            key = correlation_key(request_id)
            meant = [k for k in self._pending if _correlation_of(k) == key]
            if len(meant) == 1:
                self._pending.pop(meant[0])

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)



def _correlation_of(key: str) -> str:
    """The correlation_key of the id an id_key was made from ("str:7" -> "int:7"; "int:7" and "str:abc" stay)."""
    kind, _, text = key.partition(":")
    return correlation_key(text) if kind == "str" else key


def _fragment(part: Any) -> Any:
    """A system_data table part whose pre-serialized rows go out as they are (a copy; the input is untouched)."""
    if isinstance(part, dict) and isinstance(part.get("table"), SerializedRows):
        return {**part, "table": orjson.Fragment(part["table"].json)}
    return part


def with_fragments(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with the pre-serialized inline tables of ``_meta.acp.system_data`` (8.5) as orjson Fragments.

    Only for orjson: pydantic cannot write a Fragment, so the fallback path keeps the original.
    """
    meta = result.get("_meta")
    acp = meta.get(ACP_KEY) if isinstance(meta, dict) else None
    data = acp.get("system_data") if isinstance(acp, dict) else None
    if not isinstance(data, dict):
        return result
    new = _fragment(data)
    if isinstance(data.get("tables"), list):
        new = {**new, "tables": [_fragment(part) for part in data["tables"]]}
    return {**result, "_meta": {**meta, ACP_KEY: {**acp, "system_data": new}}}  # type: ignore[dict-item]


def encode(message: types.JSONRPCMessage, deferred: DeferredMeta | None) -> bytes:
    """One wire line (with its newline) for an outgoing message."""
    if isinstance(message, types.JSONRPCResponse) and isinstance(message.result, dict):
        result = deferred.restore(message.result) if deferred is not None else message.result
        try:
            line = {"jsonrpc": "2.0", "id": message.id, "result": with_fragments(result)}
            return orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # a value orjson does not know (or a non-str key): pydantic's JSON rules
            message = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def parse(line: bytes) -> SessionMessage | Exception:
    """One incoming line as a SessionMessage, or the error as a value (the dispatcher reports it)."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception as exc:
        return exc


def _pollable(fd: int) -> bool:
    # epoll refuses regular files; the event loop can wait on pipes and sockets only.
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _Fd:
    """Non-blocking reads/writes on the event loop for a pipe, a worker thread otherwise."""

    def __init__(self, fd: int):
        self.fd = fd
        self.polled = _pollable(fd)
        if self.polled:
            os.set_blocking(fd, False)

    async def read(self) -> bytes:
        if not self.polled:
            return await anyio.to_thread.run_sync(os.read, self.fd, READ_CHUNK)
        while True:
            try:
                return os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if not self.polled:
                written = await anyio.to_thread.run_sync(os.write, self.fd, view)
            else:
                try:
                    written = os.write(self.fd, view)
                except BlockingIOError:
                    await anyio.wait_writable(self.fd)
                    continue
            view = view[written:]

    def restore_blocking(self) -> None:
        if self.polled:
            with suppress(OSError):
                os.set_blocking(self.fd, True)


def usable() -> bool:
    """True when fd 0 and 1 back sys.stdin/sys.stdout (else the SDK's in-place text streams are used)."""
    return sdk_private.is_backed_by_fd(sys.stdin, 0) and sdk_private.is_backed_by_fd(sys.stdout, 1)


def _claimed_fd(fd: int, stream: Any, mode: str, diversion: Callable[[], int]) -> tuple[int, Callable[[], None] | None]:
    handle, release = sdk_private.claim_fd(fd, stream, mode, diversion)
    return handle.fileno(), release


@asynccontextmanager
async def stdio_server(
    deferred: DeferredMeta | None = None, max_line: int = ACP_MAX_MESSAGE_BYTES, on_eof: Callable[[], None] | None = None,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> AsyncIterator[tuple[Any, Any]]:
    """Serve MCP over this process's stdin/stdout; yields the (read, write) streams serve_loop takes.

    A line longer than ``max_line`` is answered with a JSON-RPC error (its id when the line's first bytes
    name it before ``params``, else null) and dropped unparsed,
    unless the server is waiting for the client's answer to one of its own requests. ``on_eof`` is
    called once stdin has ended (the client is gone), while calls may still be running. At most
    ``max_calls`` calls are in progress (call_cap.CallGate): stdin is not read past them.
    """
    release_in = release_out = None
    try:
        in_fd, release_in = _claimed_fd(0, sys.stdin, "rb", sdk_private.stdin_diversion())
        out_fd, release_out = _claimed_fd(1, sys.stdout, "wb", sdk_private.stdout_diversion())
        reader_fd, writer_fd = _Fd(in_fd), _Fd(out_fd)
        create_context_streams = sdk_private.context_streams()
        read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
        write_stream, write_reader = create_context_streams[SessionMessage](0)

        gate = CallGate(max_calls)

        def over_limit(size: int, pieces: list[bytes]) -> bool:
            # An answer to the server's own request may be big (an inline host table, 8.8): never cut. Only an
            # answer: a request while the client owes one keeps the limit (else the held calls grow unbounded).
            return size > max_line and not (gate.client_owes and answer_in_prefix(head(pieces)))

        async def refuse(pieces: list[bytes]) -> None:
            error = too_large_error(max_line, "line", head(pieces))  # with the id its first bytes name (23.4)
            await write_stream.send(SessionMessage(types.JSONRPCError.model_validate(error), metadata=OWN_ANSWER))

        async def deliver(line: bytes) -> None:
            if over_limit(len(line), [line]):
                await refuse([line])
                return
            error = invalid_id_error(line)  # the SDK would take it for a notification (requestids.py)
            if error is None:
                message = parse(line)
                if (deferred is not None and isinstance(message, SessionMessage)
                      and isinstance(message.message, types.JSONRPCNotification)
                      and message.message.method == "notifications/cancelled"):
                    deferred.discard((message.message.params or {}).get("requestId"))  # its answer never comes
                await read_writer.send(message)
            else:
                await write_stream.send(SessionMessage(types.JSONRPCError.model_validate(error), metadata=OWN_ANSWER))

        async def reader() -> None:
            try:
                await _read_lines()
            finally:
                if on_eof is not None:
                    on_eof()

        async def _read_lines() -> None:
            pending: list[bytes] = []  # pieces of a line longer than one read (big host tables)
            size = 0  # bytes in pending
            dropping = False  # the rest of a refused line is read and dropped, never held whole
            async with read_writer:
                with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    while chunk := await reader_fd.read():
                        start = 0
                        while (end := chunk.find(b"\n", start)) >= 0:
                            line = chunk[start:end]
                            if dropping:
                                dropping = False
                            else:
                                if pending:
                                    line, pending, size = b"".join([*pending, line]), [], 0
                                if line.strip():
                                    await deliver(line)
                            start = end + 1
                        if start < len(chunk) and not dropping:
                            pending.append(chunk[start:])
                            size += len(chunk) - start
                            if over_limit(size, pending):  # refused as soon as it is too long
                                await refuse(pending)
                                pending, size, dropping = [], 0, True
                    if pending and (line := b"".join(pending)).strip():
                        await deliver(line)

        async def writer() -> None:
            async with write_reader:
                with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    async for session_message in write_reader:
                        await writer_fd.write(encode(session_message.message, deferred))
                        gate.written(session_message)  # an answer on the wire ends its call in progress

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(reader)
                tg.start_soon(writer)
                async with gate.streams(read_stream, write_stream) as (gated_read, gated_write):
                    yield gated_read, gated_write
        finally:
            reader_fd.restore_blocking()
            writer_fd.restore_blocking()
    finally:
        if release_out is not None:
            release_out()
        if release_in is not None:
            release_in()
