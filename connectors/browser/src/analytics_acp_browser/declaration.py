"""What the browser connector declares: identity, defaults, setup schemas, resource_id,
catalog (8.7), tools and autocontext blocks. No Playwright import here (lean start-up), nor the modules that
capture pages (sessions, capture, blocks: lazy references, imported on the first call; cold start, tools/bench)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analytics_acp import (
    BlockSpec,
    CallContext,
    ConnectorInfo,
    Defaults,
    Info,
    NoArguments,
    ResourceIdSpec,
    ToolSpec,
    lazy,
)

from . import catalog, settings
from .arguments import CaptureArguments, ScreenshotArguments

VERSION = "0.1.0"
TTL_TAGS_S = 6 * 3600
TTL_ROBOTS_S = 24 * 3600
TTL_OVERVIEW_S = 6 * 3600

INSTRUCTIONS = (
    "Audit the analytics tagging of real web pages. capture opens a page (and optional steps: click, fill, press, "
    "scroll, wait_for, navigate) in a browser session kept per conversation, and returns datasets: GA4 hits decoded "
    "from /g/collect, dataLayer pushes, cookies, storage, network, tags, SEO, performance and console. "
    "By default only ga4_hits and datalayer are extracted; ask for others with tables. Analytics hits are answered "
    "locally and never reach the vendor. Use screenshot to see the page and close_session to start clean."
)


def info() -> ConnectorInfo:
    """The ConnectorInfo returned by the connector_declaration hook."""
    return ConnectorInfo(
        tools=tool_specs(), blocks=block_specs(),  # declared once: the core registers them
        id="browser",
        name="Browser (tagging audit)",
        version=VERSION,
        description="Captures GA4 hits, dataLayer, cookies, network, tags, SEO and performance of real pages with headless Chromium.",
        instructions=INSTRUCTIONS,
        resource_id=ResourceIdSpec(
            title="Site origin",
            description="The site's origin, scheme://host[:port] (a URL or bare host is reduced to it).",
            format="origin",
            examples=["https://shop.example.com", "http://127.0.0.1:8080"],
        ),
        defaults=Defaults(row_limit=25, cost_limit_usd=0, field_limit=catalog.FIELD_LIMIT, tables=list(catalog.DEFAULT_TABLES)),
        credentials_schema=settings.CREDENTIALS_SCHEMA,
        config_schema=settings.CONFIG_SCHEMA,
        cache_ttl_s=TTL_TAGS_S,
        table_catalog=list(catalog.CATALOG),
        icon="icon.svg",
        package_dir=Path(__file__).resolve().parents[2],
        access_rule_keys=[],
    )


async def close_session(arguments: NoArguments, ctx: CallContext) -> Info:
    """Close this conversation's browser session (cookies, storage and the open tab are discarded)."""
    from .sessions import BROWSER

    key = ctx.state_key
    if key is None:
        return Info(data={"closed": False, "reason": "No conversation id was sent; every call already uses a one-off session."})

    browser = ctx.state(BROWSER)

    async def _close() -> dict[str, Any]:
        session = await browser.pool.close_session(key)
        if session is None:
            return {"closed": False, "reason": "This conversation had no open browser session."}
        return {"closed": True, "pages_visited": session.pages_visited}

    if not browser.thread.started:  # nothing was ever started: do not start Playwright just to close nothing
        return Info(data={"closed": False, "reason": "This conversation had no open browser session."})
    return Info(data=await browser.thread.run(_close))


def tool_specs() -> list[ToolSpec]:
    """capture (multitable extraction), screenshot (info, 8.10), close_session (info)."""
    return [
        ToolSpec(
            name="capture",
            title="Capture a page",
            description=(
                "Open a page of the resource_id site in this conversation's browser (later calls continue the "
                "session), run actions and extract the tables asked for, with a manifest of pages and steps."
            ),
            run=lazy("analytics_acp_browser.capture:run"),
            arguments=CaptureArguments,
            kind="extraction",
            multitable=True,
            needs_credentials=False,
            default=True,
        ),
        ToolSpec(
            name="screenshot",
            title="Screenshot",
            description="PNG screenshot of the page this conversation's session has open, or of url. Returns screenshot_path; the host shows the image.",
            run=lazy("analytics_acp_browser.screenshot:run"),
            arguments=ScreenshotArguments,
            kind="info",
            needs_resource=False,
            needs_credentials=False,
        ),
        ToolSpec(
            name="close_session",
            title="Close the browser session",
            description="Close this conversation's browser session; the next capture starts with no cookies or storage.",
            run=close_session,
            kind="info",
            needs_resource=False,
            needs_credentials=False,
        ),
    ]


def block_specs() -> list[BlockSpec]:
    """Per-origin autocontext blocks with their TTLs."""
    return [
        BlockSpec(id="tag_setup", description="Tags detected on the home page: GA4 measurement ids, GTM containers, Google Ads, Meta pixel, consent platform and consent mode.",
                  fetch=lazy("analytics_acp_browser.blocks:tag_setup"), ttl_s=TTL_TAGS_S, needs_credentials=False),
        BlockSpec(id="robots_sitemap", description="robots.txt rules for all agents, listed sitemaps and the first sitemap's size.",
                  fetch=lazy("analytics_acp_browser.blocks:robots_sitemap"), ttl_s=TTL_ROBOTS_S, needs_credentials=False),
        BlockSpec(id="page_overview", description="Home page overview: status, title, description, canonical, JSON-LD types, third-party hosts, errors, LCP.",
                  fetch=lazy("analytics_acp_browser.blocks:page_overview"), ttl_s=TTL_OVERVIEW_S, needs_credentials=False),
    ]
