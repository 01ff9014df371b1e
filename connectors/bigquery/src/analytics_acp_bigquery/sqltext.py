"""What the connector reads from SQL text without deciding anything about safety (that is the dry run's job, 10.4).

Only descriptions and key dates (8.2) come from here: the SQL's date literals and the
``_TABLE_SUFFIX`` bounds of sharded-table queries (``'20260901'`` -> ``2026-09-01``).
"""

from __future__ import annotations

import datetime as dt
import re

from analytics_acp.dates import has_template, resolve_window

SQL_IN_DESCRIPTION = 500
_DATE_LITERAL = re.compile(r"'(\d{4}-\d{2}-\d{2})(?:[ T][0-9:.]+)?'")
_SUFFIX = re.compile(
    r"_TABLE_SUFFIX\s*(?:BETWEEN\s*'(\d{8})'\s*AND\s*'(\d{8})'|(?:>=|<=|=|>|<)\s*'(\d{8})')",
    re.IGNORECASE,
)


def _day(text: str) -> str | None:
    try:
        if len(text) == 8:
            return dt.datetime.strptime(text, "%Y%m%d").date().isoformat()
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def sql_dates(sql: str) -> list[str] | None:
    """Key dates: date literals and _TABLE_SUFFIX bounds, sorted and unique; None when there are none."""
    found = {d for m in _DATE_LITERAL.finditer(sql) if (d := _day(m.group(1)))}
    for m in _SUFFIX.finditer(sql):
        for g in m.groups():
            if g and (d := _day(g)):
                found.add(d)
    return sorted(found) or None


def apply_window(sql: str, start: str | None, end: str | None) -> tuple[str, list[str] | None]:
    """Substitute {{start_date}}/{{end_date}} (8.9) from start_date/end_date; return the SQL and the window.

    The argument model (arguments.py) already refused one bound without the other and markers without a window.
    """
    if not start or not end:
        return sql, None
    first, last = resolve_window(start, end)
    if has_template(sql):
        sql = sql.replace("{{start_date}}", first).replace("{{end_date}}", last)
    return sql, [first, last]


def compact_sql(sql: str) -> str:
    """The SQL on one line for descriptions, elided past SQL_IN_DESCRIPTION characters."""
    one = " ".join(sql.split())
    return one if len(one) <= SQL_IN_DESCRIPTION else one[: SQL_IN_DESCRIPTION - 1].rstrip() + "…"
