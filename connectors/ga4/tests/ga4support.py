"""Data of the ga4 tests: three properties as in spec 15.1 on the GA4 fake (imported by conftest and the tests)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ga4fake import GA4Fake, Property
from googlefakes.server import FakeServer

SA_EMAIL = "acp-test@fake-project.iam.gserviceaccount.com"
OTHER_EMAIL = "client-x@fake-project.iam.gserviceaccount.com"
CHANNELS = ["Organic Search", "Direct", "Paid Search", "Email"]
DEVICES = ["desktop", "mobile", "tablet"]
COUNTRIES = ["Spain", "France", "Mexico", "United States"]
EVENTS = ["page_view", "session_start", "purchase", "generate_lead"]
PAGES = ["/", "/blog/ga4-guide", "/blog/bigquery", "/products/shoes", "/products/socks", "/contact"]


def make_facts(today: dt.date, days: int = 40) -> list[dict[str, Any]]:
    """Deterministic fact rows over the last ``days`` days (one per day × channel × device)."""
    facts = []
    for d in range(1, days + 1):
        day = today - dt.timedelta(days=d)
        for ci, channel in enumerate(CHANNELS):
            for di, device in enumerate(DEVICES):
                i = d * 12 + ci * 3 + di
                sessions = 10 + (i * 7) % 50
                event = EVENTS[i % 4]
                facts.append({
                    "date": day.strftime("%Y%m%d"), "dateHour": day.strftime("%Y%m%d") + f"{i % 24:02d}",
                    "sessionDefaultChannelGroup": channel, "firstUserDefaultChannelGroup": CHANNELS[(ci + d) % 4],
                    "defaultChannelGroup": CHANNELS[(ci + (d % 2)) % 4], "sessionSourceMedium": f"{channel.lower()} / x",
                    "deviceCategory": device, "country": COUNTRIES[i % 4], "eventName": event,
                    "landingPage": PAGES[i % 6], "pagePath": PAGES[(i + 1) % 6], "contentGroup": "(not set)", "itemName": "(not set)",
                    "sessions": sessions, "totalUsers": sessions - 3, "newUsers": sessions // 2, "activeUsers": sessions - 4,
                    "eventCount": sessions * 3, "keyEvents": (2 if event in ("purchase", "generate_lead") else 0),
                    "engagedSessions": sessions // 2 + 1, "totalRevenue": (49.5 if event == "purchase" else 0.0),
                    "purchaseRevenue": (49.5 if event == "purchase" else 0.0), "ecommercePurchases": (1 if event == "purchase" else 0),
                    "screenPageViews": sessions * 2, "userEngagementDuration": sessions * 31, "customEvent:order_value": 3 * (i % 5),
                })
    return facts


def build_fake(server: FakeServer, *, page_size: int = 10_000) -> GA4Fake:
    """Three properties as in spec 15.1 (ikaue.com, Blog in IKAUE; Store in Client X) with data and settings."""
    fake = GA4Fake(server, today=dt.date.today(), page_size=page_size)
    main = fake.add(Property("123456789", "ikaue.com", "1001", "IKAUE"))
    main.facts = make_facts(fake.today)
    main.realtime = [{"minutesAgo": m, "country": COUNTRIES[m % 4], "deviceCategory": DEVICES[m % 3],
                      "eventName": EVENTS[m % 4], "unifiedScreenName": PAGES[m % 6], "activeUsers": 1 + m % 3,
                      "eventCount": 2 + m % 5, "keyEvents": 1 if m % 4 == 2 else 0, "screenPageViews": 1 + m % 2}
                     for m in range(0, 45)]
    main.journeys = [
        [{"event_name": "session_start", "page_path": "/"}, {"event_name": "view_item", "page_path": "/products/shoes"},
         {"event_name": "add_to_cart", "page_path": "/products/shoes"}, {"event_name": "purchase", "page_path": "/checkout/done"}],
        [{"event_name": "session_start", "page_path": "/"}, {"event_name": "view_item", "page_path": "/products/socks"}],
        [{"event_name": "session_start", "page_path": "/blog/ga4-guide"}, {"event_name": "view_item", "page_path": "/products/shoes"},
         {"event_name": "add_to_cart", "page_path": "/products/shoes"}],
        [{"event_name": "view_item", "page_path": "/products/shoes"}, {"event_name": "add_to_cart", "page_path": "/products/shoes"}],
        [{"event_name": "session_start", "page_path": "/contact"}],
    ]
    main.key_events = [
        {"name": "properties/123456789/keyEvents/1", "eventName": "purchase", "createTime": "2023-01-01T00:00:00Z",
         "deletable": False, "custom": False, "countingMethod": "ONCE_PER_EVENT"},
        {"name": "properties/123456789/keyEvents/2", "eventName": "generate_lead", "createTime": "2023-01-01T00:00:00Z",
         "deletable": True, "custom": True, "countingMethod": "ONCE_PER_SESSION"},
    ]
    main.custom_dimensions = [
        {"name": "properties/123456789/customDimensions/1", "parameterName": "form_name", "displayName": "Form", "scope": "EVENT",
         "description": "Name of the submitted form"},
        {"name": "properties/123456789/customDimensions/2", "parameterName": "plan", "displayName": "Plan", "scope": "USER"},
    ]
    main.custom_metrics = [{"name": "properties/123456789/customMetrics/1", "parameterName": "order_value", "displayName": "Order value",
                            "measurementUnit": "STANDARD", "scope": "EVENT", "description": "Value of the order"}]
    main.calculated_metrics = [{"name": "properties/123456789/calculatedMetrics/revenuePerSession", "displayName": "Revenue per session",
                                "calculatedMetricId": "revenuePerSession", "metricUnit": "CURRENCY",
                                "formula": "{{totalRevenue}} / {{sessions}}", "description": "Revenue divided by sessions"}]
    main.channel_groups = [
        {"name": "properties/123456789/channelGroups/1", "displayName": "Default Channel Group",
         "description": "Google's default channel group", "systemDefined": True, "primary": True, "groupingRule": []},
        {"name": "properties/123456789/channelGroups/2", "displayName": "Brand vs generic", "description": "Custom",
         "systemDefined": False, "primary": False, "groupingRule": []},
    ]
    blog = fake.add(Property("222333444", "Blog", "1001", "IKAUE"))
    blog.facts = make_facts(fake.today, days=10)
    store = fake.add(Property("987654321", "Store", "2002", "Client X", currency="USD", time_zone="America/New_York"))
    store.facts = make_facts(fake.today, days=5)
    return fake




def read_to_the_end(extraction: Any) -> Any:
    """An Extraction as the core finishes it: streamed rows read to the end, then its late
    ``source``/``extra`` settled (declarations.Extraction), so tests read final values."""
    from analytics_acp.declarations import settled

    extraction.rows = list(extraction.rows)
    extraction.source, extraction.extra = settled(extraction.source), settled(extraction.extra)
    return extraction
