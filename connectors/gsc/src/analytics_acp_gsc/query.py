"""Search Analytics arguments -> the API request body, with the API's rules checked first (ACP_INVALID_ARGUMENTS).

Also the shared pieces of the Search Analytics tools: typed headers (8.6, 15.2), row conversion,
the provisional flag, ``order_by`` and the technical description (8.2).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from analytics_acp import Header, InvalidArguments

from .constants import AGGREGATION_TYPES, DATA_STATES, DIMENSIONS, FILTER_DIMENSIONS, OPERATORS, SEARCH_TYPES

METRICS = ["clicks", "impressions", "ctr", "position"]
DEFAULT_DIMENSIONS = ["query"]

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
_ORDER = re.compile(r"^\s*(-?)([A-Za-z_][A-Za-z0-9_]*)(?:\s+(asc|desc))?\s*$", re.I)


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


def _choice(value: Any, allowed: list[str], name: str, default: str | None) -> str | None:
    """The allowed option ``value`` names (case-insensitive), ``default`` when absent."""
    if value in (None, ""):
        return default
    for option in allowed:
        if str(value).lower() == option.lower():
            return option
    raise InvalidArguments(f"{name} {value!r} is not valid. Use one of: {', '.join(allowed)}.")


def _pick(value: Any, allowed: list[str], name: str, default: str) -> str:
    """``_choice`` that always yields an option (``default`` when absent)."""
    return _choice(value, allowed, name, default) or default


def _named(value: Any, allowed: list[str], name: str) -> str:
    """``_choice`` for a value that must be given."""
    chosen = _choice(value, allowed, name, None)
    if chosen is None:
        raise InvalidArguments(f"{name} is missing. Use one of: {', '.join(allowed)}.")
    return chosen


def parse_query(args: dict[str, Any], *, allow_time: bool = True) -> Query:
    """Validate dimensions, filters, search_type, aggregation_type and data_state against the API's rules."""
    dims_raw = args.get("dimensions")
    dims = list(DEFAULT_DIMENSIONS) if dims_raw is None else [_named(d, DIMENSIONS, "dimension") for d in dims_raw]
    if len(set(dims)) != len(dims):
        raise InvalidArguments("dimensions must not repeat a dimension.")
    filters: list[dict[str, str]] = []
    for f in args.get("filters") or []:
        if not isinstance(f, dict) or not f.get("dimension") or f.get("expression") in (None, ""):
            raise InvalidArguments('Each filter needs dimension and expression, e.g. {"dimension": "page", "operator": "contains", "expression": "/blog/"}.')
        filters.append({
            "dimension": _named(f["dimension"], FILTER_DIMENSIONS, "filter dimension"),
            "operator": _pick(f.get("operator"), OPERATORS, "filter operator", "equals"),
            "expression": str(f["expression"]),
        })
    query = Query(
        dimensions=dims,
        filters=filters,
        search_type=_pick(args.get("search_type"), SEARCH_TYPES, "search_type", "web"),
        aggregation_type=_choice(args.get("aggregation_type"), AGGREGATION_TYPES, "aggregation_type", None),
        data_state=_pick(args.get("data_state"), DATA_STATES, "data_state", "final"),
    )
    _check_rules(query, allow_time)
    return query


def _check_rules(q: Query, allow_time: bool) -> None:
    if not allow_time and q.has_time:
        raise InvalidArguments("compare_periods joins the two windows on the dimensions, so date and hour cannot be "
                               "dimensions. Use search_analytics with the date dimension for a daily series.")
    if "hour" in q.dimensions and q.data_state != "hourly_all":
        raise InvalidArguments('The hour dimension needs data_state "hourly_all" (hourly data covers the last 10 days).')
    if "searchAppearance" in q.dimensions and len(q.dimensions) > 1:
        raise InvalidArguments(
            "searchAppearance cannot be combined with other dimensions (Search Console's rule). Step 1: group by "
            "searchAppearance alone to list the appearance types. Step 2: filter on one of them "
            '({"dimension": "searchAppearance", "operator": "equals", "expression": "<TYPE>"}) and group by the other dimensions.'
        )
    page_used = "page" in q.dimensions or any(f["dimension"] == "page" for f in q.filters)
    if q.aggregation_type == "byProperty" and page_used:
        raise InvalidArguments('aggregation_type "byProperty" cannot be used when grouping or filtering by page '
                               '(Search Console then aggregates by page). Use "auto" or "byPage".')
    if q.aggregation_type == "byNewsShowcasePanel" and (q.search_type not in ("discover", "googleNews")
                                                        or page_used or "searchAppearance" in q.dimensions):
        raise InvalidArguments('aggregation_type "byNewsShowcasePanel" needs search_type discover or googleNews and '
                               "no page grouping or filter and no searchAppearance dimension.")
    if q.search_type in ("discover", "googleNews") and "query" in q.dimensions:
        raise InvalidArguments(f"search_type {q.search_type} has no queries: group by page, country, device or date instead.")


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


def parse_order_by(value: Any, columns: list[str]) -> list[tuple[str, bool]]:
    """``order_by`` items ("clicks desc", "-position", "query") -> [(column, descending)]."""
    if value in (None, "", []):
        return []
    items = [value] if isinstance(value, str) else list(value)
    out = []
    for item in items:
        m = _ORDER.match(str(item))
        if not m or m.group(2) not in columns:
            raise InvalidArguments(f"order_by {item!r} is not valid: use a column ({', '.join(columns)}) optionally "
                                   "followed by asc or desc, e.g. \"impressions desc\".")
        desc = m.group(1) == "-" or (m.group(3) or "").lower() == "desc"
        out.append((m.group(2), desc))
    return out


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
