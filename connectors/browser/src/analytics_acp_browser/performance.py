"""Performance of each page: navigation timing, FCP, LCP, CLS and long tasks.

Observers are registered by an init script before any page script runs (long tasks are not
buffered by the browser, so a late observer would miss them); ``COLLECT_JS`` reads them, first
taking the entries still queued for an observer's callback (the browser delivers them when it is
idle, which on a busy machine can be after the extraction reads the page). Chromium starts its
long-task detector asynchronously once the observer registers, so a long task in a document's
first milliseconds may go unreported (seen in 4 of 20 loads for a blocking head script):
``long_tasks`` counts what the browser reported, a lower bound.
"""

from __future__ import annotations

from typing import Any

INIT_SCRIPT = r"""
(() => {
  if (window.top !== window || window.__acpPerf) return;
  const perf = {lcp: null, lcp_element: null, cls: 0, long_tasks: 0, long_task_ms: 0};
  const pending = [];
  Object.defineProperty(window, '__acpPerf', {value: perf});
  Object.defineProperty(window, '__acpPerfFlush', {value: () => pending.forEach(([o, fn]) => o.takeRecords().forEach(fn))});
  const observe = (type, fn) => {
    try {
      const o = new PerformanceObserver((list) => list.getEntries().forEach(fn));
      o.observe({type, buffered: true});
      pending.push([o, fn]);
    } catch (e) {}
  };
  observe('largest-contentful-paint', (e) => {
    perf.lcp = e.renderTime || e.loadTime || e.startTime;
    perf.lcp_element = e.element ? e.element.nodeName.toLowerCase() + (e.element.id ? '#' + e.element.id : '') : null;
  });
  observe('layout-shift', (e) => { if (!e.hadRecentInput) perf.cls += e.value; });
  observe('longtask', (e) => { perf.long_tasks += 1; perf.long_task_ms += e.duration; });
})();
"""

COLLECT_JS = r"""
() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  if (window.__acpPerfFlush) window.__acpPerfFlush();
  const perf = window.__acpPerf || {};
  const r = (x) => (x === null || x === undefined || x < 0) ? null : Math.round(x * 10) / 10;
  return {
    ttfb_ms: nav ? r(nav.responseStart - nav.startTime) : null,
    dom_interactive_ms: nav ? r(nav.domInteractive) : null,
    dom_content_loaded_ms: nav ? r(nav.domContentLoadedEventEnd) : null,
    load_ms: nav && nav.loadEventEnd > 0 ? r(nav.loadEventEnd) : null,
    fcp_ms: paint ? r(paint.startTime) : null,
    lcp_ms: r(perf.lcp),
    lcp_element: perf.lcp_element || null,
    cls: Math.round((perf.cls || 0) * 10000) / 10000,
    long_tasks: perf.long_tasks || 0,
    long_task_ms: r(perf.long_task_ms || 0),
    transfer_bytes: nav ? nav.transferSize : null,
    resources: performance.getEntriesByType('resource').length,
    navigation_type: nav ? nav.type : null,
  };
}
"""

COLUMNS = [
    "page_index", "url", "ttfb_ms", "dom_interactive_ms", "dom_content_loaded_ms", "load_ms", "fcp_ms", "lcp_ms",
    "lcp_element", "cls", "long_tasks", "long_task_ms", "transfer_bytes", "resources", "navigation_type",
]


def page_row(page_index: int, url: str, data: dict[str, Any] | None) -> dict[str, Any]:
    """One ``performance`` row (every column present, nulls where the browser had no value)."""
    data = data or {}
    row = {name: data.get(name) for name in COLUMNS}
    row["page_index"], row["url"] = page_index, url
    return row
