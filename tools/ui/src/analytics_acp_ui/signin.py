"""x-acp-login provider ``google`` (5.5.5) on the page: the `login google` machinery with the page as the redirect.

The OAuth client is the one the installation ships (``$ANALYTICS_ACP_GOOGLE_CLIENT_SECRETS``: Google treats
an installed app's client secret as not confidential, so a distribution may configure one for all its
users), else a client-secrets file the person chose or uploaded once, remembered in their config folder.
The browser goes to Google and comes back to ``/signin/google/callback``; that request is authenticated
by the flow's unguessable ``state`` (the page's SameSite=Strict cookie does not follow a redirect from
another site), then sends the browser on to the form with a same-site navigation.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analytics_acp.secret_store import config_dir, private_dir, write_atomic
from analytics_acp_google.login import (
    DESKTOP_CLIENT_HELP,
    ClientSecrets,
    LoginError,
    PendingSignIn,
    begin_sign_in,
    finish_sign_in,
    read_client_secrets,
)

CLIENT_ENV = "ANALYTICS_ACP_GOOGLE_CLIENT_SECRETS"
REMEMBERED = "google-oauth-client.json"
CALLBACK = "/signin/google/callback"
PENDING_TTL_S = 900.0
MAX_CLIENT_BYTES = 64 * 1024
# 5.5.5: the fields the google provider fills, when the variant publishes them.
FILLED = ("client_id", "client_secret", "refresh_token", "access_token", "expiry_date", "email")
# A failed sign-in's messages say how to start over in the page's words (the CLI's say "Run the command again").
RETRY = "Try signing in again"
GUIDE = ("No Google OAuth client is configured. Create one once: Google Cloud console, APIs & Services, Credentials, "
         "Create credentials, OAuth client ID, application type Desktop app; download its JSON and upload it here "
         "(it is remembered in your config folder).")


def remembered_path() -> Path:
    """Where an uploaded or chosen client-secrets file is remembered (the user's config folder)."""
    return config_dir() / REMEMBERED


def client_secrets() -> ClientSecrets | None:
    """The OAuth client to sign in with: the remembered one, else the installation's; None when there is none."""
    for candidate in (remembered_path(), os.environ.get(CLIENT_ENV, "").strip()):
        if candidate and Path(candidate).is_file():
            try:
                return read_client_secrets(Path(candidate))
            except LoginError:
                continue
    return None


def remember_client(content: bytes) -> ClientSecrets:
    """Check an uploaded client-secrets file and keep it (0600, config folder); LoginError if it is not one."""
    if len(content) > MAX_CLIENT_BYTES:
        raise LoginError(f"The client-secrets file is larger than {MAX_CLIENT_BYTES // 1024} KiB: {DESKTOP_CLIENT_HELP}.")
    try:
        text = content.decode("utf-8-sig")
        json.loads(text)
    except (UnicodeDecodeError, ValueError):
        raise LoginError(f"The uploaded file is not JSON: {DESKTOP_CLIENT_HELP}.") from None
    path = remembered_path()
    private_dir(path.parent)
    staged = path.with_name(f".{path.name}.new")
    write_atomic(staged, text, 0o600)
    try:
        found = read_client_secrets(staged)
    except LoginError as exc:
        staged.unlink(missing_ok=True)
        raise LoginError(str(exc).replace(str(staged), "The uploaded file")) from None
    os.replace(staged, path)
    return ClientSecrets(path=path, config=found.config)


@dataclass
class Pending:
    """A sign-in started from a draft, waiting for the browser."""

    flow: PendingSignIn
    draft_id: str
    variant: int
    started: float


class SignIns:
    """Sign-ins in progress, by state."""

    def __init__(self) -> None:
        self._pending: dict[str, Pending] = {}

    def start(self, scopes: list[str], redirect_base: str, draft_id: str, variant: int) -> str:
        """Begin a sign-in for ``scopes``; returns the authorization URL to send the browser to."""
        found = client_secrets()
        if found is None:
            raise LoginError(GUIDE)
        now = time.monotonic()
        for state in [s for s, p in self._pending.items() if now - p.started > PENDING_TTL_S]:
            del self._pending[state]
        flow = begin_sign_in(found, scopes, redirect_base + CALLBACK, retry=RETRY)
        self._pending[flow.state] = Pending(flow=flow, draft_id=draft_id, variant=variant, started=now)
        return flow.url

    def take(self, state: str) -> Pending | None:
        """The pending sign-in of ``state`` (once: a replayed redirect finds nothing)."""
        return self._pending.pop(state, None)

    @staticmethod
    def finish(pending: Pending, answer: dict[str, str]) -> dict[str, Any]:
        """Exchange the code (blocking, bounded by the token request's timeout): the fields 5.5.5 names."""
        result = finish_sign_in(pending.flow, answer)
        creds = result.credentials
        filled = {key: creds.get(key) for key in FILLED if creds.get(key) not in (None, "")}
        if result.missing:
            filled["_missing_scopes"] = list(result.missing)
        return filled
