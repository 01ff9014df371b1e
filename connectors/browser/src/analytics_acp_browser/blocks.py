"""Autocontext blocks of an origin (7.1): tag setup, robots.txt + sitemap, page overview.

``tag_setup`` and ``page_overview`` come from one visit of the origin's home page in a
one-off browser session (never the conversation's), shared for a minute so the two blocks
cost one page load; the core caches each block per origin with its TTL.
"""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

from analytics_acp import CallContext

from . import capture, tags
from .sessions import BROWSER, Browser, SessionPool
from .settings import Access, Settings
from .urls import host_of

MAX_SITEMAP_BYTES = 5 * 1024 * 1024


async def _probe(browser: Browser, origin: str, settings: Settings, access: Access) -> dict[str, Any]:
    """Visit the origin's home page once (kept for a minute in ``browser.probes``) and return the capture outcome."""
    key = (origin, access.fingerprint())
    cached = browser.probes.get(key)
    if cached is not None:
        return cached
    outcome = await capture._capture(browser, None, settings, access, origin + "/", [], "load")
    browser.probes.put(key, outcome)
    return outcome


def _start(resource_id: str, ctx: CallContext) -> tuple[Settings, Access, str]:
    settings = Settings.from_config(ctx.config)
    access = Access.from_credentials(ctx.credentials)
    settings.hosts.check_page(resource_id + "/")
    return settings, access, resource_id


async def tag_setup(resource_id: str, ctx: CallContext) -> dict[str, Any]:
    """Measurement ids, GTM containers, ads tags, consent platform and consent mode of the home page."""
    settings, access, origin = _start(resource_id, ctx)
    browser = ctx.state(BROWSER)
    outcome = await browser.thread.run(_probe, browser, origin, settings, access)
    table = capture.build(outcome, origin + "/")
    rows = next(t.rows for t in table.tables if t.name == "tags")
    out = tags.summary(list(rows))
    out["hits_on_load"] = sorted({h.get("en") for h in outcome["recorder"].hits if h.get("en")})
    out["datalayer_events_on_load"] = [p["event"] for p in outcome["recorder"].pushes if p.get("event")][:20]
    return out


async def page_overview(resource_id: str, ctx: CallContext) -> dict[str, Any]:
    """Status, title, description, canonical, JSON-LD types and third parties of the start URL."""
    settings, access, origin = _start(resource_id, ctx)
    browser = ctx.state(BROWSER)
    outcome = await browser.thread.run(_probe, browser, origin, settings, access)
    rec = outcome["recorder"]
    page = rec.pages[-1] if rec.pages else {}
    snap = rec.snapshots.get(page.get("page_index"), {}) if page else {}
    seo = snap.get("seo") or {}
    perf = snap.get("perf") or {}
    third = Counter(r["host"] for r in rec.network_rows() if r["third_party"] and r["host"])
    return {
        "url": origin + "/",
        "final_url": page.get("final_url"),
        "status": page.get("status"),
        "title": seo.get("title"),
        "meta_description": seo.get("meta_description"),
        "canonical": seo.get("canonical"),
        "lang": seo.get("lang"),
        "h1": seo.get("h1"),
        "json_ld_types": seo.get("json_ld_types"),
        "requests": len(rec.requests),
        "third_party_hosts": [h for h, _ in third.most_common(10)],
        "console_errors": sum(1 for c in rec.console if c["level"] == "error"),
        "lcp_ms": perf.get("lcp_ms"),
        "load_ms": perf.get("load_ms"),
    }


async def robots_sitemap(resource_id: str, ctx: CallContext) -> dict[str, Any]:
    """robots.txt rules for all agents and the first sitemap's size."""
    settings, access, origin = _start(resource_id, ctx)
    browser = ctx.state(BROWSER)
    return await browser.thread.run(_robots, browser.pool, origin, settings, access)


async def _robots(pool: SessionPool, origin: str, settings: Settings, access: Access) -> dict[str, Any]:
    session = await pool.acquire(None, settings, access, origin + "/", [])
    try:
        request = session.context.request
        out: dict[str, Any] = {"robots_url": origin + "/robots.txt"}
        try:
            response = await request.get(origin + "/robots.txt", timeout=settings.navigation_timeout_ms, max_redirects=5)
            out["robots_status"] = response.status
            text = await response.text() if response.ok else ""
        except Exception as exc:
            out["robots_status"] = None
            out["robots_error"] = str(exc).splitlines()[0][:200]
            text = ""
        out.update(parse_robots(text))
        sitemaps = out["sitemaps"] or [origin + "/sitemap.xml"]
        target = next((s for s in sitemaps if s.startswith(("http://", "https://")) and session.policy.may_open(s)), None)
        if target:
            out["sitemap"] = await _sitemap(request, target, settings)
        return out
    finally:
        await pool.release(session)


def parse_robots(text: str) -> dict[str, Any]:
    """Rules for ``*`` (disallow/allow counts, first disallows), the user agents named and sitemaps."""
    agents: list[str] = []
    groups: dict[str, dict[str, list[str]]] = {}
    current: list[str] = []
    last_was_agent = False
    sitemaps: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if ":" not in line:
            continue
        field, _, value = line.partition(":")
        field, value = field.strip().lower(), value.strip()
        if field == "user-agent":
            if not last_was_agent:
                current = []
            current.append(value.lower())
            agents.append(value)
            groups.setdefault(value.lower(), {"allow": [], "disallow": []})
            last_was_agent = True
            continue
        last_was_agent = False
        if field == "sitemap":
            sitemaps.append(value)
        elif field in ("allow", "disallow"):
            for agent in current:
                if value or field == "allow":
                    groups[agent][field].append(value)
    star = groups.get("*", {"allow": [], "disallow": []})
    return {
        "user_agents": list(dict.fromkeys(agents))[:20],
        "disallow_count": len(star["disallow"]),
        "allow_count": len(star["allow"]),
        "disallow_sample": star["disallow"][:10],
        "blocks_everything": "/" in star["disallow"],
        "sitemaps": sitemaps[:10],
    }


async def _sitemap(request: Any, url: str, settings: Settings) -> dict[str, Any]:
    info: dict[str, Any] = {"url": url}
    try:
        response = await request.get(url, timeout=settings.navigation_timeout_ms, max_redirects=5)
        info["status"] = response.status
        if not response.ok:
            return info
        body = await response.body()
    except Exception as exc:
        info["error"] = str(exc).splitlines()[0][:200]
        return info
    info.update(parse_sitemap(body))
    return info


def parse_sitemap(body: bytes) -> dict[str, Any]:
    """Kind (urlset/sitemapindex), entry count, sample locations and the latest lastmod."""
    if body[:2] == b"\x1f\x8b":
        try:
            body = gzip.decompress(body)[:MAX_SITEMAP_BYTES]
        except OSError:
            return {"error": "gzip sitemap could not be decompressed"}
    if len(body) > MAX_SITEMAP_BYTES:
        return {"error": "sitemap larger than 5 MiB; not parsed"}
    if b"<!DOCTYPE" in body[:4096] or b"<!ENTITY" in body[:4096]:
        return {"error": "sitemap declares a DOCTYPE; not parsed"}
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        return {"error": f"sitemap is not valid XML ({exc})"}
    kind = root.tag.rsplit("}", 1)[-1]
    entries = [child for child in root if child.tag.rsplit("}", 1)[-1] in ("url", "sitemap")]

    def text_of(node: Any, name: str) -> str | None:
        for child in node:
            if child.tag.rsplit("}", 1)[-1] == name:
                return (child.text or "").strip()
        return None

    lastmods = [m for m in (text_of(e, "lastmod") for e in entries) if m]
    return {
        "kind": kind,
        "entries": len(entries),
        "sample": [text_of(e, "loc") for e in entries[:5]],
        "latest_lastmod": max(lastmods) if lastmods else None,
        "hosts": sorted({h for h in (host_of(text_of(e, "loc") or "") for e in entries[:1000]) if h})[:5],
    }
