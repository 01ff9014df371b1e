"""Forecasts equal statsmodels called directly on the same data (same numbers), and intervals behave."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from analytics_acp.errors import InvalidArguments
from analytics_acp_prediction.arguments import ForecastArguments
from analytics_acp_prediction.forecast_tool import run
from statsmodels.tsa.exponential_smoothing.ets import ETSModel
from statsmodels.tsa.forecasting.theta import ThetaModel
from statsmodels.tsa.holtwinters import ExponentialSmoothing
from statsmodels.tsa.statespace.sarimax import SARIMAX

H = 14


def _series(frame: pd.DataFrame) -> pd.Series:
    return pd.Series(frame["pedidos"].to_numpy(), index=pd.DatetimeIndex(pd.to_datetime(frame["fecha"]), freq="D"))


async def _forecast(ctx, ref: str, **arguments):
    args = {"table_ref": ref, "time_column": "fecha", "value_column": "pedidos", "horizon": H, **arguments}
    return await run(ForecastArguments.parse(args), ctx)


def _columns(result) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(np.array([r[k] for r in result.rows]) for k in ("forecast", "lower", "upper"))


async def test_holt_winters_matches_statsmodels(make_ctx, sales_table, tabledata):
    # 16.7 step 2: forecast with table_ref, time_column, value_column, horizon 14, method holt_winters.
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await _forecast(ctx, sales_table.ref, method="holt_winters")
    y = _series(tabledata.daily_sales())
    direct = ExponentialSmoothing(y, trend="add", seasonal="add", seasonal_periods=7, initialization_method="estimated").fit()
    mean, lower, upper = _columns(result)
    np.testing.assert_allclose(mean, direct.forecast(H).to_numpy(), rtol=1e-9)
    # Analytic h-step interval of the fitted model (issue 14.5): sigma from the SSE with its degrees of
    # freedom, c_j = alpha (1 + j beta*) + gamma [j % 7 == 0] (Hyndman et al. 2008, class 1).
    a, b, g = (direct.params[k] for k in ("smoothing_level", "smoothing_trend", "smoothing_seasonal"))
    sigma = math.sqrt(direct.sse / (len(y) - 12))
    c = np.array([a * (1 + j * b) + g * (j % 7 == 0) for j in range(1, H)])
    half = 1.959963984540054 * sigma * np.sqrt(1 + np.concatenate([[0.0], np.cumsum(c**2)]))
    np.testing.assert_allclose(lower, mean - half, rtol=1e-9)
    np.testing.assert_allclose(upper, mean + half, rtol=1e-9)
    assert result.extra["method"] == "holt_winters" and result.extra["seasonal_period"] == 7
    assert result.extra["params"]["smoothing_level"] == pytest.approx(direct.params["smoothing_level"])
    assert result.dates == ["2026-09-29", "2026-10-12"]
    assert [r["fecha"] for r in result.rows][:2] == ["2026-09-29", "2026-09-30"]


async def test_ets_picks_lowest_aicc_form_and_matches_statsmodels(make_ctx, sales_table, tabledata):
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await _forecast(ctx, sales_table.ref, method="ets")
    y = _series(tabledata.daily_sales())
    scores = {}
    for error, (trend, damped), seasonal in itertools.product(
        ["add", "mul"], [(None, False), ("add", False), ("add", True)], [None, "add", "mul"]
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = ETSModel(y, error=error, trend=trend, damped_trend=damped, seasonal=seasonal,
                           seasonal_periods=7 if seasonal else None).fit(disp=False)
        scores[(error, trend, damped, seasonal)] = fit
    best_key = min(scores, key=lambda k: scores[k].aicc)
    params = result.extra["params"]
    assert (params["error"], params["trend"], params["damped_trend"], params["seasonal"]) == best_key
    frame = scores[best_key].get_prediction(start=len(y), end=len(y) + H - 1,
                                            rng=np.random.default_rng(0)).summary_frame(alpha=0.05)
    mean, lower, upper = _columns(result)
    np.testing.assert_allclose(mean, frame["mean"].to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(lower, frame["pi_lower"].to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(upper, frame["pi_upper"].to_numpy(), rtol=1e-9)


async def test_sarimax_matches_statsmodels_with_the_chosen_order(make_ctx, sales_table, tabledata):
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await _forecast(ctx, sales_table.ref, method="sarimax", confidence=0.8)
    params = result.extra["params"]
    assert len(params["order"]) == 3 and params["seasonal_order"][3] == 7
    y = _series(tabledata.daily_sales())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = SARIMAX(y, order=tuple(params["order"]), seasonal_order=tuple(params["seasonal_order"]),
                         trend=params["trend"]).fit(disp=False)
    forecast = direct.get_forecast(H)
    bounds = forecast.conf_int(alpha=0.2).to_numpy()
    mean, lower, upper = _columns(result)
    np.testing.assert_allclose(mean, forecast.predicted_mean.to_numpy(), rtol=1e-7)
    np.testing.assert_allclose(lower, bounds[:, 0], rtol=1e-7)
    np.testing.assert_allclose(upper, bounds[:, 1], rtol=1e-7)
    assert params["aic"] == pytest.approx(direct.aic)
    # "arima" is the same method under its other name.
    again = await _forecast(ctx, sales_table.ref, method="arima", confidence=0.8)
    np.testing.assert_allclose(_columns(again)[0], mean)


async def test_theta_matches_statsmodels(make_ctx, sales_table, tabledata):
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await _forecast(ctx, sales_table.ref, method="theta")
    y = _series(tabledata.daily_sales())
    direct = ThetaModel(y, period=7, deseasonalize=True).fit()
    mean, lower, upper = _columns(result)
    np.testing.assert_allclose(mean, direct.forecast(H).to_numpy(), rtol=1e-9)
    bounds = direct.prediction_intervals(H, alpha=0.05).to_numpy()
    np.testing.assert_allclose(lower, bounds[:, 0], rtol=1e-9)
    np.testing.assert_allclose(upper, bounds[:, 1], rtol=1e-9)


async def test_seasonal_naive_repeats_the_last_season(make_ctx, sales_table, tabledata):
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await _forecast(ctx, sales_table.ref, method="seasonal_naive")
    y = _series(tabledata.daily_sales())
    mean, lower, upper = _columns(result)
    np.testing.assert_allclose(mean, np.tile(y.to_numpy()[-7:], 2), rtol=1e-6)
    direct = SARIMAX(y, order=(0, 0, 0), seasonal_order=(0, 1, 0, 7)).fit(disp=False).get_forecast(H)
    np.testing.assert_allclose(lower, direct.conf_int(alpha=0.05).to_numpy()[:, 0], rtol=1e-9)


@pytest.mark.parametrize("method", ["holt_winters", "ets", "sarimax", "theta", "seasonal_naive"])
async def test_intervals_widen_with_the_horizon(make_ctx, tabledata, method):
    table = tabledata.host_table("drift", tabledata.drifting_sales())
    ctx = make_ctx({"drift": table})
    result = await _forecast(ctx, "drift", method=method, horizon=28)
    mean, lower, upper = _columns(result)
    width = upper - lower
    assert np.all(lower <= mean) and np.all(mean <= upper)
    assert width[-1] > width[0] * 1.05
    # Same-season steps (t, t+7, t+14, t+21) strictly widen for every method.
    assert np.all(np.diff(width[::7]) > 0)
    narrow = await _forecast(ctx, "drift", method=method, horizon=28, confidence=0.8)
    assert np.all((narrow_w := _columns(narrow)[2] - _columns(narrow)[1]) < width)
    assert narrow_w.shape == width.shape


async def test_auto_keeps_the_candidate_with_the_lowest_backtest_mae(make_ctx, sales_table):
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await _forecast(ctx, sales_table.ref, method="auto")
    candidates = result.extra["candidates"]
    assert {c["method"] for c in candidates} == {"ets", "holt_winters", "sarimax", "theta", "seasonal_naive"}
    best = min(candidates, key=lambda c: c["mae"])
    assert result.extra["method"] == best["method"]
    assert result.extra["backtest"]["mae"] == pytest.approx(best["mae"])
    # Refitting the winner alone gives the same forecast.
    alone = await _forecast(ctx, sales_table.ref, method=best["method"])
    np.testing.assert_allclose(_columns(result)[0], _columns(alone)[0], rtol=1e-9)


async def test_backtest_refits_on_all_but_the_horizon(make_ctx, sales_table, tabledata):
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await _forecast(ctx, sales_table.ref, method="holt_winters")
    y = _series(tabledata.daily_sales())
    train, test = y.iloc[:-H], y.iloc[-H:].to_numpy()
    predicted = ExponentialSmoothing(train, trend="add", seasonal="add", seasonal_periods=7,
                                     initialization_method="estimated").fit().forecast(H).to_numpy()
    bt = result.extra["backtest"]
    assert bt["holdout_points"] == H and bt["train_points"] == len(y) - H
    assert bt["mae"] == pytest.approx(np.mean(np.abs(predicted - test)))
    assert bt["rmse"] == pytest.approx(math.sqrt(np.mean((predicted - test) ** 2)))
    assert bt["mape"] == pytest.approx(np.mean(np.abs((predicted - test) / test)) * 100)
    assert bt["smape"] == pytest.approx(np.mean(2 * np.abs(predicted - test) / (np.abs(test) + np.abs(predicted))) * 100)
    naive = np.tile(train.to_numpy()[-7:], 2)
    assert bt["naive_mae"] == pytest.approx(np.mean(np.abs(naive - test)))
    assert bt["skill_vs_naive"] == pytest.approx(1 - bt["mae"] / bt["naive_mae"])
    assert 0 <= bt["interval_coverage"] <= 1
    assert "Backtest on the last 14 points: MAE" in result.description


async def test_too_few_points_names_the_minimum_and_a_method_that_works(make_ctx, tabledata):
    short = tabledata.host_table("short", tabledata.daily_sales(n=9))
    ctx = make_ctx({"short": short})
    with pytest.raises(InvalidArguments) as info:
        await _forecast(ctx, "short", method="holt_winters", horizon=3)
    message = info.value.message
    assert "holt_winters with seasonal_period 7 needs at least 14 points (2 full seasons)" in message
    assert "has 9" in message and "Use method 'seasonal_naive' with seasonal_period 7" in message
    with pytest.raises(InvalidArguments, match="sarimax with seasonal_period 7 needs at least 21 points"):
        await _forecast(ctx, "short", method="sarimax", horizon=3, seasonal_period=7)
    # The method the message suggests does work on the same table.
    ok = await _forecast(ctx, "short", method="seasonal_naive", horizon=3)
    assert len(ok.rows) == 3


async def test_inferred_season_that_does_not_fit_is_dropped_with_a_warning(make_ctx, tabledata):
    short = tabledata.host_table("short", tabledata.daily_sales(n=10))
    ctx = make_ctx({"short": short})
    result = await _forecast(ctx, "short", method="ets", horizon=3)
    assert result.extra["seasonal_period"] == 1
    assert any("fewer than the 14 (2 full seasons) a season of 7 needs" in w for w in result.warnings)
    assert "skipped" not in result.extra["backtest"]
