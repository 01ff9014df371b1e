"""A fake Google OAuth 2.0 authorization server on 127.0.0.1 for the sign-in tests.

Routes: ``GET /o/auth`` (a consent page with Allow and Deny buttons), ``POST /o/decide`` (302 back to
the app's redirect_uri with ``code``+``state`` or ``error=access_denied``+``state``), ``POST /o/token``
(authorization_code with PKCE S256 checked, client authenticated by HTTP Basic or form fields;
refresh_token), ``POST /o/revoke`` and ``GET /o/userinfo``. Access tokens it issues are also written
into ``api_tokens`` (a googlefakes.FakeServer's ``tokens``), so the API fakes accept them.
It records what the tests assert on: each authorization request's parameters, the token requests
(grant, how the client authenticated, whether PKCE verified) and the revocations.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unsigned_id_token(email: str, audience: str) -> str:
    """An id_token with the claims a client reads (alg none: the client does not verify it, 3.1.3.7)."""
    header = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    claims = _b64(json.dumps({"iss": "https://accounts.fake", "aud": audience, "sub": "1234", "email": email,
                              "email_verified": True}).encode())
    return f"{header}.{claims}."


class OAuthFake:
    """The fake authorization server; a context manager."""

    def __init__(self, email: str = "analyst@example.com", api_tokens: dict[str, str] | None = None):
        self.email = email
        self.api_tokens = api_tokens if api_tokens is not None else {}
        self.clients: dict[str, str] = {}  # client_id -> client_secret
        self.authorizations: list[dict[str, str]] = []  # query of every GET /o/auth
        self.token_requests: list[dict[str, Any]] = []  # grant_type, client_auth, pkce (no secret values)
        self.revocations: list[dict[str, Any]] = []  # {"known": bool} per POST /o/revoke
        self.userinfo_calls = 0
        self.id_token = True  # include an id_token in the code exchange answer
        self.expires_in = 3599
        self.grant_only: list[str] | None = None  # granular consent: the user unticked every other scope
        self.revoke_status: int | None = None  # answer every revocation with this status (fault)
        self.issued_refresh: dict[str, str] = {}  # refresh token -> client_id (the live grants)
        self.revoked: list[str] = []
        self.issued_access: list[str] = []
        self.codes: dict[str, dict[str, str]] = {}
        self.verifiers: list[str] = []
        self.codes_issued: list[str] = []
        self._pending: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle
    def __enter__(self) -> OAuthFake:
        fake = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake._dispatch(self)

            do_POST = do_GET

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="oauthfake", daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def add_client(self, client_id: str = "desktop-client.apps.googleusercontent.com",
                   client_secret: str = "GOCSPX-fake-client-SECRET") -> tuple[str, str]:
        """Register an OAuth client; returns (client_id, client_secret)."""
        self.clients[client_id] = client_secret
        return client_id, client_secret

    def client_secrets(self, client_id: str, client_secret: str, kind: str = "installed", **overrides: str) -> dict[str, Any]:
        """A client-secrets file's content pointing every endpoint at this fake."""
        section = {"client_id": client_id, "client_secret": client_secret, "project_id": "fake-project",
                   "auth_uri": f"{self.url}/o/auth", "token_uri": f"{self.url}/o/token",
                   "revoke_uri": f"{self.url}/o/revoke", "userinfo_uri": f"{self.url}/o/userinfo",
                   "redirect_uris": ["http://localhost"], **overrides}
        return {kind: section}

    def secrets_seen(self) -> list[str]:
        """Every secret value this fake handed out or knows (for no-leak assertions)."""
        return [*self.clients.values(), *self.issued_refresh, *self.issued_access, *self.codes_issued, *self.verifiers,
                *self.revoked]

    # -- dispatch
    def _dispatch(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length).decode() if length else ""
        form = {k: v[0] for k, v in parse_qs(raw).items()}
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        route = (h.command, parts.path)
        if route == ("GET", "/o/auth"):
            self._send(h, 200, self._consent_page(query), "text/html; charset=utf-8")
        elif route == ("POST", "/o/decide"):
            self._decide(h, form)
        elif route == ("POST", "/o/token"):
            status, body = self._token(form, h.headers.get("Authorization"))
            self._send(h, status, body)
        elif route == ("POST", "/o/revoke"):
            status, body = self._revoke(form)
            self._send(h, status, body)
        elif route == ("GET", "/o/userinfo"):
            self.userinfo_calls += 1
            auth = h.headers.get("Authorization", "")
            ok = auth.startswith("Bearer ") and auth[7:] in self.issued_access
            self._send(h, 200 if ok else 401, {"email": self.email, "sub": "1234"} if ok else {"error": "invalid_token"})
        else:
            self._send(h, 404, {"error": "not_found"})

    def _send(self, h: BaseHTTPRequestHandler, status: int, body: Any, ctype: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def _consent_page(self, query: dict[str, str]) -> str:
        with self._lock:
            self.authorizations.append(dict(query))
            request_id = secrets.token_urlsafe(8)
            self._pending[request_id] = dict(query)
        scopes = "".join(f"<li>{html.escape(s)}</li>" for s in query.get("scope", "").split())
        return ("<!doctype html><title>Sign in - Fake Google</title>"
                f"<h1>analytics-acp wants to access your Google Account {html.escape(self.email)}</h1><ul>{scopes}</ul>"
                f"<form method=post action=/o/decide><input type=hidden name=request value={request_id}>"
                "<button name=decision value=deny>Deny</button> <button name=decision value=allow>Allow</button></form>")

    def _decide(self, h: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        with self._lock:
            pending = self._pending.pop(form.get("request", ""), None)
        if pending is None or "redirect_uri" not in pending:
            self._send(h, 400, {"error": "invalid_request"})
            return
        if form.get("decision") == "allow":
            code = "4/fake-code-" + secrets.token_urlsafe(12)
            self.codes[code] = pending
            self.codes_issued.append(code)
            answer = {"code": code, "state": pending.get("state", ""), "scope": pending.get("scope", "")}
        else:
            answer = {"error": "access_denied", "state": pending.get("state", "")}
        self._send(h, 302, "", "text/plain", {"Location": f"{pending['redirect_uri']}?{urlencode(answer)}"})

    def _client(self, form: dict[str, str], auth: str | None) -> tuple[str | None, str]:
        if auth and auth.startswith("Basic "):
            cid, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            from urllib.parse import unquote_plus

            cid, secret = unquote_plus(cid), unquote_plus(secret)
            return (cid if self.clients.get(cid) == secret else None), "basic"
        cid = form.get("client_id", "")
        return (cid if self.clients.get(cid) == form.get("client_secret") else None), "form"

    def _issue_access(self) -> str:
        token = "ya29.fake-login-" + secrets.token_urlsafe(16)
        self.issued_access.append(token)
        self.api_tokens[token] = self.email
        return token

    def _token(self, form: dict[str, str], auth: str | None) -> tuple[int, Any]:
        client_id, how = self._client(form, auth)
        grant = form.get("grant_type")
        record: dict[str, Any] = {"grant_type": grant, "client_auth": how, "client_ok": client_id is not None}
        self.token_requests.append(record)
        if client_id is None:
            return 401, {"error": "invalid_client"}
        if grant == "authorization_code":
            with self._lock:
                pending = self.codes.pop(form.get("code", ""), None)
            if pending is None or pending.get("client_id") != client_id or pending.get("redirect_uri") != form.get("redirect_uri"):
                return 400, {"error": "invalid_grant", "error_description": "Bad code or redirect_uri."}
            verifier = form.get("code_verifier", "")
            self.verifiers.append(verifier)
            expected = _b64(hashlib.sha256(verifier.encode()).digest())
            record["pkce"] = pending.get("code_challenge_method") == "S256" and expected == pending.get("code_challenge")
            if not record["pkce"]:
                return 400, {"error": "invalid_grant", "error_description": "code_verifier does not match."}
            refresh = "1//fake-refresh-" + secrets.token_urlsafe(16)
            self.issued_refresh[refresh] = client_id
            body = {"access_token": self._issue_access(), "expires_in": self.expires_in, "token_type": "Bearer",
                    "refresh_token": refresh,
                    "scope": " ".join(self.grant_only) if self.grant_only is not None else pending.get("scope", "")}
            if self.id_token:
                body["id_token"] = unsigned_id_token(self.email, client_id)
            return 200, body
        if grant == "refresh_token":
            if self.issued_refresh.get(form.get("refresh_token", "")) != client_id:
                return 400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
            return 200, {"access_token": self._issue_access(), "expires_in": self.expires_in, "token_type": "Bearer"}
        return 400, {"error": "unsupported_grant_type"}

    def _revoke(self, form: dict[str, str]) -> tuple[int, Any]:
        token = form.get("token", "")
        known = token in self.issued_refresh
        self.revocations.append({"known": known})
        if self.revoke_status is not None:
            return self.revoke_status, {"error": "backend_error"}
        if not known:
            return 400, {"error": "invalid_token"}
        del self.issued_refresh[token]
        self.revoked.append(token)
        return 200, {}
