"""The browser and its sessions: one Chromium per server process, one context per conversation.

Playwright runs on its own event loop in a daemon thread (``BrowserThread``), so tool calls
from any loop or worker thread reach it with ``await browser.thread.run(fn, ...)`` and a Playwright
object never crosses threads. It starts lazily on the first call that needs a page. The thread, the pool
and the probes of the autocontext blocks are the connector's state (``ctx.state(BROWSER)``, a ``Browser``):
made on the first call, closed when the server stops.

``SessionPool`` keeps a browser context per ``ctx.state_key`` (conversation_id, falling back
to session_id, 5.2), so cookies, dataLayer and the open tab survive between calls. Calls
without a key get a fresh context that is closed at the end. Contexts idle for
``idle_timeout_s`` are closed; past ``max_sessions`` the least recently used one is closed.
A browser that crashed is relaunched on the next call with a warning.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from analytics_acp.errors import UpstreamError
from analytics_acp.state import ConnectorSlot, KeyedCache

from . import datalayer, performance
from .network import is_analytics_hit, is_ga4_hit
from .recorder import Recorder
from .settings import SYSTEM_CHROMIUM, Access, Settings
from .urls import HostPolicy

log = logging.getLogger(__name__)

T = TypeVar("T")
LOOP_START_S = 10.0  # starting a thread and its loop; seconds on the busiest machine, never minutes

# Flags measured on this machine (DESIGN.md): Debian's chromium runs headless with these.
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
CRASH_WARNING = ("The browser had stopped unexpectedly and was restarted; the state of earlier calls "
                 "(cookies, open page) was lost.")
EVICTED_WARNING = ("The browser session of this conversation had been closed (idle timeout or session limit); "
                   "a new session was started, so cookies and storage start empty.")
CHANGED_WARNING = "The browser settings or credentials changed, so a new browser session was started."


class BrowserThread:
    """A private event loop in a daemon thread that owns Playwright."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started on first use."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                threading.Thread(target=main, name="analytics-acp-browser", daemon=True).start()
                if not ready.wait(LOOP_START_S):  # every wait is bounded: a thread that never runs is an answer
                    loop.call_soon_threadsafe(loop.stop)
                    raise UpstreamError(f"The browser's event loop did not start within {LOOP_START_S:g} s: the "
                                        "server is overloaded or out of threads. Try again later.")
                self._loop = loop
            return self._loop

    def submit(self, fn: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> concurrent.futures.Future[T]:
        """Schedule ``fn(*args)`` on the browser loop."""
        return asyncio.run_coroutine_threadsafe(fn(*args), self.loop())

    async def run(self, fn: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
        """Await ``fn(*args)`` run on the browser loop, from any other loop."""
        return await asyncio.wrap_future(self.submit(fn, *args))

    def run_sync(self, fn: Callable[..., Coroutine[Any, Any, T]], *args: Any, timeout: float | None = None) -> T:
        """Blocking variant for threads without a loop (shutdown, tests)."""
        return self.submit(fn, *args).result(timeout)

    @property
    def started(self) -> bool:
        """True once the loop runs (a call needed the browser)."""
        return self._loop is not None and not self._loop.is_closed()

    def stop(self) -> None:
        """End the loop and its thread (after the pool's shutdown)."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)


@dataclass
class Session:
    """A browser context kept for one conversation."""

    key: str | None
    context: Any
    fingerprint: str
    generation: int
    policy: HostPolicy
    forward_hits: bool
    page: Any = None
    recorder: Recorder | None = None
    next_page_index: int = 0
    storage_state: dict = field(default_factory=dict)
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    pages_visited: int = 0
    has_auth: bool = False
    closed: bool = False

    async def main_page(self) -> Any:
        """The session's tab (opened on first use, reopened if the site closed it)."""
        if self.page is None or self.page.is_closed():
            self.page = await self.context.new_page()
            _attach_page(self, self.page)
        return self.page


def _attach_page(session: Session, page: Any) -> None:
    page.on("framenavigated", lambda frame: _record(session, "on_frame_navigated", frame, page.main_frame))
    page.on("pageerror", lambda error: _record(session, "on_page_error", error))


def _record(session: Session, event: str, *args: Any) -> None:
    """Pass a page or context event to the session's recorder while one is recording."""
    if session.recorder:
        getattr(session.recorder, event)(*args)


def default_executable(playwright: Any) -> str:
    """Playwright's own Chromium when installed, else Debian's /usr/bin/chromium."""
    try:
        own = playwright.chromium.executable_path
    except Exception:
        own = None
    if own and os.path.exists(own):
        return own
    return SYSTEM_CHROMIUM


class SessionPool:
    """Browser + contexts. Every method runs on the browser loop."""

    def __init__(self) -> None:
        self.marker = uuid.uuid4().hex[:12]  # on the browser command line, so tests can find the process
        self._pw: Any = None
        self._browser: Any = None
        self._launch_key: tuple[Any, ...] | None = None
        self._closing = False
        self._crashed = False
        self.generation = 0
        self.sessions: dict[str, Session] = {}
        self._evicted: set[str] = set()
        self.origins: dict[str, float] = {}
        self._idle_timeout_s: float = 900
        self._reaper: asyncio.Task | None = None

    # --- browser ----------------------------------------------------------------------------
    async def browser(self, settings: Settings, warnings: list[str]) -> Any:
        """The running browser, launched (or relaunched after a crash / settings change) as needed."""
        if self._pw is None:
            from playwright.async_api import async_playwright  # heavy: only on the first capture

            self._pw = await async_playwright().start()
        key = settings.launch_key()
        relaunch = self._browser is None or not self._browser.is_connected() or key != self._launch_key
        executable = settings.browser_executable or default_executable(self._pw)
        # Checked before the running browser is closed: a wrong path in one call's config must
        # not end the other conversations' sessions.
        if relaunch and not os.path.exists(executable):
            raise UpstreamError(
                f"No browser found at {executable}. Install Chromium (apt-get install chromium) "
                "or set browser_executable in the source settings."
            )
        if self._browser is not None and self._browser.is_connected() and key != self._launch_key:
            await self._close_browser()
        if self._browser is None or not self._browser.is_connected():
            if self._crashed:
                warnings.append(CRASH_WARNING)
                self._crashed = False
            await self._drop_sessions()
            try:
                self._browser = await self._pw.chromium.launch(
                    executable_path=executable, headless=settings.headless,
                    args=[*CHROMIUM_FLAGS, f"--analytics-acp-browser={self.marker}"],
                )
            except Exception as exc:
                raise UpstreamError(f"The browser could not start ({str(exc).splitlines()[0]}). "
                                    "Check browser_executable in the source settings.") from exc
            self._launch_key = key
            self.generation += 1
            self._browser.on("disconnected", self._on_disconnected)
        return self._browser

    def _on_disconnected(self, _browser: Any) -> None:
        if not self._closing:
            self._crashed = True
        self._browser = None
        for session in self.sessions.values():
            session.closed = True

    async def _close_browser(self) -> None:
        self._closing = True
        try:
            await self._drop_sessions()
            if self._browser is not None:
                await self._browser.close()
        except Exception as exc:  # a crashed or already closed browser: nothing left to release
            log.debug("browser close failed: %s", type(exc).__name__)
        finally:
            self._browser = None
            self._closing = False

    async def _drop_sessions(self) -> None:
        for key in list(self.sessions):
            await self._close(self.sessions.pop(key or ""))

    # --- sessions ---------------------------------------------------------------------------
    async def acquire(self, key: str | None, settings: Settings, access: Access, start_url: str | None,
                      warnings: list[str]) -> Session:
        """The conversation's session (created when missing or stale); call ``release`` after use."""
        self._idle_timeout_s = settings.idle_timeout_s
        await self.reap(settings.idle_timeout_s)
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.ensure_future(self._reap_forever())
        browser = await self.browser(settings, warnings)
        fingerprint = f"{settings.context_options()}|{access.fingerprint()}"
        session = self.sessions.get(key) if key else None
        if session is not None and (session.closed or session.generation != self.generation):
            self.sessions.pop(key or "", None)
            session = None
        if session is not None and session.fingerprint != fingerprint:
            warnings.append(CHANGED_WARNING)
            await self._close(self.sessions.pop(key or ""))
            session = None
        if session is None:
            if key and key in self._evicted:
                warnings.append(EVICTED_WARNING)
                self._evicted.discard(key)
            if key:
                while len(self.sessions) >= settings.max_sessions:
                    oldest = min(self.sessions.values(), key=lambda s: s.last_used)
                    self._evicted.add(oldest.key or "")
                    await self._close(self.sessions.pop(oldest.key or ""))
            session = await self._new_session(browser, key, fingerprint, settings, access, start_url)
            if key:
                self.sessions[key] = session
        session.policy = settings.hosts
        session.forward_hits = settings.forward_hits
        session.context.set_default_timeout(settings.action_timeout_ms)
        session.context.set_default_navigation_timeout(settings.navigation_timeout_ms)
        session.last_used = time.monotonic()
        return session

    async def _new_session(self, browser: Any, key: str | None, fingerprint: str, settings: Settings,
                           access: Access, start_url: str | None) -> Session:
        options = settings.context_options()
        if access.http_credentials:
            options["http_credentials"] = access.http_credentials
        context = await browser.new_context(**options)
        session = Session(key=key, context=context, fingerprint=fingerprint, generation=self.generation,
                          policy=settings.hosts, forward_hits=settings.forward_hits,
                          has_auth=bool(access.http_credentials))
        if access.cookies:
            cookies = []
            for cookie in access.cookies:
                item = dict(cookie)
                if "domain" not in item and "url" not in item:
                    if not start_url:
                        continue
                    item["url"] = start_url
                elif "domain" in item:
                    item.setdefault("path", "/")
                cookies.append(item)
            try:
                await context.add_cookies(cookies)
            except Exception as exc:
                await context.close()
                from analytics_acp.errors import CredentialsInvalid

                raise CredentialsInvalid("extra_cookies could not be set; check their names and domains.") from exc
        await context.add_init_script(script=datalayer.INIT_SCRIPT)
        await context.add_init_script(script=performance.INIT_SCRIPT)
        await context.expose_binding(datalayer.BINDING, lambda _source, entry: _sink(session, "on_binding", entry))
        await context.route("**/*", lambda route, request: _route(session, route, request))

        def main_frame() -> Any:
            return session.page.main_frame if session.page is not None else None

        context.on("request", lambda r: _record(session, "on_request", r, main_frame()))
        context.on("response", lambda r: _record(session, "on_response", r, main_frame()))
        context.on("requestfinished", lambda r: _record(session, "on_finished", r))
        context.on("requestfailed", lambda r: _record(session, "on_failed", r))
        context.on("console", lambda m: _record(session, "on_console", m))
        return session

    async def release(self, session: Session) -> None:
        """End of a call: close a keyless session, touch a kept one."""
        session.recorder = None
        session.last_used = time.monotonic()
        if session.key is None:
            await self._close(session)

    async def close_session(self, key: str) -> Session | None:
        """Close the conversation's session (close_session tool); None when there was none."""
        session = self.sessions.pop(key, None)
        if session is not None:
            async with session.lock:
                await self._close(session)
        return session

    async def discard(self, session: Session) -> None:
        """Close the session of a cancelled call (issue 28: the page and context go at once) and forget it,
        so the conversation's next call opens a new one; idempotent."""
        if session.key is not None and self.sessions.get(session.key) is session:
            del self.sessions[session.key]
        await self._close(session)

    async def reap(self, idle_timeout_s: float) -> int:
        """Close sessions idle for longer than ``idle_timeout_s``; returns how many."""
        now = time.monotonic()
        stale = [k for k, s in self.sessions.items() if now - s.last_used > idle_timeout_s and not s.lock.locked()]
        for key in stale:
            self._evicted.add(key)
            await self._close(self.sessions.pop(key))
        return len(stale)

    async def _reap_forever(self) -> None:
        # Idle contexts close even when no call arrives (each holds renderer memory).
        while True:
            await asyncio.sleep(max(5.0, min(60.0, self._idle_timeout_s / 4)))
            try:
                await self.reap(self._idle_timeout_s)
            except Exception as exc:  # the reaper must outlive one failed round; the next one retries
                log.debug("idle session reaping failed: %s", type(exc).__name__)

    async def _close(self, session: Session) -> None:
        session.closed = True
        try:
            await session.context.close()
        except Exception as exc:  # the context died with its browser: it is gone either way
            log.debug("browser context close failed: %s", type(exc).__name__)

    async def shutdown(self) -> None:
        """Close everything (connector_shutdown)."""
        if self._reaper is not None:
            self._reaper.cancel()
        await self._close_browser()
        if self._pw is not None:
            try:
                await self._pw.stop()
            except Exception as exc:  # the driver process already exited: nothing left to stop
                log.debug("Playwright stop failed: %s", type(exc).__name__)
            self._pw = None


def _sink(session: Session, method: str, *args: Any) -> None:
    if session.recorder is not None:
        getattr(session.recorder, method)(*args)


def _is_top_navigation(request: Any) -> bool:
    try:
        return bool(request.is_navigation_request()) and request.frame.parent_frame is None
    except Exception:  # service-worker requests have no frame
        return False


async def _route(session: Session, route: Any, request: Any) -> None:
    """Every request: blocked hosts aborted, disallowed top-level pages aborted, hits answered locally."""
    url = request.url
    rec = session.recorder
    if not url.startswith(("http://", "https://")):
        await route.fallback()
        return
    ga4_hit = is_ga4_hit(url)
    if session.policy.is_blocked(url) or (_is_top_navigation(request) and not session.policy.may_open(url)):
        if rec is not None:
            if ga4_hit:  # the page did send it: an audit still wants to see it
                rec.on_hit(request, "blocked_by_config")
            rec.set_disposition(request, "blocked_by_config")
            if _is_top_navigation(request):
                rec.warnings.append(f"Navigation to {url} was blocked by the source's host rules.")
        await route.abort("blockedbyclient")
        return
    hit = is_analytics_hit(url)
    forward = session.forward_hits or not hit
    if rec is not None and ga4_hit:
        rec.on_hit(request, "forwarded" if forward else "answered_locally")
    if forward:
        await route.fallback()
        return
    if rec is not None:
        rec.set_disposition(request, "answered_locally")
    origin = request.headers.get("origin") or "*"
    await route.fulfill(status=204, body="", headers={
        "access-control-allow-origin": origin, "access-control-allow-credentials": "true",
    })


PROBE_TTL_S = 60.0  # an autocontext block's visit of the home page serves the other blocks for a minute


@dataclass
class Browser:
    """The connector's browser: the Playwright thread, the pool of sessions and the blocks' probes."""

    thread: BrowserThread = field(default_factory=BrowserThread)
    pool: SessionPool = field(default_factory=SessionPool)
    probes: KeyedCache[dict[str, Any]] = field(default_factory=lambda: KeyedCache(64, ttl_s=PROBE_TTL_S))

    def close(self) -> None:
        """The server stops: close every session, the browser and Playwright (bounded), then the thread."""
        if not self.thread.started:
            return  # nothing was ever started: do not start Playwright just to close nothing
        try:
            self.thread.run_sync(self.pool.shutdown, timeout=10)
        except Exception as exc:  # stopping anyway: the browser process ends with ours
            log.debug("browser shutdown failed: %s", type(exc).__name__)
        self.probes.clear()
        self.thread.stop()


BROWSER = ConnectorSlot("browser.browser", Browser, Browser.close)
