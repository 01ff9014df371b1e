"""Progress out and cancellation in, for one tools/call (MCP ``notifications/progress`` and ``notifications/cancelled``).

A tool reports what it knows with ``ctx.progress(done, total, message)`` from any thread; the core
sends at most a few notifications a second (the latest wins) and always the last one, and only when
the client asked for progress (a ``progressToken`` in the request's ``_meta``). When the client
cancels the request, the SDK cancels the call's task; the core then marks the call cancelled and runs
what the tool registered with ``ctx.on_cancel`` (a database's ``interrupt()``), so work that runs in
a worker thread stops instead of finishing for nobody.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

if TYPE_CHECKING:  # typing only: the SDK's progress callback type (the bridge hands it to its host client)
    from mcp.shared.dispatcher import ProgressFnT

log = logging.getLogger("analytics_acp")

SendProgress = Callable[[float, float | None, str | None], Awaitable[None]]
MIN_INTERVAL_S = 0.25  # at most four notifications a second: a progress bar, not a log
SEND_BOUND_S = 2.0  # a client that reads nothing never holds the call up for long


class CallSignals:
    """The progress and cancellation state of one call (a no-op one when the client asked for neither)."""

    def __init__(self, send: SendProgress | None = None, min_interval_s: float = MIN_INTERVAL_S) -> None:
        self._send = send
        self._min_interval_s = min_interval_s
        self._lock = threading.Lock()
        self._latest: tuple[float, float | None, str | None] | None = None
        self._sent: tuple[float, float | None, str | None] | None = None
        self._last_sent_at = 0.0
        self._wake: anyio.Event | None = None
        # One send at a time: the final flush waits for a send in flight instead of the sender being cancelled
        # in the middle of it, so the last progress is on the wire before the answer.
        self._sending = anyio.Lock()
        self._loop_thread: int | None = None
        self._token: Any = None  # the event loop's token: any thread (a connector's own pool too) can wake the sender
        self._cancelled = threading.Event()
        self._callbacks: list[Callable[[], Any]] = []
        self._finished = False

    @property
    def wants_progress(self) -> bool:
        """True when the client sent a progress token for this call."""
        return self._send is not None

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled the call: a tool stops at its next step boundary."""
        return self._cancelled.is_set()

    def wait_cancelled(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the call to be cancelled; True when it is. A worker thread's pause
        (a retry's backoff) waits here instead of ``time.sleep``, so a cancel ends it at once."""
        return self._cancelled.wait(max(timeout_s, 0.0))

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Record progress (thread-safe, never blocks the tool); the sender picks the latest up."""
        if self._send is None or self._finished:
            return
        with self._lock:
            if self._sent is not None and done < self._sent[0]:
                return  # progress only goes up (MCP requires it to increase)
            self._latest = (float(done), None if total is None else float(total), message)
        self._poke()

    def settle(self, total: float) -> None:
        """At the end of an extraction the tool reported no progress for: one ``total`` of ``total`` rows,
        so a client that asked for progress always hears the end."""
        if self._latest is None:
            self.progress(total, total, f"{int(total)} rows")

    def on_cancel(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` (from the event loop thread) when the call is cancelled; at once if it already is."""
        with self._lock:
            if not self._cancelled.is_set():
                self._callbacks.append(callback)
                return
        _run_quietly(callback)

    def cancel(self) -> None:
        """Mark the call cancelled and run the registered callbacks once."""
        with self._lock:
            if self._cancelled.is_set():
                return
            self._cancelled.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _run_quietly(callback)

    def _poke(self) -> None:
        wake = self._wake
        if wake is None:
            return
        if threading.get_ident() == self._loop_thread:
            wake.set()
        else:
            import anyio.from_thread  # here, not at start-up: initialize imports this module (cold start, tools/bench)

            try:
                anyio.from_thread.run_sync(wake.set, token=self._token)
            except RuntimeError:  # the loop is gone (the call ended): nothing to send any more
                pass

    async def _pump(self) -> None:
        # Sends the latest recorded progress, at most every min_interval_s.
        assert self._send is not None
        while True:
            self._wake = anyio.Event()
            if self._latest is None or self._latest == self._sent:
                await self._wake.wait()
            wait = self._last_sent_at + self._min_interval_s - time.monotonic()
            if wait > 0:
                await anyio.sleep(wait)
            await self._flush()

    async def _flush(self) -> None:
        async with self._sending:
            with self._lock:
                latest = self._latest
            if latest is None or latest == self._sent or self._send is None:
                return
            self._sent, self._last_sent_at = latest, time.monotonic()
            with anyio.move_on_after(SEND_BOUND_S):
                try:
                    await self._send(*latest)
                except Exception as exc:  # a closed stream: the answer will not reach anyone either
                    log.debug("progress not sent: %s", type(exc).__name__)

    async def in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in a worker thread, interruptible: a cancelled call runs the on_cancel callbacks at
        once (an ordinary ``to_thread.run_sync`` would defer the cancellation until the thread is done), then
        waits, shielded, for the interrupted work to end so nothing is left half-written behind it."""
        finished = threading.Event()

        def run() -> Any:
            try:
                return fn(*args)
            finally:
                finished.set()

        try:
            return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            self.cancel()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(finished.wait)
            raise

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Around the tool's run: the progress sender lives exactly as long as it (only when the client asked
        for progress); a cancellation that reaches the call marks it cancelled and runs the callbacks."""
        self._loop_thread = threading.get_ident()
        self._token = anyio.lowlevel.current_token()
        try:
            if self._send is None:
                yield
                return
            failure: Exception | None = None
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._pump)
                try:
                    yield
                    await self._flush()  # always the last one
                except Exception as exc:  # raised as itself below, not wrapped in the task group's ExceptionGroup
                    failure = exc
                finally:
                    tg.cancel_scope.cancel()
            if failure is not None:
                raise failure
        except anyio.get_cancelled_exc_class():
            self.cancel()  # notifications/cancelled or the connection's end (async tools: their awaits stopped)
            raise
        finally:
            self._finished = True


def progress_sender(request_ctx: Any) -> ProgressFnT | None:
    """How an MCP request's progress reaches its client: ``notifications/progress`` under the request's
    ``progressToken`` (None when it sent none). ``request_ctx`` is the SDK's request context."""
    meta = request_ctx.meta if isinstance(request_ctx.meta, dict) else {}
    token = meta.get("progress_token", meta.get("progressToken"))  # the SDK hands _meta over snake_cased
    if not isinstance(token, str | int) or isinstance(token, bool):
        return None

    async def send(progress: float, total: float | None, message: str | None) -> None:
        await request_ctx.session.send_progress_notification(token, progress, total, message,
                                                             related_request_id=request_ctx.request_id)

    return send


def _run_quietly(callback: Callable[[], Any]) -> None:
    try:
        callback()
    except Exception as exc:  # interrupting a finished statement is harmless; never mask the cancellation
        log.debug("cancel callback failed: %s", type(exc).__name__)
