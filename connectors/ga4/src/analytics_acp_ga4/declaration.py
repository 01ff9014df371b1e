"""What the `ga4` connector declares: identity (4.2), setup schemas (5.5), resource_id (6.1), tools and blocks.

This module imports nothing heavy: plugin.py loads it at server start-up. Tools and blocks name the functions
doing the work with ``lazy("module:function")``: their modules (and the Google clients) load on first use.
Values the tool modules need too live in constants.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analytics_acp import (
    BlockSpec,
    ConnectorInfo,
    CostSpec,
    Defaults,
    ResourceIdSpec,
    ToolSpec,
    date_property,
    lazy,
)
from analytics_acp.lazy import LazyRef
from analytics_acp_google.retry import AUTOCONTEXT_CONCURRENCY
from analytics_acp_google.schemas import CHECK_SETUP, api_endpoint_property, credentials_schema, timeout_property

from .constants import SCOPES, SETTINGS_TTL_S, TRAFFIC_TTL_S

VERSION = "0.1.0"
PACKAGE_DIR = Path(__file__).resolve().parents[2]

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
# Argument texts are brief and said once (issue 23.3: tools/list is read in every conversation); valid names
# come from autocontext and get_metadata. Filter and order items are described by their signature (the form the
# README uses) rather than nested schemas: request.py checks every key and names the wrong one.
DIMENSION_FILTERS = {
    "type": "array", "items": {"type": "object"},
    "description": ("AND-ed {field, match_type EXACT (default)|BEGINS_WITH|ENDS_WITH|CONTAINS|FULL_REGEXP|PARTIAL_REGEXP"
                    "|IN_LIST, value (IN_LIST: values, a list), case_sensitive, not}."),
}
METRIC_FILTERS = {
    "type": "array", "items": {"type": "object"},
    "description": ("AND-ed {field, operation EQUAL|LESS_THAN|LESS_THAN_OR_EQUAL|GREATER_THAN|GREATER_THAN_OR_EQUAL"
                    "|BETWEEN, value (BETWEEN: values [from, to])}."),
}
ORDER_BYS = {
    "type": "array",
    "description": "Requested fields, e.g. [\"-sessions\", \"date\"] ('-': descending) or [{field, desc}].",
}


def _window_properties() -> dict[str, Any]:
    return {
        "start_date": date_property("start", "YYYY-MM-DD, NdaysAgo, yesterday, today. Default 28daysAgo."),
        "end_date": date_property("end", "Default yesterday."),
    }


RUN_REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metrics": {**_NAMES, "minItems": 1, "maxItems": 10, "description": "API names, e.g. sessions, keyEvents:purchase."},
        "dimensions": {**_NAMES, "maxItems": 9, "description": "API names, e.g. date, sessionDefaultChannelGroup."},
        **_window_properties(),
        "compare_start_date": {"type": "string", "description": "A second range (adds a dateRange column)."},
        "compare_end_date": {"type": "string"},
        "dimension_filters": DIMENSION_FILTERS,
        "metric_filters": METRIC_FILTERS,
        "order_bys": ORDER_BYS,
        "limit": {"type": "integer", "minimum": 1, "description": "Rows to extract. Default: all."},
        "keep_empty_rows": {"type": "boolean", "default": False, "description": "Keep all-zero rows."},
        "currency_code": {"type": "string", "description": "ISO 4217. Default: property's."},
    },
    "required": ["metrics"],
}

CLUSTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "dimension": {"type": "string", "description": "Whose values are clustered, e.g. pagePath."},
        "clusters": {"type": "array", "minItems": 1, "maxItems": 25, "items": {
            "type": "object", "properties": {"name": {"type": "string"}, "regex": {"type": "string"}},
            "required": ["name", "regex"]}, "description": "In order; regex is RE2, partial match."},
        "metrics": {**_NAMES, "minItems": 1, "maxItems": 10},
        "dimensions": {**_NAMES, "maxItems": 4, "description": "Breakdown, e.g. date."},
        **_window_properties(),
        "case_sensitive": {"type": "boolean", "default": False},
    },
    "required": ["dimension", "clusters", "metrics"],
}

CONVERSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key_events": {**_NAMES, "description": "E.g. purchase. Default: all."},
        **_window_properties(),
    },
}

REALTIME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metrics": {**_NAMES, "minItems": 1, "description": "activeUsers, eventCount, keyEvents, screenPageViews."},
        "dimensions": {**_NAMES, "description": "E.g. country, deviceCategory, eventName, minutesAgo."},
        "start_minutes_ago": {"type": "integer", "minimum": 0, "maximum": 59, "default": 29,
                              "description": "29: the last 30 minutes (up to 59 on 360 properties)."},
        "end_minutes_ago": {"type": "integer", "minimum": 0, "maximum": 59, "default": 0},
        "dimension_filters": DIMENSION_FILTERS,
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
                "event_name": {"type": "string"},
                "page_path": {"type": "string", "description": "Instead of event_name."},
                "match_type": {"type": "string", "enum": ["EXACT", "BEGINS_WITH", "CONTAINS", "FULL_REGEXP", "PARTIAL_REGEXP"],
                               "default": "EXACT", "description": "For page_path."},
                "directly_followed_by": {"type": "boolean", "default": False,
                                         "description": "Right after the previous step."},
            },
            "required": ["name"]}},
        "is_open_funnel": {"type": "boolean", "default": False, "description": "Users may enter at any step."},
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
        "query": {"type": "string", "description": "Words to find in names and descriptions."},
        "kind": {"type": "string", "enum": ["all", "dimensions", "metrics"], "default": "all"},
        "custom_only": {"type": "boolean", "default": False},
    },
}


def connector_info() -> ConnectorInfo:
    """The ConnectorInfo of `ga4` (4.2)."""
    return ConnectorInfo(
        tools=tool_specs(), blocks=block_specs(),  # declared once: the core registers them
        id="ga4",
        name="Google Analytics 4",
        version=VERSION,
        description="Google Analytics 4 reports (Data API), realtime, funnels and property settings (Admin API).",
        resource_id=ResourceIdSpec(title="GA4 property", description="Numeric GA4 property id", format="<propertyId>",
                                   examples=["123456789"]),
        instructions=INSTRUCTIONS,
        defaults=Defaults(row_limit=25, cost_limit_usd=0),
        credentials_schema=credentials_schema(scopes=SCOPES, product="Google Analytics 4"),
        check_setup=CHECK_SETUP,  # the key loads, offline (analytics_acp_google.offline_check)
        config_schema=CONFIG_SCHEMA,
        cost=CostSpec(model="free", description=COST_DESCRIPTION),
        cache_ttl_s=TRAFFIC_TTL_S,
        autocontext_concurrency=AUTOCONTEXT_CONCURRENCY,  # blocks are independent Google calls (issue 26.1)
        delivery=["inject", "suggest", "on_first_call"],
        icon="icon.svg",
        package_dir=PACKAGE_DIR,
        access_rule_keys=[],
    )


def tool_specs() -> list[ToolSpec]:
    """The tools; extraction_tools order is run_report (default), regex clusters, conversion models, then the others."""
    return [
        ToolSpec(name="run_report", title="Run a GA4 report", kind="extraction", default=True,
                 run=lazy("analytics_acp_ga4.report:run_report"), input_schema=RUN_REPORT_SCHEMA, description=(
                     "Extract a GA4 report (runReport): metrics by dimensions over a date window, every row, with the "
                     "API's totals. Call autocontext first (key events, custom dimensions); get_metadata finds valid names.")),
        ToolSpec(name="run_report_by_regex_cluster", title="Report by regex clusters", kind="extraction",
                 run=lazy("analytics_acp_ga4.cluster:run_report_by_regex_cluster"), input_schema=CLUSTER_SCHEMA, description=(
                     "Report metrics per named cluster of one dimension's values (e.g. pagePath), by ordered regexes "
                     "(first match wins, the rest is '(other)'). Users, rates and averages are exact, never summed.")),
        ToolSpec(name="compare_conversion_models", title="Compare conversion credit by channel", kind="extraction",
                 run=lazy("analytics_acp_ga4.attribution:compare_conversion_models"), input_schema=CONVERSION_SCHEMA,
                 description=(
                     "Key events and revenue per default channel group under three views (first user, session, the "
                     "property's reporting attribution), one row per channel with each view's share: how credit moves.")),
        ToolSpec(name="run_realtime_report", title="Realtime report", kind="extraction",
                 run=lazy("analytics_acp_ga4.realtime:run_realtime_report"), input_schema=REALTIME_SCHEMA, description=(
                     "Extract a realtime report (Data API runRealtimeReport; last 30 minutes by default) with the API's totals.")),
        ToolSpec(name="run_funnel_report", title="Funnel report", kind="extraction",
                 run=lazy("analytics_acp_ga4.funnel:run_funnel_report"), input_schema=FUNNEL_SCHEMA, description=(
                     "Extract a funnel (Data API runFunnelReport): steps by event or page path, open or closed, with "
                     "active users, completion rate and abandonments per step.")),
        ToolSpec(name="check_compatibility", title="Check field compatibility", kind="info",
                 run=lazy("analytics_acp_ga4.info_tools:check_compatibility"), input_schema=COMPATIBILITY_SCHEMA, description=(
                     "Which of these metrics and dimensions can go together in one report, and which clash.")),
        ToolSpec(name="get_metadata", title="Search dimensions and metrics", kind="info",
                 run=lazy("analytics_acp_ga4.info_tools:get_metadata"), input_schema=METADATA_SCHEMA, description=(
                     "Search the property's dimensions and metrics (custom ones too): API names, types, descriptions.")),
    ]


# --- blocks (15.1 step 3): ids and descriptions are normative. Each block's fetcher (a function of blocks.py) and
# TTL sit beside its id: this is the only table of blocks.


def _fetch(name: str) -> LazyRef:
    return lazy(f"analytics_acp_ga4.blocks:{name}")


def block_specs() -> list[BlockSpec]:
    """The twelve blocks of 15.1; settings cached 24 h, traffic 6 h; each fails alone (7.3, done by the core)."""
    settings, traffic = SETTINGS_TTL_S, TRAFFIC_TTL_S
    return [
        BlockSpec("property_settings", "Property settings: name, time zone, currency, industry, attribution model, "
                  "conversion lookback windows and data retention.", fetch=_fetch("property_settings"), ttl_s=settings),
        BlockSpec("key_events", "Property key events (conversions) with their API metric (keyEvents:<event>).",
                  fetch=_fetch("key_events"), ttl_s=settings),
        BlockSpec("custom_dimensions", "Custom dimensions with their scope, description and API name "
                  "(customEvent:/customUser:/customItem:).", fetch=_fetch("custom_dimensions"), ttl_s=settings),
        BlockSpec("custom_metrics", "Custom metrics with unit, scope and API name (customEvent:<param>).",
                  fetch=_fetch("custom_metrics"), ttl_s=settings),
        BlockSpec("calculated_metrics", "Calculated metrics with their formula and API name (calcMetric:<id>).",
                  fetch=_fetch("calculated_metrics"), ttl_s=settings),
        BlockSpec("channel_groups", "Channel groups (system-defined and custom).", fetch=_fetch("channel_groups"),
                  ttl_s=settings),
        BlockSpec("sessions_by_channel", "Sessions, users and engagement by default channel group over the last 28 "
                  "days.", fetch=_fetch("sessions_by_channel"), ttl_s=traffic),
        BlockSpec("sessions_by_device", "Sessions and users by device over the last 28 days.",
                  fetch=_fetch("sessions_by_device"), ttl_s=traffic),
        BlockSpec("sessions_by_country", "Top 15 countries by sessions over the last 28 days.",
                  fetch=_fetch("sessions_by_country"), ttl_s=traffic),
        BlockSpec("top_events", "Top 50 events by event count over the last 28 days (exact eventName values).",
                  fetch=_fetch("top_events"), ttl_s=traffic),
        BlockSpec("top_landing_pages", "Top 25 landing pages by sessions over the last 28 days.",
                  fetch=_fetch("top_landing_pages"), ttl_s=traffic),
        BlockSpec("content_groups", "Sessions by content group over the last 28 days (empty if the property does not "
                  "use them).", fetch=_fetch("content_groups"), ttl_s=traffic),
    ]
