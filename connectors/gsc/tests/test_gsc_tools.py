"""compare_periods, inspect_urls (budget ledger, bounded concurrency, table_ref) and sitemaps against the fake."""

from __future__ import annotations

import threading

import anyio
import pytest
from analytics_acp import HostTable, InvalidArguments, NoArguments, UpstreamError
from analytics_acp_gsc import budget, inspection
from analytics_acp_gsc.arguments import ComparePeriodsArguments, InspectUrlsArguments
from analytics_acp_gsc.compare import run_compare_periods
from analytics_acp_gsc.inspection import run_inspect_urls
from analytics_acp_gsc.sitemaps import run_sitemaps
from gscfake import DOMAIN, rows_of


def test_compare_periods_joins_two_windows(env, ctx_for):
    out = run_compare_periods(ComparePeriodsArguments.parse({"dimensions": ["page"], "start_date": "2026-09-15", "end_date": "2026-09-21"}), ctx_for("compare_periods"))
    assert out.dates == ["2026-09-15", "2026-09-21", "2026-09-08", "2026-09-14"]  # default: the previous 7 days
    rows = rows_of(out)
    assert out.columns[:4] == ["page", "clicks", "clicks_previous", "clicks_change"] and len(rows) == 12
    windows = sorted({(r.body["startDate"], r.body["endDate"]) for r in env.queries(DOMAIN)})
    assert ("2026-09-08", "2026-09-14") in windows and ("2026-09-15", "2026-09-21") in windows
    for r in rows:
        assert r["clicks_change"] == r["clicks"] - r["clicks_previous"]
        assert r["position_change"] == round(r["position"] - r["position_previous"], 2)
    assert out.totals["clicks_change"] == out.totals["clicks"] - out.totals["clicks_previous"]
    assert out.arguments["compare_start_date"] == "2026-09-08"


def test_compare_periods_keeps_rows_of_one_window(env, ctx_for):
    # The previous window lies before the property's first day of data: every row exists only now.
    args = {"dimensions": ["query"], "start_date": "2026-07-24", "end_date": "2026-07-26",
            "compare_start_date": "2026-06-01", "compare_end_date": "2026-06-03"}
    env.gsc.sites[DOMAIN].first_date = env.gsc.sites[DOMAIN].first_date.replace(month=7, day=25)
    rows = rows_of(run_compare_periods(ComparePeriodsArguments.parse(args), ctx_for("compare_periods")))
    assert rows and all(r["clicks_previous"] is None and r["clicks_change"] is None for r in rows)
    with pytest.raises(InvalidArguments, match="date and hour cannot be"):
        ComparePeriodsArguments.parse({"dimensions": ["date"]})


def test_inspect_urls_rows_are_typed_and_400_is_a_row_error(env, ctx_for):
    urls = ["https://example.com/blog/p0", "https://example.com/shop/p1", "https://elsewhere.org/x"]
    out = run_inspect_urls(InspectUrlsArguments.parse({"urls": urls + [urls[0]], "language_code": "en-US"}), ctx_for("inspect_urls"))
    rows = rows_of(out)
    assert [r["url"] for r in rows] == urls  # de-duplicated, in order
    assert rows[0]["last_crawl_time"] == "2026-09-20T08:15:30Z" and rows[0]["rich_results_types"] == ["Breadcrumbs"]
    assert rows[2]["verdict"] is None and "does not belong to the property" in rows[2]["error"]
    assert "1 of 3 URLs could not be inspected" in out.warnings[0]
    sent = env.server.requests_to("urlInspection", "POST")
    assert sorted(r.body["inspectionUrl"] for r in sent) == sorted(urls)
    assert all(r.body["siteUrl"] == DOMAIN and r.body["languageCode"] == "en-US" for r in sent)


def test_inspections_run_concurrently_but_bounded(env, ctx_for, monkeypatch):
    monkeypatch.setattr(inspection, "CONCURRENCY", 3)
    env.gsc.barrier = threading.Barrier(2)  # breaks (after 5 s) unless two inspections overlap
    urls = [f"https://example.com/blog/p{i}" for i in range(12)]
    out = run_inspect_urls(InspectUrlsArguments.parse({"urls": urls}), ctx_for("inspect_urls"))
    assert len(rows_of(out)) == 12
    assert not env.gsc.barrier.broken and 2 <= env.gsc.max_in_flight <= 3
    assert [i["grant_type"] for i in env.oauth.issued] == ["jwt-bearer"]  # one token for every thread


def test_budget_ledger_refuses_before_exceeding_the_daily_quota(env, ctx_for, tmp_path):
    for i, n in enumerate([600, 600, 600, 198]):  # 1,998 used earlier today, a minute apart
        budget.Ledger(tmp_path / "cache", clock=lambda i=i: 100.0 * i).reserve(DOMAIN, n)
    with pytest.raises(UpstreamError) as info:
        run_inspect_urls(InspectUrlsArguments.parse({"urls": [f"https://example.com/blog/p{i}" for i in range(3)]}), ctx_for("inspect_urls"))
    assert "2,000 inspections a day" in info.value.message and "at most 2 URLs" in info.value.message
    assert "midnight Pacific Time (in 1 h 30 min)" in info.value.message  # 22:30 PDT at the fixed clock
    assert env.server.requests_to("urlInspection") == []  # refused before anything was sent
    out = run_inspect_urls(InspectUrlsArguments.parse({"urls": ["https://example.com/blog/p0", "https://example.com/blog/p1"]}), ctx_for("inspect_urls"))
    assert out.extra["inspections_used_today"] == 2000
    # The ledger is a file in ACP_CACHE_DIR, per property, without credentials.
    text = (tmp_path / "cache" / "gsc" / "inspection-ledger.json").read_text()
    assert DOMAIN in text and "private_key" not in text and "BEGIN" not in text


def test_budget_ledger_minute_window_and_next_day(monkeypatch, tmp_path):
    from analytics_acp_gsc import dates
    from gscfake import NOW

    now = [1000.0]
    monkeypatch.setattr(dates, "now_utc", lambda: NOW)
    ledger = budget.Ledger(tmp_path, clock=lambda: now[0])
    ledger.reserve("sc-domain:a.com", 590)
    with pytest.raises(UpstreamError, match="600 inspections a minute.*Retry in 61 s"):
        ledger.reserve("sc-domain:a.com", 20)
    ledger.reserve("sc-domain:b.com", 20)  # per property
    now[0] += 61
    ledger.reserve("sc-domain:a.com", 20)
    assert ledger.used("sc-domain:a.com") == (610, 20)
    ledger.release("sc-domain:a.com", 5)
    assert ledger.used("sc-domain:a.com") == (605, 15)
    import datetime as dt

    monkeypatch.setattr(dates, "now_utc", lambda: NOW + dt.timedelta(hours=2))  # past midnight PT: a new day
    assert ledger.used("sc-domain:a.com")[0] == 0


def test_a_call_level_failure_gives_unsent_inspections_back(env, ctx_for, tmp_path, monkeypatch):
    from googlefakes.server import google_error
    from gscfake import INSPECT

    monkeypatch.setattr(inspection, "CONCURRENCY", 1)
    env.server.fail("POST", INSPECT, (200, {"inspectionResult": {}}),
                    (429, google_error(429, "Quota exceeded for quota metric 'URL inspections per minute'")))
    with pytest.raises(UpstreamError, match="quota"):
        run_inspect_urls(InspectUrlsArguments.parse({"urls": [f"https://example.com/blog/p{i}" for i in range(6)]}), ctx_for("inspect_urls"))
    sent = len(env.server.requests_to("urlInspection"))
    # One at a time: the 200, the 429, then nothing more is sent (the stop is set in the worker, so a
    # slow caller cannot let the pool go on), and the four unsent inspections go back to the budget.
    assert sent == 2 and budget.Ledger(tmp_path / "cache").used(DOMAIN)[0] == sent


async def test_inspect_urls_from_a_host_table(env, ctx_for):
    table = HostTable(ref="ds_pages", headers=[{"name": "page", "type": "string"}, {"name": "clicks", "type": "integer"}],
                      rows=[{"page": "https://example.com/blog/p2", "clicks": 5}, {"page": "https://example.com/blog/p4", "clicks": 3}])
    ctx = ctx_for("inspect_urls", tables={"ds_pages": table})
    out = await anyio.to_thread.run_sync(run_inspect_urls, InspectUrlsArguments.parse({"table_ref": "ds_pages"}), ctx)
    assert [r["url"] for r in rows_of(out)] == ["https://example.com/blog/p2", "https://example.com/blog/p4"]
    assert ctx.table_reader.requests == ["ds_pages"]
    with pytest.raises(InvalidArguments, match="has no column 'url'"):
        await anyio.to_thread.run_sync(run_inspect_urls, InspectUrlsArguments.parse({"table_ref": "ds_pages", "url_column": "url"}), ctx)


def test_sitemaps_one_row_per_content_type_with_indexes_expanded(env, ctx_for):
    out = run_sitemaps(NoArguments(), ctx_for("sitemaps"))
    rows = rows_of(out)
    assert [(r["path"].rsplit("/", 1)[1], r["content_type"], r["submitted"]) for r in rows] == [
        ("sitemap_index.xml", "web", 120), ("sitemap-posts.xml", "web", 100), ("sitemap-posts.xml", "image", 40)]
    assert rows[1]["parent"] == "https://example.com/sitemap_index.xml" and rows[1]["errors"] == 1 and rows[1]["warnings"] == 2
    assert rows[0]["is_index"] is True and rows[0]["last_downloaded"] == "2026-09-23T04:12:00.000Z"
    assert env.server.requests_to("/sitemaps")[1].query["sitemapIndex"] == ["https://example.com/sitemap_index.xml"]


def test_inspect_urls_reports_inspections_done_of_n_and_a_cancel_sends_no_further_one(env, ctx_for, tmp_path):
    # Issue 28: URL inspections done of n; once cancelled, no further inspection is sent, the call
    # returns no table and the unsent inspections go back to the day's budget.
    from analytics_acp.kit import RecordingSignals

    urls = [f"https://example.com/blog/p{i}" for i in range(20)]
    signals = RecordingSignals()
    run_inspect_urls(InspectUrlsArguments.parse({"urls": urls[:6]}), ctx_for("inspect_urls", signals=signals))
    assert signals.seen == [(k, 6, f"{k} of 6 URLs inspected") for k in range(1, 7)]
    before = len(env.server.requests_to("urlInspection"))

    signals = RecordingSignals(cancel_after=2)
    with pytest.raises(UpstreamError, match="cancelled"):
        run_inspect_urls(InspectUrlsArguments.parse({"urls": urls}), ctx_for("inspect_urls", signals=signals))
    sent = len(env.server.requests_to("urlInspection")) - before
    # At the cancel two are done and at most CONCURRENCY - 1 others are on the wire; none starts after.
    assert 2 <= sent <= 2 + inspection.CONCURRENCY - 1 < len(urls)
    assert budget.Ledger(tmp_path / "cache").used(DOMAIN)[0] == 6 + sent


def test_compare_periods_progress_counts_both_windows_in_one_rising_sequence(env, ctx_for):
    # Issue 28: MCP progress must increase; the previous window's requests continue the count.
    from analytics_acp.kit import RecordingSignals

    signals = RecordingSignals()
    run_compare_periods(ComparePeriodsArguments.parse({"dimensions": ["page"], "start_date": "2026-09-15", "end_date": "2026-09-21"}),
                        ctx_for("compare_periods", signals=signals))
    done = [s[0] for s in signals.seen]
    assert len(done) >= 2 and done == list(range(1, len(done) + 1))  # the second window continues the count
