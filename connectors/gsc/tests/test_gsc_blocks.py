"""Autocontext blocks (7.1, 15.2) against the fake, at the fixed clock."""

from __future__ import annotations

from analytics_acp_gsc import blocks, declaration
from gscfake import DOMAIN


def test_15_2_block_ids_and_descriptions():
    specs = {b.id: b.description for b in declaration.block_specs()}
    assert list(specs)[:2] == ["available_date_range", "position_clusters"]
    assert specs["available_date_range"] == "Queryable date range (16 months) and the latest day with reliable data."
    assert specs["position_clusters"] == ("Queries grouped by position cluster (Top-3, Top-10, Top-30, Top-100, Out) "
                                          "over the last 3 months.")


def test_date_range_and_clusters(env, ctx_for):
    ctx = ctx_for()
    assert blocks.block_available_date_range(DOMAIN, ctx) == {
        "first_date": "2025-05-24", "last_reliable_date": "2026-09-22",
        "note": "Search Console keeps 16 months of data and publishes it with a 2-3 day delay."}
    clusters = blocks.block_position_clusters(DOMAIN, ctx)
    assert [c["clusterPosition"] for c in clusters] == ["Top-3", "Top-10", "Top-30", "Top-100", "Out"]
    assert sum(c["queries"] for c in clusters) == 40 and sum(c["clicks"] for c in clusters) > 0
    window = [r.body for r in env.queries(DOMAIN) if r.body["dimensions"] == ["query"]][0]
    assert (window["startDate"], window["endDate"]) == ("2026-06-23", "2026-09-22")  # 3 months of final data
    assert blocks.cluster_of(3.0) == "Top-3" and blocks.cluster_of(10.4) == "Top-30" and blocks.cluster_of(101) == "Out"


def test_top_blocks_are_compact_and_ordered(env, ctx_for):
    ctx = ctx_for()
    top = blocks.block_top_queries(DOMAIN, ctx)
    assert len(top) == 10 and [t["clicks"] for t in top] == sorted((t["clicks"] for t in top), reverse=True)
    assert set(top[0]) == {"query", "clicks", "impressions", "ctr", "position"}
    assert {d["device"] for d in blocks.block_devices(DOMAIN, ctx)} == {"MOBILE", "DESKTOP", "TABLET"}
    assert [s["submitted"] for s in blocks.block_sitemaps(DOMAIN, ctx)] == [120, 140]
