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
    lazy,
)
from analytics_acp.lazy import LazyRef
from analytics_acp_google.schemas import (
    AUTOCONTEXT_CONCURRENCY,
    CHECK_SETUP,
    api_endpoint_property,
    credentials_schema,
    timeout_property,
)

from .arguments import (
    CompatibilityArguments,
    ConversionModelsArguments,
    FunnelArguments,
    MetadataArguments,
    RealtimeArguments,
    RegexClusterArguments,
    RunReportArguments,
)
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
                 run=lazy("analytics_acp_ga4.report:run_report"), arguments=RunReportArguments, description=(
                     "Extract a GA4 report (runReport): metrics by dimensions over a date window, every row, with the "
                     "API's totals. Call autocontext first (key events, custom dimensions); get_metadata finds valid names.")),
        ToolSpec(name="run_report_by_regex_cluster", title="Report by regex clusters", kind="extraction",
                 run=lazy("analytics_acp_ga4.cluster:run_report_by_regex_cluster"), arguments=RegexClusterArguments, description=(
                     "Report metrics per named cluster of one dimension's values (e.g. pagePath), by ordered regexes "
                     "(first match wins, the rest is '(other)'). Users, rates and averages are exact, never summed.")),
        ToolSpec(name="compare_conversion_models", title="Compare conversion credit by channel", kind="extraction",
                 run=lazy("analytics_acp_ga4.attribution:compare_conversion_models"), arguments=ConversionModelsArguments,
                 description=(
                     "Key events and revenue per default channel group under three views (first user, session, the "
                     "property's reporting attribution), one row per channel with each view's share: how credit moves.")),
        ToolSpec(name="run_realtime_report", title="Realtime report", kind="extraction",
                 run=lazy("analytics_acp_ga4.realtime:run_realtime_report"), arguments=RealtimeArguments, description=(
                     "Extract a realtime report (Data API runRealtimeReport; last 30 minutes by default) with the API's totals.")),
        ToolSpec(name="run_funnel_report", title="Funnel report", kind="extraction",
                 run=lazy("analytics_acp_ga4.funnel:run_funnel_report"), arguments=FunnelArguments, description=(
                     "Extract a funnel (Data API runFunnelReport): steps by event or page path, open or closed, with "
                     "active users, completion rate and abandonments per step.")),
        ToolSpec(name="check_compatibility", title="Check field compatibility", kind="info",
                 run=lazy("analytics_acp_ga4.info_tools:check_compatibility"), arguments=CompatibilityArguments, description=(
                     "Which of these metrics and dimensions can go together in one report, and which clash.")),
        ToolSpec(name="get_metadata", title="Search dimensions and metrics", kind="info",
                 run=lazy("analytics_acp_ga4.info_tools:get_metadata"), arguments=MetadataArguments, description=(
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
