"""The forecast tool as the runtime calls it: table_ref resolved by a fake host (8.8), typed output, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analytics_acp.context import HostTable
from analytics_acp.errors import HostTablesUnsupported, InvalidArguments, TableNotFound, UpstreamError
from analytics_acp.kit import RecordingSignals
from analytics_acp_prediction.arguments import ForecastArguments
from analytics_acp_prediction.forecast_tool import run
from statsmodels.tsa.holtwinters import ExponentialSmoothing

BASE = {"time_column": "fecha", "value_column": "pedidos", "horizon": 7, "method": "holt_winters"}


def _channels(tabledata) -> HostTable:
    web = tabledata.daily_sales(n=60, seed=1).assign(canal="web")
    shop = tabledata.daily_sales(n=60, seed=2, scale=0.4).assign(canal="shop")
    frame = pd.concat([web, shop]).sample(frac=1, random_state=0)  # the host's order is arbitrary
    frame["visits"] = "n/a"
    return tabledata.host_table("ds_canales", frame[["fecha", "canal", "pedidos", "visits"]], {"fecha": "date"})


async def test_output_is_typed_and_dated(make_ctx, sales_table):
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await run(ForecastArguments.parse({"table_ref": sales_table.ref, **BASE}), ctx)
    assert ctx.table_reader.requests == [sales_table.ref]
    assert [h.to_json() for h in result.headers] == [
        {"name": "fecha", "type": "date", "role": "dimension", "description": "Forecast day"},
        {"name": "forecast", "type": "number", "role": "metric", "description": "Point forecast of pedidos"},
        {"name": "lower", "type": "number", "role": "metric", "description": "Lower bound of the 95% prediction interval"},
        {"name": "upper", "type": "number", "role": "metric", "description": "Upper bound of the 95% prediction interval"},
    ]
    assert list(result.rows[0]) == ["fecha", "forecast", "lower", "upper"]
    assert len(result.rows) == 7 and result.dates == ["2026-09-29", "2026-10-05"]
    assert result.description.startswith(
        "Holt-Winters forecast of pedidos from table 'ventas_execute_sql_20261012_101630': "
        "7 daily periods from 2026-09-29 to 2026-10-05, with the 95% prediction interval in lower/upper."
    )
    assert result.title == "Holt-Winters forecast of pedidos (7 days)"
    assert result.extra["requested_method"] == "holt_winters" and result.extra["frequency"] == "daily"
    assert result.arguments["method"] == "holt_winters" and result.arguments["confidence"] == 0.95


async def test_grouped_forecasts_equal_each_series_alone(make_ctx, tabledata):
    table = _channels(tabledata)
    ctx = make_ctx({table.ref: table})
    result = await run(ForecastArguments.parse({"table_ref": table.ref, **BASE, "group_by": "canal"}), ctx)
    assert [h.name for h in result.headers] == ["fecha", "canal", "forecast", "lower", "upper"]
    assert [r["canal"] for r in result.rows] == ["shop"] * 7 + ["web"] * 7
    assert [s["key"] for s in result.extra["series"]] == [{"canal": "shop"}, {"canal": "web"}]
    for canal, seed, scale in (("web", 1, 1.0), ("shop", 2, 0.4)):
        frame = tabledata.daily_sales(n=60, seed=seed, scale=scale)
        y = pd.Series(frame["pedidos"].to_numpy(), index=pd.DatetimeIndex(pd.to_datetime(frame["fecha"]), freq="D"))
        direct = ExponentialSmoothing(y, trend="add", seasonal="add", seasonal_periods=7,
                                      initialization_method="estimated").fit().forecast(7)
        mine = [r["forecast"] for r in result.rows if r["canal"] == canal]
        np.testing.assert_allclose(mine, direct.to_numpy(), rtol=1e-9)
    assert "2 series x 7 daily periods" in result.description


async def test_group_with_too_little_history_is_skipped_with_a_warning(make_ctx, tabledata):
    table = _channels(tabledata)
    table.rows += [{"fecha": "2026-08-01", "canal": "app", "pedidos": 3.0, "visits": "n/a"}]
    ctx = make_ctx({table.ref: table})
    result = await run(ForecastArguments.parse({"table_ref": table.ref, **BASE, "group_by": ["canal"]}), ctx)
    assert {r["canal"] for r in result.rows} == {"shop", "web"}
    assert any(w.startswith("Series canal=app was skipped:") for w in result.warnings)


async def test_unknown_table_passes_the_host_message_on(make_ctx, sales_table):
    ctx = make_ctx({sales_table.ref: sales_table})
    with pytest.raises(TableNotFound) as info:
        await run(ForecastArguments.parse({"table_ref": "ds_missing", **BASE}), ctx)
    assert info.value.code == -32021
    assert info.value.message == "No dataset or report named 'ds_missing' in this conversation. Use acp_datasets to list ids."


async def test_no_host_tables_is_acp_host_tables_unsupported(make_ctx, sales_table):
    ctx = make_ctx({sales_table.ref: sales_table}, host_tables=False)
    with pytest.raises(HostTablesUnsupported) as info:
        await run(ForecastArguments.parse({"table_ref": sales_table.ref, **BASE}), ctx)
    assert info.value.code == -32020
    assert ctx.table_reader.requests == []  # 8.8: the server must not send acp/read_table


async def test_missing_and_non_numeric_columns_list_the_usable_ones(make_ctx, tabledata):
    table = _channels(tabledata)
    ctx = make_ctx({table.ref: table})
    with pytest.raises(InvalidArguments) as info:
        await run(ForecastArguments.parse({"table_ref": table.ref, **BASE, "value_column": "orders"}), ctx)
    assert info.value.code == -32017
    assert info.value.message == (
        "value_column: column 'orders' is not in table 'ds_canales'. Columns: fecha, canal, pedidos, visits."
    )
    with pytest.raises(InvalidArguments, match=r"column 'canal' is not numeric. Numeric columns of 'ds_canales': pedidos\."):
        await run(ForecastArguments.parse({"table_ref": table.ref, **BASE, "value_column": "canal"}), ctx)
    with pytest.raises(InvalidArguments, match=r"column 'visits' is not numeric. Numeric columns of 'ds_canales': pedidos\."):
        await run(ForecastArguments.parse({"table_ref": table.ref, **BASE, "value_column": "visits"}), ctx)
    with pytest.raises(InvalidArguments, match=r"column 'canal' does not hold dates. Date columns of 'ds_canales': fecha\."):
        await run(ForecastArguments.parse({"table_ref": table.ref, **BASE, "time_column": "canal"}), ctx)
    with pytest.raises(InvalidArguments, match="group_by: column 'region' is not in table"):
        await run(ForecastArguments.parse({"table_ref": table.ref, **BASE, "group_by": "region"}), ctx)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"horizon": 0}, "Invalid horizon: must be at least 1."),
        ({"horizon": 1001}, "Invalid horizon: must be at most 1000."),
        ({"horizon": "7"}, "Invalid horizon: must be of type integer."),
        ({"method": "prophet"}, "Invalid method: must be one of auto, holt_winters, ets, sarimax, arima, theta, seasonal_naive."),
        ({"confidence": 1.5}, "Invalid confidence: must be between 0.5 and 0.999"),
        ({"frequency": "fortnightly"}, "Invalid frequency: must be one of hourly, daily, weekly"),
        ({"seasonal_period": 400}, "Invalid seasonal_period: must be at most 366."),
        ({"table_ref": ""}, "Invalid table_ref: must not be empty."),
        ({"time_column": "  "}, "Invalid time_column: must not be empty."),
    ],
)
def test_bad_arguments_are_refused_by_the_model(patch, message):
    """Issue 38.1: the argument model refuses them, so the tool (and the host's table) is never reached."""
    with pytest.raises(InvalidArguments) as info:
        ForecastArguments.parse({"table_ref": "t", **BASE, **patch})
    assert info.value.message.startswith(message)


async def test_confidence_as_percent_and_empty_table(make_ctx, sales_table):
    empty = HostTable("empty", [{"name": "fecha", "type": "date"}, {"name": "pedidos", "type": "number"}], [])
    ctx = make_ctx({sales_table.ref: sales_table, "empty": empty})
    result = await run(ForecastArguments.parse({"table_ref": sales_table.ref, **BASE, "confidence": 80}), ctx)
    assert result.extra["confidence"] == 0.8 and "80% prediction interval" in result.description
    with pytest.raises(InvalidArguments, match="Table 'empty' has no rows"):
        await run(ForecastArguments.parse({"table_ref": "empty", **BASE}), ctx)


async def test_backtest_is_skipped_with_a_reason_when_the_holdout_is_too_long(make_ctx, tabledata):
    table = tabledata.host_table("t20", tabledata.daily_sales(n=20))
    ctx = make_ctx({"t20": table})
    result = await run(ForecastArguments.parse({"table_ref": "t20", **BASE, "horizon": 10}), ctx)
    assert result.extra["backtest"] == {
        "skipped": "a holdout of 10 points leaves 10, fewer than the 14 (2 full seasons) holt_winters needs; "
        "use a shorter horizon to get a backtest"
    }
    auto = await run(ForecastArguments.parse({"table_ref": "t20", **BASE, "method": "auto", "horizon": 10}), ctx)
    assert auto.extra["method"] in {"ets", "theta", "seasonal_naive", "sarimax", "holt_winters"}
    assert "candidates" in auto.extra


async def test_auto_reports_each_model_fit_and_stops_between_models_when_cancelled(make_ctx, tabledata):
    table = _channels(tabledata)
    args = {"table_ref": table.ref, **BASE, "method": "auto", "group_by": ["canal"]}
    ctx = make_ctx({table.ref: table})
    ctx.signals = fits = RecordingSignals()
    await run(ForecastArguments.parse(args), ctx)
    assert [s[0] for s in fits.seen] == list(range(1, len(fits.seen) + 1))
    assert len(fits.seen) >= 2 * 3 and all("canal=" in s[2] for s in fits.seen)  # candidates of both series
    ctx = make_ctx({table.ref: table})
    ctx.signals = stopped = RecordingSignals(cancel_after=2)
    with pytest.raises(UpstreamError, match="cancelled"):
        await run(ForecastArguments.parse(args), ctx)
    assert len(stopped.seen) == 2  # no model fitted after the cancel
