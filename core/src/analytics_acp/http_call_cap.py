"""The cap on calls in progress per Streamable HTTP session (issue 38.6; call_cap.py has the why and the code).

Each POST that carries a JSON-RPC request and an ``Mcp-Session-Id`` takes one of its session's
``max_calls`` places until the SDK has sent its whole answer (or the client has gone). Past the cap the
request waits ``busy_wait_s`` for a place, then gets HTTP 429 with ``Retry-After`` and a JSON-RPC error
body (``call_cap.busy_error``, code -32051, ``data.name`` SERVER_BUSY) carrying its id; nothing runs.
Notifications (a cancel among them) and the client's answers to the server's own requests never wait:
a call blocked on ``acp/read_table`` needs that answer to finish. A request without a session (the
initialize that opens one) is not counted.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from .call_cap import CapSettings, busy_error
from .requestids import request_in, usable_id


class _Places:
    """One session's places: a semaphore, and how many requests use or wait for it (the entry's lifetime)."""

    def __init__(self, max_calls: int):
        self.semaphore = anyio.Semaphore(max_calls)
        self.users = 0


class SessionCallCap:
    """ASGI wrapper: at most ``settings.max_calls`` requests in progress per session, the next wait bounded."""

    def __init__(self, app: Any, settings: CapSettings):
        self.app = app
        self.settings = settings
        self._sessions: dict[bytes, _Places] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        session = dict(scope.get("headers") or []).get(b"mcp-session-id") if scope["type"] == "http" else None
        if session is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        buffered: list[dict[str, Any]] = []
        while True:  # the body is small here: RequestIdGuard, outside, has refused an oversized one
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break

        async def replay() -> dict[str, Any]:
            return buffered.pop(0) if buffered else await receive()

        request = request_in(b"".join(m.get("body", b"") for m in buffered))
        if request is None:  # a notification or an answer: never waits (a call may be waiting for it)
            await self.app(scope, replay, send)
            return
        places = self._sessions.setdefault(session, _Places(self.settings.max_calls))
        places.users += 1
        try:
            placed = False
            with anyio.move_on_after(self.settings.busy_wait_s):
                await places.semaphore.acquire()
                placed = True
            if not placed:
                await self._refuse(send, usable_id(request["id"]))
                return
            try:
                await self.app(scope, replay, send)
            finally:
                places.semaphore.release()
        finally:
            places.users -= 1
            if not places.users:
                del self._sessions[session]

    async def _refuse(self, send: Any, request_id: str | int | None) -> None:
        wait = self.settings.busy_wait_s
        why = f"none of them finished within {wait:g} s; wait for an answer"
        body = json.dumps(busy_error(request_id, self.settings.max_calls, why)).encode()
        await send({"type": "http.response.start", "status": 429, "headers": [
            (b"content-type", b"application/json"), (b"retry-after", str(max(1, round(wait))).encode())]})
        await send({"type": "http.response.body", "body": body})
