"""Every error class through the real client: 401, 403 (naming what exists), 429, 5xx retried, hang, 400, bad tokens."""

from __future__ import annotations

import pytest
from analytics_acp import CredentialsInvalid, InvalidArguments, NoArguments, ResourceNotFound, UpstreamError
from analytics_acp_gsc.arguments import SearchAnalyticsArguments
from analytics_acp_gsc.search_analytics import run_search_analytics
from googlefakes.server import google_error
from gscfake import DOMAIN, PREFIX, QUERY, SA_EMAIL, SHOP

ARGS = {"dimensions": ["query"], "start_date": "2026-09-01", "end_date": "2026-09-07"}


def test_403_names_the_other_form_and_what_the_credentials_see(env, ctx_for):
    # The service account sees sc-domain:example.com and the shop, not the www URL-prefix property.
    with pytest.raises(ResourceNotFound) as info:
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for(resource_id=PREFIX))
    text = info.value.message
    assert f"{PREFIX} is not accessible" in text
    assert "sc-domain:example.com (domain property): use that resource_id" in text
    assert f"These credentials can see: {DOMAIN}, {SHOP}." in text
    assert f"the account {SA_EMAIL}" in text and "Settings > Users and permissions" in text  # issue 26.2


def test_one_401_refreshes_the_token_and_goes_on(env, ctx_for):
    env.server.fail("POST", QUERY, (401, google_error(401, "Request had invalid authentication credentials.")))
    assert len(run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for()).rows) == 40
    assert [i["grant_type"] for i in env.oauth.issued] == ["jwt-bearer", "jwt-bearer"]


def test_401_that_persists_is_credentials_invalid(env, ctx_for):
    env.server.reject_tokens.add(SA_EMAIL)
    with pytest.raises(CredentialsInvalid, match="401"):
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())


def test_refused_refresh_token_is_credentials_invalid_without_secrets(env, ctx_for):
    env.oauth.invalid_grant = True
    creds = env.oauth_user()
    with pytest.raises(CredentialsInvalid) as info:
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for(credentials=creds, resource_id=PREFIX))
    assert "invalid_grant" in info.value.message
    assert creds["refresh_token"] not in info.value.message and creds["client_secret"] not in info.value.message


def test_429_is_upstream_error_saying_when_to_retry_and_is_not_retried(env, ctx_for):
    body = {"error": {"code": 429, "message": "Search Analytics load quota exceeded for this site (short-term).",
                      "status": "RESOURCE_EXHAUSTED", "errors": [{"reason": "rateLimitExceeded"}]}}
    env.server.fail("POST", QUERY, (429, body), (429, body))
    with pytest.raises(UpstreamError) as info:
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())
    assert "retry" in info.value.message.lower() and "quota" in info.value.message.lower()
    assert len(env.queries(DOMAIN)) == 1  # answered at once, never hammered


def test_5xx_is_retried_within_the_deadline(env, ctx_for):
    env.server.fail("POST", QUERY, (503, google_error(503, "Backend unavailable")), (500, google_error(500, "oops")))
    out = run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())
    assert len(out.rows) == 40 and len(env.queries(DOMAIN)) == 4  # 2 failures + pages + totals


def test_persistent_5xx_fails_as_upstream_error_with_no_table(env, ctx_for):
    env.server.fail("POST", QUERY, *[(503, google_error(503, "Backend unavailable"))] * 30)
    with pytest.raises(UpstreamError, match="503"):
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())
    assert 2 <= len(env.queries(DOMAIN)) < 30  # bounded by the deadline, not by the fault queue


def test_a_hung_request_times_out(env, ctx_for):
    env.server.hang("POST", QUERY)
    with pytest.raises(UpstreamError, match="did not answer"):
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())


def test_a_failing_later_page_fails_the_whole_extraction(env, ctx_for, monkeypatch):
    from analytics_acp_gsc import planner

    monkeypatch.setattr(planner, "PAGE_SIZE", 10)
    env.server.fail("POST", QUERY, (200, {"rows": [{"keys": ["q"], "clicks": 1, "impressions": 1, "ctr": 1, "position": 1}] * 10}),
                    (403, {"error": {"code": 403, "message": "quotaExceeded", "errors": [{"reason": "quotaExceeded"}]}}))
    with pytest.raises(UpstreamError, match="quota"):
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())


def test_400_from_the_api_is_invalid_arguments_with_its_message(env, ctx_for):
    env.server.fail("POST", QUERY, (400, google_error(400, "Invalid value at 'dimension_filter_groups[0].filters[0].expression'.")))
    with pytest.raises(InvalidArguments, match="HTTP 400.*dimension_filter_groups"):
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())


def test_unknown_access_token_is_credentials_invalid(env, ctx_for):
    from googlefakes import keys

    creds = keys.oauth(access_token="ya29.not-issued-by-anyone", email="x@example.com", expiry_date="2099-01-01T00:00:00Z")
    with pytest.raises(CredentialsInvalid):
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for(credentials=creds))


def test_no_credentials_is_credentials_missing(env, ctx_for):
    from analytics_acp import CredentialsMissing
    from analytics_acp.kit import make_ctx

    ctx = make_ctx("gsc", "search_analytics", credentials=None, config=env.config, resource_id=DOMAIN)
    with pytest.raises(CredentialsMissing):
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx)


def test_404_on_a_property_is_resource_not_found(env, ctx_for):
    from analytics_acp_gsc.sitemaps import run_sitemaps
    from gscfake import SITEMAPS

    env.server.fail("GET", SITEMAPS, (404, google_error(404, "Requested entity was not found.")))
    with pytest.raises(ResourceNotFound, match=r"HTTP 404.*These credentials can see: sc-domain:example.com"):
        run_sitemaps(NoArguments(), ctx_for("sitemaps"))


def test_unreachable_endpoint_is_upstream_error_after_bounded_retries(env, ctx_for):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UpstreamError, match="Could not reach"):
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for(config={"api_endpoint": f"http://127.0.0.1:{port}"}))
