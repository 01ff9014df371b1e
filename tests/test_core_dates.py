"""Date windows (8.9) resolved in a source's own time zone (Search Console counts days in Pacific Time)."""

from __future__ import annotations

import datetime as dt

import pytest
from analytics_acp.dates import resolve_date, resolve_window, today_local
from analytics_acp.errors import InvalidArguments

# 05:30 UTC on 25 September is still 24 September (22:30 PDT) in Los Angeles.
NOW = dt.datetime(2026, 9, 25, 5, 30, tzinfo=dt.UTC)


def test_today_in_a_time_zone_at_a_fixed_clock():
    assert today_local("America/Los_Angeles", now=NOW) == dt.date(2026, 9, 24)
    assert today_local("UTC", now=NOW) == dt.date(2026, 9, 25)
    assert today_local("Asia/Tokyo", now=NOW) == dt.date(2026, 9, 25)


def test_relative_forms_count_from_the_zone_today(monkeypatch):
    import analytics_acp.dates as dates

    real = dates.today_local
    monkeypatch.setattr(dates, "today_local", lambda tz=None, now=None: real(tz, now=NOW))
    assert resolve_date("today", tz="America/Los_Angeles") == "2026-09-24"
    assert resolve_date("yesterday", tz="America/Los_Angeles") == "2026-09-23"
    assert resolve_date("3daysAgo", tz="America/Los_Angeles") == "2026-09-21"
    assert resolve_window("7daysAgo", "today", tz="America/Los_Angeles") == ("2026-09-17", "2026-09-24")
    assert resolve_window("7daysAgo", "today", tz="UTC") == ("2026-09-18", "2026-09-25")


def test_explicit_today_wins_and_bad_input_is_typed():
    assert resolve_date("yesterday", today=dt.date(2026, 1, 1), tz="America/Los_Angeles") == "2025-12-31"
    assert resolve_date("20260102") == "2026-01-02"
    with pytest.raises(InvalidArguments, match="not a valid date"):
        resolve_date("last week", tz="America/Los_Angeles")
