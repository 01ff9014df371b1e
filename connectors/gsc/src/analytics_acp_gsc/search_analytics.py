"""search_analytics (extraction, the default tool): every row the API can give, typed, with honest dates.

Pages by startRow and splits by day (planner.py); totals come from an aggregate query over the
whole window, not from the rows; days (hours) still being collected are flagged (15.2).
"""

from __future__ import annotations

import threading
from typing import Any

from analytics_acp import CallContext, Extraction

from . import dates, planner
from .arguments import ComparePeriodsArguments, SearchAnalyticsArguments
from .client import Client
from .freshness import last_final_date
from .query import (
    Query,
    applied_arguments,
    describe,
    headers,
    query_of,
    row_converter,
    sort_rows,
    totals_from,
)


def row_ceiling(ctx: CallContext) -> int:
    """Rows a single query can reach (config row_ceiling, default 50,000)."""
    value = (ctx.config or {}).get("row_ceiling") or planner.DEFAULT_ROW_CEILING
    return max(int(value), 1)


def applied_window(client: Client, site: str, q: Query,
                   args: SearchAnalyticsArguments | ComparePeriodsArguments) -> tuple[str, str]:
    """start_date/end_date resolved in Pacific Time; missing bounds default as in 15.2."""
    start, end = args.start_date, args.end_date
    if start and end:
        return dates.window(start, end, dates.usual_last_final_date())
    return dates.window(start, end, last_final_date(client, site, q.search_type))


def provisional_warning(first_date: str | None, first_hour: str | None) -> list[str]:
    """The 15.2 warning naming where incomplete data starts."""
    out = []
    if first_date:
        out.append(f"Data from {first_date} on is provisional (still being collected) and may change; "
                   "those rows have provisional = true.")
    if first_hour:
        out.append(f"Hourly data from {first_hour} on is provisional and may change; those rows have provisional = true.")
    return out


def fetch_rows(client: Client, site: str, q: Query, start: str, end: str, ctx: CallContext, cap: int | None,
               on_page: Any = None, done: dict[str, int] | None = None) -> planner.Plan:
    """Run the planner against the API for one window, reporting progress per response; once the call is
    cancelled its next request raises before it is sent (the call's budget, analytics_acp_google.retry).
    ``done`` ({"requests", "rows"}) is shared by the windows of one call, so its progress keeps rising."""
    lock = threading.Lock()
    done = done if done is not None else {"requests": 0, "rows": 0}

    def fetch(body: dict[str, Any]) -> dict[str, Any]:
        response = client.query(site, body)
        with lock:
            done["requests"] += 1
            done["rows"] += len(response.get("rows") or [])
            count, rows = done["requests"], done["rows"]
        day = f", day {body['startDate']}" if body.get("startDate") == body.get("endDate") != end else ""
        ctx.progress(count, None, f"{rows} rows in {count} requests{day}")
        return response

    return planner.extract(fetch, q.body(), start=start, end=end,
                           has_date=q.has_time, row_cap=cap, row_ceiling=row_ceiling(ctx), on_page=on_page)


def totals(client: Client, site: str, q: Query, start: str, end: str) -> dict[str, Any]:
    """Totals of the whole window from one aggregate query (8.2)."""
    return totals_from(client.query(site, {**q.totals_body(), "startDate": start, "endDate": end, "rowLimit": 1}))


def run_search_analytics(args: SearchAnalyticsArguments, ctx: CallContext) -> Extraction:
    """The search_analytics tool."""
    site = ctx.require_resource_id()
    q = query_of(args)
    cap = args.row_cap
    hdrs = headers(q)
    columns = [h.name for h in hdrs]
    order = args.order()
    client = Client(ctx)
    start, end = applied_window(client, site, q, args)
    # With order_by the whole extraction is sorted before any cap: never only the API's top rows.
    # Rows are converted page by page while the next page is on its way; with provisional flags the
    # conversion waits for every response's metadata, and a day-split plan is converted as merged.
    early: list[tuple[Any, ...]] = []
    on_page = None
    if not q.flags_provisional:
        convert_page = row_converter(q, None, None)

        def on_page(page: list[dict[str, Any]]) -> None:
            early.extend(map(convert_page, page))

    plan = fetch_rows(client, site, q, start, end, ctx, None if order else cap, on_page)
    if on_page is not None and not plan.split_by_day:
        rows = early  # the pages went to on_page only: the API's dicts were dropped page by page
    else:
        convert = row_converter(q, plan.first_incomplete_date, plan.first_incomplete_hour)
        rows = [convert(r) for r in plan.rows]
    if order:
        rows = sort_rows(rows, order, columns)
        if cap is not None and len(rows) > cap:
            rows = rows[:cap]
            plan.row_cap_applied = True
    warnings = dates.window_warnings(start, end) + plan.warnings
    if q.data_state != "final":
        warnings += provisional_warning(plan.first_incomplete_date, plan.first_incomplete_hour)
    if plan.row_cap_applied:
        warnings.append(f"row_cap {cap} applied: the extraction holds the first {cap} rows "
                        f"({'by order_by' if order else 'by clicks'}), not every row.")
    arguments = applied_arguments(q, start, end)
    if order:
        arguments["order_by"] = [f"{c} {'desc' if d else 'asc'}" for c, d in order]
    if cap is not None:
        arguments["row_cap"] = cap
    return Extraction(
        rows=rows,
        columns=columns,
        headers=hdrs,
        description=describe(site, q, [(start, end)]),
        dates=[start, end],
        totals=totals(client, site, q, start, end),
        warnings=warnings,
        arguments=arguments,
        source={"api": "searchconsole v1 searchanalytics.query", "requests": plan.requests + 1,
                "split_by_day": plan.split_by_day},
    )
