"""Issue 18 behaviours the audit found untested: the declaration (6.1, 5.5.5), totals from the aggregate
query (8.2) when the rows are fewer than the window's data, the content of the top_pages,
countries and search_appearance blocks (15.2), every column of an inspect_urls row (last_crawl_time a
datetime, 8.6) and the sitemaps' type, last submission and indexed counts."""

from __future__ import annotations

import datetime as dt
from typing import Any

from analytics_acp import NoArguments
from analytics_acp.plugins import load_connector
from analytics_acp.results.extraction import build_extraction
from analytics_acp.results.settings import BuildSettings
from analytics_acp_gsc import blocks
from analytics_acp_gsc.arguments import InspectUrlsArguments, SearchAnalyticsArguments
from analytics_acp_gsc.inspection import run_inspect_urls
from analytics_acp_gsc.search_analytics import run_search_analytics
from analytics_acp_gsc.sitemaps import run_sitemaps
from gscfake import DOMAIN, rows_of

_COL = {"query": 1, "page": 2, "country": 3, "device": 4, "searchAppearance": 6}


def test_declaration_scope_resource_format_and_extraction_tools():
    loaded = load_connector("gsc", extensions=False)
    info = loaded.info
    # 6.1's examples: a URL-prefix property or a domain property.
    assert info.resource_id.to_json()["format"] == "<https://example.com/> | sc-domain:example.com"
    assert loaded.extraction_tools[0] == "search_analytics"
    assert set(loaded.extraction_tools) == {"search_analytics", "compare_periods", "inspect_urls", "sitemaps"}
    variants = {v["properties"]["type"]["const"]: v for v in info.credentials_schema["oneOf"]}
    assert {"service_account", "oauth"} <= set(variants)
    # 5.5.5: the host's Google login asks for Search Console read access, not Analytics.
    assert variants["oauth"]["x-acp-login"] == {
        "provider": "google", "scopes": ["https://www.googleapis.com/auth/webmasters.readonly"]}


def _expected_totals(site: Any, start: str, end: str) -> dict[str, Any]:
    facts = site.facts(dt.date.fromisoformat(start), min(dt.date.fromisoformat(end), site.final_through))
    clicks, impressions = sum(f[7] for f in facts), sum(f[8] for f in facts)
    position = sum(f[9] * f[8] for f in facts) / impressions
    return {"clicks": clicks, "impressions": impressions, "ctr": round(clicks / impressions, 4),
            "position": round(position, 2)}


def test_totals_cover_the_window_when_row_cap_keeps_fewer_rows(env, ctx_for):
    args = {"dimensions": ["query"], "start_date": "2026-09-01", "end_date": "2026-09-10", "row_cap": 5}
    out = run_search_analytics(SearchAnalyticsArguments.parse(args), ctx_for())
    rows = rows_of(out)
    assert len(rows) == 5
    expected = _expected_totals(env.gsc.sites[DOMAIN], "2026-09-01", "2026-09-10")
    assert out.totals == expected
    assert out.totals["clicks"] > sum(r["clicks"] for r in rows)  # not the sum of the 5 rows kept
    aggregate = [r.body for r in env.queries(DOMAIN) if r.body["dimensions"] == []]
    assert len(aggregate) == 1 and (aggregate[0]["startDate"], aggregate[0]["endDate"]) == ("2026-09-01", "2026-09-10")


def test_totals_are_the_aggregate_rows_answer_not_the_sum_of_rows(env, ctx_for):
    # Google drops anonymized queries from the rows but counts them in the aggregate: totals follow the aggregate.
    real_rows = env.gsc._rows

    def rows(site, body, dims, start, end, state):
        if not dims:
            return [{"clicks": 12345.0, "impressions": 678901.0, "ctr": 0.0182, "position": 17.123}]
        return real_rows(site, body, dims, start, end, state)

    env.gsc._rows = rows
    out = run_search_analytics(SearchAnalyticsArguments.parse({"dimensions": ["query"], "start_date": "2026-09-01", "end_date": "2026-09-07"}), ctx_for())
    assert len(out.rows) == 40
    assert out.totals == {"clicks": 12345, "impressions": 678901, "ctr": round(12345 / 678901, 4), "position": 17.12}


def _top(site: Any, dim: str, limit: int) -> list[dict[str, Any]]:
    """The fake's data for the 28 days ending on the last final day, grouped by one dimension, by clicks."""
    end = site.final_through
    groups: dict[str, list[float]] = {}
    for f in site.facts(end - dt.timedelta(days=27), end):
        acc = groups.setdefault(str(f[_COL[dim]]), [0, 0, 0.0])
        acc[0] += f[7]
        acc[1] += f[8]
        acc[2] += f[9] * f[8]
    ordered = sorted(groups.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))[:limit]
    return [{dim: k, "clicks": int(c), "impressions": int(i), "ctr": round(c / i, 4), "position": round(p / i, 1)}
            for k, (c, i, p) in ordered]


def test_top_pages_countries_and_search_appearance_blocks(env, ctx_for):
    ctx = ctx_for()
    site = env.gsc.sites[DOMAIN]
    pages = blocks.block_top_pages(DOMAIN, ctx)
    assert len(pages) == 10  # 12 pages in the fake: compact, top 10 by clicks
    assert pages == _top(site, "page", 10)
    countries = blocks.block_countries(DOMAIN, ctx)
    assert countries == _top(site, "country", 10) and {c["country"] for c in countries} == {"esp", "usa", "mex", "arg", "fra"}
    appearance = blocks.block_search_appearance(DOMAIN, ctx)
    assert appearance == _top(site, "searchAppearance", 25)
    assert {a["searchAppearance"] for a in appearance} == {"AMP_BLUE_LINK", "RICHCARD", "VIDEO", "FAQ_RICH_RESULT"}
    for block in (pages, countries, appearance):
        assert [b["clicks"] for b in block] == sorted((b["clicks"] for b in block), reverse=True)
    windows = {(r.body["dimensions"][0], r.body["startDate"], r.body["endDate"], r.body["rowLimit"])
               for r in env.queries(DOMAIN) if len(r.body.get("dimensions") or []) == 1 and r.body["dimensions"] != ["date"]}
    assert windows == {("page", "2026-08-26", "2026-09-22", 10), ("country", "2026-08-26", "2026-09-22", 10),
                       ("searchAppearance", "2026-08-26", "2026-09-22", 25)}


# --- inspect_urls: one typed row per URL (issue 18, item 3), results in the URL Inspection API's shape.

NOINDEX = "https://example.com/shop/p1"
BLOCKED = "https://example.com/private/p2"
INSPECTED = {
    NOINDEX: {
        "inspectionResultLink": "https://search.google.com/search-console/inspect?resource_id=sc-domain:example.com&id=n1",
        "indexStatusResult": {
            "verdict": "NEUTRAL", "coverageState": "Excluded by \u2018noindex\u2019 tag", "robotsTxtState": "ALLOWED",
            "indexingState": "BLOCKED_BY_META_TAG", "pageFetchState": "SUCCESSFUL",
            "lastCrawlTime": "2026-09-18T23:04:05.123456789Z", "crawledAs": "DESKTOP",
            "googleCanonical": "https://example.com/shop/p1", "userCanonical": "https://example.com/shop/p1?ref=nav",
            "referringUrls": ["https://example.com/shop/", "https://example.com/"],
        },
        "mobileUsabilityResult": {"verdict": "FAIL", "issues": [
            {"issueType": "USE_LEGIBLE_FONT_SIZES", "severity": "ERROR", "message": "Text too small to read"},
            {"issueType": "TAP_TARGETS_TOO_CLOSE", "severity": "ERROR", "message": "Clickable elements too close together"}]},
    },
    BLOCKED: {  # never crawled: no crawl time, no canonicals, no mobile usability result
        "inspectionResultLink": "https://search.google.com/search-console/inspect?resource_id=sc-domain:example.com&id=b2",
        "indexStatusResult": {"verdict": "NEUTRAL", "coverageState": "Blocked by robots.txt", "robotsTxtState": "DISALLOWED",
                              "indexingState": "INDEXING_ALLOWED", "pageFetchState": "BLOCKED_ROBOTS_TXT"},
    },
}


def test_inspect_urls_rows_carry_every_column_of_the_result(env, ctx_for, tmp_path):
    env.gsc.inspected.update(INSPECTED)
    plain = "https://example.com/blog/p0"
    out = run_inspect_urls(InspectUrlsArguments.parse({"urls": [plain, NOINDEX, BLOCKED]}), ctx_for("inspect_urls"))
    rows = {r["url"]: r for r in rows_of(out)}
    fake = env.gsc.result_for(env.gsc.sites[DOMAIN], plain)["indexStatusResult"]
    assert {k: rows[plain][k] for k in ("verdict", "coverage_state", "indexing_state", "robots_txt_state", "google_canonical",
                                        "user_canonical", "mobile_usability_verdict", "mobile_usability_issues")} == {
        "verdict": fake["verdict"], "coverage_state": fake["coverageState"], "indexing_state": "INDEXING_ALLOWED",
        "robots_txt_state": "ALLOWED", "google_canonical": plain, "user_canonical": plain,
        "mobile_usability_verdict": "PASS", "mobile_usability_issues": []}
    assert rows[plain]["referring_urls"] == len(fake["referringUrls"]) and rows[plain]["crawled_as"] == "MOBILE"

    noindex = rows[NOINDEX]
    assert {k: noindex[k] for k in ("verdict", "coverage_state", "indexing_state", "page_fetch_state", "robots_txt_state",
                                    "crawled_as", "google_canonical", "user_canonical", "referring_urls", "mobile_usability_verdict",
                                    "mobile_usability_issues", "rich_results_verdict", "rich_results_types", "inspection_link",
                                    "error")} == {
        "verdict": "NEUTRAL", "coverage_state": "Excluded by \u2018noindex\u2019 tag", "indexing_state": "BLOCKED_BY_META_TAG",
        "page_fetch_state": "SUCCESSFUL", "robots_txt_state": "ALLOWED", "crawled_as": "DESKTOP",
        "google_canonical": "https://example.com/shop/p1", "user_canonical": "https://example.com/shop/p1?ref=nav",
        "referring_urls": 2, "mobile_usability_verdict": "FAIL",
        "mobile_usability_issues": ["USE_LEGIBLE_FONT_SIZES", "TAP_TARGETS_TOO_CLOSE"],
        "rich_results_verdict": None, "rich_results_types": None,
        "inspection_link": INSPECTED[NOINDEX]["inspectionResultLink"], "error": None}

    blocked = rows[BLOCKED]
    assert (blocked["robots_txt_state"], blocked["page_fetch_state"], blocked["coverage_state"]) == (
        "DISALLOWED", "BLOCKED_ROBOTS_TXT", "Blocked by robots.txt")
    assert blocked["last_crawl_time"] is None and blocked["google_canonical"] is None and blocked["user_canonical"] is None
    assert blocked["mobile_usability_verdict"] is None and blocked["mobile_usability_issues"] is None
    assert blocked["error"] is None  # inspected fine: the page is blocked, the call is not

    # last_crawl_time is a datetime column (8.6): ISO UTC with milliseconds in the delivered table.
    headers = {h.name: h.type for h in out.headers}
    assert headers["last_crawl_time"] == "datetime" and headers["referring_urls"] == "integer"
    built = build_extraction(out, BuildSettings(row_limit=5, inline_max_bytes=1 << 20, tmp_dir=tmp_path))
    assert {h["name"]: h["type"] for h in built.system_data["headers"]}["last_crawl_time"] == "datetime"
    table = {r["url"]: r for r in built.system_data["table"]}
    assert table[plain]["last_crawl_time"] == "2026-09-20T08:15:30.000Z"
    assert table[NOINDEX]["last_crawl_time"] == "2026-09-18T23:04:05.123Z" and table[BLOCKED]["last_crawl_time"] is None
    assert table[NOINDEX]["mobile_usability_issues"] == ["USE_LEGIBLE_FONT_SIZES", "TAP_TARGETS_TOO_CLOSE"]
    assert not built.warnings


# --- sitemaps: type, last submitted and indexed per content type (issue 18, item 4), sitemaps.list's shape.

FEED = {"path": "https://example.com/feed.xml", "type": "rssFeed", "isSitemapsIndex": False, "isPending": False,
        "lastSubmitted": "2026-09-15T07:30:00.000Z", "lastDownloaded": "2026-09-22T01:00:00.000Z", "warnings": "0", "errors": "0",
        "contents": [{"type": "web", "submitted": "50", "indexed": "37"}, {"type": "video", "submitted": "4", "indexed": "1"}]}
PENDING = {"path": "https://example.com/urls.txt", "type": "urlList", "isSitemapsIndex": False, "isPending": True,
           "lastSubmitted": "2026-09-23T18:00:00.000Z", "warnings": "0", "errors": "0"}


def test_sitemaps_rows_have_type_last_submitted_and_indexed(env, ctx_for, tmp_path):
    env.gsc.sites[DOMAIN].sitemaps.extend([FEED, PENDING])
    out = run_sitemaps(NoArguments(), ctx_for("sitemaps"))
    got = [(r["path"].rsplit("/", 1)[1], r["type"], r["content_type"], r["submitted"], r["indexed"], r["last_submitted"],
            r["is_pending"]) for r in rows_of(out)]
    assert got == [
        ("sitemap_index.xml", "sitemap", "web", 120, 0, "2026-09-01T10:00:00.000Z", False),
        ("feed.xml", "rssFeed", "web", 50, 37, "2026-09-15T07:30:00.000Z", False),
        ("feed.xml", "rssFeed", "video", 4, 1, "2026-09-15T07:30:00.000Z", False),
        ("urls.txt", "urlList", None, None, None, "2026-09-23T18:00:00.000Z", True),  # nothing counted yet: one row
        ("sitemap-posts.xml", "sitemap", "web", 100, None, "2026-09-01T10:00:00.000Z", False),  # Google left indexed out
        ("sitemap-posts.xml", "sitemap", "image", 40, None, "2026-09-01T10:00:00.000Z", False),
    ]
    assert rows_of(out)[3]["last_downloaded"] is None
    headers = {h.name: h.type for h in out.headers}
    assert (headers["last_submitted"], headers["indexed"], headers["type"]) == ("datetime", "integer", "string")
    built = build_extraction(out, BuildSettings(row_limit=10, inline_max_bytes=1 << 20, tmp_dir=tmp_path))
    feed = [r for r in built.system_data["table"] if r["path"].endswith("feed.xml")]
    assert [(r["indexed"], r["last_submitted"]) for r in feed] == [(37, "2026-09-15T07:30:00.000Z"), (1, "2026-09-15T07:30:00.000Z")]
