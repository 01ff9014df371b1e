"""What the `ga4` connector declares: identity (4.2), setup schemas (5.5), resource_id (6.1), tools and blocks.

This module imports nothing heavy: plugin.py loads it at server start-up. Tool and block
callables are thin wrappers that import the modules doing the work on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analytics_acp import (
    BlockSpec,
    CallContext,
    ConnectorInfo,
    CostSpec,
    Defaults,
    ResourceIdSpec,
    ToolSpec,
    date_property,
)
from analytics_acp_google.retry import AUTOCONTEXT_CONCURRENCY
from analytics_acp_google.schemas import api_endpoint_property, credentials_schema, timeout_property

VERSION = "0.1.0"
PACKAGE_DIR = Path(__file__).resolve().parents[2]
SCOPES = ["https://www.googleapis.com/auth/analytics.readonly"]
SETTINGS_TTL_S = 24 * 3600  # property settings change rarely (15.1 blocks)
TRAFFIC_TTL_S = 6 * 3600  # 28-day traffic summaries; also the capability's cache_ttl_s (4.2: 21600)

INSTRUCTIONS = (
    "Google Analytics 4 ACP. Start with autocontext for the resource_id (numeric property id) to learn key events, "
    "custom dimensions and channels before requesting reports."
)

COST_DESCRIPTION = ("The GA4 Data API has no monetary cost; it consumes property quota tokens "
                    "(see system_info.source.property_quota).")

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"api_endpoint": {
        **api_endpoint_property(),
        "description": ("Root URL used for both the GA4 Data API and the Admin API, for example "
                        "https://analyticsdata.googleapis.com. Leave empty to use Google's. Used for private "
                        "endpoints and test fakes."),
    }, "timeout_s": timeout_property()},
    "required": [],
}

_NAMES = {"type": "array", "items": {"type": "string"}}

DIMENSION_FILTER = {
    "type": "object",
    "properties": {
        "field": {"type": "string", "description": "Dimension API name."},
        "match_type": {"type": "string", "enum": ["EXACT", "BEGINS_WITH", "ENDS_WITH", "CONTAINS", "FULL_REGEXP",
                                                  "PARTIAL_REGEXP", "IN_LIST"], "default": "EXACT"},
        "value": {"type": "string", "description": "Value to match (all match types except IN_LIST)."},
        "values": {**_NAMES, "description": "Values for IN_LIST."},
        "case_sensitive": {"type": "boolean", "default": False},
        "not": {"type": "boolean", "default": False, "description": "Exclude the matching rows instead."},
    },
    "required": ["field"],
}

METRIC_FILTER = {
    "type": "object",
    "properties": {
        "field": {"type": "string", "description": "Metric API name."},
        "operation": {"type": "string", "enum": ["EQUAL", "LESS_THAN", "LESS_THAN_OR_EQUAL", "GREATER_THAN",
                                                 "GREATER_THAN_OR_EQUAL", "BETWEEN"]},
        "value": {"type": "number", "description": "Comparison value (BETWEEN: use values [from, to])."},
        "values": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
    },
    "required": ["field", "operation"],
}

ORDER_BY = {
    "type": "object",
    "properties": {"field": {"type": "string", "description": "A metric or dimension of the request."},
                   "desc": {"type": "boolean", "default": False}},
    "required": ["field"],
}


def _window_properties() -> dict[str, Any]:
    return {
        "start_date": date_property("start", "First day: YYYY-MM-DD, NdaysAgo, yesterday or today. Default 28daysAgo."),
        "end_date": date_property("end", "Last day: YYYY-MM-DD, NdaysAgo, yesterday or today. Default yesterday."),
    }


RUN_REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metrics": {**_NAMES, "minItems": 1, "maxItems": 10,
                    "description": "Metric API names, e.g. sessions, totalUsers, keyEvents:purchase, customEvent:value."},
        "dimensions": {**_NAMES, "maxItems": 9, "description": "Dimension API names, e.g. date, sessionDefaultChannelGroup."},
        **_window_properties(),
        "compare_start_date": {"type": "string", "description": "Optional second range (adds a dateRange column): first day."},
        "compare_end_date": {"type": "string", "description": "Second range: last day."},
        "dimension_filters": {"type": "array", "items": DIMENSION_FILTER, "description": "All must match (AND)."},
        "metric_filters": {"type": "array", "items": METRIC_FILTER, "description": "All must match (AND)."},
        "order_bys": {"type": "array", "items": ORDER_BY},
        "limit": {"type": "integer", "minimum": 1, "description": "Rows to extract. Default: all rows."},
        "keep_empty_rows": {"type": "boolean", "default": False, "description": "Keep rows whose metrics are all 0."},
        "currency_code": {"type": "string", "description": "ISO 4217 code for currency metrics. Default: the property's."},
    },
    "required": ["metrics"],
}

CLUSTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "dimension": {"type": "string", "description": "The dimension whose values are clustered, e.g. pagePath."},
        "clusters": {"type": "array", "minItems": 1, "maxItems": 25, "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "regex": {"type": "string", "description": "RE2 regular expression (partial match)."}},
            "required": ["name", "regex"]}, "description": "Ordered: the first matching cluster wins; unmatched values go to '(other)'."},
        "metrics": {**_NAMES, "minItems": 1, "maxItems": 10},
        "dimensions": {**_NAMES, "maxItems": 4, "description": "Optional breakdown dimensions (e.g. date)."},
        **_window_properties(),
        "case_sensitive": {"type": "boolean", "default": False},
    },
    "required": ["dimension", "clusters", "metrics"],
}

CONVERSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key_events": {**_NAMES, "description": "Key event names (e.g. purchase). Default: all key events."},
        **_window_properties(),
    },
}

REALTIME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metrics": {**_NAMES, "minItems": 1, "description": "Realtime metrics: activeUsers, eventCount, keyEvents, screenPageViews."},
        "dimensions": {**_NAMES, "description": "Realtime dimensions: country, deviceCategory, eventName, unifiedScreenName, minutesAgo…"},
        "start_minutes_ago": {"type": "integer", "minimum": 0, "maximum": 59, "default": 29,
                              "description": "Start of the minute range (29 = the last 30 minutes; 360 properties: up to 59)."},
        "end_minutes_ago": {"type": "integer", "minimum": 0, "maximum": 59, "default": 0},
        "dimension_filters": {"type": "array", "items": DIMENSION_FILTER},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["metrics"],
}

FUNNEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "steps": {"type": "array", "minItems": 1, "maxItems": 10, "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "event_name": {"type": "string", "description": "The step is reached by this event."},
                "page_path": {"type": "string", "description": "Or: the step is reached on a page whose path matches."},
                "match_type": {"type": "string", "enum": ["EXACT", "BEGINS_WITH", "CONTAINS", "FULL_REGEXP", "PARTIAL_REGEXP"],
                               "default": "EXACT", "description": "How page_path matches."},
                "directly_followed_by": {"type": "boolean", "default": False,
                                         "description": "The step must come right after the previous one."},
            },
            "required": ["name"]}},
        "is_open_funnel": {"type": "boolean", "default": False, "description": "Open funnel: users may enter at any step."},
        **_window_properties(),
    },
    "required": ["steps"],
}

COMPATIBILITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"metrics": _NAMES, "dimensions": _NAMES},
}

METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words to search in API names, UI names and descriptions."},
        "kind": {"type": "string", "enum": ["all", "dimensions", "metrics"], "default": "all"},
        "custom_only": {"type": "boolean", "default": False},
    },
}


def connector_info() -> ConnectorInfo:
    """The ConnectorInfo of `ga4` (4.2)."""
    return ConnectorInfo(
        id="ga4",
        name="Google Analytics 4",
        version=VERSION,
        description="Google Analytics 4 reports (Data API), realtime, funnels and property settings (Admin API).",
        resource_id=ResourceIdSpec(title="GA4 property", description="Numeric GA4 property id", format="<propertyId>",
                                   examples=["123456789"]),
        instructions=INSTRUCTIONS,
        defaults=Defaults(row_limit=25, cost_limit_usd=0),
        credentials_schema=credentials_schema(scopes=SCOPES, product="Google Analytics 4"),
        config_schema=CONFIG_SCHEMA,
        cost=CostSpec(model="free", description=COST_DESCRIPTION),
        cache_ttl_s=TRAFFIC_TTL_S,
        autocontext_concurrency=AUTOCONTEXT_CONCURRENCY,  # blocks are independent Google calls (issue 26.1)
        delivery=["inject", "suggest", "on_first_call"],
        icon="icon.svg",
        package_dir=PACKAGE_DIR,
        access_rule_keys=[],
    )


# --- runners: thin wrappers so the Google clients load on first call, not at start-up.


def _run_report(arguments: dict[str, Any], ctx: CallContext) -> Any:
    from .report import run_report

    return run_report(arguments, ctx)


def _run_cluster(arguments: dict[str, Any], ctx: CallContext) -> Any:
    from .cluster import run_report_by_regex_cluster

    return run_report_by_regex_cluster(arguments, ctx)


def _run_conversion(arguments: dict[str, Any], ctx: CallContext) -> Any:
    from .attribution import compare_conversion_models

    return compare_conversion_models(arguments, ctx)


def _run_realtime(arguments: dict[str, Any], ctx: CallContext) -> Any:
    from .realtime import run_realtime_report

    return run_realtime_report(arguments, ctx)


def _run_funnel(arguments: dict[str, Any], ctx: CallContext) -> Any:
    from .funnel import run_funnel_report

    return run_funnel_report(arguments, ctx)


def _run_compatibility(arguments: dict[str, Any], ctx: CallContext) -> Any:
    from .info_tools import check_compatibility

    return check_compatibility(arguments, ctx)


def _run_metadata(arguments: dict[str, Any], ctx: CallContext) -> Any:
    from .info_tools import get_metadata

    return get_metadata(arguments, ctx)


def tool_specs() -> list[ToolSpec]:
    """The tools; extraction_tools order is run_report (default), regex clusters, conversion models, then the others."""
    return [
        ToolSpec(name="run_report", title="Run a GA4 report", kind="extraction", default=True, run=_run_report,
                 input_schema=RUN_REPORT_SCHEMA, description=(
                     "Extract a GA4 report (Data API runReport): metrics by dimensions over a date window, every row "
                     "(paged to completion), typed, with the API's own totals. Common names are mapped (users -> totalUsers, "
                     "purchases -> ecommercePurchases, conversions -> keyEvents). Call autocontext first for key events and "
                     "custom dimensions; get_metadata lists every valid name.")),
        ToolSpec(name="run_report_by_regex_cluster", title="Report by regex clusters", kind="extraction", run=_run_cluster,
                 input_schema=CLUSTER_SCHEMA, description=(
                     "Group the values of one dimension (e.g. pagePath) into named clusters by ordered regular expressions "
                     "(first match wins, the rest is '(other)') and report metrics per cluster. Each cluster is its own "
                     "filtered API request, so users, rates and averages are exact, never summed.")),
        ToolSpec(name="compare_conversion_models", title="Compare conversion credit by channel", kind="extraction",
                 run=_run_conversion, input_schema=CONVERSION_SCHEMA, description=(
                     "Key events and revenue per default channel group under three views: first user "
                     "(firstUserDefaultChannelGroup), session (sessionDefaultChannelGroup) and the property's reporting "
                     "attribution (defaultChannelGroup), one row per channel with each model's share, to see how credit moves.")),
        ToolSpec(name="run_realtime_report", title="Realtime report", kind="extraction", run=_run_realtime,
                 input_schema=REALTIME_SCHEMA, description=(
                     "Extract a realtime report (last 30 minutes by default; Data API runRealtimeReport) with the API's totals.")),
        ToolSpec(name="run_funnel_report", title="Funnel report", kind="extraction", run=_run_funnel,
                 input_schema=FUNNEL_SCHEMA, description=(
                     "Extract a funnel (Data API v1alpha runFunnelReport): steps by event name or page path, open or closed, "
                     "with active users, completion rate and abandonments per step.")),
        ToolSpec(name="check_compatibility", title="Check field compatibility", kind="info", run=_run_compatibility,
                 input_schema=COMPATIBILITY_SCHEMA, description=(
                     "Say which of the given metrics and dimensions can be requested together in one report "
                     "(Data API checkCompatibility), and which clash.")),
        ToolSpec(name="get_metadata", title="Search dimensions and metrics", kind="info", run=_run_metadata,
                 input_schema=METADATA_SCHEMA, description=(
                     "Search the property's dimensions and metrics (custom ones included) by name or description; returns "
                     "API names, types and descriptions.")),
    ]


# --- blocks (15.1 step 3): ids and descriptions are normative.

BLOCKS: list[tuple[str, str, int]] = [
    ("property_settings", "Property settings: name, time zone, currency, industry, attribution model, conversion lookback windows and data retention.", SETTINGS_TTL_S),
    ("key_events", "Property key events (conversions) with their API metric (keyEvents:<event>).", SETTINGS_TTL_S),
    ("custom_dimensions", "Custom dimensions with their scope, description and API name (customEvent:/customUser:/customItem:).", SETTINGS_TTL_S),
    ("custom_metrics", "Custom metrics with unit, scope and API name (customEvent:<param>).", SETTINGS_TTL_S),
    ("calculated_metrics", "Calculated metrics with their formula and API name (calcMetric:<id>).", SETTINGS_TTL_S),
    ("channel_groups", "Channel groups (system-defined and custom).", SETTINGS_TTL_S),
    ("sessions_by_channel", "Sessions, users and engagement by default channel group over the last 28 days.", TRAFFIC_TTL_S),
    ("sessions_by_device", "Sessions and users by device over the last 28 days.", TRAFFIC_TTL_S),
    ("sessions_by_country", "Top 15 countries by sessions over the last 28 days.", TRAFFIC_TTL_S),
    ("top_events", "Top 50 events by event count over the last 28 days (exact eventName values).", TRAFFIC_TTL_S),
    ("top_landing_pages", "Top 25 landing pages by sessions over the last 28 days.", TRAFFIC_TTL_S),
    ("content_groups", "Sessions by content group over the last 28 days (empty if the property does not use them).", TRAFFIC_TTL_S),
]


def _block_fetch(block_id: str) -> Any:
    def fetch(resource_id: str, ctx: CallContext) -> Any:
        from .blocks import fetch_block

        return fetch_block(block_id, resource_id, ctx)

    fetch.__name__ = f"fetch_{block_id}"
    return fetch


def block_specs() -> list[BlockSpec]:
    """The twelve blocks of 15.1; settings cached 24 h, traffic 6 h; each fails alone (7.3, done by the core)."""
    return [BlockSpec(id=bid, description=desc, fetch=_block_fetch(bid), ttl_s=ttl) for bid, desc, ttl in BLOCKS]
