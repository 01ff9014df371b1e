"""A closed HTTP request stream cancels its request (issue 28.2; Streamable HTTP, 3.2).

MCP asks a client to cancel with ``notifications/cancelled``; a client that goes away instead (a closed tab,
an aborted fetch, a killed process) never sends it. This server keeps no event store, so the answer of a
closed stream can never be resumed and the work would go on for nobody (a query burning a warehouse).
A DELETE of the session already ends its running calls (the SDK terminates the session's task group).
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from .requestids import REQUEST_SCOPE_KEY, RequestHead

CANCEL_BOUND_S = 5.0  # handing a closed stream's cancel to the session never holds the connection longer
REASON = "The client closed the request's stream."


class CancelOnClose:
    """ASGI wrapper: when the POST of a request ends on ``http.disconnect`` before its answer was sent, the
    same session gets the ``notifications/cancelled`` the client would have sent, through the SDK's own path."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        closed = answered = False

        async def watched_receive() -> dict[str, Any]:
            nonlocal closed
            message: dict[str, Any] = await receive()
            if message["type"] == "http.disconnect":
                closed = True
            return message

        async def watched_send(message: dict[str, Any]) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        try:
            await self.app(scope, watched_receive, watched_send)
        finally:
            request: RequestHead | None = scope.get(REQUEST_SCOPE_KEY)  # RequestIdGuard, outside, parsed the body
            # MCP forbids cancelling initialize.
            if closed and not answered and request is not None and request.method != "initialize":
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_BOUND_S):
                    await self._cancel(scope, request.id)

    async def _cancel(self, scope: dict[str, Any], request_id: str | int) -> None:
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": request_id, "reason": REASON}}
        keep = (b"mcp-session-id", b"mcp-protocol-version", b"host", b"origin")  # the session and its checks
        headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() in keep]
        headers += [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
        messages = [{"type": "http.request", "body": json.dumps(note).encode(), "more_body": False}]

        async def receive() -> dict[str, Any]:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def discard(message: dict[str, Any]) -> None:
            pass  # 202: nobody listens

        note_scope = {k: v for k, v in scope.items() if k != REQUEST_SCOPE_KEY}  # a notification: no request
        await self.app({**note_scope, "headers": headers}, receive, discard)
