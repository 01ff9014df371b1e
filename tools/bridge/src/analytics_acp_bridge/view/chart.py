"""What the dataset view shows above the table (issue 36.1): the dataset's card and a chart chosen from its shape.

- a forecast (columns ``forecast``, ``lower``, ``upper`` and a date): its interval band and the history
  it was made from (the ``table_ref`` of its arguments, the last MAX_HISTORY points, the first series);
- a date or datetime column and a number: a line of the number's sum per day (per month, per year
  when there are more than MAX_POINTS days);
- a text column and a number: bars of the top MAX_BARS values by the number's sum;
- anything else: no chart, the table alone.

The sums run in SQLite over the whole dataset (the cached table), so the chart is never the sample's;
the dataset view keeps the answer per dataset (its CSV identity) and column (pages.py).
"""

from __future__ import annotations

from typing import Any

from analytics_acp.errors import AcpError, InvalidArguments
from analytics_acp.results.numbers import readable

from ..query.cache import TableCache
from ..store.datasets import DatasetStore
from .tables import NUMERIC_TYPES, Table, open_table

MAX_POINTS = 500  # a line's points; past it days become months, then years
MAX_BARS = 10
MAX_HISTORY = 500  # history points before a forecast
MAX_FORECAST = 2000  # forecast points drawn (one series)
FORECAST_COLUMNS = ("forecast", "lower", "upper")
TIME_TYPES = ("date", "datetime")
CATEGORY_TYPES = ("string", "boolean")
GRAINS = {"date": [("day", 10), ("month", 7), ("year", 4)],
          "datetime": [("hour", 13), ("day", 10), ("month", 7), ("year", 4)]}


def chart_of(store: DatasetStore, cache: TableCache, table: Table, y: str | None) -> dict[str, Any] | None:
    """The chart of ``table`` (module docstring); ``y`` picks the number column. None: the table alone."""
    columns = table.columns
    numbers = [c["name"] for c in columns if c["type"] in NUMERIC_TYPES]
    if y is not None and y not in numbers:
        raise InvalidArguments(f"Dataset «{table.dataset.id}» has no number column {y!r}. Its number columns: "
                               f"{', '.join(numbers) or 'none'}.")
    time = next((c for c in columns if c["type"] in TIME_TYPES), None)
    if time is not None and all(n in numbers for n in FORECAST_COLUMNS):
        return readable(_forecast(store, cache, table, time))
    value = y or next((n for n in numbers if not _id_like(n)), None)
    if value is None or table.dataset.row_count < 2:
        return None
    if time is not None:
        return readable(_line(table, time, value))
    category = next((c["name"] for c in columns if c["type"] in CATEGORY_TYPES), None)
    return readable(_bars(table, category, value)) if category is not None else None


def _forecast(store: DatasetStore, cache: TableCache, table: Table, time: dict[str, str]) -> dict[str, Any]:
    keys = [c["name"] for c in table.columns if c["type"] in CATEGORY_TYPES]
    t = table.column(time["name"])
    series: dict[str, Any] = {}
    if keys:  # several series (group_by): the first one
        first = table.conn.execute(f"SELECT {', '.join(map(table.column, keys))} FROM {table.ref} "
                                   f"ORDER BY rowid LIMIT 1").fetchone()
        series = dict(zip(keys, first, strict=True))
    where, params = _equal(table, series)
    rows = table.conn.execute(
        f"SELECT {t}, {', '.join(table.column(c) for c in FORECAST_COLUMNS)} FROM {table.ref} "
        f"WHERE {t} IS NOT NULL{where} ORDER BY {t} LIMIT {MAX_FORECAST}", params).fetchall()
    arguments = table.dataset.meta.get("arguments") or {}
    out: dict[str, Any] = {"kind": "forecast", "x": time["name"], "y": arguments.get("value_column"),
                           "series": series or None, "forecast": [list(r) for r in rows], "history": [],
                           "history_dataset": None}
    history = _history(store, cache, arguments, series, rows[0][0] if rows else None)
    if history is not None:
        out["history_dataset"], out["history"] = history
    return out


def _history(store: DatasetStore, cache: TableCache, arguments: dict[str, Any], series: dict[str, Any],
             before: Any) -> tuple[str, list[list[Any]]] | None:
    """The last points of the forecast's input table (its ``table_ref``), the same series; None if gone."""
    ref, x, y = arguments.get("table_ref"), arguments.get("time_column"), arguments.get("value_column")
    if not isinstance(ref, str) or not isinstance(x, str) or not isinstance(y, str):
        return None
    try:
        source = store.resolve(ref)  # acp/read_table's rules: an id, id.csv or acp-data/id.csv, never a path
    except AcpError:
        return None
    names = {str(h["name"]) for h in source.headers}
    if x not in names or y not in names or not set(series) <= names:
        return None
    with open_table(store, cache, source) as table:
        where, params = _equal(table, series)
        tx, ty = table.column(x), table.column(y)
        if before is not None:
            where += f" AND {tx} < :before"
            params["before"] = before
        rows = table.conn.execute(
            f"SELECT {tx}, SUM({ty}) FROM {table.ref} WHERE {tx} IS NOT NULL{where} GROUP BY {tx} "
            f"ORDER BY {tx} DESC LIMIT {MAX_HISTORY}", params).fetchall()
    return source.id, [list(r) for r in reversed(rows)]


def _line(table: Table, time: dict[str, str], value: str) -> dict[str, Any]:
    t, v = table.column(time["name"]), table.column(value)
    grain, width = _grain(table, t, GRAINS[time["type"]])
    rows = table.conn.execute(
        f"SELECT substr({t}, 1, {width}) AS x, SUM({v}) FROM {table.ref} WHERE {t} IS NOT NULL GROUP BY x ORDER BY x "
        f"LIMIT {MAX_POINTS}").fetchall()
    return {"kind": "line", "x": time["name"], "y": value, "agg": "sum", "grouped": grain,
            "points": [list(r) for r in rows]}


def _grain(table: Table, t: str, grains: list[tuple[str, int]]) -> tuple[str, int]:
    """The finest grain (name, prefix length of the ISO text) with at most MAX_POINTS distinct values."""
    for grain, width in grains:
        (distinct,) = table.conn.execute(
            f"SELECT count(*) FROM (SELECT DISTINCT substr({t}, 1, {width}) FROM {table.ref} WHERE {t} IS NOT NULL "
            f"LIMIT {MAX_POINTS + 1})").fetchone()
        if distinct <= MAX_POINTS:
            return grain, width
    return grains[-1]


def _bars(table: Table, category: str, value: str) -> dict[str, Any]:
    c, v = table.column(category), table.column(value)
    rows = table.conn.execute(
        f"SELECT {c}, SUM({v}) AS total FROM {table.ref} WHERE {c} IS NOT NULL GROUP BY {c} "
        f"ORDER BY total DESC LIMIT {MAX_BARS}").fetchall()
    bars = [[bool(k) if table.columns[_index(table, category)]["type"] == "boolean" else k, s] for k, s in rows]
    return {"kind": "bars", "x": category, "y": value, "agg": "sum", "top": MAX_BARS, "bars": bars}


def _index(table: Table, name: str) -> int:
    return next(i for i, c in enumerate(table.columns) if c["name"] == name)


def _equal(table: Table, values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """`` AND col = :k0 ...`` for a series' key values (NULL keys as IS NULL)."""
    parts, params = [], {}
    for i, (name, value) in enumerate(values.items()):
        if value is None:
            parts.append(f" AND {table.column(name)} IS NULL")
        else:
            parts.append(f" AND {table.column(name)} = :k{i}")
            params[f"k{i}"] = value
    return "".join(parts), params


def _id_like(name: str) -> bool:
    """An identifier column (``id``, ``order_id``, ``userId``): summing it makes no chart."""
    low = name.lower()
    return low == "id" or low.endswith("_id") or (name.endswith("Id") and len(name) > 2)
