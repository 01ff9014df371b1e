"""Issue 26.1/26.2 for GA4: run_report and autocontext against a refused port, an unresolvable host and a
silent listener: typed ACP_UPSTREAM_ERROR naming the host, never a credentials error, bounded attempts."""

import pytest
from analytics_acp import UpstreamError
from analytics_acp_ga4.arguments import (
    RunReportArguments,
)
from analytics_acp_ga4.report import run_report
from analytics_acp_google.retry import AUTOCONTEXT_CONCURRENCY
from googlefakes.netfaults import FAULTS, Fault, Proxy, autocontext, proxy_env, refused_url

ARGS = {"metrics": ["sessions"], "dimensions": ["date"]}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", FAULTS)
def test_run_report_unreachable_is_typed_and_names_the_host(kind, make_ctx):
    with Fault(kind) as fault:
        ctx = make_ctx()
        ctx.config["api_endpoint"] = fault.url
        with pytest.raises(UpstreamError) as err:
            list(run_report(RunReportArguments.parse(ARGS), ctx).rows)
        assert fault.host in err.value.message and fault.phrase in err.value.message
        assert "Max retries" not in err.value.message and "%24alt" not in err.value.message
        assert fault.accepted <= 1  # a silent server is cut once, never hammered


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", FAULTS)
def test_autocontext_stops_after_the_first_block_finds_google_unreachable(kind, make_ctx):
    with Fault(kind) as fault:
        ctx = make_ctx("autocontext")
        ctx.config["api_endpoint"] = fault.url
        result = autocontext("ga4", "123456789", None, ctx)
        assert result.failed == len(result.blocks) >= 10
        assert all("ACP_UPSTREAM_ERROR" in b["error"] and fault.host in b["error"] for b in result.blocks)
        # the blocks in flight (at most AUTOCONTEXT_CONCURRENCY) are each cut once; the others stop at the tripped budget
        assert fault.accepted <= AUTOCONTEXT_CONCURRENCY


@pytest.mark.timeout(60)
def test_proxies_are_honoured_and_a_refusing_proxy_is_named(fake, make_ctx, monkeypatch):
    """Issue 26.3: HTTP(S)_PROXY carries every GA4 request; a proxy that refuses gives a typed answer naming it."""
    with Proxy() as proxy:
        proxy_env(monkeypatch, proxy.url)
        assert list(run_report(RunReportArguments.parse(ARGS), make_ctx()).rows)
        assert any(":runReport" in line for line in proxy.lines)
    dead = refused_url()
    proxy_env(monkeypatch, dead)
    for run in (lambda: list(run_report(RunReportArguments.parse(ARGS), make_ctx()).rows),):
        with pytest.raises(UpstreamError) as err:
            run()
        assert f"through the proxy {dead.split('//')[1]}" in err.value.message
    result = autocontext("ga4", "123456789", None, make_ctx("autocontext"))
    assert result.failed == len(result.blocks) and all("through the proxy" in b["error"] for b in result.blocks)
