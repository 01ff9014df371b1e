"""capture / screenshot / close_session with real headless Chromium against the test shop.

Calls go straight to the tool run functions with a hand-built CallContext (the end-to-end
tests in test_browser_e2e.py go through the ACP runtime and host client).
"""

import asyncio
import os
import signal
import uuid
from pathlib import Path

import pytest
from analytics_acp import NoArguments
from analytics_acp.errors import CredentialsInvalid, CredentialsMissing, InvalidArguments
from analytics_acp_browser import blocks, capture, screenshot
from analytics_acp_browser.arguments import CaptureArguments, ScreenshotArguments
from analytics_acp_browser.declaration import close_session
from analytics_acp_browser.sessions import CRASH_WARNING, EVICTED_WARNING

pytestmark = pytest.mark.browser

FLOW = [
    {"action": "click", "selector": "#to-product"},
    {"action": "fill", "selector": "#email", "value": "a@b.c"},
    {"action": "click", "selector": "#add"},
    {"action": "wait_for", "selector": "#done:has-text('added')"},
    {"action": "navigate", "url": "/checkout"},
    {"action": "scroll", "to": "bottom"},
]


def conv() -> str:
    return "conv-" + uuid.uuid4().hex[:8]


def tables(result):
    return {t.name: t.rows for t in result.tables}


async def test_multi_page_flow_fills_every_table(site, slow_home, make_ctx):
    ctx = make_ctx(resource_id=site.origin, conversation_id=conv())
    result = await capture.run(CaptureArguments.parse({"url": "/", "actions": FLOW}), ctx)
    t = tables(result)
    o = site.origin

    # manifest: pages and steps (8.2.1), always delivered
    m = result.manifest
    assert [(p["page_index"], p["url"], p["status"], p["title"]) for p in m["pages"]] == [
        (0, o + "/", 200, "Test Shop"), (1, o + "/product", 200, "Product"), (2, o + "/checkout", 200, "Checkout")]
    assert [s["action"] for s in m["steps"]] == [s["action"] for s in FLOW] and all(s["ok"] for s in m["steps"])
    assert m["session"] == "new" and m["start_url"] == o + "/"
    assert [x.name for x in result.tables][0] == "ga4_hits" and result.tables[0].primary

    # ga4_hits: the GET page_view, both lines of the batched beacon, the click's add_to_cart
    hits = t["ga4_hits"]
    assert [(h["page_index"], h["en"], h["method"]) for h in hits] == [
        (0, "page_view", "GET"), (0, "view_item", "POST"), (0, "scroll", "POST"),
        (1, "page_view", "GET"), (1, "view_item", "POST"), (1, "scroll", "POST"), (1, "add_to_cart", "GET")]
    pv = hits[0]
    assert (pv["tid"], pv["cid"], pv["sid"], pv["sct"], pv["seg"], pv["gcs"], pv["gcd"], pv["_p"]) == (
        "G-TEST123", "111.222", "1700000000", 3, 1, "G111", "13l3l3l3l1", "PLOAD1")
    assert pv["dl"] == o + "/" and pv["dt"] == "Test Shop" and pv["ep.page_type"] == "home"
    assert pv["delivery"] == "answered_locally" and pv["endpoint"] == "https://region1.google-analytics.com/g/collect"
    vi, sc = hits[1], hits[2]
    assert (vi["batch_index"], vi["batch_size"], sc["batch_index"]) == (0, 2, 1)
    assert vi["epn.value"] == 19.98 and vi["ep.currency"] == "EUR" and vi["_s"] == 2
    assert vi["items"] == [{"item_id": "SKU_1", "item_name": "T-shirt", "price": 9.99, "quantity": 2, "color": "red"},
                           {"item_id": "SKU_2", "item_name": "Cap", "price": 5, "quantity": 1}]
    assert vi["item_count"] == 2
    assert sc["epn.percent_scrolled"] == 90 and sc["up.plan"] == "gold" and sc["upn.visits"] == 4 and sc["tid"] == "G-TEST123"
    atc = hits[6]
    assert atc["dr"] == o + "/" and atc["epn.value"] == 9.99
    assert atc["items"] == [{"item_id": "SKU_1", "item_name": "T-shirt", "price": 9.99, "quantity": 1}]
    assert result.manifest["hits_answered_locally"] == 7

    # datalayer: every push, in order, snapshotted at push time
    dl = t["datalayer"]
    assert [(d["page_index"], d["event"]) for d in dl] == [
        (0, None), (0, "gtag:consent:default"), (0, "gtag:js"), (0, "gtag:config:G-TEST123"),
        (1, "view_item"), (1, "gtag:js"), (1, "gtag:config:G-TEST123"), (1, "add_to_cart"),
        (1, "gtag:event:add_to_cart"), (2, "begin_checkout")]
    assert dl[0]["payload"] == {"pageType": "home", "user": {"loggedIn": False}} and dl[0]["initial"] is True
    assert dl[7]["payload"] == {"event": "add_to_cart", "email": "a@b.c"}
    assert dl[1]["payload"] == ["consent", "default", {"ad_storage": "denied", "analytics_storage": "granted"}]
    assert [d["push_index"] for d in dl] == list(range(10))

    # cookies: created, created-then-updated, created-then-deleted, created on page 2
    ck = {c["name"]: c for c in t["cookies"]}
    assert set(ck) == {"srv", "js_cookie", "temp", "step"}
    assert (ck["srv"]["change"], ck["srv"]["value_onexit"], ck["srv"]["page_index"]) == ("created", "1", 0)
    assert (ck["js_cookie"]["change"], ck["js_cookie"]["value_onexit"]) == ("created", "b")
    assert (ck["temp"]["change"], ck["temp"]["value_onexit"]) == ("deleted", None)
    assert (ck["step"]["change"], ck["step"]["page_index"], ck["step"]["session"]) == ("created", 2, False)
    assert ck["step"]["expires"].endswith("Z") and all(c["first_party"] for c in ck.values())

    # storage
    st = [(s["page_index"], s["storage"], s["key"], s["change"], s["value"]) for s in t["storage"]]
    assert (0, "local", "ls_key", "created", "v1") in st and (0, "session", "ss_key", "created", "s1") in st
    assert (1, "local", "ls_key", "updated", "v2") in st and (1, "local", "cart", "created", "1") in st
    assert (2, "local", "cart", "unchanged", "1") in st

    # network: the slow image, the hits answered locally, documents
    net = t["network"]
    slow = next(r for r in net if r["url"].endswith("/slow?ms=600"))
    assert (slow["resource_type"], slow["status"], slow["bytes"], slow["disposition"]) == ("image", 200, 14, "network")
    assert slow["duration_ms"] >= 600  # the server sleeps 600 ms before answering: the timing is captured
    collects = [r for r in net if "/g/collect" in r["url"]]
    assert len(collects) == 5 and all(r["disposition"] == "answered_locally" and r["third_party"] for r in collects)
    assert {r["resource_type"] for r in collects} == {"fetch", "ping"}
    assert {(r["resource_type"], r["method"]) for r in collects} == {("fetch", "GET"), ("ping", "POST")}
    docs = [(r["page_index"], r["url"]) for r in net if r["resource_type"] == "document"]
    assert docs == [(0, o + "/"), (1, o + "/product"), (2, o + "/checkout")]

    # tags
    tg = {(r["vendor"], r["tag_id"]) for r in t["tags"]}
    assert {("Google Analytics 4", "G-TEST123"), ("Google Tag Manager", "GTM-ABC123"), ("Google consent mode", None)} <= tg
    consent = next(r for r in t["tags"] if r["vendor"] == "Google consent mode")
    assert consent["consent_default"] == {"ad_storage": "denied", "analytics_storage": "granted"}
    assert consent["gcs_seen"] == ["G111"]

    # seo
    seo = t["seo"]
    assert seo[0]["json_ld_types"] == ["Organization", "WebSite"] and seo[0]["canonical"] == o + "/"
    assert seo[0]["meta_description"] == "A shop for tests" and seo[0]["hreflang"] == [{"hreflang": "es", "href": o + "/es/"}]
    assert seo[0]["robots"] == "index,follow" and seo[0]["status"] == 200 and seo[0]["title"] == "Test Shop"
    assert seo[0]["headings"]["h2"] == 1 and seo[0]["open_graph"] == {"og:title": "Test Shop OG"}
    assert seo[2]["x_robots_tag"] == "noindex" and seo[2]["h1"] == ["Checkout"]

    # performance and console
    assert [p["page_index"] for p in t["performance"]] == [0, 1, 2]
    assert all(p["load_ms"] is not None and p["ttfb_ms"] is not None for p in t["performance"])
    cons = [(c["page_index"], c["level"], c["kind"], c["text"]) for c in t["console"]]
    assert cons == [(0, "error", "console", "home console error"), (0, "warning", "console", "home warning"),
                    (2, "error", "pageerror", "checkout boom")]
    assert ctx.warnings == []


async def test_conversation_keeps_state_across_calls(site, make_ctx, no_settle):
    key = conv()
    first = await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=key))
    assert first.manifest["session"] == "new"
    second = await capture.run(CaptureArguments.parse({"url": "/checkout"}), make_ctx(resource_id=site.origin, conversation_id=key))
    assert second.manifest["session"] == "continued"
    assert [p["page_index"] for p in second.manifest["pages"]] == [1]  # page_index continues in the session
    ck = {c["name"]: c for c in tables(second)["cookies"]}
    assert (ck["js_cookie"]["change"], ck["js_cookie"]["value_onload"], ck["js_cookie"]["value_onexit"]) == ("updated", "a", "b")
    assert ck["srv"]["change"] == "unchanged" and ck["temp"]["change"] == "deleted"
    st = {(s["key"], s["change"]) for s in tables(second)["storage"]}
    assert ("ls_key", "unchanged") in st  # localStorage survived from the first call

    # another conversation has its own, empty session
    other = await capture.run(CaptureArguments.parse({"url": "/checkout"}), make_ctx(resource_id=site.origin, conversation_id=conv()))
    assert other.manifest["session"] == "new"
    assert {c["name"]: c["change"] for c in tables(other)["cookies"]}["js_cookie"] == "created"

    # session_id is the fallback key (5.2)
    sid = conv()
    await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, session_id=sid))
    again = await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, session_id=sid))
    assert again.manifest["session"] == "continued"


async def test_no_key_means_a_fresh_session_per_call(site, make_ctx, no_settle):
    for _ in range(2):
        result = await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin))
        assert result.manifest["session"] == "new" and "one-off" in result.manifest["note"]
        assert {c["name"]: c["change"] for c in tables(result)["cookies"]}["srv"] == "created"


async def test_rejected_urls(site, make_ctx):
    ctx = make_ctx(resource_id=site.origin, conversation_id=conv())
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi", "chrome://version"):
        with pytest.raises(InvalidArguments, match="Only http and https"):
            await capture.run(CaptureArguments.parse({"url": bad}), ctx)
        with pytest.raises(InvalidArguments, match="Only http and https"):
            await capture.run(CaptureArguments.parse({"url": "/", "actions": [{"action": "navigate", "url": bad}]}), ctx)
        with pytest.raises(InvalidArguments):
            await screenshot.run(ScreenshotArguments.parse({"url": bad}), ctx)
    with pytest.raises(InvalidArguments, match="not on the resource"):
        await capture.run(CaptureArguments.parse({"url": "https://other.test/"}), ctx)
    with pytest.raises(InvalidArguments, match=r"^Invalid actions\.0\.action: must be one of"):  # the model's refusal
        CaptureArguments.parse({"url": "/", "actions": [{"action": "eval", "selector": "x"}]})
    with pytest.raises(InvalidArguments, match="^Invalid wait_until"):
        CaptureArguments.parse({"url": "/", "wait_until": "never"})


async def test_hits_are_answered_locally_unless_forward_hits(site, make_ctx):
    site.hits.clear()
    local = await capture.run(CaptureArguments.parse({"url": "/?fp=1"}), make_ctx(resource_id=site.origin, conversation_id=conv()))
    hits = tables(local)["ga4_hits"]
    assert [h["en"] for h in hits] == ["page_view", "view_item", "scroll"]
    assert all(h["delivery"] == "answered_locally" and h["endpoint"] == site.origin + "/g/collect" for h in hits)
    assert site.hits == []  # the audit did not reach the (first-party) collect endpoint

    forwarded = await capture.run(CaptureArguments.parse({"url": "/?fp=1"}), make_ctx(resource_id=site.origin, conversation_id=conv(),
                                                             config={"forward_hits": True}))
    assert all(h["delivery"] == "forwarded" for h in tables(forwarded)["ga4_hits"])
    methods = sorted(h["method"] for h in site.hits)
    assert methods == ["GET", "POST"]
    post = next(h for h in site.hits if h["method"] == "POST")
    assert post["body"].split("\r\n")[1].startswith("en=scroll")


async def test_host_rules(site, make_ctx):
    blocked = await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=conv(),
                                                      config={"blocked_hosts": "*.google-analytics.com"}))
    collects = [r for r in tables(blocked)["network"] if "/g/collect" in r["url"]]
    assert collects and all(r["blocked"] and r["disposition"] == "blocked_by_config" for r in collects)
    assert {h["delivery"] for h in tables(blocked)["ga4_hits"]} == {"blocked_by_config"}
    with pytest.raises(InvalidArguments, match="not allowed"):
        await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, config={"allowed_hosts": "*.example.com"}))
    with pytest.raises(InvalidArguments, match="not allowed"):
        await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, config={"blocked_hosts": "127.0.0.1"}))


async def test_staging_credentials(site, make_ctx, no_settle):
    with pytest.raises(CredentialsMissing, match="HTTP authentication"):
        await capture.run(CaptureArguments.parse({"url": "/protected"}), make_ctx(resource_id=site.origin))
    with pytest.raises(CredentialsInvalid, match="refused") as refused:
        await capture.run(CaptureArguments.parse({"url": "/protected"}), make_ctx(resource_id=site.origin, credentials={
            "basic_username": "stage", "basic_password": "wrong-pw"}))
    assert "wrong-pw" not in refused.value.message  # the error names the problem, never the secret
    creds = {"basic_username": "stage", "basic_password": "s3cret-pw", "extra_cookies": "sessionid=abc123"}
    ok = await capture.run(CaptureArguments.parse({"url": "/protected"}), make_ctx(resource_id=site.origin, credentials=creds))
    page = ok.manifest["pages"][0]
    assert page["status"] == 200 and page["title"] == "Staging sessionid=abc123"
    assert "s3cret-pw" not in repr(ok.manifest)
    with pytest.raises(CredentialsInvalid):
        await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, credentials={"basic_username": "stage"}))


async def test_failed_step_keeps_what_was_captured(site, make_ctx):
    ctx = make_ctx(resource_id=site.origin, conversation_id=conv(), config={"action_timeout_ms": 300})
    result = await capture.run(CaptureArguments.parse({"url": "/", "actions": [
        {"action": "click", "selector": "#does-not-exist"}, {"action": "navigate", "url": "/checkout"}]}), ctx)
    steps = result.manifest["steps"]
    assert steps[0]["ok"] is False and "Timeout" in steps[0]["error"]
    assert steps[1] == {"step": 1, "action": "navigate", "url": site.origin + "/checkout", "ok": False, "skipped": True}
    assert any("Step 0 (click) failed" in w and "1 later step(s) were skipped" in w for w in ctx.warnings)
    assert [h["en"] for h in tables(result)["ga4_hits"]] == ["page_view", "view_item", "scroll"]


async def test_http_errors_and_redirects(site, make_ctx, no_settle):
    ctx = make_ctx(resource_id=site.origin)
    missing = await capture.run(CaptureArguments.parse({"url": "/missing"}), ctx)
    assert missing.manifest["pages"][0]["status"] == 404
    assert any("answered HTTP 404" in w for w in ctx.warnings)
    redirected = await capture.run(CaptureArguments.parse({"url": "/redirect"}), make_ctx(resource_id=site.origin))
    page = redirected.manifest["pages"][0]
    assert (page["url"], page["final_url"], page["status"]) == (site.origin + "/redirect", site.origin + "/product", 200)


async def test_screenshot_and_close_session(site, make_ctx, no_settle, tmp_path):
    key = conv()
    ctx = make_ctx(tool="screenshot", conversation_id=key)
    with pytest.raises(InvalidArguments, match="No page is open"):
        await screenshot.run(ScreenshotArguments.parse({}), ctx)
    await capture.run(CaptureArguments.parse({"url": "/product"}), make_ctx(resource_id=site.origin, conversation_id=key))
    shot = await screenshot.run(ScreenshotArguments.parse({"full_page": True}), ctx)
    path = Path(shot.data["screenshot_path"])
    assert path.is_absolute() and path.parent == tmp_path.resolve() and path.suffix == ".png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.data["bytes"] == path.stat().st_size
    assert shot.data["url"] == site.origin + "/product" and shot.data["title"] == "Product"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]  # atomic write left no temp file
    by_url = await screenshot.run(ScreenshotArguments.parse({"url": site.origin + "/checkout"}), make_ctx(tool="screenshot"))
    assert Path(by_url.data["screenshot_path"]).exists() and by_url.data["title"] == "Checkout"

    closed = await close_session(NoArguments(), make_ctx(tool="close_session", conversation_id=key))
    assert closed.data["closed"] is True and closed.data["pages_visited"] == 1
    assert (await close_session(NoArguments(), make_ctx(tool="close_session", conversation_id=key))).data["closed"] is False
    after = await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=key))
    assert after.manifest["session"] == "new"


async def test_idle_timeout_and_session_cap(site, make_ctx, no_settle, browser):
    config = {"max_sessions": 2}
    keys = [conv() for _ in range(3)]
    for key in keys:
        await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=key, config=config))
    assert keys[0] not in browser.pool.sessions and keys[1] in browser.pool.sessions and keys[2] in browser.pool.sessions
    ctx = make_ctx(resource_id=site.origin, conversation_id=keys[0], config=config)
    again = await capture.run(CaptureArguments.parse({"url": "/"}), ctx)
    assert again.manifest["session"] == "new" and EVICTED_WARNING in ctx.warnings

    assert await browser.thread.run(browser.pool.reap, 0) >= 1  # everything is idle for more than 0 s
    ctx = make_ctx(resource_id=site.origin, conversation_id=keys[2])
    assert (await capture.run(CaptureArguments.parse({"url": "/"}), ctx)).manifest["session"] == "new"
    assert EVICTED_WARNING in ctx.warnings


def _browser_pids(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if f"--analytics-acp-browser={marker}".encode() in cmdline:
            pids.append(int(entry))
    return pids


async def test_crashed_browser_is_restarted_with_a_warning(site, make_ctx, no_settle, browser):
    key = conv()
    await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=key))
    pids = _browser_pids(browser.pool.marker)
    assert pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for _ in range(600):  # wait for Playwright to notice the browser is gone (bounded, generous under load)
        if browser.pool._browser is None:
            break
        await asyncio.sleep(0.05)
    ctx = make_ctx(resource_id=site.origin, conversation_id=key)
    result = await capture.run(CaptureArguments.parse({"url": "/"}), ctx)
    assert CRASH_WARNING in ctx.warnings
    assert result.manifest["session"] == "new" and result.manifest["pages"][0]["status"] == 200
    ctx2 = make_ctx(resource_id=site.origin, conversation_id=key)
    await capture.run(CaptureArguments.parse({"url": "/"}), ctx2)
    assert CRASH_WARNING not in ctx2.warnings


async def test_autocontext_blocks(site, make_ctx):
    ctx = make_ctx(tool="autocontext", resource_id=site.origin)
    setup = await blocks.tag_setup(site.origin, ctx)
    assert setup["ga4_measurement_ids"] == ["G-TEST123"] and setup["gtm_containers"] == ["GTM-ABC123"]
    assert setup["consent_mode"]["default"] == {"ad_storage": "denied", "analytics_storage": "granted"}
    assert setup["hits_on_load"] == ["page_view", "scroll", "view_item"]
    robots = await blocks.robots_sitemap(site.origin, ctx)
    assert robots["robots_status"] == 200 and robots["disallow_sample"] == ["/checkout", "/cart"]
    assert robots["sitemaps"] == [site.origin + "/sitemap.xml"]
    assert robots["sitemap"]["entries"] == 3 and robots["sitemap"]["latest_lastmod"] == "2026-02-01"
    overview = await blocks.page_overview(site.origin, ctx)
    assert overview["status"] == 200 and overview["title"] == "Test Shop" and overview["console_errors"] == 1
    assert overview["json_ld_types"] == ["Organization", "WebSite"]


async def test_capture_reports_each_step_and_stops_between_steps_when_cancelled(site, make_ctx):
    # Issue 28: the page opened and each step done of the steps + 1; a cancelled call runs no further step.
    from analytics_acp.errors import UpstreamError
    from analytics_acp.kit import RecordingSignals

    ctx = make_ctx(resource_id=site.origin, conversation_id=conv())
    ctx.signals = steps = RecordingSignals()
    await capture.run(CaptureArguments.parse({"url": "/", "actions": FLOW}), ctx)
    assert [s[:2] for s in steps.seen] == [(k, len(FLOW) + 1) for k in range(1, len(FLOW) + 2)]
    ctx = make_ctx(resource_id=site.origin, conversation_id=conv())
    ctx.signals = stopped = RecordingSignals(cancel_after=2)
    with pytest.raises(UpstreamError, match="cancelled"):
        await capture.run(CaptureArguments.parse({"url": "/", "actions": FLOW}), ctx)
    assert [s[0] for s in stopped.seen] == [1, 2]  # the page and the first step, nothing after the cancel


async def test_a_cancel_closes_the_page_and_context_of_the_running_capture(site, make_ctx, no_settle, browser):
    # Issue 28.2 "browser: closes the page/context": a cancel during a step still waiting (a navigation
    # the site never answers) ends it at once; the session leaves the registry and the next call works.
    import anyio
    from analytics_acp.errors import UpstreamError
    from analytics_acp.kit import RecordingSignals

    key = conv()
    await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=key))
    session = browser.pool.sessions[key]
    ctx = make_ctx(resource_id=site.origin, conversation_id=key)
    ctx.signals = signals = RecordingSignals()
    site.hanging.clear()
    site.release.clear()
    outcome: list[BaseException] = []

    async def call() -> None:
        try:
            await capture.run(CaptureArguments.parse({"url": "/", "actions": [{"action": "navigate", "url": "/hang"}]}), ctx)
        except BaseException as exc:
            outcome.append(exc)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            assert await anyio.to_thread.run_sync(site.hanging.wait, 20)
            signals.cancel()  # as the core does on notifications/cancelled
    finally:
        site.release.set()
    # Without the close, the navigation would wait for its 15 s timeout and the capture would succeed.
    assert len(outcome) == 1 and isinstance(outcome[0], UpstreamError) and "cancelled" in str(outcome[0])

    async def page_closed() -> bool:
        return session.page.is_closed()

    assert session.closed and await browser.thread.run(page_closed) and key not in browser.pool.sessions
    again = await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=key))
    assert again.manifest["session"] == "new" and browser.pool.sessions[key] is not session
