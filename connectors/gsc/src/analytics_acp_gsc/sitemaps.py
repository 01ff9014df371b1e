"""sitemaps (extraction): every sitemap of the property, one row per sitemap and content type.

Sitemap indexes are expanded one level (their child sitemaps are listed too), so the table has
every sitemap Google knows for the property, with its counts per content type.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext, Extraction, Header, NoArguments

from .client import Client

MAX_INDEXES = 50  # child listings fetched (one request each)

HEADERS = [
    Header("path", "string", "dimension", "Sitemap URL"),
    Header("type", "string", "attribute", "sitemap, rssFeed, atomFeed, urlList..."),
    Header("parent", "string", "attribute", "The sitemap index that lists it, if any"),
    Header("is_index", "boolean", "attribute", "The sitemap is an index of sitemaps"),
    Header("is_pending", "boolean", "attribute", "Not processed yet"),
    Header("last_submitted", "datetime", "attribute", "Last submission"),
    Header("last_downloaded", "datetime", "attribute", "Last download by Google"),
    Header("warnings", "integer", "metric", "Warnings in the sitemap"),
    Header("errors", "integer", "metric", "Errors in the sitemap"),
    Header("content_type", "string", "dimension", "web, image, video, news..."),
    Header("submitted", "integer", "metric", "URLs of that content type in the sitemap"),
    Header("indexed", "integer", "metric", "Indexed URLs of that content type (deprecated by Google; often empty)"),
]
COLUMNS = [h.name for h in HEADERS]


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def to_rows(sitemap: dict[str, Any], parent: str | None) -> list[tuple[Any, ...]]:
    """One row per content type (one row with empty counts when Google lists none)."""
    head = (sitemap.get("path"), sitemap.get("type"), parent, bool(sitemap.get("isSitemapsIndex")),
            bool(sitemap.get("isPending")), sitemap.get("lastSubmitted"), sitemap.get("lastDownloaded"),
            _int(sitemap.get("warnings")), _int(sitemap.get("errors")))
    contents = sitemap.get("contents") or []
    if not contents:
        return [(*head, None, None, None)]
    return [(*head, c.get("type"), _int(c.get("submitted")), _int(c.get("indexed"))) for c in contents]


def list_all(client: Client, site: str) -> list[tuple[dict[str, Any], str | None]]:
    """(sitemap, parent index) for every submitted sitemap and the children of indexes, de-duplicated."""
    top = client.sitemaps(site)
    out: list[tuple[dict[str, Any], str | None]] = [(s, None) for s in top]
    seen = {s.get("path") for s in top}
    for index in [s for s in top if s.get("isSitemapsIndex")][:MAX_INDEXES]:
        for child in client.sitemaps(site, index.get("path")):
            if child.get("path") not in seen:
                seen.add(child.get("path"))
                out.append((child, index.get("path")))
    return out


def run_sitemaps(args: NoArguments, ctx: CallContext) -> Extraction:
    """The sitemaps tool."""
    site = ctx.require_resource_id()
    client = Client(ctx)
    found = list_all(client, site)
    rows = [row for sitemap, parent in found for row in to_rows(sitemap, parent)]
    return Extraction(
        rows=rows, columns=COLUMNS, headers=HEADERS,
        description=f"Search Console sitemaps of property {site}: {len(found)} sitemaps (indexes expanded one level), "
                    "one row per content type.",
        source={"api": "searchconsole v1 sitemaps.list"},
    )
