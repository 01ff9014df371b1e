"""The ``screenshot`` tool (8.10): a PNG of the conversation's current page or of a URL,
written atomically into ACP_TMP_DIR; the model response carries only ``screenshot_path``."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

from analytics_acp import CallContext, Info
from analytics_acp.errors import InvalidArguments

from .arguments import ScreenshotArguments
from .sessions import BROWSER, SessionPool
from .settings import Access, Settings
from .urls import resolve


def output_dir(ctx: CallContext) -> Path:
    """ctx.tmp_dir, else ACP_TMP_DIR, else the system temp dir."""
    directory = ctx.tmp_dir or (Path(os.environ["ACP_TMP_DIR"]) if os.environ.get("ACP_TMP_DIR") else None)
    directory = Path(directory or tempfile.gettempdir())
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def write_atomic(directory: Path, data: bytes, suffix: str = ".png") -> Path:
    """Write bytes to a new file in ``directory`` via temp file + os.replace."""
    final = directory / f"browser-screenshot-{uuid.uuid4().hex}{suffix}"
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".screenshot-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, final)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    return final.resolve()


async def run(arguments: ScreenshotArguments, ctx: CallContext) -> Info:
    """Tool entry point."""
    settings = Settings.from_config(ctx.config)
    access = Access.from_credentials(ctx.credentials)
    full_page = arguments.full_page
    url = arguments.url
    key = ctx.state_key
    if url in (None, "") and key is None:
        raise InvalidArguments("No conversation id was sent, so there is no open page; pass url to take a screenshot.")
    target = None
    if url not in (None, ""):
        base = ctx.resource_id
        target = settings.hosts.check_page(resolve(url, base))
    browser = ctx.state(BROWSER)
    result = await browser.thread.run(_shoot, browser.pool, key, settings, access, target, full_page)
    ctx.warnings.extend(result.pop("warnings"))
    path = write_atomic(output_dir(ctx), result.pop("png"))
    return Info(data={"screenshot_path": str(path), **result}, title=f"Screenshot {result['url']}")


async def _shoot(pool: SessionPool, key: str | None, settings: Settings, access: Access, target: str | None,
                 full_page: bool) -> dict:
    warnings: list[str] = []
    if target is None and (key not in pool.sessions or pool.sessions[key].page is None):
        raise InvalidArguments("No page is open in this conversation yet; pass url or call capture first.")
    session = await pool.acquire(key, settings, access, target, warnings)
    async with session.lock:
        try:
            page = await session.main_page()
            if target is not None:
                await page.goto(target, wait_until="load", timeout=settings.navigation_timeout_ms)
                await page.wait_for_timeout(settings.settle_ms)
            if page.url in ("", "about:blank"):
                raise InvalidArguments("No page is open in this conversation yet; pass url or call capture first.")
            png = await page.screenshot(type="png", full_page=full_page)
            size = page.viewport_size or {}
            return {"png": png, "url": page.url, "title": await page.title(), "full_page": full_page,
                    "bytes": len(png), "viewport": size, "warnings": warnings}
        finally:
            await pool.release(session)
