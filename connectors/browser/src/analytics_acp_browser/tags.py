"""Tag vendor detection from the requests a page made, its GA4 hits and its dataLayer.

Each ``VENDORS`` rule names a vendor, a category and how to recognise its requests (host
suffixes and/or a path fragment) and, optionally, which query parameter or path piece holds
the tag id. Detection is pure: it takes the captured rows and returns the ``tags`` table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Vendor:
    """A recognisable tag: request hosts/paths and where its id lives."""

    name: str
    category: str
    hosts: tuple[str, ...] = ()
    path: str | None = None  # regex on the URL path
    id_param: str | None = None
    id_path: str | None = None  # regex with one group on the path
    id_prefix: tuple[str, ...] = ()  # keep ids with these prefixes only (GTM-, G-, AW-)


VENDORS: tuple[Vendor, ...] = (
    Vendor("Google Tag Manager", "tag_manager", path=r"/gtm\.js$", id_param="id", id_prefix=("GTM-",)),
    Vendor("Google tag (gtag.js)", "tag_manager", path=r"/gtag/js$", id_param="id"),
    Vendor("Google Analytics 4", "analytics", path=r"/g/collect$", id_param="tid"),
    Vendor("Universal Analytics", "analytics", hosts=("google-analytics.com",), path=r"^/(r/)?collect$", id_param="tid"),
    Vendor("Google Ads", "ads", hosts=("googleadservices.com", "googleads.g.doubleclick.net", "google.com"),
           path=r"/pagead/(conversion|viewthroughconversion)/", id_path=r"/(?:view)?(?:throughconversion|conversion)/(\d+)"),
    Vendor("Floodlight", "ads", hosts=("fls.doubleclick.net",), id_param="src"),
    Vendor("Meta Pixel", "ads", hosts=("facebook.com", "connect.facebook.net"), path=r"(^/tr/?$|fbevents\.js$)", id_param="id"),
    Vendor("LinkedIn Insight", "ads", hosts=("snap.licdn.com", "px.ads.linkedin.com"), id_param="pid"),
    Vendor("TikTok Pixel", "ads", hosts=("analytics.tiktok.com",), id_param="sdkid"),
    Vendor("Microsoft UET", "ads", hosts=("bat.bing.com",), id_param="ti"),
    Vendor("Pinterest Tag", "ads", hosts=("ct.pinterest.com", "s.pinimg.com"), id_param="tid"),
    Vendor("Hotjar", "experience", hosts=("hotjar.com", "hotjar.io"), id_path=r"/c/hotjar-(\d+)\.js"),
    Vendor("Microsoft Clarity", "experience", hosts=("clarity.ms",), id_path=r"/tag/([a-z0-9]+)"),
    Vendor("Adobe Analytics", "analytics", hosts=("omtrdc.net", "2o7.net"), path=r"/b/ss/", id_path=r"/b/ss/([^/]+)/"),
    Vendor("Adobe Launch", "tag_manager", hosts=("assets.adobedtm.com",)),
    Vendor("Matomo", "analytics", path=r"/(matomo|piwik)\.(php|js)$", id_param="idsite"),
    Vendor("Segment", "analytics", hosts=("cdn.segment.com", "api.segment.io")),
    Vendor("Mixpanel", "analytics", hosts=("mixpanel.com", "mxpnl.com")),
    Vendor("Amplitude", "analytics", hosts=("amplitude.com",)),
    Vendor("OneTrust", "consent", hosts=("cookielaw.org", "onetrust.com")),
    Vendor("Cookiebot", "consent", hosts=("cookiebot.com", "cookiebot.eu"), id_param="cbid"),
    Vendor("Didomi", "consent", hosts=("privacy-center.org",)),
    Vendor("Usercentrics", "consent", hosts=("usercentrics.eu",)),
    Vendor("TrustArc", "consent", hosts=("trustarc.com",)),
    Vendor("Quantcast Choice", "consent", hosts=("quantcast.mgr.consensu.org", "cmp.quantcast.com")),
    Vendor("CookieYes", "consent", hosts=("cookieyes.com",)),
    Vendor("Axeptio", "consent", hosts=("axept.io",)),
)

_MEASUREMENT_ID = re.compile(r"^(G|GT|AW|DC|GTM)-[A-Z0-9]+$")


def _host_ok(host: str, vendor: Vendor) -> bool:
    return not vendor.hosts or any(host == h or host.endswith("." + h) for h in vendor.hosts)


def match_vendor(url: str) -> tuple[Vendor, str | None] | None:
    """The vendor a request URL belongs to and the tag id it carries, or None."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    for vendor in VENDORS:
        if not _host_ok(host, vendor):
            continue
        if vendor.path and not re.search(vendor.path, parts.path):
            continue
        if not vendor.hosts and not vendor.path:
            continue
        tag_id = None
        if vendor.id_param:
            values = parse_qs(parts.query).get(vendor.id_param)
            tag_id = values[0] if values else None
        if tag_id is None and vendor.id_path:
            found = re.search(vendor.id_path, parts.path)
            tag_id = found.group(1) if found else None
        if tag_id and vendor.id_prefix and not tag_id.startswith(vendor.id_prefix):
            tag_id = None
        if vendor.name == "Google tag (gtag.js)" and tag_id and tag_id.startswith("AW-"):
            return _by_name("Google Ads"), tag_id
        return vendor, tag_id
    return None


def _by_name(name: str) -> Vendor:
    return next(v for v in VENDORS if v.name == name)


def consent_from_datalayer(pushes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consent mode commands (``gtag('consent', 'default'|'update', {...})``) in push order."""
    out = []
    for push in pushes:
        payload = push.get("payload")
        if isinstance(payload, list) and len(payload) >= 3 and payload[0] == "consent":
            out.append({"command": payload[1], "state": payload[2], "page_index": push.get("page_index")})
    return out


def detect(network: list[dict[str, Any]], hits: list[dict[str, Any]], pushes: list[dict[str, Any]],
           globals_seen: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rows of the ``tags`` table: one per (vendor, tag id), with request counts and first page."""
    rows: dict[tuple[str, str | None], dict[str, Any]] = {}

    def add(vendor: str, category: str, tag_id: str | None, page_index: Any, source: str, evidence: str | None) -> None:
        key = (vendor, tag_id)
        row = rows.get(key)
        if row is None:
            row = rows[key] = {
                "vendor": vendor, "category": category, "tag_id": tag_id, "first_page_index": page_index,
                "requests": 0, "sources": [], "evidence": (evidence or "")[:300] or None,
            }
        if source == "request":
            row["requests"] += 1
        if source not in row["sources"]:
            row["sources"].append(source)

    for req in network:
        found = match_vendor(req.get("url") or "")
        if found:
            vendor, tag_id = found
            add(vendor.name, vendor.category, tag_id, req.get("page_index"), "request", req.get("url"))
    for hit in hits:
        if hit.get("tid"):
            add("Google Analytics 4", "analytics", hit["tid"], hit.get("page_index"), "hit", None)
    for entry in globals_seen or []:
        for tag_id in entry.get("google_tag_ids") or []:
            if not _MEASUREMENT_ID.match(tag_id):
                continue
            prefix = tag_id.split("-")[0]
            google = {"GTM": "Google Tag Manager", "G": "Google Analytics 4", "AW": "Google Ads",
                      "DC": "Floodlight", "GT": "Google tag (gtag.js)"}[prefix]
            category = {"GTM": "tag_manager", "GT": "tag_manager", "G": "analytics"}.get(prefix, "ads")
            add(google, category, tag_id, entry.get("page_index"), "global", None)
        if entry.get("tcf_api"):
            add("IAB TCF API", "consent", None, entry.get("page_index"), "global", "window.__tcfapi")
    consent = consent_from_datalayer(pushes)
    if consent:
        last = consent[-1]
        add("Google consent mode", "consent", None, consent[0]["page_index"], "datalayer", None)
        row = rows[("Google consent mode", None)]
        row["consent_default"] = next((c["state"] for c in consent if c["command"] == "default"), None)
        row["consent_current"] = last["state"]
    gcs_values = [h.get("gcs") for h in hits if h.get("gcs")]
    if gcs_values:
        key = ("Google consent mode", None)
        if key not in rows:
            add("Google consent mode", "consent", None, hits[0].get("page_index"), "hit", None)
        rows[key]["gcs_seen"] = sorted(set(gcs_values))
    out = []
    for row in rows.values():
        row.setdefault("consent_default", None)
        row.setdefault("consent_current", None)
        row.setdefault("gcs_seen", None)
        out.append(row)
    return out


def summary(tags: list[dict[str, Any]]) -> dict[str, Any]:
    """Compact tag setup (autocontext block): ids by kind, consent platforms and state."""
    def ids(vendor: str) -> list[str]:
        return sorted({t["tag_id"] for t in tags if t["vendor"] == vendor and t["tag_id"]})

    consent_rows = [t for t in tags if t["category"] == "consent"]
    mode = next((t for t in consent_rows if t["vendor"] == "Google consent mode"), None)
    return {
        "ga4_measurement_ids": ids("Google Analytics 4"),
        "gtm_containers": ids("Google Tag Manager"),
        "google_tags": ids("Google tag (gtag.js)"),
        "google_ads_ids": ids("Google Ads"),
        "meta_pixels": ids("Meta Pixel"),
        "consent_platforms": sorted({t["vendor"] for t in consent_rows if t["vendor"] != "Google consent mode"}),
        "consent_mode": None if mode is None else {
            "default": mode.get("consent_default"), "current": mode.get("consent_current"), "gcs_seen": mode.get("gcs_seen"),
        },
        "other_vendors": sorted({t["vendor"] for t in tags if t["category"] not in ("consent",)
                                 and t["vendor"] not in ("Google Analytics 4", "Google Tag Manager",
                                                         "Google tag (gtag.js)", "Google Ads", "Meta Pixel")}),
    }
