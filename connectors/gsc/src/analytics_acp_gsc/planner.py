"""Complete Search Analytics extractions: paging by ``startRow`` and splitting the window by day.

The API returns at most 25,000 rows per request (``rowLimit``) and only the top rows of a query
(about 50,000 per day and search type, ordered by clicks). So a window is paged until a page
comes back short; when the rows of a multi-day window reach the ceiling, the window is fetched
again day by day (each day has its own ceiling), and rows of the same keys are merged when date is
not a dimension. A day that reaches the ceiling on its own is reported: its tail is not reachable.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .dates import days

PAGE_SIZE = 25_000  # the API's maximum rowLimit
DEFAULT_ROW_CEILING = 50_000  # rows one query can reach (Google: 50k rows per day per search type)
DAY_CONCURRENCY = 4  # day slices fetched at once (a year split by day is 365+ requests)
PAGES_AHEAD = 2  # page requests of one window in flight once its first page came back full

Fetch = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class WindowRows:
    """Rows of one query (all its pages) and what the responses said."""

    rows: list[dict[str, Any]] = field(default_factory=list)  # empty when the pages went to on_page
    count: int = 0  # rows read (kept in ``rows`` or handed to on_page)
    requests: int = 0
    first_incomplete_date: str | None = None
    first_incomplete_hour: str | None = None
    reached_cap: bool = False  # stopped because row_cap was reached

    def note_metadata(self, response: dict[str, Any]) -> None:
        """Keep the earliest first_incomplete_date/hour seen in any response (15.2 provisional days)."""
        meta = response.get("metadata") or {}
        d, h = meta.get("firstIncompleteDate"), meta.get("firstIncompleteHour")
        if d and (self.first_incomplete_date is None or d < self.first_incomplete_date):
            self.first_incomplete_date = d
        if h and (self.first_incomplete_hour is None or h < self.first_incomplete_hour):
            self.first_incomplete_hour = h


@dataclass
class Plan:
    """The outcome of an extraction: rows in the API's order, how they were fetched, and warnings."""

    rows: list[dict[str, Any]]
    requests: int
    pages: int
    split_by_day: bool = False
    capped_days: list[str] = field(default_factory=list)
    first_incomplete_date: str | None = None
    first_incomplete_hour: str | None = None
    row_cap_applied: bool = False
    warnings: list[str] = field(default_factory=list)


def fetch_window(fetch: Fetch, body: dict[str, Any], row_cap: int | None = None, page_size: int | None = None,
                 on_page: Callable[[list[dict[str, Any]]], None] | None = None, ahead: int = PAGES_AHEAD) -> WindowRows:
    """Page one query with startRow until a page comes back short (or row_cap rows were read).

    Pages are handed over in startRow order. Once the first page came back full, up to
    ``ahead`` requests are in flight, so the API prepares the next page while this one is
    read and converted (at most ``ahead - 1`` requests beyond the last page are wasted, and only for
    windows of more than one page). With ``on_page`` the pages go to it and are not kept in ``rows``
    (a big extraction holds one copy of its rows: the converted ones).
    """
    size = page_size or PAGE_SIZE
    out = WindowRows()

    sent: list[int] = []  # list.append is atomic: the page threads count their own requests

    def request(start: int) -> dict[str, Any]:
        sent.append(start)
        return fetch({**body, "rowLimit": size, "startRow": start})

    ahead = max(1, ahead)
    pool = ThreadPoolExecutor(max_workers=ahead, thread_name_prefix="gsc-page")
    try:
        pending = deque([pool.submit(request, 0)])
        next_start = size  # startRow of the next request to send
        while True:
            response = pending.popleft().result()
            out.note_metadata(response)
            page = response.get("rows") or []
            room = None if row_cap is None else row_cap - out.count
            more = len(page) == size and (room is None or room > len(page))
            # Requests beyond row_cap are never sent; the next page is always requested when needed.
            while more and len(pending) < ahead and (row_cap is None or next_start < row_cap):
                pending.append(pool.submit(request, next_start))
                next_start += size
            kept = page if room is None or room >= len(page) else page[:room]
            out.count += len(kept)
            if on_page is None:
                out.rows.extend(kept)
            else:
                on_page(kept)
            if not more:
                if row_cap is not None and out.count >= row_cap:
                    out.reached_cap = len(page) == size or len(kept) < len(page)
                pool.shutdown(wait=False, cancel_futures=True)  # a request beyond the end is dropped if not sent yet
                out.requests = len(sent)  # sent, a wasted one included
                return out
            del page, kept, response  # the converted rows are all that is kept of a page
    finally:
        # A request beyond the end (or after an error) may still be in flight: its answer is not awaited.
        pool.shutdown(wait=False, cancel_futures=True)


def _merge_key(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple(row.get("keys") or ())


def merge_days(day_rows: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rows of several days merged on their keys: clicks and impressions summed, position weighted by impressions."""
    merged: dict[tuple[str, ...], dict[str, Any]] = {}
    for rows in day_rows:
        for row in rows:
            key = _merge_key(row)
            imp = float(row.get("impressions") or 0)
            acc = merged.get(key)
            if acc is None:
                merged[key] = {"keys": list(key), "clicks": float(row.get("clicks") or 0), "impressions": imp,
                               "_pos": float(row.get("position") or 0) * imp}
                continue
            acc["clicks"] += float(row.get("clicks") or 0)
            acc["impressions"] += imp
            acc["_pos"] += float(row.get("position") or 0) * imp
    out = []
    for acc in merged.values():
        imp = acc["impressions"]
        out.append({"keys": acc["keys"], "clicks": acc["clicks"], "impressions": imp,
                    "ctr": (acc["clicks"] / imp) if imp else 0.0, "position": (acc.pop("_pos") / imp) if imp else 0.0})
    return out


def by_clicks(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The API's order (clicks descending), stable for ties."""
    return sorted(rows, key=lambda r: -float(r.get("clicks") or 0))


def extract(fetch: Fetch, body: dict[str, Any], *, start: str, end: str, has_date: bool,
            row_cap: int | None = None, row_ceiling: int = DEFAULT_ROW_CEILING, page_size: int | None = None,
            on_page: Callable[[list[dict[str, Any]]], None] | None = None) -> Plan:
    """Every row the API can give for ``body`` over [start, end], in the API's order (clicks descending).

    ``has_date``: date or hour is a dimension, so day slices concatenate; otherwise they are merged.
    ``row_cap``: stop after that many rows (the API's top rows); no day splitting is needed then
    unless the cap lies beyond the ceiling.
    ``on_page``: called with each page of the whole window as it arrives (not for day slices), which
    then leaves ``rows`` empty; when the plan ends up split by day (``split_by_day``), what it saw
    is superseded by ``rows``. Day slices page one request at a time (DAY_CONCURRENCY bounds them).
    """
    whole = fetch_window(fetch, {**body, "startDate": start, "endDate": end}, row_cap, page_size, on_page)
    plan = Plan(rows=whole.rows, requests=whole.requests, pages=whole.requests,
                first_incomplete_date=whole.first_incomplete_date, first_incomplete_hour=whole.first_incomplete_hour,
                row_cap_applied=whole.reached_cap)
    if whole.reached_cap or whole.count < row_ceiling:
        return plan
    window_days = days(start, end)
    if len(window_days) == 1:
        plan.capped_days = window_days
        plan.warnings.append(_capped_warning(window_days, row_ceiling))
        return plan
    # 50k-per-day ceiling reached over the window: fetch day by day so that more rows come back.
    slices: list[list[dict[str, Any]]] = []
    with ThreadPoolExecutor(max_workers=DAY_CONCURRENCY, thread_name_prefix="gsc-day") as pool:
        parts = list(pool.map(lambda day: fetch_window(fetch, {**body, "startDate": day, "endDate": day}, None, page_size, ahead=1),
                              window_days))
    for day, part in zip(window_days, parts, strict=True):
        plan.requests += part.requests
        plan.pages += part.requests
        _note(plan, part)
        if len(part.rows) >= row_ceiling:
            plan.capped_days.append(day)
        slices.append(part.rows)
    rows = [r for s in slices for r in s] if has_date else merge_days(slices)
    rows = by_clicks(rows)
    if row_cap is not None and len(rows) > row_cap:
        rows = rows[:row_cap]
        plan.row_cap_applied = True
    plan.rows = rows
    plan.split_by_day = True
    plan.warnings.append(
        f"The window reached the API's row ceiling ({row_ceiling:,} rows per query), so it was fetched day by day "
        f"({len(window_days)} days, {plan.requests} requests)" + ("." if has_date else "; rows of the same keys were summed "
                                                                  "over the days (position weighted by impressions).")
    )
    if plan.capped_days:
        plan.warnings.append(_capped_warning(plan.capped_days, row_ceiling))
    return plan


def _note(plan: Plan, part: WindowRows) -> None:
    for attr in ("first_incomplete_date", "first_incomplete_hour"):
        value = getattr(part, attr)
        if value and (getattr(plan, attr) is None or value < getattr(plan, attr)):
            setattr(plan, attr, value)


def _capped_warning(capped: list[str], ceiling: int) -> str:
    shown = ", ".join(capped[:10]) + (f" and {len(capped) - 10} more" if len(capped) > 10 else "")
    return (f"Even a single day reached the API's row ceiling ({ceiling:,} rows) on {shown}: the least-clicked rows of "
            "those days are not available from the API. Add filters (page, country, device) to reach them.")
