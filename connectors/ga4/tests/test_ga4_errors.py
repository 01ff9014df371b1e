"""Errors (12.1) with the real clients: auth, access, quota, 5xx retried, hangs bounded, a failing page fails the call."""

from __future__ import annotations

import pytest
from analytics_acp import CredentialsInvalid, ResourceNotFound, UpstreamError
from analytics_acp_ga4.arguments import (
    RunReportArguments,
)
from analytics_acp_ga4.report import run_report as _run_report
from ga4support import OTHER_EMAIL, SA_EMAIL, build_fake, read_to_the_end
from googlefakes import keys
from googlefakes.server import google_error


def run_report(arguments, ctx):
    """The tool, with its streamed rows read to the end (as the core does when it builds the table)."""
    return read_to_the_end(_run_report(arguments, ctx))


RR = r"/v1beta/properties/(\d+):runReport"
ARGS = {"metrics": ["sessions"], "dimensions": ["date"]}


def test_401_and_invalid_grant_are_credentials_invalid(fake, make_ctx, server):
    server.reject_tokens.add(SA_EMAIL)  # revoked: every request with this account's token gets 401
    with pytest.raises(CredentialsInvalid, match="401"):
        run_report(RunReportArguments.parse(ARGS), make_ctx())
    # google-auth's AuthorizedSession refreshes and retries on 401 (2 refresh attempts), then gives up.
    assert len(server.requests_to(":runReport$")) == 3
    server.reject_tokens.clear()
    server.oauth.invalid_grant = True
    creds = keys.oauth(access_token=None, refresh_token="1//refresh-SECRET", client_id="cid", client_secret="csecret-SECRET",
                       token_uri=server.oauth.token_uri)
    with pytest.raises(CredentialsInvalid, match="invalid_grant") as info:
        run_report(RunReportArguments.parse(ARGS), make_ctx(credentials=creds))
    assert "SECRET" not in info.value.message


def test_a_key_the_server_does_not_trust_is_credentials_invalid(fake, make_ctx, server):
    stranger = keys.service_account_credentials(server.oauth.token_uri, "stranger@x.iam.gserviceaccount.com", slot=2)
    server.public_keys["stranger@x.iam.gserviceaccount.com"] = keys.public_key_pem(1)  # wrong public key: bad signature
    with pytest.raises(CredentialsInvalid):
        run_report(RunReportArguments.parse(ARGS), make_ctx(credentials=stranger))


def test_403_names_the_properties_the_credentials_can_see(fake, make_ctx, server):
    fake.properties["987654321"].allowed = {OTHER_EMAIL}
    with pytest.raises(ResourceNotFound) as info:
        run_report(RunReportArguments.parse(ARGS), make_ctx(resource_id="987654321"))
    msg = info.value.message
    assert "'properties/987654321' is not accessible" in msg
    # issue 26.2: the account to grant and where (identities are not secrets)
    assert f"the account {SA_EMAIL}" in msg and "Property access management" in msg and "Viewer" in msg
    assert "ikaue.com (123456789, account IKAUE)" in msg and "Blog (222333444, account IKAUE)" in msg and "Store" not in msg
    with pytest.raises(ResourceNotFound, match="does not exist"):
        run_report(RunReportArguments.parse(ARGS), make_ctx(resource_id="555"))


def test_429_names_the_quota_bucket_and_when_it_refills(fake, make_ctx, server):
    server.fail("POST", RR, (429, google_error(429, "Exhausted property tokens per hour. These quota tokens will return in under an hour. "
                                                    "To learn more, see https://developers.google.com/analytics/devguides/reporting/data/v1/quotas")))
    with pytest.raises(UpstreamError) as info:
        run_report(RunReportArguments.parse(ARGS), make_ctx())
    assert "hourly quota is exhausted" in info.value.message and "refills within the hour" in info.value.message
    assert len(server.requests_to(":runReport$")) == 1  # a 429 is not retried
    server.fail("POST", RR, (429, google_error(429, "Exhausted property tokens per day (tokensPerDay).")))
    with pytest.raises(UpstreamError, match="tokensPerDay quota is exhausted.*midnight Pacific"):
        run_report(RunReportArguments.parse(ARGS), make_ctx())


def test_5xx_is_retried_then_succeeds(fake, make_ctx, server):
    server.fail("POST", RR, (503, google_error(503, "The service is currently unavailable.")), (500, google_error(500, "Internal error")))
    ex = run_report(RunReportArguments.parse(ARGS), make_ctx())
    assert len(ex.rows) == 28 and len(server.requests_to(":runReport$")) == 3


def test_5xx_that_persists_ends_within_the_retry_deadline(fake, make_ctx, server):
    server.fail("POST", RR, *[(503, google_error(503, "down"))] * 500)
    with pytest.raises(UpstreamError, match="kept failing within the 4 s budget"):
        run_report(RunReportArguments.parse(ARGS), make_ctx())


def test_a_hang_ends_within_the_request_timeout(fake, make_ctx, server):
    server.hang("POST", RR)
    with pytest.raises(UpstreamError, match="did not answer within 2 s"):
        run_report(RunReportArguments.parse(ARGS), make_ctx())


def test_a_page_failing_mid_report_fails_the_call(server, make_ctx):
    build_fake(server, page_size=10)
    calls = {"n": 0}
    route = next(r for r in server.routes if r.pattern.pattern == RR)
    original = route.handler

    def flaky(req):
        calls["n"] += 1
        if calls["n"] == 2:
            return 403, google_error(403, "User does not have sufficient permissions for this property.")
        return original(req)

    route.handler = flaky
    with pytest.raises(ResourceNotFound):
        run_report(RunReportArguments.parse(ARGS), make_ctx())
    assert calls["n"] == 2


def test_several_credentials_in_one_process_use_their_own_identity(fake, make_ctx, server):
    fake.properties["987654321"].allowed = {OTHER_EMAIL}
    other = keys.service_account_credentials(server.oauth.token_uri, OTHER_EMAIL, slot=1)
    a = run_report(RunReportArguments.parse(ARGS), make_ctx(resource_id="123456789"))
    b = run_report(RunReportArguments.parse(ARGS), make_ctx(resource_id="987654321", credentials=other))
    with pytest.raises(ResourceNotFound):
        run_report(RunReportArguments.parse(ARGS), make_ctx(resource_id="987654321"))  # the first account still cannot see it
    assert len(a.rows) == 28 and len(b.rows) == 5
    who = [r.identity for r in server.requests_to(":runReport$")]
    assert who == [SA_EMAIL, OTHER_EMAIL, SA_EMAIL]
