"""Search Console days are Pacific Time: window resolution and defaults (8.9, 15.2).

"today", "yesterday" and NdaysAgo mean the day in America/Los_Angeles, whatever the machine's
zone (a server in Madrid at 01:00 is still on the previous Pacific day). The clock is read through
``now_utc`` so tests can fix it.
"""

from __future__ import annotations

import datetime as dt

from analytics_acp import InvalidArguments
from analytics_acp.dates import resolve_date, today_local

PACIFIC = "America/Los_Angeles"
RETENTION_MONTHS = 16  # Search Console keeps 16 months of data
USUAL_DELAY_DAYS = 3  # final data usually lags 2-3 days
DEFAULT_WINDOW_MONTHS = 1  # 15.2: one month ending on the last day with final data


def now_utc() -> dt.datetime:
    """The current instant (aware, UTC). Tests monkeypatch this to fix the clock."""
    return dt.datetime.now(dt.UTC)


def today_pt() -> dt.date:
    """Today's date in Pacific Time."""
    return today_local(PACIFIC, now=now_utc())


def resolve(value: str, argument: str) -> str:
    """One window bound (YYYY-MM-DD, YYYYMMDD, today, yesterday, NdaysAgo) resolved in Pacific Time."""
    return resolve_date(value, today=today_pt(), argument=argument)


def add_months(day: dt.date, months: int) -> dt.date:
    """``day`` moved by whole calendar months, clamped to the target month's last day."""
    index = day.year * 12 + (day.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    last = (dt.date(year + (month == 12), month % 12 + 1, 1) - dt.timedelta(days=1)).day
    return dt.date(year, month, min(day.day, last))


def first_available_date() -> dt.date:
    """The oldest day Search Console still keeps (16 months before today, PT)."""
    return add_months(today_pt(), -RETENTION_MONTHS)


def usual_last_final_date() -> dt.date:
    """The usual last day with final data when the API cannot tell (3 days ago, PT)."""
    return today_pt() - dt.timedelta(days=USUAL_DELAY_DAYS)


def window(start: str | None, end: str | None, last_final: dt.date) -> tuple[str, str]:
    """The applied window: given bounds resolved in PT; missing ones default as in 15.2.

    Default end: the last day with final data. Default start: one month before the end.
    """
    end_s = resolve(end, "end_date") if end else last_final.isoformat()
    start_s = resolve(start, "start_date") if start else add_months(dt.date.fromisoformat(end_s), -DEFAULT_WINDOW_MONTHS).isoformat()
    if start_s > end_s:
        raise InvalidArguments(f"start_date {start_s} is after end_date {end_s}.")
    return start_s, end_s


def previous_window(start: str, end: str) -> tuple[str, str]:
    """The window of the same length that ends the day before ``start`` (compare_periods default)."""
    s, e = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    length = (e - s).days + 1
    prev_end = s - dt.timedelta(days=1)
    return (prev_end - dt.timedelta(days=length - 1)).isoformat(), prev_end.isoformat()


def days(start: str, end: str) -> list[str]:
    """Every day of an inclusive window, in order."""
    s, e = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    return [(s + dt.timedelta(days=i)).isoformat() for i in range((e - s).days + 1)]


def window_warnings(start: str, end: str) -> list[str]:
    """Warnings for days outside what Search Console can answer (older than 16 months, in the future)."""
    out = []
    oldest = first_available_date().isoformat()
    if start < oldest:
        out.append(f"Search Console keeps 16 months of data: days before {oldest} return nothing.")
    today = today_pt().isoformat()
    if end > today:
        out.append(f"end_date {end} is after today in Pacific Time ({today}); those days have no data yet.")
    return out
