"""Streamable HTTP transport (3.2, 10.5, 13.3): /mcp, Bearer auth, one-time table URLs.

Binds 127.0.0.1 by default and refuses a non-loopback address without ACP_HTTP_TOKEN.
Big system_data tables are not handed out as file:// paths (a remote host could not read
them, 8.5): they are served once, shortly, at /acp-files/<token> behind the same auth.
Request bodies are never logged (they carry credentials). Each session has at most
ACP_MAX_CALLS_IN_PROGRESS calls in progress (default 32); a request past them waits ACP_BUSY_WAIT_S
(default 30 s) for a place, then gets HTTP 429 with a JSON-RPC error (-32051, http_call_cap.py).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from . import sdk_private
from .argument_limits import too_large_error
from .call_cap import CapSettings, settings_from_env
from .constants import ACP_INPUT_ANNOTATION, ACP_INPUT_TABLE_REF
from .http_call_cap import SessionCallCap
from .http_cancel import CancelOnClose
from .requestids import REQUEST_SCOPE_KEY, RequestHead, head, screen
from .runtime import FILE_URL_SCOPE_KEY, AcpServer

FILE_TTL_S = 300
FILES_PATH = "/acp-files"
DRAIN_MAX_BYTES = 64 * 1024 * 1024  # an oversized body is read up to this before the 413 is sent
CHECKED_BODY_BYTES = 4 * 1024 * 1024  # the SDK's default request body limit (mcp.server.transport_security)


class InsecureBind(ValueError):
    """A non-loopback bind was asked for without a transport token."""


class PortInUse(OSError):
    """The HTTP port is taken (said plainly instead of uvicorn's raw ``[Errno 98]``)."""


def bind_socket(host: str, port: int) -> Any:
    """The listening socket for uvicorn, bound here so a busy port gets a message that says what to do."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            why = "is already in use" if exc.errno == errno.EADDRINUSE else "needs privileges"
            raise PortInUse(
                f"Port {port} on {host} {why}. Choose another with --port N (or ACP_PORT=N), "
                "or stop the program that listens there."
            ) from None
        raise
    sock.set_inheritable(True)
    return sock


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OneTimeFiles:
    """token -> file, each served once before it expires, then deleted."""

    def __init__(self, ttl_s: float = FILE_TTL_S):
        self.ttl_s = ttl_s
        self._files: dict[str, tuple[Path, float]] = {}
        self._lock = threading.Lock()

    def register(self, path: Path) -> str:
        """A fresh unguessable token for ``path``."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._expire()
            self._files[token] = (path, time.monotonic() + self.ttl_s)
        return token

    def take(self, token: str) -> Path | None:
        """The file for ``token`` if still valid; the token is consumed."""
        with self._lock:
            self._expire()
            entry = self._files.pop(token, None)
        return entry[0] if entry else None

    def _expire(self) -> None:
        now = time.monotonic()
        for token, (path, deadline) in list(self._files.items()):
            if deadline < now:
                self._files.pop(token, None)
                path.unlink(missing_ok=True)


class BearerGuard:
    """ASGI wrapper: every HTTP request needs ``Authorization: Bearer <token>`` (3.2)."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error":"unauthorized","message":"Missing or invalid Bearer token."}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="analytics-acp"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


class JsonAnswers:
    """Which requests are answered as one JSON body instead of an SSE stream (sdk_private.answer_as_json_when_asked):
    a tools/call that asks for no progress, of a tool that cannot ask the host for a table (no ``table_ref``
    argument anywhere in its schema, 8.8). Such a call sends nothing before its answer, so the body loses
    nothing, and a stream's five tasks per request are about a fifth of a small call's CPU (bench case 4b).
    Every other request keeps the stream: progress notifications and ``acp/read_table`` travel on it."""

    def __init__(self, acp: AcpServer):
        self._acp = acp
        self._asking: frozenset[str] | None = None  # worked out at the first call: start-up stays as it is

    def __call__(self, request: dict[str, Any]) -> bool:
        params = request.get("params")
        if request.get("method") != "tools/call" or not isinstance(params, dict):
            return False
        meta = params.get("_meta")
        if isinstance(meta, dict) and "progressToken" in meta:
            return False
        name = params.get("name")
        return isinstance(name, str) and name not in self._tools_asking_the_host()

    def _tools_asking_the_host(self) -> frozenset[str]:
        if self._asking is None:
            state = self._acp.state
            self._asking = frozenset(name for name, tool in state.loaded.tools.items()
                                     if _reads_a_host_table(state.published_schema(tool)))
        return self._asking


def _reads_a_host_table(schema: Any) -> bool:
    if isinstance(schema, dict):
        if schema.get(ACP_INPUT_ANNOTATION) == ACP_INPUT_TABLE_REF:
            return True
        return any(_reads_a_host_table(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_reads_a_host_table(value) for value in schema)
    return False


class RequestIdGuard:
    """ASGI wrapper: a POST whose JSON-RPC id is not a string or an integer gets HTTP 400 with a
    JSON-RPC error (-32600, id null) instead of the SDK's 202 and silence (requestids.py). It parses the body once
    and leaves the request it holds on the scope (``REQUEST_SCOPE_KEY``) for the wrappers inside, marked with
    ``json_answer`` when ``json_answer(request)`` says so."""

    def __init__(self, app: Any, max_body: int = CHECKED_BODY_BYTES,
                 json_answer: Callable[[dict[str, Any]], bool] | None = None):
        self.app = app
        self.max_body = max_body
        self.json_answer = json_answer

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        buffered: list[dict[str, Any]] = []
        size, complete = 0, False
        while size <= self.max_body:  # past the SDK's own body limit the SDK answers (413), unchecked here
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                complete = True
                break
        if size > self.max_body:
            # Past the SDK's body limit it would answer a plain-text 413: a JSON-RPC client gets a
            # JSON-RPC error instead, saying the limit, with the id the body's first bytes name (issue 23.4;
            # the body itself is not parsed).
            first = head([m.get("body", b"") for m in buffered])
            error: dict[str, Any] | None = too_large_error(self.max_body, "body", first)
            drained = size
            while not complete and drained < DRAIN_MAX_BYTES:  # read the rest (bounded) so the client sees the answer
                message = await receive()
                drained += len(message.get("body", b""))
                if message["type"] != "http.request" or not message.get("more_body", False):
                    break
            await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": json.dumps(error).encode()})
            return
        if complete:
            # The one parse of the body before the SDK's: the wrappers inside read its request off the scope.
            error, request = screen(b"".join(m.get("body", b"") for m in buffered))
            if error is not None:
                body = json.dumps(error).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": body})
                return
            if request is not None:
                json_answer = self.json_answer is not None and self.json_answer(request)
                scope = {**scope, REQUEST_SCOPE_KEY: RequestHead(request["id"], str(request["method"]), size, json_answer)}

        async def replay() -> dict[str, Any]:
            return buffered.pop(0) if buffered else await receive()

        await self.app(scope, replay, send)


def table_url_factory(files: OneTimeFiles, fallback_base: str) -> Callable[[Any], Callable[[Path], str]]:
    """request -> (Path -> the one-time URL that serves it once at /acp-files, 8.5)."""

    def url_factory(request: Any) -> Callable[[Path], str]:
        # The base URL is read from the request only when a table is handed out as a file: most
        # calls answer inline, and Starlette builds (parses) base_url anew on every access.
        def to_url(path: Path) -> str:
            given = getattr(request, "base_url", None) if request is not None else None
            base = str(given).rstrip("/") if given is not None else fallback_base
            return f"{base}{FILES_PATH}/{files.register(path)}"

        return to_url

    return url_factory


class TableUrls:
    """ASGI wrapper: each request's scope carries the table URL maker, which the tools/call handler reads
    off its request (runtime.FILE_URL_SCOPE_KEY), so the server object itself knows no transport."""

    def __init__(self, app: Any, url_factory: Callable[[Any], Callable[[Path], str]]):
        self.app = app
        self.url_factory = url_factory

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, FILE_URL_SCOPE_KEY: self.url_factory}
        await self.app(scope, receive, send)


def build_http_app(acp: AcpServer, *, host: str = "127.0.0.1", port: int = 7413, token: str | None = None,
                   cap: CapSettings | None = None) -> Any:
    """The ASGI app: /mcp plus /acp-files, wrapped in Bearer auth when a token is set; calls in progress per
    session capped by ``cap`` (default: ACP_MAX_CALLS_IN_PROGRESS and ACP_BUSY_WAIT_S)."""
    from starlette.background import BackgroundTask
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Route

    files = OneTimeFiles()

    async def serve_file(request: Any) -> Any:
        path = files.take(request.path_params["token"])
        if path is None or not path.exists():
            return JSONResponse({"error": "not_found", "message": "Unknown or expired table URL."}, status_code=404)
        return FileResponse(path, media_type="application/json", background=BackgroundTask(path.unlink, missing_ok=True))

    app: Any = acp.server.streamable_http_app(
        streamable_http_path="/mcp",
        host=host,
        custom_starlette_routes=[Route(FILES_PATH + "/{token}", serve_file, methods=["GET"])],
    )
    app = CancelOnClose(TableUrls(app, table_url_factory(files, f"http://{host}:{port}")))
    sdk_private.answer_as_json_when_asked(REQUEST_SCOPE_KEY)
    app = RequestIdGuard(SessionCallCap(app, cap if cap is not None else settings_from_env()), json_answer=JsonAnswers(acp))
    return BearerGuard(app, token) if token else app


def _signal_free_server_class() -> Any:
    import uvicorn

    class SignalFreeServer(uvicorn.Server):
        """uvicorn without its own SIGINT/SIGTERM capture (stopping.py owns the signals)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return SignalFreeServer


def serve_http(acp: AcpServer, *, host: str = "127.0.0.1", port: int | None = None, token: str | None = None,
               cap: CapSettings | None = None) -> None:
    """Run the HTTP transport with uvicorn (blocking). Port: --port, else ACP_PORT, else 7413."""
    import uvicorn

    token = token if token is not None else (os.environ.get("ACP_HTTP_TOKEN") or None)
    if not is_loopback(host) and not token:
        raise InsecureBind(
            f"Refusing to listen on {host} without ACP_HTTP_TOKEN: a server reachable outside this machine "
            "must require transport authentication (spec 3.2). Set ACP_HTTP_TOKEN or bind 127.0.0.1."
        )
    port = port if port is not None else int(os.environ.get("ACP_PORT") or 7413)
    app = build_http_app(acp, host=host, port=port, token=token, cap=cap)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
    sock = bind_socket(host, port)
    server = uvicorn.Server(config)
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C / SIGTERM stop as over stdio (issue 15.2): uvicorn's graceful shutdown would wait for
        # a running request, so the stop handlers cancel queries in flight and exit 128 + signal.
        from .stopping import install_stop_handlers

        install_stop_handlers(acp.shutdown)
        server = _signal_free_server_class()(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        acp.shutdown()
