"""Network requests: which ones are analytics hits (answered locally by default) and the
``network`` table rows built from Playwright's request/response events."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from . import ga4
from .urls import host_of, same_site

# Requests that send measurement data to a vendor. Unless config forward_hits is on they are
# captured and answered locally (204), so auditing a site never pollutes its analytics.
HIT_RULES: tuple[tuple[str | None, str], ...] = (
    (None, r"/g/collect$"),  # GA4, any host (also server-side tagging endpoints)
    ("google-analytics.com", r"^/(j/|r/)?collect$"),  # Universal Analytics
    ("analytics.google.com", r"/collect$"),
    ("stats.g.doubleclick.net", r"collect"),
    ("googleadservices.com", r"^/pagead/conversion/"),
    ("google.com", r"^/pagead/1p-(conversion|user-list)/"),
    ("googleads.g.doubleclick.net", r"^/pagead/viewthroughconversion/"),
    ("facebook.com", r"^/tr/?$"),
    ("bat.bing.com", r"^/action/"),
    ("px.ads.linkedin.com", r"collect"),
    ("analytics.tiktok.com", r"^/api/v2/pixel"),
    ("ct.pinterest.com", r"^/v3/"),
    (None, r"/b/ss/"),  # Adobe Analytics
    (None, r"/(matomo|piwik)\.php$"),
    ("api.segment.io", r"^/v1/"),
    ("clarity.ms", r"^/collect"),
)


def is_analytics_hit(url: str) -> bool:
    """True when the request sends measurement data to an analytics/ads vendor."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    for rule_host, path in HIT_RULES:
        if rule_host and not (host == rule_host or host.endswith("." + rule_host)):
            continue
        if re.search(path, parts.path):
            return True
    return False


def is_ga4_hit(url: str) -> bool:
    """GA4 /g/collect request (decoded into ga4_hits)."""
    return ga4.is_collect_url(url)


def request_row(index: int, page_index: int, url: str, method: str, resource_type: str, start_ms: float,
                site_host: str, is_navigation: bool) -> dict[str, Any]:
    """A fresh ``network`` row (status, bytes, timing filled by later events)."""
    host = host_of(url)
    return {
        "page_index": page_index,
        "request_index": index,
        "url": url,
        "host": host,
        "method": method,
        "resource_type": resource_type,
        "status": None,
        "mime_type": None,
        "bytes": None,
        "start_ms": round(start_ms, 1),
        "duration_ms": None,
        "third_party": bool(host) and not same_site(host or "", site_host),
        "blocked": False,
        "disposition": "network",
        "failure": None,
        "is_navigation": is_navigation,
    }
