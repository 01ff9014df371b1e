"""run_report against the fake with the real google-analytics-data client (8.2, 8.4, 8.6, 15.1)."""

from __future__ import annotations

import datetime as dt

import pytest
from analytics_acp import InvalidArguments, UpstreamError
from analytics_acp_ga4.arguments import (
    RunReportArguments,
)
from analytics_acp_ga4.report import run_report as _run_report
from ga4support import build_fake, read_to_the_end


def run_report(arguments, ctx):
    """The tool, with its streamed rows read to the end (as the core does when it builds the table)."""
    return read_to_the_end(_run_report(arguments, ctx))


def _rr(server):
    return server.requests_to(r":runReport$", "POST")


def test_pages_by_offset_until_row_count_whatever_the_page_size(server, make_ctx):
    build_fake(server, page_size=37)  # the API may return fewer rows than asked
    ex = run_report(RunReportArguments.parse({"metrics": ["sessions"], "dimensions": ["date", "sessionDefaultChannelGroup", "deviceCategory"]}),
                    make_ctx())
    sent = [r.body for r in _rr(server)]
    total = 28 * 4 * 3
    assert len(ex.rows) == total == ex.source["row_count"]
    assert len(sent) == -(-total // 37) == ex.source["pages"]
    # What the real client sent: offsets as int64 strings (absent on the first page), the page cap, TOTAL first page only.
    assert [int(b.get("offset", 0)) for b in sent] == list(range(0, total, 37))
    assert {b["limit"] for b in sent} == {"50000"}
    assert sent[0]["metricAggregations"] == [1] and all("metricAggregations" not in b for b in sent[1:])
    assert all(b["returnPropertyQuota"] is True for b in sent)
    assert len({tuple(r[:3]) for r in ex.rows}) == total  # no page read twice
    # Quota: consumed adds up over pages; remaining is the last page's (8.2 extra.quota, 8.4 source.property_quota).
    assert ex.extra["quota"]["tokensPerDay"]["consumed"] == len(sent)
    assert ex.source["property_quota"] == ex.extra["quota"]


def test_types_totals_description_title_and_dates(fake, make_ctx, server):
    ex = run_report(RunReportArguments.parse({"metrics": ["sessions", "totalUsers", "keyEvents:purchase", "totalRevenue", "averageSessionDuration"],
                     "dimensions": ["date", "sessionDefaultChannelGroup"], "start_date": "28daysAgo"}), make_ctx())
    headers = {h.name: h for h in ex.headers}
    assert [(h.name, h.type, h.role) for h in ex.headers] == [
        ("date", "date", "dimension"), ("sessionDefaultChannelGroup", "string", "dimension"),
        ("sessions", "integer", "metric"), ("totalUsers", "integer", "metric"), ("keyEvents:purchase", "number", "metric"),
        ("totalRevenue", "number", "metric"), ("averageSessionDuration", "number", "metric")]
    assert headers["totalRevenue"].description == "Currency amount (EUR)"
    assert headers["averageSessionDuration"].description == "Unit: seconds"
    first = dict(zip(ex.columns, ex.rows[0], strict=True))
    assert dt.date.fromisoformat(first["date"]) and isinstance(first["sessions"], int)
    # Totals are the API's TOTAL aggregation: totalUsers is de-duplicated, so it is not the sum of the rows.
    col = ex.columns.index("totalUsers")
    assert ex.totals["totalUsers"] != sum(r[col] for r in ex.rows)
    assert ex.totals["sessions"] == sum(r[ex.columns.index("sessions")] for r in ex.rows)
    assert ex.description == ("GA4 property 123456789. Metrics: sessions, totalUsers, keyEvents:purchase, totalRevenue, "
                              "averageSessionDuration. Dimensions: date, sessionDefaultChannelGroup.")
    assert ex.title == "GA4 123456789 · 28daysAgo→yesterday"
    today = dt.date.today()
    assert ex.dates == [(today - dt.timedelta(days=28)).isoformat(), (today - dt.timedelta(days=1)).isoformat()]
    # Defaults written back into the effective arguments (system_info.arguments).
    assert ex.arguments["end_date"] == "yesterday" and ex.arguments["start_date"] == "28daysAgo"
    assert ex.source["currency_code"] == "EUR" and ex.source["time_zone"] == "Europe/Madrid"


def test_aliases_warn_with_the_spec_text(fake, make_ctx, server):
    ex = run_report(RunReportArguments.parse({"metrics": ["purchases", "users", "pageviews", "revenue", "conversions"], "dimensions": ["channel"]}),
                    make_ctx())
    assert ex.warnings[:6] == ["Metric 'purchases' mapped to 'ecommercePurchases'.", "Metric 'users' mapped to 'totalUsers'.",
                               "Metric 'pageviews' mapped to 'screenPageViews'.", "Metric 'revenue' mapped to 'totalRevenue'.",
                               "Metric 'conversions' mapped to 'keyEvents'.",
                               "Dimension 'channel' mapped to 'sessionDefaultChannelGroup'."]
    assert [m["name"] for m in _rr(server)[0].body["metrics"]] == ["ecommercePurchases", "totalUsers", "screenPageViews",
                                                                  "totalRevenue", "keyEvents"]
    assert ex.arguments["metrics"][0] == "ecommercePurchases"


def test_unknown_names_get_close_matches_from_the_property_metadata(fake, make_ctx, server):
    with pytest.raises(InvalidArguments) as info:
        run_report(RunReportArguments.parse({"metrics": ["sesions", "customEvent:order_valu"], "dimensions": ["sessionDefaultChanelGroup"]}), make_ctx())
    msg = info.value.message
    assert "Unknown metric 'sesions' (closest: sessions" in msg
    assert "Unknown metric 'customEvent:order_valu' (closest: customEvent:order_value" in msg  # custom ones included
    assert "Unknown dimension 'sessionDefaultChanelGroup' (closest: sessionDefaultChannelGroup" in msg
    assert server.requests_to(r"/metadata$", "GET")  # diagnosed from getMetadata after the API's 400
    with pytest.raises(InvalidArguments, match="'country' is a dimension, not a metric"):
        run_report(RunReportArguments.parse({"metrics": ["country"]}), make_ctx())


def test_incompatible_fields_are_named_from_check_compatibility(fake, make_ctx, server):
    with pytest.raises(InvalidArguments) as info:
        run_report(RunReportArguments.parse({"metrics": ["sessions", "eventCount"], "dimensions": ["itemName"]}), make_ctx())
    assert "cannot be requested together: itemName, sessions" in info.value.message
    body = server.requests_to(r":checkCompatibility$")[0].body
    assert body == {"dimensions": [{"name": "itemName"}], "metrics": [{"name": "sessions"}, {"name": "eventCount"}]}


def test_filters_orders_limit_and_compare_ranges_as_sent(fake, make_ctx, server):
    args = {"metrics": ["sessions", "engagementRate"], "dimensions": ["sessionDefaultChannelGroup", "landingPage"],
            "dimension_filters": [{"field": "sessionDefaultChannelGroup", "match_type": "IN_LIST", "values": ["Direct", "Email"]},
                                  {"field": "landingPage", "match_type": "BEGINS_WITH", "value": "/blog", "not": True}],
            "metric_filters": [{"field": "sessions", "operation": "GREATER_THAN", "value": 100}],
            "order_bys": [{"field": "sessions", "desc": True}], "limit": 3,
            "compare_start_date": "56daysAgo", "compare_end_date": "29daysAgo"}
    ex = run_report(RunReportArguments.parse(args), make_ctx())
    body = _rr(server)[0].body
    assert body["dimensionFilter"] == {"andGroup": {"expressions": [
        {"filter": {"fieldName": "sessionDefaultChannelGroup", "inListFilter": {"values": ["Direct", "Email"]}}},
        {"notExpression": {"filter": {"fieldName": "landingPage", "stringFilter": {"matchType": 2, "value": "/blog"}}}}]}}
    assert body["metricFilter"] == {"filter": {"fieldName": "sessions", "numericFilter": {"operation": 4, "value": {"doubleValue": 100.0}}}}
    assert body["orderBys"] == [{"metric": {"metricName": "sessions"}, "desc": True}]
    assert body["dateRanges"] == [{"startDate": "28daysAgo", "endDate": "yesterday", "name": "current"},
                                  {"startDate": "56daysAgo", "endDate": "29daysAgo", "name": "compare"}]
    assert body["limit"] == "3"
    assert ex.columns == ["sessionDefaultChannelGroup", "landingPage", "dateRange", "sessions", "engagementRate"]
    assert len(ex.rows) == 3 and [r[3] for r in ex.rows] == sorted((r[3] for r in ex.rows), reverse=True)
    assert all(r[0] in ("Direct", "Email") and not r[1].startswith("/blog") and r[3] > 100 for r in ex.rows)
    assert any("Extracted the first 3 of" in w for w in ex.warnings)
    assert "compare_totals" in ex.extra and len(ex.dates) == 4
    assert 'Filter: dimension_filters [{"field":"sessionDefaultChannelGroup"' in ex.description


def test_thresholding_sampling_and_other_row_become_warnings(fake, make_ctx):
    prop = fake.properties["123456789"]
    prop.thresholded, prop.other_row, prop.sampled = True, True, (5000, 20000)
    ex = run_report(RunReportArguments.parse({"metrics": ["sessions"], "dimensions": ["pagePath"]}), make_ctx())
    text = " ".join(ex.warnings)
    assert "'(other)' row" in text and "thresholding" in text and "5000 of 20000 events read (25.0%)" in text


@pytest.mark.parametrize("args, match", [
    ({"metrics": []}, r"^Invalid metrics: must have at least 1 item\(s\)\."),
    ({"metrics": ["sessions"], "start_date": "last week"}, "^Invalid start_date: is not a valid date"),
    ({"metrics": ["sessions"], "limit": 0}, r"^Invalid limit: must be at least 1\."),
    ({"metrics": ["sessions"], "dimension_filters": [{"field": "pagePath", "match_type": "FULL_REGEXP", "value": "(["}]},
     "invalid regular expression"),
    ({"metrics": ["sessions"], "order_bys": [{"field": "country"}]}, "not among the requested"),
    ({"metrics": ["sessions"], "compare_start_date": "60daysAgo"}, "both compare_start_date and compare_end_date"),
])
def test_bad_arguments_are_invalid_arguments_before_any_request(fake, make_ctx, server, args, match):
    with pytest.raises(InvalidArguments, match=match):
        run_report(RunReportArguments.parse(args), make_ctx())
    assert not _rr(server)


def test_progress_counts_rows_of_row_count_and_a_cancel_stops_paging(make_ctx, server):
    # Issue 28: rows fetched of rowCount per page; a cancelled call fetches no further page.
    from analytics_acp.kit import RecordingSignals
    from analytics_acp.signals import CallSignals

    build_fake(server, page_size=37)  # several pages
    args = {"metrics": ["sessions"], "dimensions": ["date", "sessionDefaultChannelGroup", "deviceCategory"]}
    signals = RecordingSignals()
    ctx = make_ctx(signals=signals)
    ex = read_to_the_end(_run_report(RunReportArguments.parse(args), ctx))
    total = len(ex.rows)
    assert [s[1] for s in signals.seen] == [total] * len(signals.seen)
    assert [s[0] for s in signals.seen] == sorted({s[0] for s in signals.seen}) and signals.seen[-1][0] == total

    assert len(signals.seen) == len(_rr(server)) > 1  # one report per page
    sent_before = len(_rr(server))
    signals = CallSignals()
    ex = _run_report(RunReportArguments.parse(args), make_ctx(signals=signals))
    rows = iter(ex.rows)
    next(rows)
    signals.cancel()
    with pytest.raises(UpstreamError, match="cancelled"):
        list(rows)
    assert len(_rr(server)) - sent_before == 1  # the first page only
