"""Real headless Chromium: the steps and options the shop flow does not exercise.

press (with and without a selector), scroll by y / selector / top, wait_for ms, wait_until,
performance (long task, LCP, layout shift), the config that shapes the browser context
(user agent, locale, viewport), the screenshot viewport vs full page, the idle timeout read
from config, and a wrong browser_executable that must not end other conversations.
"""

import struct
import time
import uuid
from pathlib import Path

import pytest
from analytics_acp.errors import UpstreamError
from analytics_acp_browser import capture, screenshot
from analytics_acp_browser.arguments import CaptureArguments, ScreenshotArguments
from analytics_acp_browser.sessions import CHANGED_WARNING, EVICTED_WARNING

pytestmark = pytest.mark.browser


def conv() -> str:
    return "live-" + uuid.uuid4().hex[:8]


def tables(result):
    return {t.name: t.rows for t in result.tables}


def png_size(path: str) -> tuple[int, int]:
    """Width and height from the PNG IHDR chunk."""
    data = Path(path).read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


async def test_press_scroll_wait_and_wait_until(site, make_ctx):
    key = conv()
    steps = [
        {"action": "wait_for", "ms": 50},
        {"action": "scroll", "y": 1200}, {"action": "press", "key": "Shift"},
        {"action": "scroll", "selector": "#far"}, {"action": "press", "key": "Shift"},
        {"action": "scroll", "to": "top"}, {"action": "press", "key": "Shift"},
        {"action": "press", "selector": "#q", "key": "Enter"},
    ]
    ctx = make_ctx(resource_id=site.origin, conversation_id=key)
    result = await capture.run(CaptureArguments.parse({"url": "/form", "wait_until": "domcontentloaded", "actions": steps}), ctx)
    assert all(s["ok"] for s in result.manifest["steps"]) and len(result.manifest["steps"]) == len(steps)
    keys = [d["payload"] for d in tables(result)["datalayer"] if d["event"] == "key"]
    assert [(k["key"], k["target"]) for k in keys] == [("Shift", "page")] * 3 + [("Enter", "q")]
    assert keys[0]["y"] == 1200 and keys[1]["y"] > 1200 and keys[2]["y"] == 0

    perf = tables(result)["performance"][0]
    assert perf["long_tasks"] >= 1 and perf["long_task_ms"] >= 100  # the 120 ms Enter handler
    assert perf["lcp_ms"] is not None and perf["fcp_ms"] is not None
    assert perf["cls"] > 0  # the late banner pushed the content down

    # networkidle is handed to Playwright as well; the session continues
    again = await capture.run(CaptureArguments.parse({"url": "/product", "wait_until": "networkidle"}),
                              make_ctx(resource_id=site.origin, conversation_id=key))
    assert again.manifest["session"] == "continued" and again.manifest["pages"][0]["title"] == "Product"


async def test_context_options_reach_the_browser(site, make_ctx, no_settle):
    key = conv()
    config = {"user_agent": "AcpAudit/1.0 (test)", "locale": "es-ES", "viewport_width": 800, "viewport_height": 600}
    result = await capture.run(CaptureArguments.parse({"url": "/whoami"}), make_ctx(resource_id=site.origin, conversation_id=key, config=config))
    assert result.manifest["pages"][0]["title"].startswith("UA=AcpAudit/1.0 (test)|LANG=es-ES")

    shot = await screenshot.run(ScreenshotArguments.parse({}), make_ctx(tool="screenshot", conversation_id=key, config=config))
    assert png_size(shot.data["screenshot_path"]) == (800, 600) and shot.data["full_page"] is False
    full = await screenshot.run(ScreenshotArguments.parse({"url": site.origin + "/form", "full_page": True}),
                                make_ctx(tool="screenshot", conversation_id=key, config=config))
    width, height = png_size(full.data["screenshot_path"])
    assert width == 800 and height > 5000  # the whole scrollable page, not the viewport

    # other context options in the same conversation: a new session, said in a warning
    ctx = make_ctx(resource_id=site.origin, conversation_id=key, config={**config, "locale": "fr-FR"})
    changed = await capture.run(CaptureArguments.parse({"url": "/whoami"}), ctx)
    assert changed.manifest["session"] == "new" and CHANGED_WARNING in ctx.warnings
    assert "|LANG=fr-FR" in changed.manifest["pages"][0]["title"]


async def test_idle_timeout_comes_from_config(site, make_ctx, no_settle, browser):
    key = conv()
    config = {"idle_timeout_s": 10}
    await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=key, config=config))

    async def age() -> None:  # pretend the last call was a minute ago instead of sleeping
        browser.pool.sessions[key].last_used = time.monotonic() - 60

    await browser.thread.run(age)
    ctx = make_ctx(resource_id=site.origin, conversation_id=key, config=config)
    result = await capture.run(CaptureArguments.parse({"url": "/"}), ctx)
    assert result.manifest["session"] == "new" and EVICTED_WARNING in ctx.warnings

    # the same age with the default timeout (900 s) keeps the session
    await browser.thread.run(age)
    ctx = make_ctx(resource_id=site.origin, conversation_id=key)
    assert (await capture.run(CaptureArguments.parse({"url": "/"}), ctx)).manifest["session"] == "continued"
    assert EVICTED_WARNING not in ctx.warnings


async def test_wrong_browser_executable_is_clear_and_spares_other_sessions(site, make_ctx, no_settle):
    kept = conv()
    await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=kept))
    with pytest.raises(UpstreamError, match="No browser found at /nonexistent/chromium"):
        await capture.run(CaptureArguments.parse({"url": "/"}), make_ctx(resource_id=site.origin, conversation_id=conv(),
                                                 config={"browser_executable": "/nonexistent/chromium"}))
    ctx = make_ctx(resource_id=site.origin, conversation_id=kept)
    assert (await capture.run(CaptureArguments.parse({"url": "/"}), ctx)).manifest["session"] == "continued"
    assert ctx.warnings == []
