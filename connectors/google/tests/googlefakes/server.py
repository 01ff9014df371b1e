"""A loopback REST server for Google API fakes: routes, request log, fault injection.

Routes are (method, regex over the path) -> handler(request) returning (status, json body).
Every request is recorded (method, path, query, headers without the Authorization value, JSON body)
so tests assert on what the real client library sent. Faults per route: a queue of (status, body)
answered first, or hangs that block until the server stops (or ``hang_s`` passes).
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    """One recorded request."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    identity: str | None = None  # who the bearer token belongs to (JWT iss/sub, or the oauth fake's subject)
    match: re.Match[str] | None = field(default=None, repr=False)


# A handler returns (status, json body), or (status, json body, extra response headers); a body given
# as bytes is sent as is (JSON the handler already encoded, e.g. cached result pages of a benchmark).
Handler = Callable[[Request], tuple[Any, ...]]

HANG = object()


@dataclass
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler
    faults: list[Any] = field(default_factory=list)  # (status, body) tuples or HANG


def google_error(status: int, message: str, reason: str | None = None) -> dict[str, Any]:
    """A Google JSON error body ({"error": {code, message, status}})."""
    names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
    return {"error": {"code": status, "message": message, "status": reason or names.get(status, "UNKNOWN")}}


def _jwt_claims(token: str) -> dict[str, Any] | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        pad = parts[1] + "=" * (-len(parts[1]) % 4)
        return json.loads(base64.urlsafe_b64decode(pad))
    except ValueError:
        return None


class FakeServer:
    """ThreadingHTTPServer on 127.0.0.1:0 in a daemon thread; use as a context manager."""

    def __init__(self, hang_s: float = 30.0):
        self.routes: list[Route] = []
        self.requests: list[Request] = []
        self.hang_s = hang_s
        self.tokens: dict[str, str] = {}  # opaque access token -> subject (filled by the oauth fake)
        self.public_keys: dict[str, str] = {}  # service account email -> public PEM (verifies self-signed JWTs)
        self.reject_tokens: set[str] = set()  # subjects whose tokens get 401
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def start(self) -> FakeServer:
        fake = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _serve(self) -> None:
                fake._dispatch(self)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="googlefakes", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Root URL, e.g. http://127.0.0.1:54321 (no trailing slash)."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- routes and faults
    def route(self, method: str, pattern: str, handler: Handler) -> Route:
        """Register ``handler`` for ``method`` and a regex matched (fullmatch) against the path."""
        r = Route(method.upper(), re.compile(pattern), handler)
        self.routes.append(r)
        return r

    def _find(self, method: str, pattern: str) -> Route:
        for r in self.routes:
            if r.method == method.upper() and r.pattern.pattern == pattern:
                return r
        raise KeyError(f"no route {method} {pattern}")

    def fail(self, method: str, pattern: str, *faults: tuple[int, Any]) -> None:
        """Answer the next requests of a route with these (status, body) pairs, then normally."""
        with self._lock:
            self._find(method, pattern).faults.extend(faults)

    def hang(self, method: str, pattern: str, times: int = 1) -> None:
        """Make the next ``times`` requests of a route hang (until the server stops or hang_s)."""
        with self._lock:
            self._find(method, pattern).faults.extend([HANG] * times)

    def clear_faults(self) -> None:
        """Drop every queued fault (hangs already waiting stay until stop)."""
        with self._lock:
            for r in self.routes:
                r.faults.clear()

    def requests_to(self, pattern: str, method: str | None = None) -> list[Request]:
        """Recorded requests whose path matches ``pattern`` (search)."""
        rx = re.compile(pattern)
        return [r for r in self.requests if rx.search(r.path) and (method is None or r.method == method.upper())]

    # -- dispatch
    def _identity(self, auth: str | None) -> str | None:
        if not auth or not auth.lower().startswith("bearer "):
            return None
        token = auth.split(" ", 1)[1].strip()
        if token in self.tokens:
            return self.tokens[token]
        claims = _jwt_claims(token)
        if claims and claims.get("iss") in self.public_keys:
            from google.auth import jwt

            try:  # a self-signed JWT (GAPIC's always_use_jwt_access): verify its signature
                jwt.decode(token, certs=self.public_keys[claims["iss"]], verify=True, audience=None)
            except ValueError:
                return "invalid-jwt"
            return str(claims["iss"])
        return "unknown-token"

    def _dispatch(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        ctype = h.headers.get("Content-Type", "")
        body: Any
        if "json" in ctype and raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        elif "x-www-form-urlencoded" in ctype:
            body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        else:
            body = raw.decode("utf-8", "replace") if raw else None
        auth = h.headers.get("Authorization")
        headers = {k: v for k, v in h.headers.items() if k.lower() != "authorization"}
        if auth:
            headers["Authorization"] = auth.split(" ", 1)[0] + " <redacted>"
        req = Request(h.command, parts.path, parse_qs(parts.query), headers, body, self._identity(auth))
        with self._lock:
            self.requests.append(req)
            route = next((r for r in self.routes if r.method == h.command and r.pattern.fullmatch(parts.path)), None)
            fault = route.faults.pop(0) if route and route.faults else None
        extra: dict[str, str] = {}
        if route is None:
            status, payload = 404, google_error(404, f"No fake route for {h.command} {parts.path}")
        elif fault is HANG:
            self._stop.wait(self.hang_s)
            status, payload = 503, google_error(503, "hung request released")
        elif fault is not None:
            status, payload = fault
        elif req.identity in ("invalid-jwt",) or (req.identity in self.reject_tokens):
            status, payload = 401, google_error(401, "Request had invalid authentication credentials.")
        else:
            req.match = route.pattern.fullmatch(parts.path)
            try:
                status, payload, *more = route.handler(req)
                extra = dict(more[0]) if more else {}
            except Exception as exc:  # a bug in a fake shows as a 500 with its text, not a dropped socket
                status, payload = 500, google_error(500, f"fake handler error: {type(exc).__name__}: {exc}")
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()  # bytes: JSON already encoded
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json; charset=UTF-8")
            h.send_header("Content-Length", str(len(data)))
            for name, value in extra.items():
                h.send_header(name, value)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
