"""inspect_urls (extraction): the URL Inspection API for a list of URLs or a host table (8.8).

One typed row per URL. Requests run in a small thread pool (bounded concurrency; each thread
has its own HTTP connection). The budget ledger is charged before anything is sent; URLs that
were never sent are given back. A URL the API rejects (400: not under the property, malformed)
becomes a row with ``error``; a failure of the whole call (credentials, property, quota, 5xx
after retries) fails the call: no partial table is delivered as complete.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from analytics_acp import CallContext, Extraction, Header, InvalidArguments, UpstreamError

from .arguments import InspectUrlsArguments, absolute_url
from .budget import DAILY_LIMIT, MINUTE_LIMIT, Ledger
from .client import Client
from .state import LEDGER

CONCURRENCY = 5
MAX_URLS = MINUTE_LIMIT  # one call never needs more than a minute of quota

HEADERS = [
    Header("url", "string", "dimension", "Inspected URL"),
    Header("verdict", "string", "attribute", "Index status verdict: PASS, PARTIAL, FAIL or NEUTRAL"),
    Header("coverage_state", "string", "attribute", "Coverage state, e.g. 'Submitted and indexed'"),
    Header("indexing_state", "string", "attribute", "Whether a noindex rule blocks indexing"),
    Header("page_fetch_state", "string", "attribute", "Whether Google could fetch the page"),
    Header("robots_txt_state", "string", "attribute", "ALLOWED or DISALLOWED by robots.txt"),
    Header("last_crawl_time", "datetime", "attribute", "Last crawl by the primary crawler"),
    Header("crawled_as", "string", "attribute", "Primary crawler: DESKTOP or MOBILE"),
    Header("google_canonical", "string", "attribute", "Canonical URL chosen by Google"),
    Header("user_canonical", "string", "attribute", "Canonical URL declared by the page"),
    Header("sitemaps", "json", "attribute", "Sitemaps that list the URL"),
    Header("referring_urls", "integer", "metric", "Number of known referring URLs"),
    Header("mobile_usability_verdict", "string", "attribute", "Mobile usability verdict"),
    Header("mobile_usability_issues", "json", "attribute", "Mobile usability issue types"),
    Header("rich_results_verdict", "string", "attribute", "Rich results verdict"),
    Header("rich_results_types", "json", "attribute", "Rich result types detected"),
    Header("amp_verdict", "string", "attribute", "AMP verdict, when the page has an AMP version"),
    Header("inspection_link", "string", "attribute", "Link to the inspection in Search Console"),
    Header("error", "string", "attribute", "Why this URL could not be inspected"),
]
COLUMNS = [h.name for h in HEADERS]


def to_row(url: str, result: dict[str, Any] | None, error: str | None = None) -> tuple[Any, ...]:
    """One inspection result -> a row in COLUMNS order."""
    result = result or {}
    idx = result.get("indexStatusResult") or {}
    mob = result.get("mobileUsabilityResult") or {}
    rich = result.get("richResultsResult") or {}
    amp = result.get("ampResult") or {}
    issues = [i.get("issueType") for i in mob.get("issues") or [] if i.get("issueType")]
    types = [d.get("richResultType") for d in rich.get("detectedItems") or [] if d.get("richResultType")]
    referring = idx.get("referringUrls")
    return (
        url, idx.get("verdict"), idx.get("coverageState"), idx.get("indexingState"), idx.get("pageFetchState"),
        idx.get("robotsTxtState"), idx.get("lastCrawlTime"), idx.get("crawledAs"), idx.get("googleCanonical"),
        idx.get("userCanonical"), idx.get("sitemap") if idx.get("sitemap") is not None else None,
        len(referring) if isinstance(referring, list) else None, mob.get("verdict"), issues if mob else None,
        rich.get("verdict"), types if rich else None, amp.get("verdict"), result.get("inspectionResultLink"), error,
    )


def urls_from_table(ctx: CallContext, ref: str, column: str | None) -> list[str]:
    """The URL column of a host table (8.8): ``url_column``, else ``url``, else ``page`` (a search_analytics table)."""
    table = ctx.read_table_sync(ref)
    columns = table.columns
    name = column or next((c for c in ("url", "page") if c in columns), None)
    if name is None or name not in columns:
        wanted = f"column {column!r}" if column else "a url or page column"
        raise InvalidArguments(f"Host table {ref!r} has no {wanted}. Its columns: {', '.join(columns)}. "
                               "Pass url_column with the column that holds the URLs.")
    return [str(r[name]) for r in table.rows if r.get(name) not in (None, "")]


def collect_urls(args: InspectUrlsArguments, ctx: CallContext) -> list[str]:
    """URLs from ``urls`` (checked by the model) and/or ``table_ref``, de-duplicated in order; at most MAX_URLS."""
    urls = list(args.urls)
    if args.table_ref:
        from_table = [u.strip() for u in urls_from_table(ctx, args.table_ref, args.url_column) if u.strip()]
        bad = [u for u in from_table if not absolute_url(u)]
        if bad:
            raise InvalidArguments(f"URLs must be absolute http(s) URLs; not valid in {args.table_ref!r}: "
                                   f"{', '.join(bad[:5])}.")
        urls += from_table
    unique = list(dict.fromkeys(urls))
    if not unique:
        raise InvalidArguments(f"Host table {args.table_ref!r} has no URLs to inspect.")
    if len(unique) > MAX_URLS:
        raise InvalidArguments(f"{len(unique)} URLs is more than one call inspects ({MAX_URLS}, one minute of the API's "
                               "quota). Split the list into several calls.")
    return unique


class _NotSent(Exception):
    """A URL whose inspection was not started because the call had already failed (never surfaces:
    the failure that stopped the call comes first in submission order)."""


def run_inspect_urls(args: InspectUrlsArguments, ctx: CallContext) -> Extraction:
    """The inspect_urls tool."""
    site = ctx.require_resource_id()
    urls = collect_urls(args, ctx)
    language = args.language_code or None
    client = Client(ctx)
    client.ensure_token()  # one token fetch before the threads start
    ledger = Ledger(ctx.cache_dir, memory=ctx.state(LEDGER))
    ledger.reserve(site, len(urls))
    lock = threading.Lock()
    stopped = threading.Event()
    sent = done = 0

    def one(url: str) -> tuple[Any, ...]:
        nonlocal sent, done
        if stopped.is_set():  # a call-level failure already ended the call: never sent
            raise _NotSent
        with lock:
            if ctx.cancelled:  # issue 28: the client cancelled; no further inspection is sent
                stopped.set()
                raise UpstreamError("The URL inspections were cancelled.")
            sent += 1
        try:
            row = to_row(url, client.inspect(site, url, language))
        except InvalidArguments as exc:  # a 400 for this URL only
            row = to_row(url, None, exc.message)
        except BaseException:
            # Set here, in the worker: the caller may wake up only after the pool has started more URLs.
            stopped.set()
            raise
        with lock:  # under the lock: the counts reach the client in order
            done += 1
            ctx.progress(done, len(urls), f"{done} of {len(urls)} URLs inspected")
        return row

    pool = ThreadPoolExecutor(max_workers=min(CONCURRENCY, len(urls)), thread_name_prefix="gsc-inspect")
    try:
        futures = [pool.submit(one, u) for u in urls]
        rows = [f.result() for f in futures]  # the first call-level failure propagates
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # URLs not started are never sent
        ledger.release(site, len(urls) - sent)
    failed = sum(1 for r in rows if r[-1])
    warnings = [f"{failed} of {len(rows)} URLs could not be inspected; see the error column."] if failed else []
    used, _ = ledger.used(site)
    return Extraction(
        rows=rows, columns=COLUMNS, headers=HEADERS,
        description=f"Search Console URL Inspection of {len(rows)} URLs in property {site} (index status, "
                    "canonical, robots, mobile usability, rich results).",
        warnings=warnings,
        extra={"inspections_used_today": used, "daily_limit": DAILY_LIMIT},
        arguments={"urls_inspected": len(rows)},
        source={"api": "searchconsole v1 urlInspection.index.inspect", "requests": sent, "concurrency": CONCURRENCY},
    )
