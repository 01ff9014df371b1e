"""Every error class of issue 17 through the real client against the fake: typed ACP errors with advice,
bounded retries (the client's default deadline is 600 s), no partial table when a job fails half-way."""

from __future__ import annotations

import pytest
from analytics_acp import (
    CostLimitExceeded,
    CredentialsInvalid,
    InvalidArguments,
    ResourceNotFound,
    UpstreamError,
)
from analytics_acp.results.extraction import build_extraction
from analytics_acp.results.settings import BuildSettings
from analytics_acp_bigquery.arguments import QueryArguments, ValidateQueryArguments
from analytics_acp_bigquery.execute import run_execute_query
from analytics_acp_bigquery.preflight import estimate
from analytics_acp_bigquery.validate import run_validate_query
from bqworld import SA_EMAIL, SQL_WEEK
from fakebq import QuerySpec, bq_error

JOBS = r"/bigquery/v2/projects/([^/]+)/jobs"


def test_bytes_billed_limit_exceeded_is_a_cost_limit_error(world, ctx_for):
    """The second fence: the dry run said $0.50 but the job would bill more than maximumBytesBilled allows."""
    sql = "SELECT * FROM `mi-proyecto.analytics_123.external_thing`"
    world.bq.on_query(sql, QuerySpec(total_bytes_processed=(1 << 40) // 20, billed_bytes=(1 << 40) // 2, location="EU",
                                     schema=[{"name": "x", "type": "STRING"}], referenced_tables=["mi-proyecto.analytics_123.external_thing"]))
    ctx = ctx_for(cost_limit_usd=1)
    assert estimate(QueryArguments.parse({"query": sql}), ctx).usd == 0.3125
    with pytest.raises(CostLimitExceeded) as err:
        run_execute_query(QueryArguments.parse({"query": sql}), ctx)
    assert "Query exceeded limit for bytes billed" in err.value.message
    assert "Narrow the query" in err.value.message
    assert err.value.data == {"limit_usd": 1, "maximum_bytes_billed": int((1 << 40) / 6.25)}
    (job,) = world.bq.sent_jobs(dry_run=False)
    assert job["configuration"]["query"]["maximumBytesBilled"] == str(int((1 << 40) / 6.25))


def test_a_dataset_in_another_location_names_its_location(world, ctx_for):
    ctx = ctx_for(cost_limit_usd=1, config={"location": "US"})
    with pytest.raises(ResourceNotFound) as err:
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx)
    message = err.value.message
    assert "Dataset mi-proyecto.analytics_123 is in EU, but the job ran in US" in message and "config.location" in message


def test_401_is_credentials_invalid(world, ctx_for):
    world.server.reject_tokens.add(SA_EMAIL)
    with pytest.raises(CredentialsInvalid):
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))


def test_a_revoked_refresh_token_is_credentials_invalid(world, ctx_for):
    world.oauth.invalid_grant = True
    with pytest.raises(CredentialsInvalid) as err:
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1, credentials=world.oauth_credentials()))
    assert "fake-client-secret-value" not in err.value.message and "1//fake-refresh-token" not in err.value.message


def test_403_access_denied_is_resource_not_found(world, ctx_for):
    world.server.fail("POST", JOBS, (403, bq_error(403, "Access Denied: Project mi-proyecto: User does not have bigquery.jobs.create permission", "accessDenied")))
    with pytest.raises(ResourceNotFound) as err:
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))
    assert "bigquery.jobs.create" in err.value.message


@pytest.mark.parametrize("status,reason", [(403, "quotaExceeded"), (403, "rateLimitExceeded"), (429, "rateLimitExceeded")])
def test_quota_and_rate_limits_are_upstream_errors_with_advice(world, ctx_for, status, reason):
    faults = [(status, bq_error(status, f"Exceeded rate limits: too many {reason}", reason))] * 50
    world.server.fail("POST", JOBS, *faults)
    with pytest.raises(UpstreamError) as err:
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))
    assert "retry" in err.value.message.lower() and "quota" in err.value.message.lower()


def test_5xx_retries_are_bounded_by_the_shared_deadline(world, ctx_for):
    """backendError is retried (BigQuery's predicate) but only for ANALYTICS_ACP_GOOGLE_DEADLINE_S, not 600 s."""
    world.server.fail("POST", JOBS, *[(503, bq_error(503, "Backend error", "backendError"))] * 500)
    with pytest.raises(UpstreamError):
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))
    tries = len(world.server.requests_to(JOBS + "$", "POST"))
    assert 1 < tries < 500


def test_a_transient_5xx_is_retried_and_succeeds(world, ctx_for):
    world.server.fail("POST", JOBS, (500, bq_error(500, "An internal error occurred", "internalError")))
    assert estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1)).usd == 0.054932


def test_a_hung_dry_run_ends_with_an_upstream_error(world, ctx_for):
    world.server.hang("POST", JOBS, times=20)
    with pytest.raises(UpstreamError):
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))


def test_a_job_failing_half_way_delivers_no_table(world, ctx_for, tmp_path):
    sql = "SELECT n FROM `mi-proyecto.analytics_123.expiring`"
    world.bq.on_query(sql, QuerySpec(schema=[{"name": "n", "type": "INTEGER"}], total_rows=50_000, wire_row=lambda i: [str(i)],
                                     fail_at_row=30_000, location="EU", referenced_tables=["mi-proyecto.analytics_123.expiring"]))
    ex = run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1))
    with pytest.raises(ResourceNotFound):
        build_extraction(ex, BuildSettings(row_limit=5, inline_max_bytes=4096, tmp_dir=tmp_path))
    assert list(tmp_path.iterdir()) == [], "no partial table file is left behind"


def test_a_syntax_error_is_an_answer_of_validate_and_an_error_of_execute(world, ctx_for):
    sql = "SELECT event_name FROM FROM events_*"
    world.bq.on_query(sql, QuerySpec(syntax_error="Syntax error: Unexpected keyword FROM at [1:24]"))
    info = run_validate_query(ValidateQueryArguments.parse({"query": sql}), ctx_for("validate_query", cost_limit_usd=1))
    assert info.data == {"valid": False, "error": "Syntax error: Unexpected keyword FROM at [1:24]",
                         "position": {"line": 1, "column": 24}, "cost_limit_usd": 1}
    with pytest.raises(InvalidArguments) as err:
        estimate(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1))
    assert "Unexpected keyword FROM at [1:24]" in err.value.message


def test_an_unsubstituted_template_needs_the_window(world, ctx_for):
    with pytest.raises(InvalidArguments, match="start_date"):
        estimate(QueryArguments.parse({"query": "SELECT 1 WHERE d >= '{{start_date}}'"}), ctx_for(cost_limit_usd=1))
