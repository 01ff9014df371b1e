"""Every use of the mcp SDK's private names, in one place (issue 27.3).

The core needs six things the SDK has no public API for: the stdio fd claim and diversion
(server_stdio.py reads and writes the wire itself), context-carrying memory streams, per-connection
state (one dict per stdio connection or HTTP session), the HTTP client with the SDK's timeouts,
the dispatcher's raw request path (the host client keeps nulls inside ``_meta.acp`` and skips model
validation of big results) and a per-request choice of answer over Streamable HTTP (one JSON body or an
SSE stream; the SDK has one switch per server). They are pinned to
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


# --- Streamable HTTP: one JSON body for a call that has nothing to send before its answer --------------------
# The SDK answers every request POST either as an SSE stream or, with ``json_response=True``, as one JSON body,
# for the whole server. A stream costs a task group of five tasks per request (sse_starlette's response: the
# stream, a keep-alive ping, two listeners, the SDK's writer): about a fifth of a small call's CPU (bench case
# 4b, tools/bench/README.md). A JSON body carries the answer only, so the choice is made per request by the
# caller (http_app.py): ``scope[key].json_answer``. The rest is the SDK's own JSON-response path, done here for
# one request: the same checks and the same ``message_router`` stream; related messages that reach it (none is
# sent: the caller asks JSON only for calls without a progress token whose tool cannot ask the host) are
# skipped, and ``can_send_request`` is off, as the SDK's JSON mode has it. A client that closes the connection
# before the answer ends the wait, as an SSE stream's disconnect listener does (http_cancel.py then cancels).
# A request the client cancelled (notifications/cancelled) or whose session ended is answered as the SDK's stream
# path answers it, as a (short) SSE body: such an answer can arrive after the client closed its session, and the
# SDK's client, which ignores a late answer on a stream, fails its whole connection on a late JSON body.

_JSON_ANSWERS: dict[str, Any] = {}
CANCELS_KEPT = 256  # per session: request ids the client cancelled, for their answers' form


def answer_as_json_when_asked(scope_key: str) -> None:
    """Have the SDK's session manager build transports that answer a request POST as one JSON body when
    ``scope[scope_key].json_answer`` is true (``mcp.server.streamable_http_manager`` creates them by name)."""
    import mcp.server.streamable_http_manager as manager

    if manager.StreamableHTTPServerTransport is _JSON_ANSWERS.get("class"):
        return
    _JSON_ANSWERS["class"] = transport = _json_answer_transport(scope_key)
    setattr(manager, "StreamableHTTPServerTransport", transport)  # noqa: B010 - a module's class, replaced


def _json_answer_transport(scope_key: str) -> Any:
    from functools import partial

    import anyio
    import pydantic_core
    from mcp.server.streamable_http import (
        MCP_SESSION_ID_HEADER,
        REQUEST_CANCELLED,
        REQUEST_STREAM_BUFFER_SIZE,
        EventMessage,
        StreamableHTTPServerTransport,
        check_accept_headers,
    )
    from mcp.shared.message import ServerMessageMetadata, SessionMessage
    from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter
    from pydantic import ValidationError
    from starlette.responses import Response

    class JsonAnswerTransport(StreamableHTTPServerTransport):
        """The SDK's transport; a POST the caller marked is answered as one JSON body."""

        _cancels: dict[str, None] | None = None  # ids named by the client's notifications/cancelled, newest last

        async def _handle_post_request(self, scope: Any, request: Any, receive: Any, send: Any) -> None:
            head = scope.get(scope_key)
            writer = self._read_stream_writer
            if head is None:
                await self._note_cancel(request)  # a notification, an answer: the SDK's path below handles it
            if (head is None or not getattr(head, "json_answer", False) or writer is None
                    or not check_accept_headers(request)[0] or not self._check_content_type(request)):
                await super()._handle_post_request(scope, request, receive, send)
                return
            body = await request.body()  # Starlette keeps it: the SDK's path below reads the same bytes
            try:
                message = jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
            except (ValueError, ValidationError):
                message = None
            if not isinstance(message, JSONRPCRequest) or message.method == "initialize":
                await super()._handle_post_request(scope, request, receive, send)  # its answers for every fault
                return
            if not await self._validate_request_headers(request, send):
                return
            request_id = str(message.id)
            self._request_streams[request_id] = anyio.create_memory_object_stream[EventMessage](
                REQUEST_STREAM_BUFFER_SIZE)
            metadata = ServerMessageMetadata(
                request_context=request, can_send_request=False,
                on_request_unanswered=partial(self._terminate_unanswered_request, message.id))
            try:
                await writer.send(SessionMessage(message, metadata=metadata))
                answer, gone = await _answer_or_disconnect(self._request_streams[request_id][1], receive)
            finally:
                await self._clean_up_memory_streams(request_id)
            # A cancel can overtake its request (two POSTs): the request then runs to its end, unknown to the cancel.
            cancelled = self._cancels is not None and request_id in self._cancels
            if gone:
                return  # nobody to answer; the request is cancelled outside (http_cancel.CancelOnClose)
            if answer is None or cancelled or (isinstance(answer, JSONRPCError) and answer.error.code == REQUEST_CANCELLED):
                response = self._stream_answer(answer)  # nothing, or the cancel's error: what the stream path sends
            else:
                response = self._create_json_response(answer)
            await response(scope, receive, send)

        async def _note_cancel(self, request: Any) -> None:
            """Remember the request id a notifications/cancelled in this POST names (the last CANCELS_KEPT)."""
            body = await request.body()  # Starlette keeps it for the SDK's path
            if b"notifications/cancelled" not in body:
                return
            try:
                note = pydantic_core.from_json(body)
                target = str(note["params"]["requestId"]) if note.get("method") == "notifications/cancelled" else None
            except (ValueError, TypeError, KeyError, AttributeError):
                return  # the SDK's path answers a malformed body
            if target is not None:
                cancels = self._cancels = self._cancels if self._cancels is not None else {}
                cancels[target] = None
                if len(cancels) > CANCELS_KEPT:
                    del cancels[next(iter(cancels))]

        def _stream_answer(self, answer: Any) -> Any:
            """The SDK's SSE answer in one body: the message as one event, or no event (the stream just ends)."""
            body = b"" if answer is None else (
                b"event: message\r\ndata: " + answer.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\r\n\r\n")
            headers = {"Cache-Control": "no-cache, no-transform", "Content-Type": "text/event-stream"}
            if self.mcp_session_id:
                headers[MCP_SESSION_ID_HEADER] = self.mcp_session_id
            return Response(body, headers=headers)

    async def _answer_or_disconnect(reader: Any, receive: Any) -> tuple[Any, bool]:
        found: list[Any] = []
        gone = [False]
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone[0] = True
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            try:
                async for event in reader:
                    if isinstance(event.message, JSONRPCResponse | JSONRPCError):
                        found.append(event.message)
                        break
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                pass  # the session ended: no answer
            tg.cancel_scope.cancel()
        return (found[0] if found else None), gone[0]

    return JsonAnswerTransport
