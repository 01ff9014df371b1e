"""The autocontext blocks of 15.1 step 3: settings from the Admin API, 28-day traffic from the Data API.

Each block raises on its own failure; the core isolates it (7.3) and caches it per credential identity (7.4).
One function per block, named as the block: declaration.block_specs gives each its id, description and TTL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analytics_acp import CallContext

from .clients import call, client
from .request import date_range

WINDOW = ("28daysAgo", "yesterday")
_SCOPE_PREFIX = {"EVENT": "customEvent", "USER": "customUser", "ITEM": "customItem"}


def _name(enum_value: Any) -> str | None:
    name = getattr(enum_value, "name", None)
    return None if name is None or name.endswith("_UNSPECIFIED") else name


def property_settings(pid: str, ctx: CallContext) -> dict[str, Any]:
    """Name, time zone, currency, industry, attribution model, lookback windows, data retention."""
    from google.analytics.admin_v1alpha import GetAttributionSettingsRequest
    from google.analytics.admin_v1beta import GetDataRetentionSettingsRequest, GetPropertyRequest

    admin = client(ctx, "admin")
    prop = call(admin.get_property, GetPropertyRequest(name=f"properties/{pid}"), resource=pid, ctx=ctx)
    retention = call(admin.get_data_retention_settings,
                     GetDataRetentionSettingsRequest(name=f"properties/{pid}/dataRetentionSettings"), resource=pid, ctx=ctx)
    out: dict[str, Any] = {
        "property_id": pid, "name": prop.display_name, "account": prop.account or prop.parent, "time_zone": prop.time_zone,
        "currency": prop.currency_code, "industry": _name(prop.industry_category), "service_level": _name(prop.service_level),
        "property_type": _name(prop.property_type),
        "data_retention": {"event_data": _name(retention.event_data_retention), "user_data": _name(retention.user_data_retention),
                           "reset_on_new_activity": retention.reset_user_data_on_new_activity},
    }
    from .resources import remember_settings

    remember_settings(ctx, pid, prop.time_zone or None, prop.currency_code or None)
    attribution = call(client(ctx, "admin_alpha").get_attribution_settings,
                       GetAttributionSettingsRequest(name=f"properties/{pid}/attributionSettings"), resource=pid, ctx=ctx)
    out["attribution"] = {
        "reporting_attribution_model": _name(attribution.reporting_attribution_model),
        "acquisition_key_event_lookback": _name(attribution.acquisition_conversion_event_lookback_window),
        "other_key_event_lookback": _name(attribution.other_conversion_event_lookback_window),
    }
    return out


def key_events(pid: str, ctx: CallContext) -> list[dict[str, Any]]:
    """[{event_name, counting_method, metric: keyEvents:<event>}] (15.1 step 5)."""
    from google.analytics.admin_v1beta import ListKeyEventsRequest

    pager = call(client(ctx, "admin").list_key_events, ListKeyEventsRequest(parent=f"properties/{pid}", page_size=200),
                 resource=pid, ctx=ctx)
    return [{"event_name": k.event_name, "counting_method": _name(k.counting_method), "metric": f"keyEvents:{k.event_name}"}
            for k in pager]


def custom_dimensions(pid: str, ctx: CallContext) -> list[dict[str, Any]]:
    """[{api_name, display_name, scope, description?}]."""
    from google.analytics.admin_v1beta import ListCustomDimensionsRequest

    pager = call(client(ctx, "admin").list_custom_dimensions,
                 ListCustomDimensionsRequest(parent=f"properties/{pid}", page_size=200), resource=pid, ctx=ctx)
    out = []
    for d in pager:
        scope = _name(d.scope) or "EVENT"
        item = {"api_name": f"{_SCOPE_PREFIX.get(scope, 'customEvent')}:{d.parameter_name}", "display_name": d.display_name,
                "scope": scope}
        if d.description:
            item["description"] = d.description
        out.append(item)
    return out


def custom_metrics(pid: str, ctx: CallContext) -> list[dict[str, Any]]:
    """[{api_name, display_name, unit, scope, description?}]."""
    from google.analytics.admin_v1beta import ListCustomMetricsRequest

    pager = call(client(ctx, "admin").list_custom_metrics,
                 ListCustomMetricsRequest(parent=f"properties/{pid}", page_size=200), resource=pid, ctx=ctx)
    out = []
    for m in pager:
        item = {"api_name": f"customEvent:{m.parameter_name}", "display_name": m.display_name,
                "unit": _name(m.measurement_unit), "scope": _name(m.scope)}
        if m.description:
            item["description"] = m.description
        out.append(item)
    return out


def calculated_metrics(pid: str, ctx: CallContext) -> list[dict[str, Any]]:
    """[{api_name: calcMetric:<id>, display_name, formula, unit, description?}]."""
    from google.analytics.admin_v1alpha import ListCalculatedMetricsRequest

    pager = call(client(ctx, "admin_alpha").list_calculated_metrics,
                 ListCalculatedMetricsRequest(parent=f"properties/{pid}", page_size=200), resource=pid, ctx=ctx)
    out = []
    for m in pager:
        item = {"api_name": f"calcMetric:{m.calculated_metric_id}", "display_name": m.display_name, "formula": m.formula,
                "unit": _name(m.metric_unit)}
        if m.description:
            item["description"] = m.description
        out.append(item)
    return out


def channel_groups(pid: str, ctx: CallContext) -> list[dict[str, Any]]:
    """[{name, display_name, description, system_defined, primary}]."""
    from google.analytics.admin_v1alpha import ListChannelGroupsRequest

    pager = call(client(ctx, "admin_alpha").list_channel_groups,
                 ListChannelGroupsRequest(parent=f"properties/{pid}", page_size=200), resource=pid, ctx=ctx)
    return [{"name": g.name, "display_name": g.display_name, "description": g.description,
             "system_defined": g.system_defined, "primary": g.primary} for g in pager]


def _traffic(dimension: str, metrics: list[str], top: int | None = None, order_metric: str | None = None
             ) -> Callable[[str, Any], list[dict[str, Any]]]:
    def fetch(pid: str, ctx: CallContext) -> list[dict[str, Any]]:
        from google.analytics.data_v1beta import OrderBy

        from .report import fetch_report

        orders = [OrderBy(metric=OrderBy.MetricOrderBy(metric_name=order_metric or metrics[0]), desc=True)]
        report = fetch_report(ctx, pid, metrics=metrics, dimensions=[dimension], ranges=[date_range(*WINDOW)],
                              orders=orders, limit=top, totals=False)
        rows = [dict(zip(report.columns, r, strict=True)) for r in report.rows]
        for row in rows:  # rates as fractions rounded for the prompt
            for key, value in row.items():
                if isinstance(value, float):
                    row[key] = round(value, 4)
        return rows

    return fetch


def content_groups(pid: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Sessions by content group; [] when the property does not set content groups."""
    rows = _traffic("contentGroup", ["sessions"])(pid, ctx)
    return [r for r in rows if r.get("contentGroup") not in ("(not set)", "", None)]


# The traffic blocks (declaration.block_specs names each function by its block id).
sessions_by_channel = _traffic("sessionDefaultChannelGroup", ["sessions", "totalUsers", "engagedSessions", "engagementRate"])
sessions_by_device = _traffic("deviceCategory", ["sessions", "totalUsers"])
sessions_by_country = _traffic("country", ["sessions", "totalUsers"], top=15)
top_events = _traffic("eventName", ["eventCount", "totalUsers"], top=50)
top_landing_pages = _traffic("landingPage", ["sessions", "engagementRate", "keyEvents"], top=25)
