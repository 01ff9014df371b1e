"""Issue 38.3: a cancelled call stops its Google retries and waits at once (the shared policy, retry.call).

The fake answers 503 (a flapping backend, or a 429 with a short Retry-After) and cancels the call from inside
its handler, so the cancel lands at a known request: the fake then counts what the policy sent after it.
"""

from __future__ import annotations

import pytest
import requests
from analytics_acp import UpstreamError
from analytics_acp.kit import make_ctx
from analytics_acp_google import retry
from google.api_core import exceptions as gexc
from googlefakes.server import google_error


def _attempt(fake):
    def attempt(timeouts):
        resp = requests.get(fake.url + "/thing", timeout=timeouts)
        if resp.status_code >= 400:
            raise gexc.from_http_response(resp)
        return resp.json()

    return attempt


def _front(fake, handler):
    """A route for /thing answered by ``handler`` ahead of any other."""
    fake.route("GET", "/thing", handler)
    fake.routes.insert(0, fake.routes.pop())


@pytest.mark.parametrize("cancel_at", [1, 3])
def test_a_cancelled_call_sends_no_request_after_the_cancel_to_a_flapping_backend(fake, monkeypatch, cancel_at):
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "20")  # the deadline is far: only the cancel ends the retries
    ctx = make_ctx("google", "t")
    seen = []

    def flapping(req):
        seen.append(req)
        if len(seen) == cancel_at:
            ctx.signals.cancel()  # the client's notifications/cancelled, while this request is answered
        return 503, google_error(503, "backend flapping")

    _front(fake, flapping)
    with pytest.raises(UpstreamError, match="cancelled"):
        retry.call(_attempt(fake), ctx=ctx, host="fake")
    assert len(seen) == cancel_at  # nothing after the cancel


def test_a_cancel_ends_a_retry_after_pause_and_a_cancelled_budget_sends_nothing(fake, monkeypatch):
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "20")
    ctx = make_ctx("google", "t")
    seen = []

    def limited(req):
        seen.append(req)
        ctx.signals.cancel()
        return 429, google_error(429, "slow down"), {"Retry-After": "4"}  # a hinted retry the policy would wait for

    _front(fake, limited)
    with pytest.raises(UpstreamError, match="cancelled"):
        retry.call(_attempt(fake), ctx=ctx, host="fake")
    assert len(seen) == 1
    # Every later request of the cancelled call (another autocontext block, the next page) stops before sending.
    with pytest.raises(UpstreamError, match="cancelled"):
        retry.budget(ctx).check()
    with pytest.raises(UpstreamError, match="cancelled"):
        retry.call(_attempt(fake), ctx=ctx, host="fake")
    assert len(seen) == 1


def test_the_budget_is_the_calls_own_state():
    ctx, other = make_ctx("google", "t"), make_ctx("google", "t")
    assert retry.budget(ctx) is retry.budget(ctx) and retry.budget(other) is not retry.budget(ctx)
