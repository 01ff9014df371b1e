"""Frequency inference and the regular grid: filling, aggregating and the warnings that say how."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analytics_acp.context import HostTable
from analytics_acp.errors import InvalidArguments
from analytics_acp_prediction.arguments import ForecastArguments
from analytics_acp_prediction.forecast_tool import run


def _table(ref: str, stamps, values, time_type: str = "date") -> HostTable:
    rows = [{"t": s, "v": v} for s, v in zip(stamps, values, strict=True)]
    return HostTable(ref, [{"name": "t", "type": time_type}, {"name": "v", "type": "number"}], rows)


async def _forecast(ctx, ref: str, **arguments):
    args = {"table_ref": ref, "time_column": "t", "value_column": "v", "horizon": 4, "method": "seasonal_naive",
            **arguments}
    return await run(ForecastArguments.parse(args), ctx)


def _wave(n: int, period: int) -> list[float]:
    return [float(50 + 10 * np.sin(2 * np.pi * i / period) + i * 0.2) for i in range(n)]


@pytest.mark.parametrize(
    ("freq", "stamps", "season", "next_stamps"),
    [
        ("daily", pd.date_range("2026-01-01", periods=40, freq="D"), 7, ["2026-02-10", "2026-02-11"]),
        ("weekly", pd.date_range("2025-01-06", periods=120, freq="W-MON"), 52, ["2027-04-26", "2027-05-03"]),
        ("monthly", pd.date_range("2022-01-01", periods=40, freq="MS"), 12, ["2025-05-01", "2025-06-01"]),
        ("monthly", pd.date_range("2022-01-31", periods=40, freq="ME"), 12, ["2025-05-31", "2025-06-30"]),
        ("quarterly", pd.date_range("2016-01-01", periods=30, freq="QS"), 4, ["2023-07-01", "2023-10-01"]),
    ],
)
async def test_frequency_and_season_are_inferred(make_ctx, freq, stamps, season, next_stamps):
    table = _table("x", [s.strftime("%Y-%m-%d") for s in stamps], _wave(len(stamps), season))
    result = await _forecast(make_ctx({"x": table}), "x")
    assert result.extra["frequency"] == freq
    assert result.extra["seasonal_period"] == season
    assert [r["t"] for r in result.rows[:2]] == next_stamps
    assert result.warnings == []


async def test_hourly_series_keeps_the_time_of_day(make_ctx):
    stamps = pd.date_range("2026-01-01 00:00", periods=72, freq="h")
    table = _table("h", [s.isoformat() for s in stamps], _wave(72, 24), "datetime")
    result = await _forecast(make_ctx({"h": table}), "h")
    assert result.extra["frequency"] == "hourly" and result.extra["seasonal_period"] == 24
    assert result.rows[0]["t"] == "2026-01-04T00:00:00"
    assert result.headers[0].type == "datetime"
    assert result.dates == ["2026-01-04", "2026-01-04"]


async def test_missing_days_are_interpolated_with_a_warning(make_ctx):
    stamps = list(pd.date_range("2026-01-01", periods=30, freq="D"))
    values = [float(i) for i in range(30)]
    gone = {4, 10, 11}
    table = _table("gaps", [s.strftime("%Y-%m-%d") for i, s in enumerate(stamps) if i not in gone],
                   [v for i, v in enumerate(values) if i not in gone])
    result = await _forecast(make_ctx({"gaps": table}), "gaps", method="holt_winters", seasonal_period=1)
    assert result.extra["history"] == {"points": 30, "start": "2026-01-01", "end": "2026-01-30"}
    assert any(
        "3 missing daily periods (2026-01-05, 2026-01-11, 2026-01-12) were filled by linear interpolation" in w
        for w in result.warnings
    )
    # A straight line stays a straight line after filling: Holt extrapolates it.
    np.testing.assert_allclose([r["forecast"] for r in result.rows], [30, 31, 32, 33], atol=1e-3)


async def test_fill_zero_and_previous(make_ctx):
    stamps = ["2026-01-01", "2026-01-02", "2026-01-04", "2026-01-05", "2026-01-06", "2026-01-07"]
    table = _table("z", stamps, [5.0, 6, 8, 9, 10, 11])
    zero = await _forecast(make_ctx({"z": table}), "z", method="seasonal_naive", seasonal_period=1, fill="zero")
    assert any("were filled with 0" in w for w in zero.warnings)
    previous = await _forecast(make_ctx({"z": table}), "z", method="seasonal_naive", seasonal_period=1, fill="previous")
    assert any("were filled with the previous value" in w for w in previous.warnings)


async def test_rows_in_the_same_period_are_combined(make_ctx):
    days = pd.date_range("2026-01-01", periods=20, freq="D").strftime("%Y-%m-%d")
    stamps = [d for d in days for _ in range(2)]
    values = [float(i) for i in range(40)]
    table = _table("dup", stamps, values)
    result = await _forecast(make_ctx({"dup": table}), "dup", method="seasonal_naive", seasonal_period=1)
    assert any("40 rows shared 20 daily periods and were combined by sum" in w for w in result.warnings)
    assert result.rows[0]["forecast"] == pytest.approx(38 + 39)
    mean = await _forecast(make_ctx({"dup": table}), "dup", method="seasonal_naive", seasonal_period=1, aggregate="mean")
    assert mean.rows[0]["forecast"] == pytest.approx(38.5)


async def test_a_coarser_frequency_aggregates_daily_rows_into_weeks(make_ctx):
    days = pd.date_range("2026-01-05", periods=70, freq="D")  # starts on a Monday
    table = _table("d", [d.strftime("%Y-%m-%d") for d in days], [1.0] * 70)
    result = await _forecast(make_ctx({"d": table}), "d", frequency="weekly", seasonal_period=1)
    assert result.extra["frequency"] == "weekly" and result.extra["history"]["points"] == 10
    assert result.rows[0]["forecast"] == pytest.approx(7.0)
    assert result.rows[0]["t"] == "2026-03-16"  # the Monday after the last full week
    assert any("grouped into weeks from Monday to Sunday, labelled by their Monday" in w for w in result.warnings)
    assert any("70 rows shared 10 weekly periods and were combined by sum" in w for w in result.warnings)


async def test_an_incomplete_last_period_is_left_out(make_ctx):
    days = pd.date_range("2025-01-01", "2026-02-10", freq="D")  # February is month to date
    table = _table("mtd", [d.strftime("%Y-%m-%d") for d in days], [10.0] * len(days))
    result = await _forecast(make_ctx({"mtd": table}), "mtd", frequency="monthly", seasonal_period=1)
    assert result.extra["history"]["end"] == "2026-01-01"
    assert result.rows[0]["t"] == "2026-02-01"
    assert any("the last monthly period (2026-02-01) is only partly covered by the rows (10 rows) and was left out"
               in w for w in result.warnings)
    # Complete months of 28, 30 and 31 days all stay; a partial first week is dropped too.
    full = pd.date_range("2025-01-01", "2025-04-30", freq="D")
    table = _table("full", [d.strftime("%Y-%m-%d") for d in full], [1.0] * len(full))
    result = await _forecast(make_ctx({"full": table}), "full", frequency="monthly", seasonal_period=1)
    assert result.extra["history"] == {"points": 4, "start": "2025-01-01", "end": "2025-04-01"}
    assert not any("incomplete" in w for w in result.warnings)
    days = pd.date_range("2026-01-07", periods=40, freq="D")  # a Wednesday
    table = _table("wk", [d.strftime("%Y-%m-%d") for d in days], [1.0] * 40)
    result = await _forecast(make_ctx({"wk": table}), "wk", frequency="weekly", seasonal_period=1)
    assert result.extra["history"]["start"] == "2026-01-12"
    assert any("the first weekly period (2026-01-05)" in w for w in result.warnings)


async def test_mostly_empty_grid_is_refused_with_the_frequency_to_use(make_ctx):
    months = pd.date_range("2024-01-01", periods=24, freq="MS")
    table = _table("m", [d.strftime("%Y-%m-%d") for d in months], _wave(24, 12))
    with pytest.raises(InvalidArguments, match="the data looks monthly: pass frequency 'monthly'"):
        await _forecast(make_ctx({"m": table}), "m", frequency="daily")


async def test_compact_and_mixed_date_formats(make_ctx):
    compact = _table("c", [d.strftime("%Y%m%d") for d in pd.date_range("2026-01-01", periods=21)], _wave(21, 7), "string")
    result = await _forecast(make_ctx({"c": compact}), "c")
    assert result.rows[0]["t"] == "2026-01-22"
    timestamps = _table("ts", [f"{d.strftime('%Y-%m-%d')}T10:30:00Z" for d in pd.date_range("2026-01-01", periods=21)],
                        _wave(21, 7), "datetime")
    result = await _forecast(make_ctx({"ts": timestamps}), "ts")
    assert result.extra["frequency"] == "daily" and result.rows[0]["t"] == "2026-01-22"
    assert any("times of day were dropped" in w for w in result.warnings)


async def test_numbers_sent_as_text_and_bad_cells(make_ctx):
    days = pd.date_range("2026-01-01", periods=21).strftime("%Y-%m-%d").tolist()
    values = [str(v) for v in _wave(21, 7)]
    values[3] = "n/a"
    table = HostTable("s", [{"name": "t", "type": "string"}, {"name": "v", "type": "string"}],
                      [{"t": d, "v": v} for d, v in zip(days + ["not a date"], values + ["5"], strict=True)])
    result = await _forecast(make_ctx({"s": table}), "s")
    assert any("1 rows with a non-numeric v were ignored" in w for w in result.warnings)
    assert any("1 rows with an empty or invalid t were ignored" in w for w in result.warnings)
    assert any("1 missing daily periods (2026-01-04)" in w for w in result.warnings)
