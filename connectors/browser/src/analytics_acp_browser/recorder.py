"""What one capture saw: pages, requests, hits, pushes, console messages and page snapshots.

A browser context keeps its listeners for its whole life; they forward every event to the
``Recorder`` of the call in progress (none between calls, so nothing leaks across calls).
``page_index`` counts document loads of the session's tab and continues across the calls
of one conversation, so rows accumulated by the host per origin stay distinct (11.3).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from . import console, datalayer, ga4, network
from .urls import host_of

log = logging.getLogger(__name__)


def _frame(request: Any) -> Any:
    """The request's frame, or None (service-worker requests have no frame and raise)."""
    try:
        return request.frame
    except Exception:
        return None


class Recorder:
    """Event sink of one call; ``next_page_index`` comes from the session."""

    def __init__(self, next_page_index: int, site_host: str):
        self.started = time.time()
        self.site_host = site_host
        self.next_page_index = next_page_index
        self.current_page_index = next_page_index - 1
        self.pages: list[dict[str, Any]] = []
        self.requests: dict[Any, dict[str, Any]] = {}
        self.dispositions: dict[Any, str] = {}
        self.hits: list[dict[str, Any]] = []
        self.pushes: list[dict[str, Any]] = []
        self.console: list[dict[str, Any]] = []
        self.snapshots: dict[int, dict[str, Any]] = {}
        self.cookie_snapshots: list[tuple[int, Any]] = []
        self.doc_pages: dict[str, int] = {}
        self.pending_nav: dict[str, Any] | None = None
        self.commits = 0
        self.warnings: list[str] = []
        self._size_tasks: list[asyncio.Task] = []

    # --- pages --------------------------------------------------------------------------
    def page_index_now(self) -> int:
        """The page events belong to right now (0 before the first load of a new session)."""
        return max(self.current_page_index, 0)

    def on_request(self, request: Any, main_frame: Any) -> None:
        """A request was issued (the route handler runs after this)."""
        is_nav = bool(request.is_navigation_request()) and _frame(request) == main_frame
        if is_nav and request.redirected_from is None:
            self.pending_nav = {"url": request.url, "status": None, "x_robots": None}
        page_index = self.next_page_index if is_nav else self.page_index_now()
        start_ms = (time.time() - self.started) * 1000
        row = network.request_row(len(self.requests), page_index, request.url, request.method,
                                  request.resource_type, start_ms, self.site_host, is_nav)
        self.requests[request] = row

    def on_response(self, response: Any, main_frame: Any) -> None:
        """Status and MIME type; for the tab's document, the page status and X-Robots-Tag."""
        row = self.requests.get(response.request)
        headers = response.headers
        if row is not None:
            row["status"] = response.status
            row["mime_type"] = (headers.get("content-type") or "").split(";")[0] or None
        if (self.pending_nav is not None and response.request.is_navigation_request()
                and _frame(response.request) == main_frame):
            self.pending_nav["status"] = response.status
            self.pending_nav["x_robots"] = headers.get("x-robots-tag")

    def on_frame_navigated(self, frame: Any, main_frame: Any) -> None:
        """A document committed in the tab: a new page_index (same-document URL changes keep it)."""
        if frame != main_frame:
            return
        if self.pending_nav is None:
            if self.pages:
                self.pages[-1]["final_url"] = frame.url
            return
        nav, self.pending_nav = self.pending_nav, None
        self.current_page_index = self.next_page_index
        self.next_page_index += 1
        self.commits += 1
        self.pages.append({
            "page_index": self.current_page_index, "url": nav["url"], "final_url": frame.url,
            "status": nav["status"], "title": None, "x_robots": nav["x_robots"],
        })

    def set_disposition(self, request: Any, disposition: str) -> None:
        """answered_locally / blocked_by_config, decided by the route handler."""
        self.dispositions[request] = disposition

    def on_finished(self, request: Any) -> None:
        """Timing now; body size fetched in the background (awaited by ``finish``)."""
        row = self.requests.get(request)
        if row is None:
            return
        timing = request.timing or {}
        end = timing.get("responseEnd", -1)
        if end is not None and end >= 0:
            row["duration_ms"] = round(float(end), 1)

        async def size() -> None:
            try:
                sizes = await request.sizes()
                size_bytes = int(sizes.get("responseBodySize") or 0)
                row["bytes"] = size_bytes if size_bytes >= 0 else None  # fulfilled requests report -N
            except Exception as exc:  # the page may be gone already: bytes stay null
                log.debug("response size not read: %s", type(exc).__name__)

        self._size_tasks.append(asyncio.ensure_future(size()))

    def on_failed(self, request: Any) -> None:
        """A request that did not complete (aborted by us or by the network)."""
        row = self.requests.get(request)
        if row is not None:
            row["failure"] = request.failure

    # --- analytics -------------------------------------------------------------------------
    def on_hit(self, request: Any, delivery: str) -> None:
        """Decode a GA4 /g/collect request into ga4_hits rows."""
        try:
            body = request.post_data
        except Exception:  # binary body that is not text
            body = None
        endpoint = request.url.split("?")[0]
        for event in ga4.decode_request(request.url, request.method, body):
            items = event.get("items")
            row = {"page_index": self.page_index_now(), "hit_index": len(self.hits), **event,
                   "item_count": len(items) if items else 0, "method": request.method,
                   "endpoint": endpoint, "delivery": delivery}
            self.hits.append(row)

    def on_binding(self, entry: dict[str, Any]) -> None:
        """A record from the page (dataLayer push)."""
        if not isinstance(entry, dict) or entry.get("kind") != "datalayer":
            return
        doc = str(entry.get("doc"))
        page_index = self.doc_pages.setdefault(doc, self.page_index_now())
        self.pushes.append(datalayer.push_row(entry, page_index, len(self.pushes)))

    def on_console(self, message: Any) -> None:
        """Console error/warning."""
        level = console.LEVELS.get(message.type)
        if level:
            self.console.append(console.message_row(self.page_index_now(), level, message.text, message.location))

    def on_page_error(self, error: Any) -> None:
        """Uncaught exception in the page."""
        self.console.append(console.error_row(self.page_index_now(), getattr(error, "message", str(error)),
                                              getattr(error, "stack", None)))

    # --- end -------------------------------------------------------------------------------
    async def finish(self) -> None:
        """Wait (briefly) for body sizes; merge route dispositions into the network rows."""
        if self._size_tasks:
            await asyncio.wait(self._size_tasks, timeout=5)
        for request, disposition in self.dispositions.items():
            row = self.requests.get(request)
            if row is not None:
                row["disposition"] = disposition
                row["blocked"] = disposition == "blocked_by_config"
        for row in self.requests.values():
            if row["failure"] and row["disposition"] == "network":
                row["disposition"] = "failed"

    def network_rows(self) -> list[dict[str, Any]]:
        """Network rows in request order."""
        return sorted(self.requests.values(), key=lambda r: r["request_index"])

    def origin_hosts(self) -> set[str]:
        """Hosts of the pages visited."""
        return {h for h in (host_of(p["final_url"] or p["url"]) for p in self.pages) if h}
