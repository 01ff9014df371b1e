"""The browser's way back from the provider's sign-in (5.5.5) to the form it left."""

from __future__ import annotations

import anyio
from analytics_acp_google.login import LoginError
from starlette.requests import Request
from starlette.responses import Response

from .common import render, ui
from .source_form import form_url


async def google_callback(request: Request) -> Response:
    """GET /signin/google/callback?state=&code= : finish the sign-in of that state; the draft keeps what it filled.

    Public (security.py): authenticated by the unguessable ``state`` of a sign-in this page started, once.
    The answer is a page of this site that moves on to the form itself, so the cookie goes with that request.
    """
    state = ui(request)
    params = {k: v for k, v in request.query_params.items()}
    pending = state.signins.take(params.get("state", ""))
    if pending is None:
        return render(request, "message.html", {
            "title": "Sign-in not found",
            "message": "This sign-in is unknown or was already used. Start it again from the source's form.",
        }, status=400)
    draft = state.drafts.find(pending.draft_id)
    try:
        filled = await anyio.to_thread.run_sync(state.signins.finish, pending, params)
    except LoginError as exc:
        message, ok = str(exc), False
    except Exception as exc:  # the exchange failed in a way LoginError does not cover: say so, never the details
        message, ok = f"The sign-in failed ({type(exc).__name__}).", False
    else:
        missing = filled.pop("_missing_scopes", None)
        state.redactor.add({str(v) for k, v in filled.items() if k in ("client_secret", "refresh_token", "access_token")})
        who = filled.get("email") or "your Google account"
        message, ok = f"Signed in as {who}.", True
        if missing:
            message += f" The consent screen did not grant {', '.join(missing)}: sign in again and tick every box."
        if draft is not None:
            draft.filled, draft.signin_variant, draft.signed_in_as = filled, pending.variant, str(who)
    target = form_url(draft) + "#credentials" if draft is not None else "/"
    if draft is not None:
        draft.notice = message
    return render(request, "signin_done.html", {"ok": ok, "message": message, "target": target})
