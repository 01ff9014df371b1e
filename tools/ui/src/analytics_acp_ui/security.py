"""Safe by default (issue 35.8): the page holds credentials, so every request proves it comes from the person.

- The token printed in the first URL is required once; it is swapped for an HttpOnly SameSite=Strict
  cookie and the URL without the token (so it leaves the address bar and the history).
- A Host that is not ``127.0.0.1:PORT`` or ``localhost:PORT`` is refused (DNS rebinding).
- A state-changing request needs a same-origin ``Origin`` (here) and the CSRF token (:func:`checked_form`).
- Bodies are size-limited; nothing here logs a URL (a query may hold the token or an OAuth code).

A few paths are *public*: the OAuth redirect comes back from another site, which a SameSite=Strict
cookie does not follow; it is authenticated by its unguessable ``state`` instead (signin.py).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

COOKIE = "analytics_acp_ui"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
MAX_BODY_BYTES = 4 * 1024 * 1024  # a whole form with an uploaded key file fits many times over
MAX_UPLOAD_BYTES = 1024 * 1024  # one uploaded file (a key file is a few KB)
SAFE_METHODS = ("GET", "HEAD")
HEADERS = [
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make Chromium send "Origin: null" on our own forms
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # Scripts and styles are the page's own files; frames only from itself (the dataset view).
    (b"content-security-policy",
     b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
     b"frame-ancestors 'self'; base-uri 'none'; object-src 'none'"),
]


@dataclass
class Security:
    """The secrets of one page run: the URL token, the session cookie value and the CSRF token."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    public_paths: tuple[str, ...] = ()

    @property
    def csrf(self) -> str:
        """The CSRF token forms carry (derived from the session, never the cookie itself)."""
        return hmac.new(self.session.encode(), b"csrf", "sha256").hexdigest()

    def hosts(self) -> set[str]:
        """The Host values this page answers to."""
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def url(self) -> str:
        """The first URL, with the token (printed once on stdout)."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def csrf_ok(self, value: str | None) -> bool:
        """True when ``value`` is this run's CSRF token."""
        return bool(value) and hmac.compare_digest(str(value), self.csrf)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _cookie(scope: dict[str, Any]) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header is just no cookie
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else None


class Guard:
    """ASGI middleware: Host, token/cookie, Origin and body size, in that order; security headers on every answer."""

    def __init__(self, app: Any, security: Security):
        self.app = app
        self.security = security

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        public = scope["path"] in self.security.public_paths
        cookie = _cookie(scope)
        signed_in = cookie is not None and hmac.compare_digest(cookie, self.security.session)
        if not public and not signed_in:
            token = query.get("token")
            if token and hmac.compare_digest(token, self.security.token) and scope["method"] in SAFE_METHODS:
                await self._enter(scope, query)(scope, receive, send)
                return
            await _plain(401, "This page needs the token: open the URL that `analytics-acp ui` printed "
                              "(http://127.0.0.1:PORT/?token=...).")(scope, receive, send)
            return
        await self.app(scope, self._bounded(receive), self._with_headers(send))

    def _refusal(self, scope: dict[str, Any]) -> Response | None:
        host = _header(scope, b"host")
        if host not in self.security.hosts():
            return _plain(403, f"Refused: this page answers only at http://127.0.0.1:{self.security.port}/ "
                               "(the Host header names another site).")
        if scope["method"] not in SAFE_METHODS:
            origin = _header(scope, b"origin")
            if origin != f"http://{host}":
                return _plain(403, "Refused: a change must come from this page itself (cross-origin request).")
        length = _header(scope, b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return _plain(413, f"Refused: the request is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB.")
        return None

    def _enter(self, scope: dict[str, Any], query: dict[str, str]) -> Response:
        """The token is right: set the cookie and send the browser to the same URL without the token."""
        rest = urlencode({k: v for k, v in query.items() if k != "token"})
        response = Response(status_code=303, headers={"location": scope["path"] + (f"?{rest}" if rest else "")})
        response.set_cookie(COOKIE, self.security.session, httponly=True, samesite="strict", path="/")
        return response

    def _bounded(self, receive: Callable[[], Awaitable[dict[str, Any]]]) -> Callable[[], Awaitable[dict[str, Any]]]:
        seen = 0

        async def bounded() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY_BYTES:
                    raise BodyTooLarge()
            return message

        return bounded

    def _with_headers(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> Callable[[dict[str, Any]], Awaitable[None]]:
        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers") or []}
                extra = [(k, v) for k, v in HEADERS if k not in names]
                message = {**message, "headers": [*(message.get("headers") or []), *extra]}
            await send(message)

        return sending


class BodyTooLarge(Exception):
    """A body without Content-Length grew past MAX_BODY_BYTES."""


def _plain(status: int, text: str) -> Response:
    return PlainTextResponse(text, status_code=status, headers={k.decode(): v.decode() for k, v in HEADERS})


async def checked_form(request: Request) -> FormData:
    """The submitted form, after the CSRF check (PermissionError when the token is missing or wrong).

    Every state-changing handler reads its form through here (app.py registers them with :func:`mutating`).
    """
    security: Security = request.app.state.ui.security
    form = await request.form(max_files=20, max_fields=2000, max_part_size=MAX_UPLOAD_BYTES)
    token = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
    if not security.csrf_ok(token if isinstance(token, str) else None):
        raise PermissionError("missing or wrong CSRF token")
    return form


Handler = Callable[[Request, FormData], Awaitable[Response]]


def mutating(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a POST handler: it runs only with a valid CSRF token and gets the parsed form."""

    async def endpoint(request: Request) -> Response:
        try:
            form = await checked_form(request)
        except PermissionError:
            return _plain(403, "Refused: the form's CSRF token is missing or wrong. Reload the page and try again.")
        except BodyTooLarge:
            return _plain(413, f"Refused: the request is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB.")
        except Exception as exc:  # multipart limits (a file past MAX_UPLOAD_BYTES) and malformed bodies
            return _plain(413 if "size" in str(exc).lower() else 400,
                          f"Refused: the form could not be read ({_short(exc)}); uploads are limited to "
                          f"{MAX_UPLOAD_BYTES // 1024} KiB.")
        return await handler(request, form)

    endpoint.__name__ = getattr(handler, "__name__", "endpoint")
    endpoint.mutating = True  # type: ignore[attr-defined]
    return endpoint


def _short(exc: Exception) -> str:
    return type(exc).__name__
