"""What the `gsc` connector declares: identity, setup schemas (5.5), resource_id (6.1), tools and blocks (15.2).

Nothing heavy is imported here: plugin.py loads this module at start-up. Tools and blocks name the functions doing
the work with ``lazy("module:function")``: googleapiclient and google-auth load on the first call. Values the tool
modules need too (enums, scopes) live in constants.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analytics_acp import BlockSpec, ConnectorInfo, Defaults, ResourceIdSpec, ToolSpec, lazy
from analytics_acp_google.schemas import AUTOCONTEXT_CONCURRENCY, CHECK_SETUP

from .arguments import ComparePeriodsArguments, InspectUrlsArguments, SearchAnalyticsArguments
from .constants import FORMAT, SCOPES

VERSION = "0.1.0"
PACKAGE_DIR = Path(__file__).resolve().parents[2]

# Repeated in every tool's resource_id (6.2): brief (issue 23.3). A bare host is resolved too (resource_ids.py).
RESOURCE_DESCRIPTION = "https://www.example.com/ (URL-prefix property, with the slash) or sc-domain:example.com."

INSTRUCTIONS = (
    "Google Search Console. Call autocontext for the property first: it gives the queryable date range, the last day "
    "with final data and the top queries, pages and position clusters. search_analytics extracts every row the API can "
    "give (no 25,000-row cap) into one table the host stores; you see a sample plus totals computed by Google for the "
    "whole window. Dates are Pacific Time days; without dates the window is the last month with final data. "
    "Work on the stored table (SQL over the dataset) instead of asking for more rows. compare_periods joins two "
    "windows; inspect_urls checks indexing of URLs (2,000 a day per property); sitemaps lists sitemaps."
)

# Tool texts say what the tool is for and when to use it, each argument once (issue 23.3: tools/list is read
# in every conversation). Filters are described by their signature: query.py checks each key and names the wrong one.
SEARCH_DESCRIPTION = (
    "Extract Search Console clicks, impressions, ctr and position by dimensions: every row (past the API's row "
    "ceiling), clicks descending, totals for the whole window. Pacific Time days; default: the month up to the "
    "last day with final data. Call autocontext first."
)

COMPARE_DESCRIPTION = (
    "Compare two windows (start_date/end_date and compare_*): the same query joined on the dimensions, each metric "
    "for both windows and the change; a row found in one window only has nulls for the other."
)

INSPECT_DESCRIPTION = (
    "Inspect URLs (URL Inspection API): index verdict, coverage, last crawl, canonicals, robots.txt, mobile and rich "
    "results, one row per URL, from urls or a table_ref's url (or page) column. Google allows 2,000 a day and 600 a "
    "minute per property."
)

SITEMAPS_DESCRIPTION = (
    "Every sitemap of the property (indexes expanded): type, last submitted and downloaded, warnings, errors, URLs "
    "submitted/indexed per content type."
)


def credentials_schema() -> dict[str, Any]:
    """service_account / oauth (x-acp-login google, webmasters.readonly) / authorized_user (shared Google package)."""
    from analytics_acp_google.schemas import credentials_schema as shared

    return shared(scopes=SCOPES, product="Search Console")


def config_schema() -> dict[str, Any]:
    """api_endpoint (shared) and the row ceiling that triggers day splitting."""
    from analytics_acp_google.schemas import api_endpoint_property, timeout_property

    return {
        "type": "object",
        "properties": {
            "api_endpoint": api_endpoint_property(),
            "timeout_s": timeout_property(),
            "row_ceiling": {
                "type": "integer",
                "title": "Row ceiling per query (advanced)",
                "description": "Rows one Search Analytics query can reach (Google: 50,000 per day and search type). "
                               "A window whose rows reach it is fetched again day by day.",
                "default": 50000,
                "minimum": 1000,
            },
        },
        "required": [],
    }


def connector_info() -> ConnectorInfo:
    """The ConnectorInfo of `gsc` (4.2)."""
    return ConnectorInfo(
        tools=tool_specs(), blocks=block_specs(),  # declared once: the core registers them
        id="gsc",
        name="Google Search Console",
        version=VERSION,
        description="Google Search Console: complete Search Analytics extractions with Pacific-Time dates and "
                    "provisional days, period comparison, URL Inspection and sitemaps.",
        resource_id=ResourceIdSpec(
            title="Search Console property",
            description=RESOURCE_DESCRIPTION,
            format=FORMAT,
            examples=["https://www.example.com/", "sc-domain:example.com"],
        ),
        instructions=INSTRUCTIONS,
        defaults=Defaults(row_limit=25, cost_limit_usd=0),
        credentials_schema=credentials_schema(),
        check_setup=CHECK_SETUP,  # the key loads, offline (analytics_acp_google.offline_check)
        config_schema=config_schema(),
        cache_ttl_s=6 * 3600,
        autocontext_concurrency=AUTOCONTEXT_CONCURRENCY,  # blocks are independent Google calls (issue 26.1)
        icon="icon.svg",
        package_dir=PACKAGE_DIR,
        access_rule_keys=[],
    )


def tool_specs() -> list[ToolSpec]:
    """search_analytics (default), compare_periods, inspect_urls and sitemaps: all extractions."""
    return [
        ToolSpec(name="search_analytics", title="Search Console performance", description=SEARCH_DESCRIPTION,
                 run=lazy("analytics_acp_gsc.search_analytics:run_search_analytics"), kind="extraction", default=True,
                 arguments=SearchAnalyticsArguments),
        ToolSpec(name="compare_periods", title="Compare two periods", description=COMPARE_DESCRIPTION,
                 run=lazy("analytics_acp_gsc.compare:run_compare_periods"), kind="extraction",
                 arguments=ComparePeriodsArguments),
        ToolSpec(name="inspect_urls", title="Inspect URLs", description=INSPECT_DESCRIPTION,
                 run=lazy("analytics_acp_gsc.inspection:run_inspect_urls"), kind="extraction",
                 arguments=InspectUrlsArguments),
        ToolSpec(name="sitemaps", title="Sitemaps", description=SITEMAPS_DESCRIPTION,
                 run=lazy("analytics_acp_gsc.sitemaps:run_sitemaps"), kind="extraction"),
    ]


def block_specs() -> list[BlockSpec]:
    """The blocks of 15.2 (ids and descriptions exactly as there) and the rest (7.4 TTLs: volumes 6 h, dates 1 h)."""
    specs = [
        ("available_date_range", "Queryable date range (16 months) and the latest day with reliable data.", 3600),
        ("position_clusters", "Queries grouped by position cluster (Top-3, Top-10, Top-30, Top-100, Out) over the last 3 months.", 6 * 3600),
        ("top_queries", "Top 10 queries by clicks over the last 28 days with final data, with impressions, ctr and position.", 6 * 3600),
        ("top_pages", "Top 10 pages by clicks over the last 28 days with final data, with impressions, ctr and position.", 6 * 3600),
        ("countries", "Top 10 countries (ISO 3166-1 alpha-3, lower case) by clicks over the last 28 days.", 6 * 3600),
        ("devices", "Clicks, impressions, ctr and position per device (DESKTOP, MOBILE, TABLET) over the last 28 days.", 6 * 3600),
        ("search_appearance", "Search appearance types with traffic over the last 28 days; filter on one to break it down.", 6 * 3600),
        ("sitemaps", "Submitted sitemaps (up to 20) with type, last download, errors, warnings and URLs submitted.", 3600),
    ]
    # Each block's fetcher is blocks.block_<id>, imported on the first autocontext.
    return [BlockSpec(id=i, description=d, fetch=lazy(f"analytics_acp_gsc.blocks:block_{i}"), ttl_s=ttl) for i, d, ttl in specs]
