"""Issue 26.1/26.2 for Search Console: search_analytics and autocontext against a refused port, an unresolvable
host and a silent listener: typed ACP_UPSTREAM_ERROR naming the host (a DNS failure is not a credentials error)."""

import pytest
from analytics_acp import UpstreamError
from analytics_acp_google.retry import AUTOCONTEXT_CONCURRENCY
from analytics_acp_gsc.arguments import SearchAnalyticsArguments
from analytics_acp_gsc.search_analytics import run_search_analytics
from googlefakes.netfaults import FAULTS, Fault, Proxy, autocontext, proxy_env, refused_url

ARGS = {"dimensions": ["query"], "start_date": "2026-09-01", "end_date": "2026-09-07"}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", FAULTS)
def test_search_analytics_unreachable_is_typed_and_names_the_host(kind, env, ctx_for):
    with Fault(kind) as fault:
        ctx = ctx_for(config={"api_endpoint": fault.url})
        with pytest.raises(UpstreamError) as err:
            out = run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx)
            list(out.rows)
        assert fault.host in err.value.message and fault.phrase in err.value.message
        assert fault.accepted <= 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", FAULTS)
def test_autocontext_unreachable_stops_at_once(kind, env, ctx_for):
    with Fault(kind) as fault:
        ctx = ctx_for("autocontext", config={"api_endpoint": fault.url})
        result = autocontext("gsc", ctx.resource_id, None, ctx)
        assert result.failed == len(result.blocks) >= 5
        assert all("ACP_UPSTREAM_ERROR" in b["error"] for b in result.blocks)
        assert sum(fault.host in b["error"] for b in result.blocks) == len(result.blocks)
        assert fault.accepted <= AUTOCONTEXT_CONCURRENCY  # in-flight blocks cut once each, the rest stopped


@pytest.mark.timeout(60)
def test_proxies_are_honoured_token_requests_included_and_a_refusing_proxy_is_named(env, ctx_for, monkeypatch):
    """Issue 26.3 through httplib2 (CONNECT tunnels): the token request and the query both go through the proxy."""
    with Proxy() as proxy:
        proxy_env(monkeypatch, proxy.url)
        out = run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())
        assert list(out.rows)
        assert proxy.lines and all(line.startswith("CONNECT 127.0.0.1:") for line in proxy.lines)
        assert env.server.requests_to("token")  # the service account's token request went through it too
    dead = refused_url()
    proxy_env(monkeypatch, dead)
    with pytest.raises(UpstreamError) as err:
        run_search_analytics(SearchAnalyticsArguments.parse(ARGS), ctx_for())
    assert f"through the proxy {dead.split('//')[1]}" in err.value.message
    ctx = ctx_for("autocontext")
    result = autocontext("gsc", ctx.resource_id, None, ctx)
    assert result.failed == len(result.blocks) and all("through the proxy" in b["error"] for b in result.blocks)
