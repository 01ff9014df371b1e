"""Autocontext blocks (7.1, 15.2): compact facts that make the first query right.

Windows end on the last day with final data (freshness.py); Pacific Time throughout.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from analytics_acp import CallContext

from . import dates, planner
from .client import Client
from .freshness import last_final_date
from .sitemaps import list_all

CLUSTERS = [("Top-3", 3.0), ("Top-10", 10.0), ("Top-30", 30.0), ("Top-100", 100.0)]
DATE_RANGE_NOTE = "Search Console keeps 16 months of data and publishes it with a 2-3 day delay."


def _window(client: Client, site: str, days: int) -> tuple[str, str]:
    end = last_final_date(client, site)
    return (end - dt.timedelta(days=days - 1)).isoformat(), end.isoformat()


def _top(client: Client, site: str, dimension: str, limit: int, days: int = 28) -> list[dict[str, Any]]:
    start, end = _window(client, site, days)
    body = {"startDate": start, "endDate": end, "dimensions": [dimension], "type": "web", "rowLimit": limit}
    rows = client.query(site, body).get("rows") or []
    return [{dimension: r["keys"][0], "clicks": int(r.get("clicks", 0)), "impressions": int(r.get("impressions", 0)),
             "ctr": round(float(r.get("ctr", 0)), 4), "position": round(float(r.get("position", 0)), 1)} for r in rows]


def block_available_date_range(resource_id: str, ctx: CallContext) -> dict[str, Any]:
    """First queryable day (16 months back, PT) and the last day with final data."""
    client = Client(ctx)
    return {"first_date": dates.first_available_date().isoformat(),
            "last_reliable_date": last_final_date(client, resource_id).isoformat(), "note": DATE_RANGE_NOTE}


def cluster_of(position: float) -> str:
    """Top-3 / Top-10 / Top-30 / Top-100 / Out for an average position."""
    for name, bound in CLUSTERS:
        if position <= bound:
            return name
    return "Out"


def block_position_clusters(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Queries of the last 3 months grouped by position cluster, with clicks and impressions."""
    client = Client(ctx)
    end = last_final_date(client, resource_id)
    start = dates.add_months(end, -3) + dt.timedelta(days=1)
    body = {"dimensions": ["query"], "type": "web", "startDate": start.isoformat(), "endDate": end.isoformat()}
    rows = planner.fetch_window(lambda b: client.query(resource_id, b), body).rows
    names = [name for name, _ in CLUSTERS] + ["Out"]
    sums = {name: [0, 0, 0] for name in names}  # clicks, impressions, queries
    for r in rows:
        entry = sums[cluster_of(float(r.get("position") or 0))]
        entry[0] += int(r.get("clicks") or 0)
        entry[1] += int(r.get("impressions") or 0)
        entry[2] += 1
    return [{"clusterPosition": n, "clicks": c, "impressions": i, "queries": q} for n, (c, i, q) in sums.items()]


def block_top_queries(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """The 10 queries with most clicks over the last 28 days with final data."""
    return _top(Client(ctx), resource_id, "query", 10)


def block_top_pages(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """The 10 pages with most clicks over the last 28 days with final data."""
    return _top(Client(ctx), resource_id, "page", 10)


def block_countries(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """The 10 countries with most clicks over the last 28 days."""
    return _top(Client(ctx), resource_id, "country", 10)


def block_devices(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Clicks, impressions, ctr and position per device over the last 28 days."""
    return _top(Client(ctx), resource_id, "device", 5)


def block_search_appearance(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Search appearance types with traffic over the last 28 days (filter on them to break one down)."""
    return _top(Client(ctx), resource_id, "searchAppearance", 25)


def block_sitemaps(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Submitted sitemaps: path, type, last download, errors, warnings and URLs submitted."""
    out = []
    for sitemap, parent in list_all(Client(ctx), resource_id)[:20]:
        submitted = sum(int(c.get("submitted") or 0) for c in sitemap.get("contents") or [])
        out.append({"path": sitemap.get("path"), "type": sitemap.get("type"), "parent": parent,
                    "last_downloaded": sitemap.get("lastDownloaded"), "errors": int(sitemap.get("errors") or 0),
                    "warnings": int(sitemap.get("warnings") or 0), "submitted": submitted})
    return out
