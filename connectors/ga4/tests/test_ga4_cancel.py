"""Issue 38.3 through a tool: a cancelled run_report against a flapping GA4 backend (503 after 503) sends no
request after the cancel; the retries stop in the shared policy, not in a check the tool writes by hand."""

from __future__ import annotations

import pytest
from analytics_acp import UpstreamError
from analytics_acp.signals import CallSignals
from analytics_acp_ga4.arguments import RunReportArguments
from analytics_acp_ga4.report import run_report
from ga4support import read_to_the_end
from googlefakes.server import google_error

RUN_REPORT = r"/v1beta/properties/(\d+):runReport"


def test_a_cancelled_report_sends_no_request_after_the_cancel_to_a_flapping_backend(fake, make_ctx, server, monkeypatch):
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "20")  # far: only the cancel can end the retries
    signals = CallSignals()
    seen = []

    def flapping(req):
        seen.append(req)
        if len(seen) == 2:
            signals.cancel()  # notifications/cancelled arrives while the second attempt is answered
        return 503, google_error(503, "The service is currently unavailable.")

    server.route("POST", RUN_REPORT, flapping)
    server.routes.insert(0, server.routes.pop())  # ahead of the fake's own runReport
    with pytest.raises(UpstreamError, match="cancelled"):
        read_to_the_end(run_report(RunReportArguments.parse({"metrics": ["sessions"]}), make_ctx(signals=signals)))
    assert len(seen) == 2 and len(server.requests_to(":runReport$")) == 2  # none after the cancel
