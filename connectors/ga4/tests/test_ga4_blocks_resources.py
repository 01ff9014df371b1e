"""The twelve autocontext blocks of 15.1, resources from accountSummaries, resource_id normalization, the declaration."""

from __future__ import annotations

import subprocess
import sys

import pytest
from analytics_acp import ResourceNotFound
from analytics_acp.plugins import load_connector
from analytics_acp_ga4 import declaration
from analytics_acp_ga4.resources import list_resources, normalize

SPEC_15_1_BLOCKS = [
    ("property_settings", "Property settings: name, time zone, currency, industry, attribution model, conversion lookback windows and data retention."),
    ("key_events", "Property key events (conversions) with their API metric (keyEvents:<event>)."),
    ("custom_dimensions", "Custom dimensions with their scope, description and API name (customEvent:/customUser:/customItem:)."),
    ("custom_metrics", "Custom metrics with unit, scope and API name (customEvent:<param>)."),
    ("calculated_metrics", "Calculated metrics with their formula and API name (calcMetric:<id>)."),
    ("channel_groups", "Channel groups (system-defined and custom)."),
    ("sessions_by_channel", "Sessions, users and engagement by default channel group over the last 28 days."),
    ("sessions_by_device", "Sessions and users by device over the last 28 days."),
    ("sessions_by_country", "Top 15 countries by sessions over the last 28 days."),
    ("top_events", "Top 50 events by event count over the last 28 days (exact eventName values)."),
    ("top_landing_pages", "Top 25 landing pages by sessions over the last 28 days."),
    ("content_groups", "Sessions by content group over the last 28 days (empty if the property does not use them)."),
]


def fetch_block(block_id: str, resource_id: str, ctx):
    """A block as the core runs it: through the fetcher its declaration names (one table: id, text, TTL, fetcher)."""
    spec = next(b for b in declaration.block_specs() if b.id == block_id)
    return spec.fetch(resource_id, ctx)


def test_blocks_have_the_15_1_ids_descriptions_and_ttls():
    specs = declaration.block_specs()
    assert [(b.id, b.description) for b in specs] == SPEC_15_1_BLOCKS
    assert {b.id: b.ttl_s for b in specs} == {bid: (86400 if i < 6 else 21600) for i, (bid, _) in enumerate(SPEC_15_1_BLOCKS)}


def test_settings_blocks(fake, make_ctx, server):
    ctx = make_ctx("autocontext")
    settings = fetch_block("property_settings", "123456789", ctx)
    assert settings == {
        "property_id": "123456789", "name": "ikaue.com", "account": "accounts/1001", "time_zone": "Europe/Madrid",
        "currency": "EUR", "industry": "SHOPPING", "service_level": "GOOGLE_ANALYTICS_STANDARD",
        "property_type": "PROPERTY_TYPE_ORDINARY",
        "data_retention": {"event_data": "FOURTEEN_MONTHS", "user_data": "FOURTEEN_MONTHS", "reset_on_new_activity": True},
        "attribution": {"reporting_attribution_model": "PAID_AND_ORGANIC_CHANNELS_DATA_DRIVEN",
                        "acquisition_key_event_lookback": "ACQUISITION_CONVERSION_EVENT_LOOKBACK_WINDOW_30_DAYS",
                        "other_key_event_lookback": "OTHER_CONVERSION_EVENT_LOOKBACK_WINDOW_90_DAYS"}}
    # 15.1 step 5's shapes.
    assert fetch_block("key_events", "123456789", ctx) == [
        {"event_name": "purchase", "counting_method": "ONCE_PER_EVENT", "metric": "keyEvents:purchase"},
        {"event_name": "generate_lead", "counting_method": "ONCE_PER_SESSION", "metric": "keyEvents:generate_lead"}]
    assert fetch_block("custom_dimensions", "123456789", ctx) == [
        {"api_name": "customEvent:form_name", "display_name": "Form", "scope": "EVENT", "description": "Name of the submitted form"},
        {"api_name": "customUser:plan", "display_name": "Plan", "scope": "USER"}]
    assert fetch_block("custom_metrics", "123456789", ctx) == [
        {"api_name": "customEvent:order_value", "display_name": "Order value", "unit": "STANDARD", "scope": "EVENT",
         "description": "Value of the order"}]
    assert fetch_block("calculated_metrics", "123456789", ctx) == [
        {"api_name": "calcMetric:revenuePerSession", "display_name": "Revenue per session",
         "formula": "{{totalRevenue}} / {{sessions}}", "unit": "CURRENCY", "description": "Revenue divided by sessions"}]
    groups = fetch_block("channel_groups", "123456789", ctx)
    assert [(g["display_name"], g["system_defined"], g["primary"]) for g in groups] == [
        ("Default Channel Group", True, True), ("Brand vs generic", False, False)]
    paths = {r.path for r in server.requests if r.method == "GET"}
    assert {"/v1beta/properties/123456789", "/v1beta/properties/123456789/dataRetentionSettings",
            "/v1alpha/properties/123456789/attributionSettings", "/v1beta/properties/123456789/keyEvents",
            "/v1alpha/properties/123456789/calculatedMetrics", "/v1alpha/properties/123456789/channelGroups"} <= paths
    assert fetch_block("key_events", "222333444", ctx) == []  # a property without any: an empty list


def test_traffic_blocks(fake, make_ctx, server):
    ctx = make_ctx("autocontext")
    channels = fetch_block("sessions_by_channel", "123456789", ctx)
    assert [list(r) for r in channels][0] == ["sessionDefaultChannelGroup", "sessions", "totalUsers", "engagedSessions", "engagementRate"]
    assert [r["sessions"] for r in channels] == sorted((r["sessions"] for r in channels), reverse=True)
    assert {r["deviceCategory"] for r in fetch_block("sessions_by_device", "123456789", ctx)} == {"desktop", "mobile", "tablet"}
    assert len(fetch_block("sessions_by_country", "123456789", ctx)) == 4
    assert {r["eventName"] for r in fetch_block("top_events", "123456789", ctx)} == {"page_view", "session_start", "purchase", "generate_lead"}
    assert len(fetch_block("top_landing_pages", "123456789", ctx)) == 6
    assert fetch_block("content_groups", "123456789", ctx) == []  # only "(not set)": the property does not use them
    limits = [r.body.get("limit") for r in server.requests_to(":runReport$")]
    assert limits == ["50000", "50000", "15", "50", "25", "50000"]
    assert all(r.body["dateRanges"] == [{"startDate": "28daysAgo", "endDate": "yesterday"}] for r in server.requests_to(":runReport$"))


def test_resources_from_account_summaries_with_paging(fake, make_ctx, server):
    from ga4fake import Property

    for i in range(3):  # more accounts than one page of the fake (pageSize 200 asked; the fake pages by 200)
        fake.add(Property(f"7000{i}", f"Site {i}", f"90{i}", f"Agency {i}"))
    found = list_resources(make_ctx("autocontext", resource_id=None))
    assert [(r.resource_id, r.name, r.group) for r in found[:3]] == [
        ("123456789", "ikaue.com", "IKAUE"), ("222333444", "Blog", "IKAUE"), ("987654321", "Store", "Client X")]
    assert found[0].description == "GA4 standard property 123456789 in account IKAUE."
    assert len(found) == 6
    # Once a report (or property_settings) has shown a property's time zone and currency, suggestions say them.
    fetch_block("sessions_by_device", "987654321", make_ctx("autocontext"))
    found = list_resources(make_ctx("autocontext", resource_id=None))
    assert found[2].description == "GA4 standard property 987654321 in account Client X (America/New_York, USD)."
    assert found[0].description == "GA4 standard property 123456789 in account IKAUE."
    assert server.requests_to("/v1beta/accountSummaries$")[0].query["pageSize"] == ["200"]


def test_account_summaries_follow_next_page_token(fake, make_ctx, server):
    route = next(r for r in server.routes if r.pattern.pattern == "/v1beta/accountSummaries")
    original = route.handler

    def small_pages(req):
        req.query["pageSize"] = ["1"]
        return original(req)

    route.handler = small_pages
    found = list_resources(make_ctx("autocontext", resource_id=None))
    assert [r.resource_id for r in found] == ["123456789", "222333444", "987654321"]
    assert [r.query.get("pageToken") for r in server.requests_to("/v1beta/accountSummaries$")] == [None, ["1"]]


@pytest.mark.parametrize("raw", ["123456789", " 123456789 ", "properties/123456789",
                                 "https://analytics.google.com/analytics/web/#/p123456789/reports/intelligenthome",
                                 "https://analytics.google.com/analytics/web/?authuser=1#/a1001p123456789/admin"])
def test_normalize_resource_id(raw):
    assert normalize(raw) == "123456789"


def test_normalize_refuses_non_ids():
    with pytest.raises(ResourceNotFound, match="not a GA4 property id"):
        normalize("ikaue.com")


def test_declaration_matches_4_2():
    loaded = load_connector("ga4", extensions=False)
    info = loaded.info
    assert (info.id, info.name) == ("ga4", "Google Analytics 4")
    rid = info.resource_id.to_json()
    assert rid == {"title": "GA4 property", "description": "Numeric GA4 property id", "format": "<propertyId>",
                   "examples": ["123456789"]}
    assert info.cost.to_json() == {"currency": "USD", "model": "free", "description": (
        "The GA4 Data API has no monetary cost; it consumes property quota tokens (see system_info.source.property_quota).")}
    assert info.defaults.to_json() == {"row_limit": 25, "cost_limit_usd": 0} and info.cache_ttl_s == 21600
    assert info.delivery == ["inject", "suggest", "on_first_call"]
    assert loaded.extraction_tools == ["run_report", "run_report_by_regex_cluster", "compare_conversion_models",
                                       "run_realtime_report", "run_funnel_report"]
    assert info.instructions.startswith("Google Analytics 4 ACP. Start with autocontext for the resource_id")
    variants = info.credentials_schema["oneOf"]
    assert [v["properties"]["type"]["const"] for v in variants] == ["service_account", "oauth", "authorized_user"]
    assert variants[1]["x-acp-login"] == {"provider": "google", "scopes": ["https://www.googleapis.com/auth/analytics.readonly"]}
    assert info.config_schema["properties"]["api_endpoint"]["title"] == "API endpoint (advanced)"


def test_start_up_does_not_import_google_clients():
    code = ("import sys\nfrom analytics_acp.plugins import load_connector\nload_connector('ga4', extensions=False)\n"
            "import analytics_acp.cli\n"
            "print(sorted(m for m in sys.modules if m.startswith(('google.analytics', 'google.auth', 'google.api_core', 'grpc'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_connector_ready_imports_the_clients_the_first_call_needs():
    """Issue 26.6: start-up imports no Google client; the post-initialize warm-up hook imports them."""
    code = ("import sys\nfrom analytics_acp.plugins import load_connector\nloaded = load_connector('ga4', extensions=False)\n"
            "before = 'google.analytics.data_v1beta' in sys.modules\nloaded.hook.connector_ready()\n"
            "print(before, 'google.analytics.data_v1beta' in sys.modules, 'google.analytics.admin_v1beta' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]
