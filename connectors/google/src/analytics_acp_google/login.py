"""The OAuth 2.0 installed-app sign-in behind `analytics-acp login google`.

google-auth-oauthlib's ``InstalledAppFlow`` builds the authorization URL (PKCE S256, ``state``,
offline access) and exchanges the code; the loopback redirect is received here rather than by
``run_local_server``, whose single ``handle_request`` takes any first request (a favicon, a port
probe) as the answer and reads it with no timeout. Every wait here is bounded.
"""

from __future__ import annotations

import base64
import hmac
import html
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .timeouts import request_timeout_s

GOOGLE_REVOKE_URI = "https://oauth2.googleapis.com/revoke"
GOOGLE_USERINFO_URI = "https://openidconnect.googleapis.com/v1/userinfo"
IDENTITY_SCOPES = ["openid", "https://www.googleapis.com/auth/userinfo.email"]
CONNECTION_TIMEOUT_S = 10.0  # one browser connection to the loopback listener
DESKTOP_CLIENT_HELP = ("create one in the Google Cloud console: APIs & Services > Credentials > Create credentials > "
                       "OAuth client ID > Desktop app, then Download JSON")


class LoginError(Exception):
    """A sign-in that could not complete; the message is one line and holds no secret."""


# How a message says "start the sign-in over": the CLI's words; a host with a page of its own passes its own
# (begin_sign_in's ``retry``), so a page never tells its reader to run a command.
RETRY_CLI = "Run the command again"


@dataclass
class ClientSecrets:
    """The ``installed`` section of a Desktop-app client-secrets file."""

    path: Path
    config: dict[str, Any]

    @property
    def client_id(self) -> str:
        return str(self.config["client_id"])

    @property
    def token_uri(self) -> str:
        return str(self.config["token_uri"])

    @property
    def revoke_uri(self) -> str:
        return str(self.config.get("revoke_uri") or GOOGLE_REVOKE_URI)

    @property
    def userinfo_uri(self) -> str:
        return str(self.config.get("userinfo_uri") or GOOGLE_USERINFO_URI)


def read_client_secrets(path: Path) -> ClientSecrets:
    """Read and check a client-secrets file: it must be a Desktop app ("installed") OAuth client."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise LoginError(f"Client-secrets file {path} not found: {DESKTOP_CLIENT_HELP}.") from None
    except OSError as exc:
        raise LoginError(f"Cannot read the client-secrets file {path}: {exc.strerror or type(exc).__name__}.") from None
    except ValueError:
        raise LoginError(f"{path} is not valid JSON: download the OAuth client's JSON again.") from None
    if not isinstance(data, dict):
        raise LoginError(f"{path} is not an OAuth client-secrets file: {DESKTOP_CLIENT_HELP}.")
    if "installed" not in data:
        if "web" in data:
            raise LoginError(f"{path} is a Web application OAuth client; sign-in needs a Desktop app client: {DESKTOP_CLIENT_HELP}.")
        if data.get("type") in ("service_account", "authorized_user"):
            raise LoginError(f"{path} is a {data['type']} file, not an OAuth client: {DESKTOP_CLIENT_HELP} "
                             "(a service account key goes straight into sources.json).")
        raise LoginError(f"{path} is not an OAuth client-secrets file (no \"installed\" section): {DESKTOP_CLIENT_HELP}.")
    installed = data["installed"]
    missing = [k for k in ("client_id", "client_secret", "auth_uri", "token_uri")
               if not isinstance(installed, dict) or not installed.get(k)]
    if missing:
        raise LoginError(f"{path} lacks {', '.join(missing)}: download the OAuth client's JSON again.")
    return ClientSecrets(path=path, config=installed)


# -- scopes from the installed ACPs' own declarations (5.5.5 x-acp-login)

def google_login_scopes() -> dict[str, list[str]]:
    """Installed ACPs whose ``oauth`` variant declares ``x-acp-login`` provider google: id -> scopes."""
    from analytics_acp.plugins import available_connectors, load_connector

    found: dict[str, list[str]] = {}
    for cid in available_connectors():
        try:
            schema = load_connector(cid, extensions=False).info.credentials_schema
        except Exception:  # a broken connector must not stop the sign-in for the others
            continue
        for variant in schema.get("oneOf") or [schema]:
            login = variant.get("x-acp-login") if isinstance(variant, dict) else None
            if isinstance(login, dict) and login.get("provider") == "google":
                found[cid] = [str(s) for s in login.get("scopes") or []]
    return found


def choose_scopes(available: dict[str, list[str]], wanted: list[str] | None) -> tuple[list[str], list[str]]:
    """(ACP ids, union of their scopes in declaration order) for ``--for`` (None: every Google ACP)."""
    if not available:
        raise LoginError("No installed ACP declares a Google sign-in (x-acp-login): install ga4, gsc or bigquery.")
    ids = list(available) if not wanted else wanted
    unknown = [i for i in ids if i not in available]
    if unknown:
        raise LoginError(f"--for {','.join(unknown)}: not an installed Google ACP (installed: {', '.join(available)}).")
    scopes: list[str] = []
    for cid in ids:
        scopes += [s for s in available[cid] if s not in scopes]
    return ids, scopes


# -- the loopback redirect

@dataclass
class Redirect:
    """What the browser brought back to the loopback listener, and how the sign-in ended with it."""

    params: dict[str, str] = field(default_factory=dict)
    signin: SignIn | None = None
    error: LoginError | None = None


class _Receiver(HTTPServer):
    # On Windows SO_REUSEADDR would let another process bind the same port and catch the code.
    allow_reuse_address = sys.platform != "win32"
    result: Redirect | None = None
    # Finishes the sign-in from the redirect's parameters (state, code exchange) before the browser gets its
    # page, so the tab says "Signed in" only once the credentials exist; a LoginError is the failure page.
    complete: Callable[[dict[str, str]], SignIn] | None = None


class _Handler(BaseHTTPRequestHandler):
    timeout = CONNECTION_TIMEOUT_S  # a connection that sends nothing is dropped, not waited on

    def log_message(self, *args: Any) -> None:  # the query holds the code: never logged
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        server = self.server
        if parts.path != "/" or not ({"code", "error"} & params.keys()) or not isinstance(server, _Receiver):
            self._page(404, "Not the sign-in redirect.")
            return
        redirect = Redirect(params)
        try:
            if server.complete is not None:
                redirect.signin = server.complete(params)
        except LoginError as exc:
            redirect.error = exc
        except Exception as exc:  # never a traceback in the tab; the terminal gets the same one line
            redirect.error = LoginError(f"Sign-in failed ({type(exc).__name__}); nothing was saved.")
        server.result = redirect
        if redirect.error is not None:
            self._page(200, f"Sign-in was not completed: {redirect.error} The terminal says the same; you can close this tab.")
        else:
            who = f" as {redirect.signin.credentials.get('email')}" if redirect.signin and redirect.signin.credentials.get("email") else ""
            self._page(200, f"Signed in to analytics-acp{who}. You can close this tab and return to the terminal.")

    def _page(self, status: int, text: str) -> None:
        body = f"<!doctype html><title>analytics-acp</title><p>{html.escape(text)}</p>".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


def open_listener(port: int) -> _Receiver:
    """The loopback listener on 127.0.0.1 (port 0: a free one)."""
    try:
        return _Receiver(("127.0.0.1", port), _Handler)
    except OSError as exc:
        if port and exc.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
            raise LoginError(f"Port {port} on 127.0.0.1 is in use: pass another --port, or leave it out to use a free one.") from None
        raise LoginError(f"Cannot listen on 127.0.0.1:{port} ({exc.strerror or type(exc).__name__}).") from None


def open_in_browser(url: str) -> str | None:
    """Open ``url`` in the user's browser: None when one was started, else why not (a clause for the terminal).

    On Linux without a display (no DISPLAY or WAYLAND_DISPLAY: an SSH session, a container) no graphical
    browser can open, and ``webbrowser`` would fall back to a text browser that takes over the terminal: the
    URL is printed instead.
    """
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return "no display: DISPLAY and WAYLAND_DISPLAY are unset"
    import webbrowser

    try:
        opened = webbrowser.open(url, new=1, autoraise=True)
    except webbrowser.Error:
        opened = False
    return None if opened else "no browser was found"


def wait_for_redirect(listener: _Receiver, timeout_s: float) -> Redirect:
    """Serve the listener until the redirect arrives or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while listener.result is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise LoginError(f"No answer from the browser within {timeout_s:g} s: sign-in cancelled. "
                             f"{RETRY_CLI} (--timeout sets the wait).")
        listener.timeout = remaining
        listener.handle_request()
    return listener.result


# -- the sign-in

@dataclass
class SignIn:
    """A completed sign-in: the credentials file content and what to tell the user."""

    credentials: dict[str, Any]
    granted: list[str]
    missing: list[str]


def _id_token_email(id_token: str | None) -> str | None:
    # Received straight from the token endpoint over the client's own connection: the
    # signature adds nothing here (OpenID Connect Core 3.1.3.7), only the email is read.
    if not id_token or id_token.count(".") != 2:
        return None
    payload = id_token.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except ValueError:
        return None
    email = claims.get("email") if isinstance(claims, dict) else None
    return str(email) if email else None


def _userinfo_email(secrets: ClientSecrets, access_token: str) -> str | None:
    import requests

    try:
        resp = requests.get(secrets.userinfo_uri, headers={"Authorization": f"Bearer {access_token}"}, timeout=request_timeout_s())
        email = resp.json().get("email") if resp.ok else None
    except (requests.RequestException, ValueError, AttributeError):
        return None
    return str(email) if email else None


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


def _exchange(flow: Any, code: str, secrets: ClientSecrets) -> dict[str, Any]:
    """The code exchange at the token endpoint, its failures as one-line LoginErrors."""
    import requests
    from oauthlib.oauth2.rfc6749 import errors as oauth_errors

    host, timeout = _host(secrets.token_uri), request_timeout_s()
    try:
        return dict(flow.fetch_token(code=code, timeout=timeout))
    except requests.exceptions.Timeout:
        raise LoginError(f"The token endpoint {host} did not answer within {timeout:g} s: try again later.") from None
    except requests.exceptions.ConnectionError:
        raise LoginError(f"Could not reach the token endpoint {host} (connection failed): check the network, "
                         "a proxy (HTTPS_PROXY) or the client-secrets file's token_uri.") from None
    except oauth_errors.InsecureTransportError:
        raise LoginError(f"The token endpoint {host} is not https: fix token_uri in the client-secrets file.") from None
    except oauth_errors.OAuth2Error as exc:
        reason = exc.error or type(exc).__name__
        raise LoginError(f"The token endpoint refused the sign-in ({reason}): check that the client-secrets file belongs to "
                         "an enabled Desktop app client, then sign in again.") from None
    except requests.RequestException as exc:
        raise LoginError(f"The token endpoint {host} failed ({type(exc).__name__}): try again later.") from None


@dataclass
class PendingSignIn:
    """A sign-in waiting for the browser: the flow (PKCE verifier inside), its authorization URL and state."""

    secrets: ClientSecrets
    scopes: list[str]
    flow: Any
    url: str
    state: str
    retry: str = RETRY_CLI  # the host's words for starting over, in the messages of a sign-in that failed

    @property
    def requested(self) -> list[str]:
        """The scopes asked for: the ACPs' and the identity scopes."""
        return self.scopes + [s for s in IDENTITY_SCOPES if s not in self.scopes]


def begin_sign_in(secrets: ClientSecrets, scopes: list[str], redirect_uri: str, *, retry: str = RETRY_CLI) -> PendingSignIn:
    """The authorization URL (PKCE S256, state, offline access) for a browser that comes back to ``redirect_uri``.

    ``sign_in`` gives its own loopback listener as the redirect; a host with a page of its own (the set-up
    page, issue 35.3) gives that page's address and calls :func:`finish_sign_in` with what came back, and
    ``retry``: its own words for starting over ("Try signing in again"), which the failure messages use.
    """
    # Google adds openid/email scopes it already granted to the answer; oauthlib would call that an error.
    os.environ.setdefault("OAUTHLIB_RELAX_TOKEN_SCOPE", "1")
    # requests-oauthlib logs the code-exchange body (client secret, code, verifier) and the token at
    # DEBUG: keep those loggers above DEBUG even when the embedding program logs everything.
    for name in ("requests_oauthlib", "oauthlib"):
        logging.getLogger(name).setLevel(max(logging.getLogger(name).level, logging.INFO))
    from google_auth_oauthlib.flow import InstalledAppFlow

    requested = scopes + [s for s in IDENTITY_SCOPES if s not in scopes]
    flow = InstalledAppFlow.from_client_config({"installed": secrets.config}, scopes=requested, redirect_uri=redirect_uri)
    url, state = flow.authorization_url(access_type="offline", prompt="consent")
    return PendingSignIn(secrets=secrets, scopes=scopes, flow=flow, url=url, state=state, retry=retry)


def finish_sign_in(pending: PendingSignIn, answer: dict[str, str]) -> SignIn:
    """What the browser brought back checked (state, error) and exchanged: a SignIn, or LoginError."""
    return _finish(pending.flow, pending.state, answer, pending.secrets, pending.scopes, pending.requested, pending.retry)


def sign_in(secrets: ClientSecrets, scopes: list[str], *, port: int, timeout_s: float,
            show_url: Callable[[str, str | None], None], open_browser: bool) -> SignIn:
    """Run the whole flow: listener, authorization URL (PKCE S256, state), browser, redirect, code exchange.

    ``show_url(url, not_opened)`` is told the URL once the browser was tried: ``not_opened`` is None when a
    browser was started (or ``open_browser`` is false), else why none could be (:func:`open_in_browser`).
    The browser's tab is answered only after the code exchange: it says signed in only when it is.
    """
    listener = open_listener(port)
    try:
        pending = begin_sign_in(secrets, scopes, f"http://127.0.0.1:{listener.server_address[1]}/")
        listener.complete = lambda answer: finish_sign_in(pending, answer)
        show_url(pending.url, open_in_browser(pending.url) if open_browser else None)
        redirect = wait_for_redirect(listener, timeout_s)
    finally:
        listener.server_close()
    if redirect.error is not None:
        raise redirect.error
    assert redirect.signin is not None  # complete() returns a SignIn or raises
    return redirect.signin


def _finish(flow: Any, state: str, answer: dict[str, str], secrets: ClientSecrets, scopes: list[str],
            requested: list[str], retry: str = RETRY_CLI) -> SignIn:
    """The redirect's answer checked (state, error) and exchanged for the credentials."""
    if not hmac.compare_digest(str(answer.get("state", "")), str(state)):
        raise LoginError("The browser came back with a different state than was sent: sign-in refused (possible forgery). "
                         f"{retry}.")
    if "error" in answer:
        if answer["error"] == "access_denied":
            raise LoginError(f"Access was denied in the browser: nothing was saved. {retry} and choose Allow.")
        raise LoginError(f"Google ended the sign-in with error {answer['error'][:60]!r}: nothing was saved.")
    token = _exchange(flow, answer["code"], secrets)
    refresh = token.get("refresh_token")
    access = token.get("access_token")
    if not refresh or not access:
        raise LoginError("The token endpoint returned no refresh token: remove analytics-acp's access at "
                         "https://myaccount.google.com/permissions and sign in again.")
    granted_raw = token.get("scope") or requested
    granted = granted_raw.split() if isinstance(granted_raw, str) else [str(s) for s in granted_raw]
    email = _id_token_email(token.get("id_token")) or _userinfo_email(secrets, str(access))
    expires_at = token.get("expires_at")
    expiry = (datetime.fromtimestamp(float(expires_at), tz=UTC) if isinstance(expires_at, int | float)
              else datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    credentials = {
        # gcloud's authorized_user shape (client_id, client_secret, refresh_token, type) ...
        "type": "authorized_user", "client_id": secrets.client_id, "client_secret": str(secrets.config["client_secret"]),
        "refresh_token": str(refresh),
        # ... plus what a non-Google token endpoint, the caches (7.4) and --list need.
        "token_uri": secrets.token_uri, "revoke_uri": secrets.revoke_uri,
        "email": email or "", "account": email or "",
        "scopes": [s for s in granted if s not in IDENTITY_SCOPES],
        "access_token": str(access), "expiry_date": expiry, "refreshed_at": now,
        "universe_domain": "googleapis.com",
    }
    return SignIn(credentials=credentials, granted=granted, missing=[s for s in scopes if s not in granted])


def revoke(credentials: dict[str, Any]) -> str | None:
    """Revoke the refresh token at the sign-in's revoke endpoint: None when done, else why not (one line)."""
    import requests

    uri = str(credentials.get("revoke_uri") or GOOGLE_REVOKE_URI)
    token = credentials.get("refresh_token")
    if not token:
        return "the file holds no refresh token"
    timeout = request_timeout_s()
    try:
        resp = requests.post(uri, data={"token": token}, timeout=timeout,
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
    except requests.exceptions.Timeout:
        return f"{_host(uri)} did not answer within {timeout:g} s"
    except requests.RequestException as exc:
        return f"could not reach {_host(uri)} ({type(exc).__name__})"
    if resp.ok:
        return None
    try:
        error = str(resp.json().get("error", ""))
    except (ValueError, AttributeError):
        error = ""
    if resp.status_code == 400 and error == "invalid_token":
        return None  # already revoked or expired: nothing left to revoke
    return f"{_host(uri)} answered HTTP {resp.status_code}{f' ({error[:60]})' if error else ''}"
