"""The ``capture`` tool: open a page in the conversation's browser session, run the steps,
and return every catalog table as one ``MultiExtraction`` (8.2.1). The core filters by the
effective selection, reports ``not_extracted`` and builds the model views."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Any

from analytics_acp import CallContext, MultiExtraction, TableOutput
from analytics_acp.errors import (
    AcpError,
    CredentialsInvalid,
    CredentialsMissing,
    InvalidArguments,
    ResourceNotFound,
    UpstreamError,
)
from analytics_acp.signals import CallSignals

from . import actions, catalog, cookies, performance, seo, storage, tags
from .arguments import CaptureArguments
from .recorder import Recorder
from .sessions import BROWSER, Browser, Session
from .settings import Access, Settings
from .urls import host_of, origin_of, resolve

SNAPSHOT_JS = (
    "() => ({seo: (" + seo.COLLECT_JS + ")(), perf: (" + performance.COLLECT_JS + ")(), storage: ("
    + storage.COLLECT_JS + ")(), globals: {google_tag_ids: Object.keys(window.google_tag_manager || {})"
    ".filter((k) => /^(G|GT|AW|DC|GTM)-/.test(k)), tcf_api: typeof window.__tcfapi === 'function'}})"
)

log = logging.getLogger(__name__)


def plan(arguments: CaptureArguments, ctx: CallContext, settings: Settings) -> tuple[str, list[actions.Step], str]:
    """Check what the model cannot know before the browser starts: the start URL and navigate steps against the
    host policy and the resource's origin (the steps themselves were checked by the argument model)."""
    base = ctx.resource_id
    start = resolve(arguments.url, base)
    policy = settings.hosts
    policy.check_page(start)
    if base and origin_of(start) != base:
        raise InvalidArguments(
            f"url {start} is not on the resource {base}. Pass resource_id {origin_of(start)} to audit that site "
            "(navigate actions may still leave the origin)."
        )
    steps = actions.steps_of(arguments.actions)
    for step in steps:
        if step.action == "navigate":
            step.fields["url"] = policy.check_page(resolve(step.fields["url"], start))
    return start, steps, arguments.wait_until


async def run(arguments: CaptureArguments, ctx: CallContext) -> MultiExtraction:
    """Tool entry point (async; the browser work runs on the browser thread)."""
    settings = Settings.from_config(ctx.config)
    access = Access.from_credentials(ctx.credentials)
    start, steps, wait_until = plan(arguments, ctx, settings)
    browser = ctx.state(BROWSER)
    outcome = await browser.thread.run(_capture, browser, ctx.state_key, settings, access, start, steps, wait_until, ctx.signals)
    ctx.warnings.extend(w for w in outcome["warnings"] if w not in ctx.warnings)
    return build(outcome, start)


async def _capture(browser: Browser, key: str | None, settings: Settings, access: Access, start: str,
                   steps: list[actions.Step], wait_until: str, signals: CallSignals | None = None) -> dict[str, Any]:
    warnings: list[str] = []
    signals = signals or CallSignals()
    pool = browser.pool
    session = await pool.acquire(key, settings, access, start, warnings)
    async with session.lock:
        # A cancel closes the page and context at once (issue 28), which also ends a step still waiting.
        signals.on_cancel(lambda: _discard_soon(browser, session))
        try:
            return await _flow(session, settings, start, steps, wait_until, warnings, signals)
        except AcpError:
            raise
        except Exception as exc:
            if signals.cancelled:  # the closed page made the running step fail
                raise UpstreamError("The capture was cancelled.") from exc
            if not session.context.browser or not session.context.browser.is_connected():
                raise UpstreamError("The browser crashed during the capture; it will be restarted on the next call.") from exc
            raise
        finally:
            session.next_page_index = session.recorder.next_page_index if session.recorder else session.next_page_index
            pool.origins[origin_of(start)] = dt.datetime.now().timestamp()
            if signals.cancelled:  # closed and out of the registry before the call ends
                await pool.discard(session)
            await pool.release(session)


def _discard_soon(browser: Browser, session: Session) -> None:
    # on_cancel callbacks run on the server's loop (or the tool's own thread): the close belongs on the browser's.
    browser.thread.loop().call_soon_threadsafe(lambda: asyncio.ensure_future(browser.pool.discard(session)))


async def _flow(session: Session, settings: Settings, start: str, steps: list[actions.Step], wait_until: str,
                warnings: list[str], signals: CallSignals) -> dict[str, Any]:
    continued = session.pages_visited > 0
    page = await session.main_page()
    rec = Recorder(session.next_page_index, host_of(start) or "")
    session.recorder = rec
    start_jar = cookies.jar(await session.context.cookies())
    executed: list[dict[str, Any]] = []
    await _goto(page, rec, start, wait_until, settings, first=True, has_auth=session.has_auth)
    if session.has_auth and rec.pages and rec.pages[-1]["status"] == 401:
        raise CredentialsInvalid(f"{start} refused the HTTP basic user and password of this source.")
    await _settle(page, rec, settings)
    await _snapshot(session, page, rec)
    signals.progress(1, len(steps) + 1, f"opened {start}")
    for number, step in enumerate(steps):
        if signals.cancelled:  # the client cancelled: no further step (issue 28); the context is being closed
            raise UpstreamError("The capture was cancelled.")
        record = {"step": number, **step.describe(), "page_index": rec.page_index_now()}
        try:
            if step.action == "navigate":
                await _goto(page, rec, step.fields["url"], wait_until, settings, first=False, has_auth=session.has_auth)
            else:
                await actions.run_step(page, step, settings.action_timeout_ms)
            await _settle(page, rec, settings)
            record["ok"] = True
        except AcpError:
            raise
        except Exception as exc:
            record["ok"] = False
            record["error"] = _short(exc)
            executed.append(record)
            rest = len(steps) - number - 1
            warnings.append(f"Step {number} ({step.action}) failed: {_short(exc)}."
                            + (f" The {rest} later step(s) were skipped." if rest else "")
                            + " The data captured until then is included.")
            for later in range(number + 1, len(steps)):
                executed.append({"step": later, **steps[later].describe(), "ok": False, "skipped": True})
            break
        record["url_after"] = page.url
        executed.append(record)
        await _snapshot(session, page, rec)
        signals.progress(number + 2, len(steps) + 1, f"step {number + 1} of {len(steps)} ({step.action})")
    await _snapshot(session, page, rec)
    end_jar = cookies.jar(await session.context.cookies())
    await rec.finish()
    session.pages_visited += len(rec.pages)
    warnings.extend(w for w in rec.warnings if w not in warnings)
    for page_info in rec.pages:
        snap = rec.snapshots.get(page_info["page_index"], {})
        page_info["title"] = (snap.get("seo") or {}).get("title")
        if page_info["status"] and page_info["status"] >= 400:
            warnings.append(f"Page {page_info['page_index']} ({page_info['url']}) answered HTTP {page_info['status']}.")
    return {
        "recorder": rec, "start_jar": start_jar, "end_jar": end_jar, "steps": executed, "warnings": warnings,
        "continued": continued, "storage_prev": session.storage_state, "session_key": session.key,
    }


async def _goto(page: Any, rec: Recorder, url: str, wait_until: str, settings: Settings, first: bool,
                has_auth: bool = False) -> None:
    try:
        await page.goto(url, wait_until=wait_until, timeout=settings.navigation_timeout_ms)
    except Exception as exc:
        text = _short(exc)
        if "ERR_BLOCKED_BY_CLIENT" in text:
            raise InvalidArguments(f"Opening {url} was blocked by the source's host rules.") from exc
        if "ERR_INVALID_AUTH_CREDENTIALS" in text:
            if has_auth:
                raise CredentialsInvalid(f"{url} refused the HTTP basic user and password of this source.") from exc
            raise CredentialsMissing(f"{url} asks for HTTP authentication. Ask the user to add the staging "
                                     "user and password in the source settings.") from exc
        if not first:
            raise
        if "Timeout" in text:
            raise UpstreamError(f"{url} did not finish loading within {settings.navigation_timeout_ms} ms. "
                                "Retry with wait_until 'domcontentloaded' or ask the user to raise navigation_timeout_ms.") from exc
        if "net::ERR_" in text:
            raise ResourceNotFound(f"{url} could not be opened ({text}). Check the URL and that the site is reachable.") from exc
        raise UpstreamError(f"{url} could not be opened ({text}).") from exc


async def _settle(page: Any, rec: Recorder, settings: Settings) -> None:
    """Let tags fire after a load or an action; follow a navigation the action started."""
    for _ in range(5):
        commits = rec.commits
        await page.wait_for_timeout(settings.settle_ms)
        if rec.pending_nav is not None:
            try:
                await page.wait_for_event("framenavigated", timeout=settings.navigation_timeout_ms)
            except Exception:
                break
        try:
            await page.wait_for_load_state("load", timeout=settings.navigation_timeout_ms)
        except Exception:
            break
        if rec.commits == commits and rec.pending_nav is None:
            break


async def _snapshot(session: Session, page: Any, rec: Recorder) -> None:
    """Latest SEO/performance/storage/globals reading of the current page, and the cookie jar."""
    if not rec.pages:
        return
    index = rec.current_page_index
    try:
        rec.snapshots[index] = await page.evaluate(SNAPSHOT_JS)
    except Exception as exc:  # the page is navigating: the previous reading stays
        log.debug("page snapshot not taken: %s", type(exc).__name__)
    try:
        rec.cookie_snapshots = [s for s in rec.cookie_snapshots if s[0] != index]
        rec.cookie_snapshots.append((index, cookies.jar(await session.context.cookies())))
    except Exception as exc:  # the context is closing: the cookie jar read before stays
        log.debug("cookie snapshot not taken: %s", type(exc).__name__)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def build(outcome: dict[str, Any], start: str) -> MultiExtraction:
    """All catalog tables from what the recorder saw (the core filters by selection)."""
    rec: Recorder = outcome["recorder"]
    host = host_of(start) or start
    today = dt.date.today().isoformat()
    storage_rows: list[dict[str, Any]] = []
    previous = outcome["storage_prev"]
    seo_rows, perf_rows, globals_seen = [], [], []
    for page_info in rec.pages:
        index = page_info["page_index"]
        snap = rec.snapshots.get(index) or {}
        if snap.get("storage"):
            storage_rows += storage.page_rows(index, snap["storage"], previous)
        seo_rows.append(seo.page_row(index, page_info["url"], page_info["final_url"], page_info["status"],
                                     page_info["x_robots"], snap.get("seo")))
        perf_rows.append(performance.page_row(index, page_info["final_url"] or page_info["url"], snap.get("perf")))
        globals_seen.append({**(snap.get("globals") or {}), "page_index": index})
    network_rows = rec.network_rows()
    rows = {
        "ga4_hits": rec.hits,
        "datalayer": rec.pushes,
        "cookies": cookies.diff_rows(outcome["start_jar"], rec.cookie_snapshots, outcome["end_jar"], host),
        "storage": storage_rows,
        "network": network_rows,
        "tags": tags.detect(network_rows, rec.hits, rec.pushes, globals_seen),
        "seo": seo_rows,
        "performance": perf_rows,
        "console": rec.console,
    }
    headers = dict(catalog.HEADERS)
    headers["ga4_hits"] = catalog.ga4_headers(rec.hits)
    tables = []
    for name in catalog.NAMES:
        table_rows = rows[name]
        names = [h.name for h in headers[name]]
        table_rows = [{k: row.get(k) for k in names} for row in table_rows]
        view = catalog.ga4_view(rec.hits) if name == "ga4_hits" else catalog.VIEWS.get(name)
        tables.append(TableOutput(
            name=name, rows=table_rows, title=catalog.TITLES[name], headers=headers[name], model_view=view,
            description=f"{catalog.TITLES[name]} of {host} in a session started with {start}.",
            dates=[today], primary=name == "ga4_hits",
        ))
    manifest = {
        "origin": origin_of(start),
        "start_url": start,
        "session": "continued" if outcome["continued"] else "new",
        "pages": [{k: p[k] for k in ("page_index", "url", "final_url", "status", "title")} for p in rec.pages],
        "steps": outcome["steps"],
        "hits_answered_locally": sum(1 for h in rec.hits if h.get("delivery") == "answered_locally"),
    }
    if outcome["session_key"] is None:
        manifest["note"] = "No conversation id was sent, so this capture ran in a one-off browser session."
    return MultiExtraction(
        tables=tables,
        description=f"Browser capture of {host} in a session started with {start}.",
        title=f"Browser {host}",
        dates=[today],
        manifest=manifest,
        source={"browser": "chromium", "pages": len(rec.pages), "requests": len(network_rows)},
        arguments=None,
    )
