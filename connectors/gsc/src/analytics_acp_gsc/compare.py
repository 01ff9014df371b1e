"""compare_periods (extraction): one query over two windows, joined on the dimensions.

Columns: the dimensions, then for each metric the current window's value, the previous window's
value and the change (current - previous; for position a negative change is an improvement).
A row present in only one window is kept, with nulls for the other window and for the change.
Order: rows of the current window in the API's order (clicks descending), then the rows found
only in the previous window, in their API order.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext, Extraction, Header

from . import dates
from .arguments import ComparePeriodsArguments
from .client import Client
from .query import DIMENSION_HEADERS, Query, describe, query_of, totals_from
from .search_analytics import applied_window, fetch_rows, provisional_warning

METRIC_TYPES = {"clicks": "integer", "impressions": "integer", "ctr": "number", "position": "number"}
METRIC_TEXT = {"clicks": "Clicks", "impressions": "Impressions", "ctr": "CTR, fraction 0-1",
               "position": "Average position weighted by impressions"}


def compare_headers(q: Query) -> list[Header]:
    """Dimensions, then metric / metric_previous / metric_change for each metric."""
    out = [DIMENSION_HEADERS[d] for d in q.dimensions]
    for m, kind in METRIC_TYPES.items():
        change_kind = "integer" if kind == "integer" else "number"
        out.append(Header(m, kind, "metric", f"{METRIC_TEXT[m]}, current window"))  # type: ignore[arg-type]
        out.append(Header(f"{m}_previous", kind, "metric", f"{METRIC_TEXT[m]}, previous window"))  # type: ignore[arg-type]
        out.append(Header(f"{m}_change", change_kind, "metric", "Current minus previous"))  # type: ignore[arg-type]
    return out


def _values(row: dict[str, Any] | None) -> list[Any]:
    if row is None:
        return [None, None, None, None]
    return [int(round(float(row.get("clicks") or 0))), int(round(float(row.get("impressions") or 0))),
            round(float(row.get("ctr") or 0), 4), round(float(row.get("position") or 0), 2)]


def join(current: list[dict[str, Any]], previous: list[dict[str, Any]], n_dims: int) -> list[tuple[Any, ...]]:
    """Full outer join on the dimension keys, in the order described in the module docstring."""
    prev_by_key = {tuple(r.get("keys") or ()): r for r in previous}
    seen: set[tuple[Any, ...]] = set()
    out: list[tuple[Any, ...]] = []

    def emit(keys: tuple[Any, ...], cur: dict[str, Any] | None, prev: dict[str, Any] | None) -> None:
        a, b = _values(cur), _values(prev)
        row: list[Any] = list(keys[:n_dims])
        for i in range(4):
            change = None if a[i] is None or b[i] is None else a[i] - b[i]
            if change is not None and i >= 2:
                change = round(change, 4 if i == 2 else 2)
            row.extend([a[i], b[i], change])
        out.append(tuple(row))

    for r in current:
        key = tuple(r.get("keys") or ())
        seen.add(key)
        emit(key, r, prev_by_key.get(key))
    for r in previous:
        key = tuple(r.get("keys") or ())
        if key not in seen:
            emit(key, None, r)
    return out


def run_compare_periods(args: ComparePeriodsArguments, ctx: CallContext) -> Extraction:
    """The compare_periods tool."""
    site = ctx.require_resource_id()
    q = query_of(args)
    cap = args.row_cap
    client = Client(ctx)
    start, end = applied_window(client, site, q, args)
    cs, ce = args.compare_start_date, args.compare_end_date
    if cs and ce:  # the model refused one without the other
        prev = dates.window(cs, ce, dates.usual_last_final_date())
    else:
        prev = dates.previous_window(start, end)
    done = {"requests": 0, "rows": 0}  # one count over both windows: progress only rises (issue 28)
    now_plan = fetch_rows(client, site, q, start, end, ctx, cap, done=done)
    prev_plan = fetch_rows(client, site, q, prev[0], prev[1], ctx, cap, done=done)
    rows = join(now_plan.rows, prev_plan.rows, len(q.dimensions))
    hdrs = compare_headers(q)
    now_totals = totals_from(client.query(site, {**q.totals_body(), "startDate": start, "endDate": end, "rowLimit": 1}))
    prev_totals = totals_from(client.query(site, {**q.totals_body(), "startDate": prev[0], "endDate": prev[1], "rowLimit": 1}))
    totals: dict[str, Any] = {}
    for m in METRIC_TYPES:
        a, b = now_totals[m], prev_totals[m]
        totals[m], totals[f"{m}_previous"] = a, b
        change = None if a is None or b is None else a - b
        totals[f"{m}_change"] = round(change, 4) if isinstance(change, float) else change
    warnings = dates.window_warnings(prev[0], end) + now_plan.warnings + prev_plan.warnings
    if q.data_state != "final":
        warnings += provisional_warning(now_plan.first_incomplete_date or prev_plan.first_incomplete_date, None)
    if cap is not None and (now_plan.row_cap_applied or prev_plan.row_cap_applied):
        warnings.append(f"row_cap {cap} applied to each window: rows beyond the top {cap} by clicks are missing, so "
                        "some rows show nulls for a window where they exist.")
    arguments = {"dimensions": list(q.dimensions), "filters": [dict(f) for f in q.filters], "start_date": start,
                 "end_date": end, "compare_start_date": prev[0], "compare_end_date": prev[1],
                 "search_type": q.search_type, "data_state": q.data_state}
    if cap is not None:
        arguments["row_cap"] = cap
    return Extraction(
        rows=rows,
        columns=[h.name for h in hdrs],
        headers=hdrs,
        description=describe(site, q, [(start, end), prev], " Joined on the dimensions: current window vs previous window."),
        dates=[start, end, prev[0], prev[1]],
        totals=totals,
        warnings=warnings,
        arguments=arguments,
        source={"api": "searchconsole v1 searchanalytics.query",
                "requests": now_plan.requests + prev_plan.requests + 2},
    )
