"""The cap on calls in progress per Streamable HTTP session (issue 38.6; call_cap.py has the why and the code).

Each POST that carries a JSON-RPC request and an ``Mcp-Session-Id`` takes one of its session's
``max_calls`` places until the SDK has sent its whole answer (or the client has gone). Past the cap the
request waits ``busy_wait_s`` for a place, then gets HTTP 429 with ``Retry-After`` and a JSON-RPC error
body (``call_cap.busy_error``, code -32051, ``data.name`` SERVER_BUSY) carrying its id; nothing runs.
The bodies of the requests waiting for a place stay in memory meanwhile: past ``WAIT_BYTES`` of them (32 MiB, eight
bodies of the transport's 4 MiB limit) the next request is refused at once. A byte bound, not a count: a burst of
hundreds of small calls (issue 27.1) still waits its turn.
Notifications (a cancel among them) and the client's answers to the server's own requests never wait:
a call blocked on ``acp/read_table`` needs that answer to finish. A request without a session (the
initialize that opens one) is not counted.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from .call_cap import CapSettings, busy_error
from .requestids import REQUEST_SCOPE_KEY, RequestHead

WAIT_BYTES = 32 * 1024 * 1024  # request bodies one session holds while they wait for a place


class _Places:
    """One session's places: a semaphore, the bytes of the bodies waiting for it, and how many requests use or wait
    for it (the entry's lifetime)."""

    def __init__(self, max_calls: int):
        self.semaphore = anyio.Semaphore(max_calls)
        self.waiting_bytes = 0
        self.users = 0


class SessionCallCap:
    """ASGI wrapper: at most ``settings.max_calls`` requests in progress per session; the next wait, bounded in time
    and in the bytes they hold (``wait_bytes``)."""

    def __init__(self, app: Any, settings: CapSettings, wait_bytes: int = WAIT_BYTES):
        self.app = app
        self.settings = settings
        self.wait_bytes = wait_bytes
        self._sessions: dict[bytes, _Places] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        session = dict(scope.get("headers") or []).get(b"mcp-session-id") if scope["type"] == "http" else None
        request: RequestHead | None = scope.get(REQUEST_SCOPE_KEY)  # RequestIdGuard, outside, parsed the body
        if session is None or request is None or scope.get("method") != "POST":
            # A notification or an answer never waits (a call may be waiting for it); nor does what opens a session.
            await self.app(scope, receive, send)
            return
        places = self._sessions.setdefault(session, _Places(self.settings.max_calls))
        places.users += 1
        try:
            placed = await self._place(places, request.size)
            if placed is not None:
                await self._refuse(send, request.id, placed[0], placed[1])
                return
            try:
                await self.app(scope, receive, send)
            finally:
                places.semaphore.release()
        finally:
            places.users -= 1
            if not places.users:
                del self._sessions[session]

    async def _place(self, places: _Places, size: int) -> tuple[str, float] | None:
        """Take a place (None), or say why not and when to retry: (why, seconds)."""
        try:
            places.semaphore.acquire_nowait()
            return None
        except anyio.WouldBlock:
            pass
        if places.waiting_bytes and places.waiting_bytes + size > self.wait_bytes:
            return (f"the requests already waiting for a place hold {places.waiting_bytes:,} bytes (at most "
                    f"{self.wait_bytes:,}); wait for an answer"), 1.0
        wait = self.settings.busy_wait_s
        places.waiting_bytes += size
        try:
            with anyio.move_on_after(wait):
                await places.semaphore.acquire()
                return None
        finally:
            places.waiting_bytes -= size
        return f"none of them finished within {wait:g} s; wait for an answer", wait

    async def _refuse(self, send: Any, request_id: str | int, why: str, wait: float) -> None:
        body = json.dumps(busy_error(request_id, self.settings.max_calls, why)).encode()
        await send({"type": "http.response.start", "status": 429, "headers": [
            (b"content-type", b"application/json"), (b"retry-after", str(max(1, round(wait))).encode())]})
        await send({"type": "http.response.body", "body": body})
