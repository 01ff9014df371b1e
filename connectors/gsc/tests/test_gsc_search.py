"""search_analytics through google-api-python-client against the fake Search Console on 127.0.0.1."""

from __future__ import annotations

import pytest
from analytics_acp import InvalidArguments, UpstreamError
from analytics_acp.kit import RecordingSignals
from analytics_acp_gsc import planner
from analytics_acp_gsc.arguments import SearchAnalyticsArguments
from analytics_acp_gsc.search_analytics import run_search_analytics
from gscfake import DOMAIN, rows_of


def test_default_window_types_and_totals_from_an_aggregate_query(env, ctx_for):
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["query"]}), ctx_for())
    # 15.2: no dates -> one month ending on the last day with final data (the fake's 2026-09-22), in PT.
    assert out.dates == ["2026-08-22", "2026-09-22"]
    assert out.arguments == {"dimensions": ["query"], "filters": [], "start_date": "2026-08-22", "end_date": "2026-09-22",
                             "search_type": "web", "data_state": "final"}
    rows = rows_of(out)
    assert len(rows) == 40 and out.columns == ["query", "clicks", "impressions", "ctr", "position"]
    assert [r["clicks"] for r in rows] == sorted((r["clicks"] for r in rows), reverse=True)  # the API's order
    assert all(isinstance(r["clicks"], int) and isinstance(r["ctr"], float) for r in rows)
    sent = env.queries(DOMAIN)
    probe, pages, aggregate = sent[0].body, sent[1].body, sent[-1].body
    assert probe["dimensions"] == ["date"] and probe["endDate"] == "2026-09-24"  # the freshness probe, PT today
    assert pages == {"dimensions": ["query"], "type": "web", "startDate": "2026-08-22", "endDate": "2026-09-22",
                     "rowLimit": 25000, "startRow": 0}
    assert aggregate["dimensions"] == [] and aggregate["startDate"] == "2026-08-22"
    # Totals are Google's numbers for the whole window, not sums of the rows we kept.
    assert out.totals["clicks"] == sum(r["clicks"] for r in rows)
    assert out.totals["ctr"] == round(out.totals["clicks"] / out.totals["impressions"], 4)
    assert sent[0].headers["Authorization"] == "Bearer <redacted>" and sent[0].identity.endswith("gserviceaccount.com")


def test_paging_over_several_pages_with_start_row(env, ctx_for, monkeypatch):
    monkeypatch.setattr(planner, "PAGE_SIZE", 7)
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["query", "date"], "start_date": "2026-09-01", "end_date": "2026-09-03"}), ctx_for())
    rows = rows_of(out)
    assert len(rows) == 120  # 40 queries x 3 days
    paging = [r.body for r in env.queries(DOMAIN) if r.body["dimensions"] == ["query", "date"]]
    # Two in flight once a page came back full: startRow 126, beyond the short page, may have been sent.
    assert sorted(b["startRow"] for b in paging) in (list(range(0, 126, 7)), list(range(0, 133, 7)))
    assert {b["rowLimit"] for b in paging} == {7}
    assert len({(r["query"], r["date"]) for r in rows}) == 120


def test_day_splitting_when_the_window_reaches_the_row_ceiling(env, ctx_for):
    env.gsc.row_ceiling = 50  # the fake exposes 50 rows per query; 40 queries a day
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["query", "date"], "start_date": "2026-09-01", "end_date": "2026-09-03"}),
                               ctx_for(config={"row_ceiling": 1000}))
    assert len(rows_of(out)) == 50  # ceiling not assumed at 50: no split, honest about what came back
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["query", "date"], "start_date": "2026-09-01", "end_date": "2026-09-03"}),
                               ctx_for(config={"row_ceiling": 50}))
    rows = rows_of(out)
    assert len(rows) == 120 and out.source["split_by_day"]
    days = sorted((r.body["startDate"], r.body["endDate"]) for r in env.queries(DOMAIN)[-4:-1])  # fetched 4 at a time
    assert days == [("2026-09-01", "2026-09-01"), ("2026-09-02", "2026-09-02"), ("2026-09-03", "2026-09-03")]
    assert any("fetched day by day (3 days" in w for w in out.warnings)


def test_day_splitting_merges_keys_and_warns_when_a_single_day_is_capped(env, ctx_for):
    env.gsc.row_ceiling = 30
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["query"], "start_date": "2026-09-01", "end_date": "2026-09-02"}),
                               ctx_for(config={"row_ceiling": 30}))
    rows = rows_of(out)
    assert len({r["query"] for r in rows}) == len(rows) > 30  # merged over days, more than one query could reach
    assert any("Even a single day" in w and "2026-09-01, 2026-09-02" in w for w in out.warnings)


def test_day_slices_are_fetched_with_bounded_concurrency(env, ctx_for):
    env.gsc.row_ceiling = 30
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["query", "date"], "start_date": "2026-09-01", "end_date": "2026-09-12"}),
                               ctx_for(config={"row_ceiling": 30}))
    assert out.source["split_by_day"] and len(out.rows) == 12 * 30  # each day capped at 30 by the fake
    assert 1 <= env.gsc.max_queries_in_flight <= planner.DAY_CONCURRENCY
    assert sorted({r.body["startDate"] for r in env.queries(DOMAIN)[1:-1]}) == [f"2026-09-{d:02d}" for d in range(1, 13)]


def test_provisional_days_with_data_state_all(env, ctx_for):
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["date"], "data_state": "all", "start_date": "7daysAgo", "end_date": "today"}), ctx_for())
    rows = rows_of(out)
    assert out.dates == ["2026-09-17", "2026-09-24"]  # PT today at the fixed clock, though UTC is already the 25th
    assert [r["date"] for r in rows if r["provisional"]] == ["2026-09-24", "2026-09-23"] or \
        sorted(r["date"] for r in rows if r["provisional"]) == ["2026-09-23", "2026-09-24"]
    assert all(r["provisional"] is False for r in rows if r["date"] <= "2026-09-22")
    assert any("2026-09-23 on is provisional" in w for w in out.warnings)
    assert env.queries(DOMAIN)[-2].body["dataState"] == "all"


def test_filters_search_type_and_order_by_sort_the_whole_extraction(env, ctx_for, monkeypatch):
    monkeypatch.setattr(planner, "PAGE_SIZE", 5)
    args = {"dimensions": ["query"], "filters": [{"dimension": "page", "operator": "contains", "expression": "/blog/"}],
            "start_date": "2026-09-01", "end_date": "2026-09-07", "order_by": ["position asc"], "row_cap": 3}
    out = run_search_analytics(SearchAnalyticsArguments.parse(args), ctx_for())
    rows = rows_of(out)
    assert len(rows) == 3 and [r["position"] for r in rows] == sorted(r["position"] for r in rows)
    every = rows_of(run_search_analytics(SearchAnalyticsArguments.parse({**args, "order_by": None, "row_cap": None}), ctx_for()))
    assert rows == sorted(every, key=lambda r: r["position"])[:3]  # the best positions of all pages, not of page 1
    body = env.queries(DOMAIN)[1].body
    assert body["dimensionFilterGroups"] == [{"groupType": "and", "filters": [
        {"dimension": "page", "operator": "contains", "expression": "/blog/"}]}]


def test_search_appearance_rule_is_an_invalid_argument_before_any_request(env, ctx_for):
    with pytest.raises(InvalidArguments, match="Step 1: group by searchAppearance alone"):
        run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["searchAppearance", "page"]}), ctx_for())
    assert env.queries() == []


def test_hourly_data_is_flagged_from_first_incomplete_hour(env, ctx_for):
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["hour"], "data_state": "hourly_all", "start_date": "yesterday",
                                "end_date": "today"}), ctx_for())
    rows = rows_of(out)
    assert out.dates == ["2026-09-23", "2026-09-24"] and out.columns[-1] == "provisional"
    assert all(r["provisional"] for r in rows)  # the fake's first incomplete hour is 2026-09-23T00:00 PT
    assert any("Hourly data from 2026-09-23T00:00:00-07:00 on is provisional" in w for w in out.warnings)
    assert env.queries(DOMAIN)[-2].body["dataState"] == "hourly_all"
    older = rows_of(run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["hour"], "data_state": "hourly_all", "start_date": "2026-09-21",
                                          "end_date": "2026-09-22"}), ctx_for()))
    assert older and not any(r["provisional"] for r in older)


def test_progress_per_response_and_a_cancel_stops_the_next_requests(env, ctx_for, monkeypatch):
    # Issue 28: pages and days report progress; a cancelled call sends no further request.
    monkeypatch.setattr(planner, "PAGE_SIZE", 7)
    args = {"dimensions": ["query", "date"], "start_date": "2026-09-01", "end_date": "2026-09-03"}
    signals = RecordingSignals()
    rows_of(run_search_analytics(SearchAnalyticsArguments.parse(args), ctx_for(signals=signals)))
    counts = [s[0] for s in signals.seen]
    assert counts == list(range(1, len(counts) + 1)) and len(counts) >= 18  # one per response, in order
    assert signals.seen[-1][2].startswith("120 rows in")
    before = len(env.queries(DOMAIN))
    signals = RecordingSignals(cancel_after=2)
    with pytest.raises(UpstreamError, match="cancelled"):
        run_search_analytics(SearchAnalyticsArguments.parse(args), ctx_for(signals=signals))
    assert len(env.queries(DOMAIN)) - before <= 2 + 3  # the probe, two pages and at most the pages in flight
