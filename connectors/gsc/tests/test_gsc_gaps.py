"""Issue 18 behaviours the audit found untested: the declaration (6.1, 5.5.5), totals from the aggregate
query (8.2) when the rows are fewer than the window's data, and the content of the top_pages,
countries and search_appearance blocks (15.2)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from analytics_acp.plugins import load_connector
from analytics_acp_gsc import blocks
from analytics_acp_gsc.search_analytics import run_search_analytics
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
    out = run_search_analytics(args, ctx_for())
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
    out = run_search_analytics({"dimensions": ["query"], "start_date": "2026-09-01", "end_date": "2026-09-07"}, ctx_for())
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
