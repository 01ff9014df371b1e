"""From a host table (8.8) to clean columns: dates, numbers, series keys.

Hosts send typed headers when they know them, but values may still be strings
(a CSV imported as text), so every column is parsed here, and every rejected
column produces an error that lists the columns the model can use instead.
Imported on first tool use only (pandas is heavy).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

import pandas as pd
from analytics_acp.context import HostTable
from analytics_acp.errors import InvalidArguments

NUMERIC_TYPES = {"number", "integer"}
DATE_TYPES = {"date", "datetime"}
# A column counts as numeric/date-like when at least this share of its non-empty cells parse.
PARSE_SHARE = 0.9


def table_frame(table: HostTable) -> pd.DataFrame:
    """All rows of ``table`` as a DataFrame with the columns in header order."""
    columns = table.columns
    if not table.rows:
        raise InvalidArguments(f"Table {table.ref!r} has no rows; there is nothing to forecast or plot.")
    frame = pd.DataFrame.from_records(table.rows)
    for name in columns:
        if name not in frame.columns:
            frame[name] = None
    extra = [c for c in frame.columns if c not in columns]
    return frame[list(columns) + extra]


def _non_empty(values: pd.Series) -> pd.Series:
    return values[values.notna() & (values.astype(str).str.strip() != "")]


def parse_numbers(values: pd.Series) -> pd.Series:
    """Floats; NaN for empty or non-numeric cells (booleans are not numbers here)."""
    if values.map(lambda v: isinstance(v, bool)).any():
        values = values.map(lambda v: None if isinstance(v, bool) else v)
    return pd.to_numeric(values, errors="coerce").astype(float)


def parse_times(values: pd.Series) -> pd.Series:
    """Naive timestamps (UTC for values with an offset); NaT for cells that are not dates.

    Accepts ISO dates and datetimes, YYYYMMDD and, for integer columns, years (YYYY).
    """
    sample = _non_empty(values)
    if sample.empty:
        return pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns]")
    as_text = values.map(lambda v: None if v is None or (isinstance(v, float) and pd.isna(v)) else str(v).strip())
    digits = as_text.dropna()
    if not digits.empty and digits.str.fullmatch(r"\d{8}").all():
        return pd.to_datetime(as_text, format="%Y%m%d", errors="coerce")
    if not digits.empty and digits.str.fullmatch(r"\d{4}").all():
        years = pd.to_numeric(as_text, errors="coerce")
        if years.dropna().between(1000, 3000).all():
            return pd.to_datetime(as_text, format="%Y", errors="coerce")
    if pd.api.types.is_numeric_dtype(values.dtype):
        # Other numbers (epoch seconds, row numbers) are not read as dates.
        return pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns]")
    parsed = pd.to_datetime(as_text, errors="coerce", format="ISO8601", utc=True)
    if parsed.notna().sum() < len(digits) * PARSE_SHARE:
        parsed = pd.to_datetime(as_text, errors="coerce", format="mixed", utc=True)
    return parsed.dt.tz_localize(None)


def numeric_columns(frame: pd.DataFrame, table: HostTable, exclude: AbstractSet[str] = frozenset()) -> list[str]:
    """Columns whose cells are (almost all) numbers, in table order."""
    out = []
    for name in frame.columns:
        if name in exclude or table.header_type(name) in DATE_TYPES or table.header_type(name) == "boolean":
            continue
        present = _non_empty(frame[name])
        if present.empty:
            continue
        if parse_numbers(present).notna().mean() >= PARSE_SHARE:
            out.append(name)
    return out


def date_columns(frame: pd.DataFrame, table: HostTable) -> list[str]:
    """Columns whose cells are (almost all) dates or timestamps, in table order."""
    out = []
    for name in frame.columns:
        present = _non_empty(frame[name])
        if present.empty:
            continue
        if table.header_type(name) in DATE_TYPES or parse_times(present).notna().mean() >= PARSE_SHARE:
            out.append(name)
    return out


def _listing(names: list[str]) -> str:
    return ", ".join(names) if names else "none"


def require_column(frame: pd.DataFrame, table: HostTable, name: Any, argument: str) -> str:
    """``name`` if it is a column of the table, else ACP_INVALID_ARGUMENTS listing the columns."""
    if not isinstance(name, str) or not name:
        raise InvalidArguments(f"{argument} must be a column name. Columns of {table.ref!r}: {_listing(list(frame.columns))}.")
    if name not in frame.columns:
        raise InvalidArguments(
            f"{argument}: column {name!r} is not in table {table.ref!r}. Columns: {_listing(list(frame.columns))}."
        )
    return name


def time_values(frame: pd.DataFrame, table: HostTable, name: Any, argument: str = "time_column") -> tuple[pd.Series, list[str]]:
    """Parsed timestamps of a time column, and warnings about rows that had no valid date."""
    name = require_column(frame, table, name, argument)
    times = parse_times(frame[name])
    present = _non_empty(frame[name])
    valid = int(times.notna().sum())
    if present.empty or valid < len(present) * 0.5:
        raise InvalidArguments(
            f"{argument}: column {name!r} does not hold dates. Date columns of {table.ref!r}: "
            f"{_listing(date_columns(frame, table))}."
        )
    warnings = []
    dropped = len(frame) - valid
    if dropped:
        warnings.append(f"{dropped} rows with an empty or invalid {name} were ignored.")
    return times, warnings


def number_values(
    frame: pd.DataFrame, table: HostTable, name: Any, argument: str, exclude: AbstractSet[str] = frozenset()
) -> tuple[pd.Series, list[str]]:
    """Parsed numbers of a value column, and warnings about cells that were not numbers."""
    name = require_column(frame, table, name, argument)
    values = parse_numbers(frame[name])
    present = _non_empty(frame[name])
    usable = numeric_columns(frame, table, exclude=exclude)
    if table.header_type(name) in DATE_TYPES or present.empty or values.notna().sum() < len(present) * 0.5:
        raise InvalidArguments(
            f"{argument}: column {name!r} is not numeric. Numeric columns of {table.ref!r}: {_listing(usable)}."
        )
    warnings = []
    bad = int(len(present) - values.notna().sum())
    empty = int(len(frame) - len(present))
    if bad:
        warnings.append(f"{bad} rows with a non-numeric {name} were ignored.")
    if empty:
        warnings.append(f"{empty} rows with an empty {name} were ignored.")
    return values, warnings


def key_columns(frame: pd.DataFrame, table: HostTable, group_by: list[str] | None) -> list[str]:
    """The ``group_by`` columns (parsed as a list by the argument model), each checked against the table."""
    return [require_column(frame, table, n, "group_by") for n in group_by or []]


def key_text(value: Any) -> Any:
    """A series key value as it goes out (None stays None, numbers stay numbers)."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value
