"""The cap on calls in progress: per stdio connection (``CallGate``) and per HTTP session (http_call_cap.py).

A client can write calls faster than it reads their answers. Without a cap a stdio server read every call,
ran it and kept its answer until the client read it: 10,000 queued calls of 1,000 rows held 4.9 GiB.
With it, a connection has at most ``ACP_MAX_CALLS_IN_PROGRESS`` (default 32) requests taken and not yet
answered; the next one waits unread, so the pipe fills and the client's own writes block (backpressure),
and the server's memory is that of the cap's answers, whatever the client sends. Over HTTP a request past
the cap waits ``ACP_BUSY_WAIT_S`` (default 30 s) for a place, then gets ``busy_error`` (HTTP 429).

A call is in progress from the moment the server takes its request until its answer is on the wire, or it
was cancelled and settled unanswered. Every request counts (tools/call, tools/list, ping...); notifications
and the client's answers take no place. On stdio what the server has not read waits in order: a cancel
written behind more calls than the cap is read once earlier calls are answered.

One exception keeps a stdio connection from deadlocking: while the server waits for the client's answer to
one of its own requests (``acp/read_table``, 8.8), that answer may sit in the pipe behind more calls, so
reading goes on. Those calls are held (parsed, not run, up to the cap again) and, past that, refused with
``busy_error`` (nothing runs; the client may send them again).

The refusal's code is server-defined: neither JSON-RPC nor MCP has one for "too many requests in
progress", ACP reserves -32010..-32049 (12.1) and lets a server use codes below -32050 for its own errors,
which also lie in JSON-RPC's range for implementation-defined server errors (-32000..-32099).
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeGuard

import anyio
import mcp_types as types
from mcp.shared.message import ServerMessageMetadata, SessionMessage

from . import sdk_private
from .requestids import correlation_key, id_key
from .stopping import EOF_GRACE_S  # calls running when stdin ends answer within it; the process ends at it

log = logging.getLogger("analytics_acp")

ENV_MAX_CALLS = "ACP_MAX_CALLS_IN_PROGRESS"
ENV_BUSY_WAIT = "ACP_BUSY_WAIT_S"
DEFAULT_MAX_CALLS = 32
DEFAULT_BUSY_WAIT_S = 30.0
MAX_CALLS_CEILING = 10_000  # a larger setting is a typo, not a cap
BUSY_CODE = -32051  # server-defined (12.1: below -32050); see the module docstring
BUSY_NAME = "SERVER_BUSY"
CLOSED_BOUND_S = 2.0  # answering held calls once the client has closed stdin never holds the server longer
# Metadata of an answer written for a request the server never took (a refusal): it ends no call in progress.
OWN_ANSWER = ServerMessageMetadata()


class CapSettingError(ValueError):
    """ACP_MAX_CALLS_IN_PROGRESS or ACP_BUSY_WAIT_S is not a usable value (said when the server starts)."""


@dataclass(frozen=True)
class CapSettings:
    """How many calls one connection or session may have in progress, and how long HTTP waits for a place."""

    max_calls: int = DEFAULT_MAX_CALLS
    busy_wait_s: float = DEFAULT_BUSY_WAIT_S


def settings_from_env(environ: Mapping[str, str] | None = None) -> CapSettings:
    """The cap from ACP_MAX_CALLS_IN_PROGRESS and ACP_BUSY_WAIT_S (defaults when unset); CapSettingError when invalid."""
    environ = os.environ if environ is None else environ
    raw_calls = (environ.get(ENV_MAX_CALLS) or "").strip()
    raw_wait = (environ.get(ENV_BUSY_WAIT) or "").strip()
    try:
        max_calls = int(raw_calls) if raw_calls else DEFAULT_MAX_CALLS
    except ValueError:
        max_calls = 0
    if not 1 <= max_calls <= MAX_CALLS_CEILING:
        raise CapSettingError(f"{ENV_MAX_CALLS} must be a whole number from 1 to {MAX_CALLS_CEILING:,} (got {raw_calls!r}); "
                              f"unset it for the default, {DEFAULT_MAX_CALLS}.")
    try:
        wait = float(raw_wait) if raw_wait else DEFAULT_BUSY_WAIT_S
    except ValueError:
        wait = -1.0
    if not 0 <= wait <= 3600:
        raise CapSettingError(f"{ENV_BUSY_WAIT} must be a number of seconds from 0 to 3600 (got {raw_wait!r}); "
                              f"unset it for the default, {DEFAULT_BUSY_WAIT_S:g}.")
    return CapSettings(max_calls, wait)


def busy_error(request_id: str | int | None, max_calls: int, why: str) -> dict[str, Any]:
    """The JSON-RPC error refusing a request over the cap; ``why`` says what the client should wait for."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {
        "code": BUSY_CODE,
        "message": f"The server already has {max_calls} calls in progress on this connection, its limit "
                   f"({ENV_MAX_CALLS}), and did not run this one: {why}, then send it again.",
        "data": {"name": BUSY_NAME, "max_calls_in_progress": max_calls}}}



def _request(item: SessionMessage | Exception) -> types.JSONRPCRequest | None:
    if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCRequest):
        return item.message
    return None


def _is_cancel(message: Any) -> TypeGuard[types.JSONRPCNotification]:
    return isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled"


def _cancelled_id(message: types.JSONRPCNotification) -> Any:
    params = message.params if isinstance(message.params, dict) else {}
    return params.get("requestId")


class CallGate:
    """The calls in progress on one stdio connection, between its transport and the SDK's serve loop.

    ``streams`` puts the gate between the transport's (read, write) pair and ``serve_loop``; the transport
    (or the write wrapper ``streams`` adds) reports each message it has put on the wire to ``written``.
    """

    def __init__(self, max_calls: int = DEFAULT_MAX_CALLS, eof_grace_s: float = EOF_GRACE_S):
        self.max_calls = max_calls
        self.eof_grace_s = eof_grace_s
        self.taken = 0  # requests handed to the server so far (the pause log says it)
        self._running: dict[str, int] = {}  # request key -> answers still owed (a client may reuse an id)
        self._count = 0
        # The server's own requests the client has not answered yet, by correlation_key: the SDK matches an answer
        # "7" to request 7, so must the gate (else the line limit stays off and calls are held for good).
        self._owed: set[str] = set()
        self._queue: deque[SessionMessage | Exception] = deque()  # read, waiting their turn, in order
        self._urgent: deque[SessionMessage | Exception] = deque()  # the client's answers and cancels: never wait
        self._eof = False
        self._changed = anyio.Event()

    @property
    def in_progress(self) -> int:
        """Calls taken and not yet answered."""
        return self._count

    @property
    def client_owes(self) -> bool:
        """True while the client has not answered one of the server's own requests (acp/read_table, 8.8)."""
        return bool(self._owed)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _until(self, ready: Any) -> None:
        while not ready():
            await self._changed.wait()

    def written(self, item: SessionMessage) -> None:
        """``item`` is on the wire: an answer ends its call; a request of the server's waits for the client."""
        message = item.message
        if item.metadata is OWN_ANSWER:
            return
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._finish(id_key(message.id))
        elif isinstance(message, types.JSONRPCRequest):
            self._owed.add(correlation_key(message.id))
            self._notify()
        elif _is_cancel(message):
            self._owed.discard(correlation_key(_cancelled_id(message)))  # given up: no answer comes
            self._notify()

    def _finish(self, key: str) -> None:
        left = self._running.get(key, 0) - 1
        if left < 0:
            return  # not a call in progress (an answer to a request the server never took)
        if left:
            self._running[key] = left
        else:
            del self._running[key]
        self._count -= 1
        self._notify()

    async def _settled(self, key: str) -> None:
        self._finish(key)  # cancelled: the SDK writes no answer for it

    def _room(self) -> bool:
        # Read on once everything read is handed on, or while the client owes the server an answer (its answer
        # may come after more calls: those are held up to the cap, then refused, so reading never deadlocks).
        return not self._urgent and (not self._queue or bool(self._owed))

    async def _intake(self, upstream: Any, write: Any) -> None:
        async with upstream:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                async for item in upstream:
                    await self._take(item, write)
                    if not self._room():
                        if self._count >= self.max_calls and not self._owed:
                            log.debug("stdio reading paused: %d calls in progress (%s=%d), %d requests taken",
                                      self._count, ENV_MAX_CALLS, self.max_calls, self.taken)
                        await self._until(self._room)
        await self._close(write)

    async def _take(self, item: SessionMessage | Exception, write: Any) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._owed.discard(correlation_key(message.id))
            self._urgent.append(item)
        elif message is not None and _is_cancel(message):
            if not self._drop_held(_cancelled_id(message)):  # a held call is dropped: the SDK never saw it
                self._urgent.append(item)
        elif isinstance(message, types.JSONRPCRequest) and len(self._queue) >= self.max_calls:
            # Only while the client owes the server an answer (otherwise reading has paused long before).
            error = busy_error(message.id, self.max_calls, "answer the server's pending requests (acp/read_table) first")
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await write.send(SessionMessage(types.JSONRPCError.model_validate(error), metadata=OWN_ANSWER))
            return
        elif len(self._queue) >= self.max_calls:
            self._urgent.append(item)  # a notification while calls are held: it need not wait behind them
        else:
            self._queue.append(item)
        self._notify()

    def _drop_held(self, request_id: Any) -> bool:
        key = correlation_key(request_id)  # the call the SDK would cancel: "7" names call 7
        for item in self._queue:
            if (request := _request(item)) is not None and correlation_key(request.id) == key:
                self._queue.remove(item)
                return True
        return False

    async def _close(self, write: Any) -> None:
        """stdin ended: held calls get the "Connection closed" the SDK gives the calls it was running."""
        held = [request for item in self._queue if (request := _request(item)) is not None]
        self._queue.clear()
        with anyio.move_on_after(CLOSED_BOUND_S), suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            for request in held:
                error = types.JSONRPCError(jsonrpc="2.0", id=request.id,
                                           error=types.ErrorData(code=types.CONNECTION_CLOSED, message="Connection closed"))
                await write.send(SessionMessage(error, metadata=OWN_ANSWER))
        self._eof = True
        self._notify()

    def _ready(self) -> bool:
        if self._urgent:
            return True
        return bool(self._queue) and (_request(self._queue[0]) is None or self._count < self.max_calls)

    async def _feed(self, downstream: Any) -> None:
        """The only sender to the serve loop: the client's answers and cancels first, then calls as places free."""
        async with downstream:
            while True:
                await self._until(lambda: self._ready() or self._eof)
                if not self._ready():
                    await self._drain()
                    return  # stdin ended and nothing is left to hand on
                item = self._urgent.popleft() if self._urgent else self._queue.popleft()
                if (request := _request(item)) is not None:
                    item = self._start(request, item.metadata)  # type: ignore[union-attr]
                self._notify()
                await downstream.send(item)

    async def _drain(self) -> None:
        """stdin ended: let the calls in progress answer (bounded by ``eof_grace_s``) before the serve loop sees EOF.

        The SDK cancels every handler still running when its read stream ends, so without this a client that
        writes its requests and closes stdin at once (``cat requests | serve``) got only the answer to
        initialize. No wait while the client owes the server an answer (acp/read_table, 8.8): it never comes,
        and the SDK's EOF is what tells the waiting call so.
        """
        with anyio.move_on_after(self.eof_grace_s):
            await self._until(lambda: self._count == 0 or bool(self._owed))

    def _start(self, request: types.JSONRPCRequest, metadata: Any) -> SessionMessage:
        """A call in progress from now on; ``on_request_unanswered`` ends it when it is cancelled (no answer)."""
        key = id_key(request.id)
        self._running[key] = self._running.get(key, 0) + 1
        self._count += 1
        self.taken += 1
        metadata = metadata if isinstance(metadata, ServerMessageMetadata) else ServerMessageMetadata()
        if metadata.on_request_unanswered is None:
            metadata = replace(metadata, on_request_unanswered=partial(self._settled, key))
        return SessionMessage(request, metadata=metadata)

    @asynccontextmanager
    async def streams(self, read: Any, write: Any, *, report_writes: bool = False) -> AsyncIterator[tuple[Any, Any]]:
        """The (read, write) pair ``serve_loop`` takes, gated.

        ``report_writes``: the transport cannot report what it wrote, so the gate counts an answer once the
        transport has taken it (then one more answer than the cap may wait in the transport's writer).
        """
        send, receive = sdk_private.context_streams()[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._feed, send)
            tg.start_soon(self._intake, read, write)
            try:
                yield receive, (_ReportingWrite(write, self) if report_writes else write)
            finally:
                tg.cancel_scope.cancel()


class _ReportingWrite:
    """A write stream that tells the gate what went through it (for a transport that cannot)."""

    def __init__(self, inner: Any, gate: CallGate):
        self._inner, self._gate = inner, gate

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(item)
        self._gate.written(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ReportingWrite:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
