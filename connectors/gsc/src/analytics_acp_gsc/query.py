"""Search Analytics arguments (parsed and checked by arguments.py) -> the API request body.

Also the shared pieces of the Search Analytics tools: typed headers (8.6, 15.2), row conversion,
the provisional flag, ``order_by`` and the technical description (8.2).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from analytics_acp import Header

from .arguments import QueryArguments

DIMENSION_HEADERS = {
    "query": Header("query", "string", "dimension", "Search query"),
    "page": Header("page", "string", "dimension", "Canonical URL shown in the results"),
    "country": Header("country", "string", "dimension", "Country, ISO 3166-1 alpha-3 (lower case)"),
    "device": Header("device", "string", "dimension", "DESKTOP, MOBILE or TABLET"),
    "date": Header("date", "date", "dimension", "Day in Pacific Time"),
    "hour": Header("hour", "datetime", "dimension", "Start of the hour (Pacific Time hour, in UTC)"),
    "searchAppearance": Header("searchAppearance", "string", "dimension", "Search result feature"),
}
METRIC_HEADERS = [
    Header("clicks", "integer", "metric"),
    Header("impressions", "integer", "metric"),
    Header("ctr", "number", "metric", "Fraction 0-1"),
    Header("position", "number", "metric", "Average position weighted by impressions"),
]
PROVISIONAL_HEADER = Header("provisional", "boolean", "attribute",
                            "True for days (hours) still being collected: the values may change")


@dataclass
class Query:
    """A validated Search Analytics request (without dates and paging)."""

    dimensions: list[str]
    filters: list[dict[str, str]]
    search_type: str
    aggregation_type: str | None
    data_state: str

    def body(self) -> dict[str, Any]:
        """The request body fields the API receives (dates and paging are added by the planner)."""
        body: dict[str, Any] = {"dimensions": list(self.dimensions), "type": self.search_type}
        if self.filters:
            body["dimensionFilterGroups"] = [{"groupType": "and", "filters": [dict(f) for f in self.filters]}]
        if self.aggregation_type:
            body["aggregationType"] = self.aggregation_type
        if self.data_state != "final":
            body["dataState"] = self.data_state
        return body

    def totals_body(self) -> dict[str, Any]:
        """The aggregate request: same filters, no dimensions, one row for the whole window."""
        body = self.body()
        body["dimensions"] = []
        # Totals must add up like the rows: grouped by page, Google aggregates by page.
        if self.aggregation_type in (None, "auto") and "page" in self.dimensions:
            body["aggregationType"] = "byPage"
        return body

    @property
    def has_time(self) -> bool:
        """date or hour is a dimension (day slices concatenate; rows carry a provisional flag)."""
        return "date" in self.dimensions or "hour" in self.dimensions

    @property
    def flags_provisional(self) -> bool:
        """The provisional column exists: fresh data was asked for and rows are per day/hour."""
        return self.data_state in ("all", "hourly_all") and self.has_time


def query_of(args: QueryArguments) -> Query:
    """The request of a search_analytics or compare_periods call (its arguments already checked by their model)."""
    return Query(
        dimensions=list(args.dimensions),
        filters=[f.model_dump() for f in args.filters],
        search_type=args.search_type,
        aggregation_type=args.aggregation_type,
        data_state=args.data_state,
    )


def headers(q: Query) -> list[Header]:
    """Typed headers: the dimensions in order, the four metrics (15.2) and, with fresh data, provisional."""
    out = [DIMENSION_HEADERS[d] for d in q.dimensions] + list(METRIC_HEADERS)
    if q.flags_provisional:
        out.append(PROVISIONAL_HEADER)
    return out


def _parse_hour(text: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None


def row_converter(q: Query, first_incomplete_date: str | None, first_incomplete_hour: str | None):
    """A function API row -> output tuple in header order (metrics typed; ctr 4 and position 2 decimals).

    Called once per row of extractions of hundreds of thousands of rows: the common case is one
    tuple expression; rows with a missing key or metric take the careful path.
    """
    dims = q.dimensions
    n = len(dims)
    di = dims.index("date") if "date" in dims else None
    hi = dims.index("hour") if "hour" in dims else None
    cutoff_hour = _parse_hour(first_incomplete_hour) if first_incomplete_hour else None

    def careful(row: dict[str, Any]) -> tuple[Any, ...]:
        keys = list(row.get("keys") or [])[:n]
        return (*keys, *[None] * (n - len(keys)), *_metrics(row))

    def plain(row: dict[str, Any]) -> tuple[Any, ...]:
        try:
            keys = row["keys"] if n else ()
            if len(keys) != n:
                return careful(row)
            return (*keys, int(row["clicks"]), int(row["impressions"]), round(row["ctr"], 4), round(row["position"], 2))
        except (KeyError, TypeError, ValueError):
            return careful(row)

    if not q.flags_provisional:
        return plain

    def flagged(row: dict[str, Any]) -> tuple[Any, ...]:
        values = plain(row)
        provisional = False
        if di is not None and first_incomplete_date and values[di] is not None:
            provisional = str(values[di]) >= first_incomplete_date
        if hi is not None and cutoff_hour is not None and values[hi] is not None:
            moment = _parse_hour(str(values[hi]))
            provisional = provisional or (moment is not None and moment >= cutoff_hour)
        return (*values, provisional)

    return flagged


def _metrics(row: dict[str, Any]) -> list[Any]:
    clicks = row.get("clicks")
    impressions = row.get("impressions")
    ctr = row.get("ctr")
    position = row.get("position")
    return [
        int(round(float(clicks))) if clicks is not None else None,
        int(round(float(impressions))) if impressions is not None else None,
        round(float(ctr), 4) if ctr is not None else None,
        round(float(position), 2) if position is not None else None,
    ]


def totals_from(response: dict[str, Any]) -> dict[str, Any]:
    """8.2 totals from the aggregate query's single row (sums, ctr = clicks/impressions, weighted position)."""
    rows = response.get("rows") or []
    if not rows:
        return {"clicks": 0, "impressions": 0, "ctr": None, "position": None}
    clicks, impressions, _ctr, position = _metrics(rows[0])
    ctr = round(clicks / impressions, 4) if impressions else None
    return {"clicks": clicks, "impressions": impressions, "ctr": ctr, "position": position}


def sort_rows(rows: list[tuple[Any, ...]], order: list[tuple[str, bool]], columns: list[str]) -> list[tuple[Any, ...]]:
    """Sort the whole extraction (stable, nulls last), last key first."""
    for name, desc in reversed(order):
        i = columns.index(name)
        present = [r for r in rows if r[i] is not None]
        missing = [r for r in rows if r[i] is None]
        present.sort(key=lambda r: r[i], reverse=desc)  # noqa: B023 - sorted before i changes
        rows = present + missing
    return rows


def describe(site: str, q: Query, windows: list[tuple[str, str]], extra: str = "") -> str:
    """The 8.2 description: source, property, search type, window(s), metrics, dimensions, filters."""
    span = " vs ".join(f"{s} to {e}" for s, e in windows)
    text = (f"Search Console property {site}, search type {q.search_type}, {span} (Pacific Time days), "
            f"data state {q.data_state}. Metrics: clicks, impressions, ctr, position. "
            f"Dimensions: {', '.join(q.dimensions) if q.dimensions else 'none (one row)'}.")
    if q.filters:
        text += " Filter: " + json.dumps(q.filters, ensure_ascii=False) + "."
    if q.aggregation_type:
        text += f" Aggregation: {q.aggregation_type}."
    return text + extra


def applied_arguments(q: Query, start: str, end: str) -> dict[str, Any]:
    """The effective arguments for system_info.arguments (15.2: the dates and search_type the server applied)."""
    return {"dimensions": list(q.dimensions), "filters": [dict(f) for f in q.filters], "start_date": start,
            "end_date": end, "search_type": q.search_type, "data_state": q.data_state}
