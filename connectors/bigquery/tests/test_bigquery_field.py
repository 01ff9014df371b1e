"""Issue 26 for BigQuery: execute_query, validate_query and autocontext against a refused port, an unresolvable
host and a silent listener (typed ACP_UPSTREAM_ERROR naming the host, never "paste a new key"); a 403 naming
the account; unknown datasets and tables named in full; rejected credentials in validate_query."""

import pytest
from analytics_acp import CredentialsInvalid, ResourceNotFound, UpstreamError
from analytics_acp_bigquery.arguments import QueryArguments, ValidateQueryArguments
from analytics_acp_bigquery.execute import run_execute_query
from analytics_acp_bigquery.preflight import estimate
from analytics_acp_bigquery.validate import run_validate_query
from analytics_acp_google.retry import AUTOCONTEXT_CONCURRENCY
from bqworld import DATASET, PROJECT, SA_EMAIL, SQL_WEEK
from fakebq import QuerySpec, bq_error
from googlefakes.netfaults import FAULTS, Fault, Proxy, autocontext, proxy_env, refused_url


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", FAULTS)
def test_execute_and_validate_unreachable_are_typed_and_name_the_host(kind, ctx_for):
    with Fault(kind) as fault:
        for tool, run, model in (("execute_query", run_execute_query, QueryArguments),
                                 ("validate_query", run_validate_query, ValidateQueryArguments)):
            ctx = ctx_for(tool, config={"api_endpoint": fault.url}, cost_limit_usd=1)
            with pytest.raises(UpstreamError) as err:
                run(model.parse({"query": SQL_WEEK}), ctx)
            assert fault.host in err.value.message and fault.phrase in err.value.message
            assert "key" not in err.value.message.lower()
        assert fault.accepted <= 2  # one cut request per tool call


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", FAULTS)
def test_autocontext_unreachable_stops_at_once(kind, ctx_for):
    with Fault(kind) as fault:
        ctx = ctx_for("autocontext", config={"api_endpoint": fault.url})
        result = autocontext("bigquery", f"{PROJECT}.{DATASET}", "dataset", ctx)
        assert result.failed == len(result.blocks) >= 2
        assert all("ACP_UPSTREAM_ERROR" in b["error"] and fault.host in b["error"] for b in result.blocks)
        assert fault.accepted <= AUTOCONTEXT_CONCURRENCY  # in-flight blocks cut once each, the rest stopped


def test_a_403_names_the_account_and_the_roles_to_grant(world, ctx_for):
    world.server.fail("POST", r"/bigquery/v2/projects/([^/]+)/jobs",
                      (403, bq_error(403, "Access Denied: Project mi-proyecto: User does not have bigquery.jobs.create", "accessDenied")))
    with pytest.raises(ResourceNotFound) as err:
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))
    assert SA_EMAIL in err.value.message and "BigQuery Data Viewer" in err.value.message and "Job User" in err.value.message


def test_an_unknown_dataset_is_named_in_full_with_close_names_and_no_location_advice(world, ctx_for):
    sql = "SELECT 1 FROM `mi-proyecto.analytics_12.events`"
    world.bq.on_query(sql, QuerySpec(referenced_tables=["mi-proyecto.analytics_12.events"], location="EU"))
    world.server.fail("POST", r"/bigquery/v2/projects/([^/]+)/jobs",
                      (404, bq_error(404, "Not found: Dataset mi-proyecto:analytics_12 was not found in location US", "notFound")))
    with pytest.raises(ResourceNotFound) as err:
        estimate(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1))
    message = err.value.message
    assert "Dataset mi-proyecto.analytics_12 does not exist" in message and "mi-proyecto.analytics_123" in message
    assert "config.location" not in message  # the dataset exists nowhere: no location advice


def test_an_unknown_table_is_named_in_full_with_close_names(world, ctx_for):
    world.server.fail("POST", r"/bigquery/v2/projects/([^/]+)/jobs",
                      (404, bq_error(404, "Not found: Table mi-proyecto:analytics_123.dialy was not found in location EU", "notFound")))
    with pytest.raises(ResourceNotFound) as err:
        estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))
    assert "Table mi-proyecto.analytics_123.dialy does not exist" in err.value.message
    assert "mi-proyecto.analytics_123.daily" in err.value.message and "config.location" not in err.value.message


def test_validate_query_with_rejected_credentials_is_a_credentials_error(world, ctx_for):
    world.server.reject_tokens.add(SA_EMAIL)
    with pytest.raises(CredentialsInvalid):
        run_validate_query(ValidateQueryArguments.parse({"query": SQL_WEEK}), ctx_for("validate_query", cost_limit_usd=1))
    # a 401 whose error item carries the reason "invalid" was kept as a syntax verdict (valid: false) before
    world.server.reject_tokens.clear()
    world.server.fail("POST", r"/bigquery/v2/projects/([^/]+)/jobs",
                      *[(401, bq_error(401, "Request had invalid authentication credentials.", "invalid"))] * 3)
    with pytest.raises(CredentialsInvalid):  # (google-auth refreshes the token and retries a 401 twice itself)
        run_validate_query(ValidateQueryArguments.parse({"query": SQL_WEEK}), ctx_for("validate_query", cost_limit_usd=1))


@pytest.mark.timeout(60)
def test_proxies_are_honoured_token_requests_included_and_a_refusing_proxy_is_named(world, ctx_for, monkeypatch, connector_state):
    """Issue 26.3 through requests: the service account's token request and the jobs go through the proxy."""
    connector_state.close()  # a fresh client and token, so the token request is made under the proxy
    with Proxy() as proxy:
        proxy_env(monkeypatch, proxy.url)
        rows = list(run_execute_query(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1)).rows)
        assert rows
        assert any("/token" in line for line in proxy.lines) and any("/jobs" in line for line in proxy.lines)
    dead = refused_url()
    proxy_env(monkeypatch, dead)
    with pytest.raises(UpstreamError) as err:
        run_execute_query(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))
    assert f"through the proxy {dead.split('//')[1]}" in err.value.message
    result = autocontext("bigquery", f"{PROJECT}.{DATASET}", "dataset", ctx_for("autocontext"))
    assert result.failed == len(result.blocks) and all("through the proxy" in b["error"] for b in result.blocks)


@pytest.mark.timeout(60)
def test_a_token_endpoint_that_cannot_be_reached_is_upstream_not_credentials(world, ctx_for, connector_state):
    """The review's case: DNS failure / refused port of the token endpoint was typed "the key was revoked"."""
    from googlefakes import keys
    from googlefakes.netfaults import refused_url

    for token_uri, host in (("http://oauth.something.invalid/token", "oauth.something.invalid"),
                            (refused_url() + "/token", "127.0.0.1")):
        connector_state.close()
        creds = keys.service_account_credentials(token_uri, SA_EMAIL)
        with pytest.raises(UpstreamError) as err:
            run_validate_query(ValidateQueryArguments.parse({"query": SQL_WEEK}), ctx_for("validate_query", credentials=creds, cost_limit_usd=1))
        assert f"Could not reach {host}" in err.value.message and "key" not in err.value.message.lower()
