"""Pure pieces of the gsc connector: PT dates at a fixed clock, property ids, planner, totals, join, order_by."""

from __future__ import annotations

import datetime as dt

import pytest
from analytics_acp import InvalidArguments
from analytics_acp_gsc import budget, compare, dates, planner, query, resource_ids
from analytics_acp_gsc.arguments import ComparePeriodsArguments, InspectUrlsArguments, SearchAnalyticsArguments
from gscfake import NOW


@pytest.fixture
def clock(monkeypatch):
    monkeypatch.setattr(dates, "now_utc", lambda: NOW)


def test_pacific_days_at_a_fixed_clock(clock):
    # 05:30 UTC on the 25th is 22:30 PDT on the 24th: "today" is Search Console's day, not the machine's.
    assert dates.today_pt() == dt.date(2026, 9, 24)
    assert dates.resolve("today", "end_date") == "2026-09-24"
    assert dates.resolve("yesterday", "end_date") == "2026-09-23"
    assert dates.resolve("28daysAgo", "start_date") == "2026-08-27"
    assert dates.resolve("20260901", "start_date") == "2026-09-01"
    assert dates.first_available_date() == dt.date(2025, 5, 24)
    assert dates.usual_last_final_date() == dt.date(2026, 9, 21)


def test_default_window_is_one_month_ending_on_the_last_final_day(clock):
    # 15.2: last final day 2026-09-22 -> 2026-08-22 .. 2026-09-22
    assert dates.window(None, None, dt.date(2026, 9, 22)) == ("2026-08-22", "2026-09-22")
    assert dates.window("7daysAgo", None, dt.date(2026, 9, 22)) == ("2026-09-17", "2026-09-22")
    assert dates.window(None, "2026-03-31", dt.date(2026, 9, 22)) == ("2026-02-28", "2026-03-31")
    with pytest.raises(InvalidArguments, match="after end_date"):
        dates.window("today", "3daysAgo", dt.date(2026, 9, 22))
    assert dates.previous_window("2026-09-01", "2026-09-07") == ("2026-08-25", "2026-08-31")


def test_window_warnings_name_retention_and_future(clock):
    text = " ".join(dates.window_warnings("2025-01-01", "2026-09-30"))
    assert "16 months" in text and "2025-05-24" in text and "after today in Pacific Time (2026-09-24)" in text


@pytest.mark.parametrize(("raw", "expected"), [
    ("https://WWW.Example.com", "https://www.example.com/"),
    ("https://www.example.com/blog", "https://www.example.com/blog/"),
    ("HTTP://example.com/", "http://example.com/"),
    ("sc-domain:Example.COM", "sc-domain:example.com"),
    ("  sc-domain:example.com/ ", "sc-domain:example.com"),
])
def test_property_ids_normalize(raw, expected):
    prop = resource_ids.parse(raw)
    assert prop.id == expected and not prop.bare


def test_bare_host_prefers_the_visible_form():
    prop = resource_ids.parse("Example.com")
    assert prop.bare and prop.id == "sc-domain:example.com"
    assert resource_ids.resolve_bare(prop, ["sc-domain:example.com", "https://example.com/"]) == "sc-domain:example.com"
    assert resource_ids.resolve_bare(prop, ["https://www.example.com/"]) == "https://www.example.com/"
    assert resource_ids.resolve_bare(prop, ["https://other.com/"]) == "sc-domain:example.com"
    text = resource_ids.describe_alternatives("sc-domain:example.com", ["https://www.example.com/", "https://x.org/"])
    assert "https://www.example.com/ (URL-prefix property)" in text and "x.org" not in text


@pytest.mark.parametrize("raw", ["ftp://example.com/", "https://example.com/?q=1", "not a site", "example.com/path", ""])
def test_bad_property_ids_are_invalid_arguments(raw):
    with pytest.raises(InvalidArguments, match="sc-domain:example.com"):
        resource_ids.parse(raw)


def _pages(rows_total: int, ceiling: int):
    """A fake fetch: `rows_total` rows by clicks desc, at most `ceiling` reachable per request window."""
    sent = []

    def fetch(body):
        sent.append(body)
        n_days = (dt.date.fromisoformat(body["endDate"]) - dt.date.fromisoformat(body["startDate"])).days + 1
        reachable = min(rows_total * n_days, ceiling)
        rows = [{"keys": [f"q{i}", body["startDate"]], "clicks": 1000 - i, "impressions": 2000, "ctr": 0.5, "position": 2.0}
                for i in range(reachable)][body["startRow"]:body["startRow"] + body["rowLimit"]]
        return {"rows": rows}
    return fetch, sent


def test_planner_pages_until_a_short_page():
    fetch, sent = _pages(23, 10_000)
    plan = planner.extract(fetch, {"dimensions": ["query"]}, start="2026-09-01", end="2026-09-01", has_date=False, page_size=5)
    # Two requests in flight after a full first page: the one beyond the short page (startRow 25) may have been sent.
    assert sorted(b["startRow"] for b in sent) in ([0, 5, 10, 15, 20], [0, 5, 10, 15, 20, 25])
    assert plan.requests >= 5
    assert all(b["rowLimit"] == 5 for b in sent) and len(plan.rows) == 23 and not plan.split_by_day
    assert [r["keys"][0] for r in plan.rows] == [f"q{i}" for i in range(23)]  # the API's order
    fetch, sent = _pages(4, 10_000)  # a single short page: nothing speculative
    assert len(planner.extract(fetch, {}, start="2026-09-01", end="2026-09-01", has_date=False, page_size=5).rows) == 4
    assert len(sent) == 1


def test_planner_keeps_the_next_page_in_flight_and_hands_pages_over_in_order():
    # Page 5 is only answered once the request for page 10 has arrived: sequential paging would wait forever
    # (bounded here), so this proves the API prepares the next page while one is being read.
    import threading

    fetch_inner, sent = _pages(23, 10_000)
    page10_sent = threading.Event()

    def fetch(body):
        if body["startRow"] == 10:
            page10_sent.set()
        elif body["startRow"] == 5:
            assert page10_sent.wait(10), "the request for page 10 was not sent while page 5 was pending"
        return fetch_inner(body)

    seen: list[list[str]] = []
    window = planner.fetch_window(fetch, {"startDate": "2026-09-01", "endDate": "2026-09-01"}, page_size=5,
                                  on_page=lambda page: seen.append([r["keys"][0] for r in page]))
    assert [k for page in seen for k in page] == [f"q{i}" for i in range(23)] and len(seen) == 5
    assert window.rows == [] and window.count == 23  # handed to on_page, not kept twice


def test_planner_splits_by_day_at_the_ceiling_and_warns_about_capped_days():
    fetch, sent = _pages(4, 6)  # 4 rows a day, 6 reachable per query: a 3-day window is capped
    plan = planner.extract(fetch, {"dimensions": ["query", "date"]}, start="2026-09-01", end="2026-09-03",
                           has_date=True, row_ceiling=6, page_size=5)
    assert plan.split_by_day and len(plan.rows) == 12
    window = [b for b in sent if b["startDate"] != b["endDate"]]  # a full page, then two in flight
    assert sorted(b["startRow"] for b in window) in ([0, 5], [0, 5, 10])
    assert sorted((b["startDate"], b["endDate"]) for b in sent if b["startDate"] == b["endDate"]) == [("2026-09-01", "2026-09-01")] * 1 + [
        ("2026-09-02", "2026-09-02"), ("2026-09-03", "2026-09-03")]
    assert "fetched day by day (3 days" in plan.warnings[0] and not plan.capped_days
    fetch, _ = _pages(10, 6)  # even one day exceeds the ceiling
    plan = planner.extract(fetch, {}, start="2026-09-01", end="2026-09-02", has_date=True, row_ceiling=6, page_size=5)
    assert plan.capped_days == ["2026-09-01", "2026-09-02"] and "Even a single day" in plan.warnings[-1]


def test_merging_days_sums_and_weights_position():
    merged = planner.merge_days([
        [{"keys": ["a"], "clicks": 1, "impressions": 10, "position": 2.0}],
        [{"keys": ["a"], "clicks": 3, "impressions": 30, "position": 6.0}, {"keys": ["b"], "clicks": 9, "impressions": 9, "position": 1.0}],
    ])
    assert planner.by_clicks(merged) == [
        {"keys": ["b"], "clicks": 9.0, "impressions": 9.0, "ctr": 1.0, "position": 1.0},
        {"keys": ["a"], "clicks": 4.0, "impressions": 40.0, "ctr": 0.1, "position": 5.0},
    ]


def test_row_cap_stops_paging():
    fetch, sent = _pages(50, 10_000)
    plan = planner.extract(fetch, {}, start="2026-09-01", end="2026-09-01", has_date=False, row_cap=7, page_size=5)
    assert len(plan.rows) == 7 and len(sent) == 2 and plan.row_cap_applied


def _query(args):
    return query.query_of(SearchAnalyticsArguments.parse(args))


def test_query_rules_are_invalid_arguments_with_the_rule():
    """Search Console's combination rules are validators of the argument model (issue 38.1)."""
    with pytest.raises(InvalidArguments, match="searchAppearance cannot be combined"):
        _query({"dimensions": ["query", "searchAppearance"]})
    with pytest.raises(InvalidArguments, match="hourly_all"):
        _query({"dimensions": ["hour"]})
    with pytest.raises(InvalidArguments, match="byProperty"):
        _query({"dimensions": ["query"], "filters": [{"dimension": "page", "expression": "/x"}], "aggregation_type": "byProperty"})
    with pytest.raises(InvalidArguments, match=r"^Invalid filters\.0\.operator: must be one of equals, notEquals"):
        _query({"filters": [{"dimension": "page", "operator": "like", "expression": "x"}]})
    with pytest.raises(InvalidArguments, match=r"^Invalid filters\.0: missing required argument\(s\) expression\."):
        _query({"filters": [{"dimension": "page"}]})
    with pytest.raises(InvalidArguments, match=r"^Invalid filters\.0: unknown key value\. Accepted: dimension, operator, expression\."):
        _query({"filters": [{"dimension": "page", "value": "/x", "expression": "/x"}]})
    with pytest.raises(InvalidArguments, match="has no queries"):
        _query({"search_type": "discover"})
    with pytest.raises(InvalidArguments, match=r"^Invalid dimensions: must not repeat a dimension\."):
        _query({"dimensions": ["page", "page"]})
    # Filter items are published as plain objects: their names match regardless of case.
    q = _query({"dimensions": ["page"], "filters": [{"dimension": "QUERY", "operator": "CONTAINS", "expression": "ga4"}],
                "search_type": "image", "data_state": "all"})
    assert q.body() == {"dimensions": ["page"], "type": "image", "dataState": "all",
                        "dimensionFilterGroups": [{"groupType": "and", "filters": [{"dimension": "query", "operator": "contains", "expression": "ga4"}]}]}
    assert q.totals_body()["dimensions"] == [] and q.totals_body()["aggregationType"] == "byPage"


def test_compare_periods_refuses_time_dimensions_and_half_a_window():
    with pytest.raises(InvalidArguments, match="date and hour cannot be dimensions. Use search_analytics"):
        ComparePeriodsArguments.parse({"dimensions": ["date"]})
    with pytest.raises(InvalidArguments, match="^Give both compare_start_date and compare_end_date, or neither"):
        ComparePeriodsArguments.parse({"compare_start_date": "2026-01-01"})
    with pytest.raises(InvalidArguments, match=r"^Invalid compare_end_date: is not a valid date\."):
        ComparePeriodsArguments.parse({"compare_start_date": "2026-01-01", "compare_end_date": "Jan 3"})


def test_inspect_urls_needs_absolute_urls_or_a_table():
    with pytest.raises(InvalidArguments, match="^Give urls"):
        InspectUrlsArguments.parse({"urls": ["  "]})
    with pytest.raises(InvalidArguments, match="^url_column only applies with table_ref"):
        InspectUrlsArguments.parse({"urls": ["https://a.com/"], "url_column": "u"})
    with pytest.raises(InvalidArguments, match="^Invalid urls: URLs must be absolute http\\(s\\) URLs; not valid: /blog/"):
        InspectUrlsArguments.parse({"urls": ["/blog/"]})
    with pytest.raises(InvalidArguments, match=r"^Invalid urls: must have at most 600 item\(s\)\."):
        InspectUrlsArguments.parse({"urls": [f"https://a.com/{i}" for i in range(601)]})
    assert InspectUrlsArguments.published_schema()["properties"]["urls"]["maxItems"] == budget.MINUTE_LIMIT


def test_headers_exactly_as_15_2():
    q = _query({"dimensions": ["query"]})
    assert [h.to_json() for h in query.headers(q)] == [
        {"name": "query", "type": "string", "role": "dimension", "description": "Search query"},
        {"name": "clicks", "type": "integer", "role": "metric"},
        {"name": "impressions", "type": "integer", "role": "metric"},
        {"name": "ctr", "type": "number", "role": "metric", "description": "Fraction 0-1"},
        {"name": "position", "type": "number", "role": "metric", "description": "Average position weighted by impressions"},
    ]


def test_provisional_flag_from_first_incomplete_date_and_hour():
    q = _query({"dimensions": ["date"], "data_state": "all"})
    convert = query.row_converter(q, "2026-09-23", None)
    assert convert({"keys": ["2026-09-22"], "clicks": 3, "impressions": 10, "ctr": 0.3, "position": 4.26})[-1] is False
    assert convert({"keys": ["2026-09-23"], "clicks": 3, "impressions": 10, "ctr": 0.3, "position": 4.26}) == ("2026-09-23", 3, 10, 0.3, 4.26, True)
    q = _query({"dimensions": ["hour"], "data_state": "hourly_all"})
    convert = query.row_converter(q, None, "2026-09-24T13:00:00-07:00")
    assert convert({"keys": ["2026-09-24T12:00:00-07:00"], "clicks": 1, "impressions": 2, "ctr": 0.5, "position": 1})[-1] is False
    assert convert({"keys": ["2026-09-24T21:00:00+00:00"], "clicks": 1, "impressions": 2, "ctr": 0.5, "position": 1})[-1] is True
    assert "provisional" not in [h.name for h in query.headers(_query({"dimensions": ["date"]}))]


def test_totals_come_from_the_aggregate_row():
    assert query.totals_from({"rows": [{"clicks": 20931, "impressions": 1402211, "ctr": 0.01492, "position": 18.43}]}) == {
        "clicks": 20931, "impressions": 1402211, "ctr": 0.0149, "position": 18.43}
    assert query.totals_from({}) == {"clicks": 0, "impressions": 0, "ctr": None, "position": None}


def test_order_by_sorts_everything_nulls_last():
    cols = ["query", "clicks", "position"]
    order = SearchAnalyticsArguments.parse({"order_by": ["position", "-clicks"]}).order()
    assert order == [("position", False), ("clicks", True)]
    rows = [("a", 1, 3.0), ("b", 5, None), ("c", 9, 3.0), ("d", 2, 1.5)]
    assert query.sort_rows(rows, order, cols) == [("d", 2, 1.5), ("c", 9, 3.0), ("a", 1, 3.0), ("b", 5, None)]
    with pytest.raises(InvalidArguments, match="order_by 'sessions desc' is not valid"):
        SearchAnalyticsArguments.parse({"order_by": ["sessions desc"]})
    with pytest.raises(InvalidArguments, match="order_by 'provisional' is not valid"):  # only with fresh daily rows
        SearchAnalyticsArguments.parse({"order_by": ["provisional"]})
    assert SearchAnalyticsArguments.parse({"dimensions": ["date"], "data_state": "all", "order_by": ["provisional"]}).order()


def test_compare_join_keeps_rows_of_one_window_with_nulls():
    cur = [{"keys": ["a"], "clicks": 10, "impressions": 100, "ctr": 0.1, "position": 3.0},
           {"keys": ["new"], "clicks": 4, "impressions": 40, "ctr": 0.1, "position": 8.0}]
    prev = [{"keys": ["gone"], "clicks": 7, "impressions": 70, "ctr": 0.1, "position": 9.0},
            {"keys": ["a"], "clicks": 6, "impressions": 120, "ctr": 0.05, "position": 4.5}]
    rows = compare.join(cur, prev, 1)
    assert rows[0] == ("a", 10, 6, 4, 100, 120, -20, 0.1, 0.05, 0.05, 3.0, 4.5, -1.5)
    assert rows[1] == ("new", 4, None, None, 40, None, None, 0.1, None, None, 8.0, None, None)
    assert rows[2] == ("gone", None, 7, None, None, 70, None, None, 0.1, None, None, 9.0, None)


def test_start_up_imports_no_google_client():
    """The server declares itself without importing googleapiclient or google-auth (they load on the first call)."""
    import subprocess
    import sys

    code = ("import sys, analytics_acp_gsc.plugin as p; p.connector_declaration(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('google', 'googleapiclient', 'httplib2', 'google_auth_httplib2')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_connector_ready_imports_the_client_the_first_call_needs():
    """Issue 26.6: the post-initialize warm-up hook imports googleapiclient (start-up does not)."""
    import subprocess
    import sys

    code = ("import sys\nfrom analytics_acp.plugins import load_connector\nloaded = load_connector('gsc', extensions=False)\n"
            "before = 'googleapiclient.discovery' in sys.modules\nloaded.hook.connector_ready()\n"
            "print(before, 'googleapiclient.discovery' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
