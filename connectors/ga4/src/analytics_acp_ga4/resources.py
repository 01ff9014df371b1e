"""Resources: suggestions from accountSummaries (6.3) and resource_id normalization (6.1)."""

from __future__ import annotations

import re

from analytics_acp import CallContext, Resource, ResourceNotFound

# GA4 UI URLs carry the property as p<id>, alone (#/p123/...) or after the account (#/a1001p123/...).
_URL_PROPERTY = re.compile(r"(?:^|[/#?&=]|a\d+)p(\d{4,})(?=\b|/|$)")
_PROPERTIES = re.compile(r"^properties/(\d+)$")


def remember_settings(ctx: CallContext, property_id: str, time_zone: str | None, currency: str | None) -> None:
    """Record a property's time zone and currency (never a secret: the key is a hash of the credentials), so
    suggestions describe them once this server has seen them (state.SETTINGS)."""
    if time_zone or currency:
        from .state import SETTINGS, credentials_key

        ctx.state(SETTINGS).put((credentials_key(ctx), property_id), (time_zone, currency))


def normalize(resource_id: str) -> str:
    """``123``, ``properties/123``, `` 123 `` and GA4 UI URLs containing ``p123`` -> ``123``."""
    text = str(resource_id).strip()
    if text.isdigit():
        return text
    match = _PROPERTIES.match(text)
    if match:
        return match.group(1)
    if "analytics.google.com" in text or text.startswith(("http://", "https://", "#/")):
        found = _URL_PROPERTY.search(text)
        if found:
            return found.group(1)
    raise ResourceNotFound(f"{text[:80]!r} is not a GA4 property id: use the numeric property id (e.g. 123456789), "
                           "'properties/123456789' or a GA4 URL containing p123456789. Call autocontext without "
                           "resource_id to list the properties these credentials can see.")


def list_resources(ctx: CallContext) -> list[Resource]:
    """Suggestions: name = property display name, group = account display name (6.3)."""
    from analytics_acp_google.errors import to_acp_error

    from .clients import account_properties

    try:
        props = account_properties(ctx)
    except Exception as exc:
        raise to_acp_error(exc) from None
    from .state import settings_of

    out = []
    for p in props:
        kind = {"PROPERTY_TYPE_ORDINARY": "standard", "PROPERTY_TYPE_SUBPROPERTY": "subproperty",
                "PROPERTY_TYPE_ROLLUP": "roll-up"}.get(p["property_type"] or "", None)
        desc = f"GA4 {kind} property {p['id']} in account {p['account']}" if kind else f"GA4 property {p['id']} in account {p['account']}"
        known = [v for v in settings_of(ctx, p["id"]) if v]
        desc += f" ({', '.join(known)})." if known else "."
        out.append(Resource(resource_id=p["id"], name=p["name"], group=p["account"], description=desc))
    return out
