"""Metric/dimension names: common aliases (with the spec's warning, 8.2), the property's metadata, close matches.

Aliases are applied before the request (they are never valid GA4 names themselves). Unknown names
and incompatible combinations are diagnosed only after the API refuses a request (400), so a good
report costs one request per page and nothing more.
"""

from __future__ import annotations

import difflib
from typing import Any

from analytics_acp import CallContext, InvalidArguments

METRIC_ALIASES = {
    "purchases": "ecommercePurchases", "transactions": "transactions", "users": "totalUsers", "user": "totalUsers",
    "pageviews": "screenPageViews", "page_views": "screenPageViews", "pageViews": "screenPageViews", "views": "screenPageViews",
    "revenue": "totalRevenue", "conversions": "keyEvents", "conversion": "keyEvents", "key_events": "keyEvents",
    "events": "eventCount", "event_count": "eventCount", "new_users": "newUsers", "newusers": "newUsers",
    "active_users": "activeUsers", "bounce_rate": "bounceRate", "bouncerate": "bounceRate",
    "engagement_rate": "engagementRate", "engaged_sessions": "engagedSessions", "avg_session_duration": "averageSessionDuration",
    "session_duration": "averageSessionDuration", "purchase_revenue": "purchaseRevenue", "ecommerce_revenue": "purchaseRevenue",
    "add_to_carts": "addToCarts", "checkouts": "checkouts", "items_purchased": "itemsPurchased",
    "conversion_rate": "sessionKeyEventRate", "session_conversion_rate": "sessionKeyEventRate",
    "user_conversion_rate": "userKeyEventRate",
}
DIMENSION_ALIASES = {
    "channel": "sessionDefaultChannelGroup", "channel_group": "sessionDefaultChannelGroup",
    "default_channel_group": "sessionDefaultChannelGroup", "source_medium": "sessionSourceMedium",
    "sourcemedium": "sessionSourceMedium", "source": "sessionSource", "medium": "sessionMedium",
    "campaign": "sessionCampaignName", "device": "deviceCategory", "device_category": "deviceCategory",
    "page": "pagePath", "page_path": "pagePath", "pagepath": "pagePath", "landing_page": "landingPage",
    "landingpage": "landingPage", "event": "eventName", "event_name": "eventName", "page_title": "pageTitle",
    "month": "yearMonth", "week": "yearWeek", "hour": "hour", "day": "date", "country_name": "country",
}
# Metrics that carry an event suffix (keyEvents:purchase): valid whenever the base metric is.
_SUFFIXED = ("keyEvents:", "sessionKeyEventRate:", "userKeyEventRate:", "conversions:")
_CUSTOM = ("customEvent:", "customUser:", "customItem:", "calcMetric:")



def apply_aliases(names: list[str], kind: str, warnings: list[str]) -> list[str]:
    """Map common names to API names, adding "Metric 'purchases' mapped to 'ecommercePurchases'." (8.2)."""
    table = METRIC_ALIASES if kind == "metric" else DIMENSION_ALIASES
    out = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise InvalidArguments(f"Every {kind} must be a non-empty string (got {name!r}).")
        name = name.strip()
        target = table.get(name) or table.get(name.lower())
        if target and target != name:
            warnings.append(f"{kind.capitalize()} '{name}' mapped to '{target}'.")
            name = target
        out.append(name)
    return out


def metadata(ctx: CallContext, property_id: str) -> dict[str, Any]:
    """{"dimensions": {apiName: {...}}, "metrics": {apiName: {...}}} of the property (custom ones included), cached 10 min."""
    from .state import METADATA, credentials_key

    cache = ctx.state(METADATA)
    key = (credentials_key(ctx), property_id)
    hit = cache.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    from google.analytics.data_v1beta import GetMetadataRequest

    from .clients import call, client

    data = client(ctx, "data")
    meta = call(data.get_metadata, GetMetadataRequest(name=f"properties/{property_id}/metadata"), resource=property_id, ctx=ctx)
    out = {
        "dimensions": {d.api_name: {"api_name": d.api_name, "ui_name": d.ui_name, "description": d.description,
                                    "category": d.category, "custom": d.custom_definition,
                                    "deprecated": list(d.deprecated_api_names)} for d in meta.dimensions},
        "metrics": {m.api_name: {"api_name": m.api_name, "ui_name": m.ui_name, "description": m.description,
                                 "category": m.category, "custom": m.custom_definition, "type": m.type_.name,
                                 "expression": m.expression, "deprecated": list(m.deprecated_api_names)}
                    for m in meta.metrics},
    }
    cache.put(key, out)
    return out


def known(name: str, kind: str, meta: dict[str, Any]) -> bool:
    """Whether ``name`` is a valid metric/dimension of the property (event-suffixed key event metrics included)."""
    table = meta["metrics" if kind == "metric" else "dimensions"]
    if name in table:
        return True
    if any(name in entry["deprecated"] for entry in table.values()):
        return True
    if kind == "metric" and name.startswith(_SUFFIXED):
        return name.split(":", 1)[0] in table or name.startswith("conversions:")
    return False


def close_matches(name: str, kind: str, meta: dict[str, Any], n: int = 5) -> list[str]:
    """The valid names closest to ``name`` (custom definitions included), by spelling and by UI name."""
    table = meta["metrics" if kind == "metric" else "dimensions"]
    by_lower = {api.lower(): api for api in table}
    found = [by_lower[m] for m in difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.5)]
    ui = {entry["ui_name"].lower(): api for api, entry in table.items() if entry.get("ui_name")}
    found += [ui[m] for m in difflib.get_close_matches(name.lower(), list(ui), n=n, cutoff=0.6)]
    if len(found) < n:
        bare = name.split(":", 1)[-1].lower()
        found += [api for api in table if bare and bare in api.lower()]
    return list(dict.fromkeys(found))[:n]


def unknown_names_error(metrics: list[str], dimensions: list[str], meta: dict[str, Any]) -> InvalidArguments | None:
    """ACP_INVALID_ARGUMENTS naming each unknown field and its closest valid names, or None if all are valid."""
    problems = []
    for kind, names in (("metric", metrics), ("dimension", dimensions)):
        for name in names:
            if not known(name, kind, meta):
                hints = close_matches(name, kind, meta)
                other = "dimension" if kind == "metric" else "metric"
                if known(name, other, meta):
                    problems.append(f"'{name}' is a {other}, not a {kind}")
                else:
                    problems.append(f"Unknown {kind} '{name}'" + (f" (closest: {', '.join(hints)})" if hints else ""))
    if not problems:
        return None
    return InvalidArguments("; ".join(problems) + ". Call get_metadata with a query to search valid names.",
                            data={"problems": problems})
