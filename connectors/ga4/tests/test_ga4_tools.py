"""The other tools against the fake with the real clients: clusters, conversion models, realtime, funnel, info tools."""

from __future__ import annotations

import pytest
from analytics_acp import InvalidArguments
from analytics_acp_ga4.arguments import (
    CompatibilityArguments,
    ConversionModelsArguments,
    FunnelArguments,
    MetadataArguments,
    RealtimeArguments,
    RegexClusterArguments,
    RunReportArguments,
)
from analytics_acp_ga4.attribution import compare_conversion_models
from analytics_acp_ga4.cluster import run_report_by_regex_cluster
from analytics_acp_ga4.funnel import run_funnel_report
from analytics_acp_ga4.info_tools import check_compatibility, get_metadata
from analytics_acp_ga4.realtime import run_realtime_report
from analytics_acp_ga4.report import run_report as _run_report
from ga4support import read_to_the_end


def run_report(arguments, ctx):
    """The tool, with its streamed rows read to the end (as the core does when it builds the table)."""
    return read_to_the_end(_run_report(arguments, ctx))


def test_regex_clusters_are_exact_filtered_requests_first_match_wins(fake, make_ctx, server):
    clusters = [{"name": "Blog", "regex": "^/blog/"}, {"name": "Products", "regex": "^/products/"},
                {"name": "Shoes", "regex": "shoes"}]  # never wins: Products matches /products/shoes first
    ex = run_report_by_regex_cluster(RegexClusterArguments.parse({"dimension": "pagePath", "clusters": clusters,
                                      "metrics": ["sessions", "totalUsers", "engagementRate"]}), make_ctx())
    assert ex.columns == ["cluster", "sessions", "totalUsers", "engagementRate"]
    rows = {r[0]: r for r in ex.rows}
    assert set(rows) == {"Blog", "Products", "Shoes", "(other)"} and rows["Shoes"][1:] == [0, 0, 0]
    # Each cluster's numbers equal a report filtered the same way (rates recomputed by GA4, users de-duplicated).
    ref = run_report(RunReportArguments.parse({"metrics": ["sessions", "totalUsers", "engagementRate"],
                      "dimension_filters": [{"field": "pagePath", "match_type": "PARTIAL_REGEXP", "value": "^/products/"}]}), make_ctx())
    assert rows["Products"][1:] == [ref.totals["sessions"], ref.totals["totalUsers"], ref.totals["engagementRate"]]
    # Cluster sums of sessions (additive) equal the property total; users are not summed anywhere.
    assert sum(r[1] for r in ex.rows) == ex.totals["sessions"]
    sent = [r.body["dimensionFilter"] for r in server.requests_to(":runReport$")[:4]]
    assert sent[1] == {"andGroup": {"expressions": [
        {"filter": {"fieldName": "pagePath", "stringFilter": {"matchType": 6, "value": "^/products/"}}},
        {"notExpression": {"filter": {"fieldName": "pagePath", "stringFilter": {"matchType": 6, "value": "^/blog/"}}}}]}}
    assert len(sent[3]["andGroup"]["expressions"]) == 3 and all("notExpression" in e for e in sent[3]["andGroup"]["expressions"])


def test_regex_clusters_with_a_breakdown_and_bad_regex(fake, make_ctx):
    ex = run_report_by_regex_cluster(RegexClusterArguments.parse({"dimension": "landingPage", "clusters": [{"name": "Home", "regex": "^/$"}],
                                      "metrics": ["sessions"], "dimensions": ["deviceCategory"]}), make_ctx())
    assert ex.columns == ["cluster", "deviceCategory", "sessions"]
    assert {r[0] for r in ex.rows} == {"Home", "(other)"} and {r[1] for r in ex.rows} == {"desktop", "mobile", "tablet"}
    with pytest.raises(InvalidArguments, match=r"^Invalid clusters\.0\.regex: invalid regular expression"):
        run_report_by_regex_cluster(RegexClusterArguments.parse({"dimension": "pagePath", "clusters": [{"name": "x", "regex": "(unclosed"}],
                                     "metrics": ["sessions"]}), make_ctx())


def test_conversion_models_one_row_per_channel_with_shares(fake, make_ctx, server):
    ex = compare_conversion_models(ConversionModelsArguments.parse({"key_events": ["purchase"]}), make_ctx())
    assert ex.columns[:4] == ["channel", "key_events_first_user", "key_events_session", "key_events_attributed"]
    assert {r[0] for r in ex.rows} == {"Organic Search", "Direct", "Paid Search", "Email"}
    for i in (4, 5, 6):  # each model's shares add up to 1
        assert abs(sum(r[i] for r in ex.rows) - 1) < 0.01
    dims = [r.body["dimensions"][0]["name"] for r in server.requests_to(":runReport$")]
    assert dims == ["firstUserDefaultChannelGroup", "sessionDefaultChannelGroup", "defaultChannelGroup"]
    assert server.requests_to(":runReport$")[0].body["metrics"] == [{"name": "keyEvents:purchase"}, {"name": "totalRevenue"}]
    session = run_report(RunReportArguments.parse({"metrics": ["keyEvents:purchase"], "dimensions": ["sessionDefaultChannelGroup"]}), make_ctx())
    by_session = {r[0]: r[1] for r in session.rows}
    assert {r[0]: r[2] for r in ex.rows} == {c: by_session.get(c, 0) for c in by_session} | {
        r[0]: r[2] for r in ex.rows if r[0] not in by_session}
    assert any(r[-1] != 0 for r in ex.rows)  # credit moves between models in this data


def test_realtime_report(fake, make_ctx, server):
    ex = run_realtime_report(RealtimeArguments.parse({"metrics": ["activeUsers", "eventCount"], "dimensions": ["country"], "start_minutes_ago": 9}),
                             make_ctx("run_realtime_report"))
    body = server.requests_to(":runRealtimeReport$")[0].body
    assert body["minuteRanges"] == [{"startMinutesAgo": 9, "endMinutesAgo": 0}] and body["metricAggregations"] == [1]
    assert ex.columns == ["country", "activeUsers", "eventCount"] and ex.totals["activeUsers"] > 0
    assert sum(r[2] for r in ex.rows) == ex.totals["eventCount"]
    with pytest.raises(InvalidArguments, match="^Invalid start_minutes_ago: must be at most 59"):
        run_realtime_report(RealtimeArguments.parse({"metrics": ["activeUsers"], "start_minutes_ago": 90}), make_ctx())


def test_funnel_report_closed_and_open(fake, make_ctx, server):
    steps = [{"name": "Visit", "event_name": "session_start"}, {"name": "Product", "page_path": "/products/", "match_type": "BEGINS_WITH"},
             {"name": "Cart", "event_name": "add_to_cart"}, {"name": "Purchase", "event_name": "purchase"}]
    ex = run_funnel_report(FunnelArguments.parse({"steps": steps}), make_ctx("run_funnel_report"))
    body = server.requests_to(":runFunnelReport$")[0].body
    assert server.requests_to(":runFunnelReport$")[0].path == "/v1alpha/properties/123456789:runFunnelReport"
    assert body["funnel"]["steps"][0] == {"name": "Visit", "filterExpression": {"funnelEventFilter": {"eventName": "session_start"}}}
    assert body["funnel"]["steps"][1]["filterExpression"] == {"funnelFieldFilter": {"fieldName": "pagePath",
                                                              "stringFilter": {"matchType": 2, "value": "/products/"}}}
    assert ex.columns == ["step", "active_users", "completion_rate", "abandonments", "abandonment_rate"]
    assert [r[1] for r in ex.rows] == [4, 3, 2, 1]
    assert ex.rows[0][3] == 1 and ex.rows[0][2] == 0.75
    open_ = run_funnel_report(FunnelArguments.parse({"steps": steps, "is_open_funnel": True}), make_ctx())
    assert open_.rows[0][1] == 4 and open_.rows[1][1] == 4  # the fourth journey enters at "Product"
    with pytest.raises(InvalidArguments, match="^Invalid steps.0: needs exactly one of 'event_name' or 'page_path'"):
        run_funnel_report(FunnelArguments.parse({"steps": [{"name": "x"}]}), make_ctx())


def test_check_compatibility_and_get_metadata(fake, make_ctx):
    ok = check_compatibility(CompatibilityArguments.parse({"metrics": ["sessions"], "dimensions": ["country"]}), make_ctx("check_compatibility")).data
    assert ok["compatible"] is True and ok["incompatible"] == []
    bad = check_compatibility(CompatibilityArguments.parse({"metrics": ["sessions", "eventCount"], "dimensions": ["itemName"]}), make_ctx()).data
    assert bad["compatible"] is False and bad["incompatible"] == ["itemName", "sessions"]
    with pytest.raises(InvalidArguments, match="closest: sessions"):
        check_compatibility(CompatibilityArguments.parse({"metrics": ["sesions"]}), make_ctx())
    found = get_metadata(MetadataArguments.parse({"query": "order"}), make_ctx("get_metadata")).data
    assert [m["api_name"] for m in found["metrics"]] == ["customEvent:order_value"] and found["metrics"][0]["custom"]
    channel = get_metadata(MetadataArguments.parse({"query": "channel group", "kind": "dimensions"}), make_ctx()).data
    assert "sessionDefaultChannelGroup" in [d["api_name"] for d in channel["dimensions"]] and "metrics" not in channel
    custom = get_metadata(MetadataArguments.parse({"custom_only": True}), make_ctx()).data
    assert {d["api_name"] for d in custom["dimensions"]} == {"customEvent:form_name", "customUser:plan"}


CLUSTERS = [{"name": "Blog", "regex": "^/blog/"}, {"name": "Products", "regex": "^/products/"}]


@pytest.mark.parametrize("tool, args, n", [
    (run_report_by_regex_cluster, RegexClusterArguments.parse({"dimension": "pagePath", "clusters": CLUSTERS, "metrics": ["sessions"]}), 4),
    (compare_conversion_models, ConversionModelsArguments.parse({"key_events": ["purchase"]}), 3)])
def test_several_request_tools_report_request_k_of_n_and_stop_between_requests(fake, make_ctx, server, tool, args, n):
    # Issue 28: regex clusters / conversion models report "request k of n" (not the rows of each
    # request); a cancel sends no further request and returns no table built from part of them.
    from analytics_acp import UpstreamError
    from analytics_acp.kit import RecordingSignals

    signals = RecordingSignals()
    tool(args, make_ctx(signals=signals))
    assert signals.seen == [(k, n, f"request {k} of {n}") for k in range(1, n + 1)]
    assert len(server.requests_to(":runReport$")) == n

    signals = RecordingSignals(cancel_after=2)
    with pytest.raises(UpstreamError, match="cancelled: no further Google request"):
        tool(args, make_ctx(signals=signals))
    assert len(server.requests_to(":runReport$")) == n + 2  # the two before the cancel, none after
    assert [s[0] for s in signals.seen] == [1, 2]
