"""Series the plain path would fit badly: constant values, long histories, long seasons (Fourier SARIMAX).

Each case still equals statsmodels called directly on the same data.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from analytics_acp.context import HostTable
from analytics_acp.errors import InvalidArguments
from analytics_acp_prediction import models
from analytics_acp_prediction.arguments import ForecastArguments
from analytics_acp_prediction.forecast_tool import MAX_FIT_POINTS, run
from statsmodels.tsa.deterministic import Fourier
from statsmodels.tsa.exponential_smoothing.ets import ETSModel
from statsmodels.tsa.holtwinters import ExponentialSmoothing
from statsmodels.tsa.statespace.sarimax import SARIMAX


def _table(ref: str, index: pd.DatetimeIndex, values, group: str | None = None) -> HostTable:
    rows = [{"t": s.strftime("%Y-%m-%d"), "v": float(v)} for s, v in zip(index, values, strict=True)]
    if group:
        for row in rows:
            row["g"] = group
    headers = [{"name": "t", "type": "date"}, {"name": "v", "type": "number"}]
    return HostTable(ref, headers + ([{"name": "g", "type": "string"}] if group else []), rows)


def _columns(result) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(np.array([r[k] for r in result.rows]) for k in ("forecast", "lower", "upper"))


async def _forecast(ctx, ref: str, **arguments):
    return await run(ForecastArguments.parse({"table_ref": ref, "time_column": "t", "value_column": "v", **arguments}), ctx)


def _weekly(n: int = 160, seed: int = 1) -> pd.Series:
    """Weekly data with a yearly (52-week) wave: the season SARIMAX takes as Fourier terms."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    values = 100 + 0.2 * i + 10 * np.sin(2 * np.pi * i / 52) + rng.normal(0, 2, n)
    return pd.Series(values, index=pd.date_range("2023-01-02", periods=n, freq="W-MON"))


@pytest.mark.parametrize("method", ["theta", "holt_winters", "auto"])
async def test_constant_series_is_forecast_as_its_value(make_ctx, method):
    index = pd.date_range("2026-01-01", periods=30, freq="D")
    ctx = make_ctx({"flat": _table("flat", index, [5.0] * 30)})
    result = await _forecast(ctx, "flat", horizon=5, method=method)
    y = pd.Series(5.0, index=pd.DatetimeIndex(index, freq="D"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = SARIMAX(y, order=(0, 1, 0)).fit(disp=False).get_forecast(5)
    mean, lower, upper = _columns(result)
    np.testing.assert_allclose(mean, direct.predicted_mean.to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(mean, 5.0, rtol=1e-6)
    bounds = direct.conf_int(alpha=0.05).to_numpy()
    np.testing.assert_allclose(lower, bounds[:, 0], rtol=1e-9)
    np.testing.assert_allclose(upper, bounds[:, 1], rtol=1e-9)
    assert result.extra["method"] == "seasonal_naive" and result.extra["seasonal_period"] == 1
    assert result.extra["backtest"] == {"skipped": "the series is constant"}
    assert "candidates" not in result.extra
    assert result.warnings == [
        f"The series is constant (5), so it is forecast as that value (seasonal_naive without season) instead of {method}."
    ]


async def test_too_short_constant_series_still_names_the_minimum(make_ctx):
    index = pd.date_range("2026-01-01", periods=2, freq="D")
    ctx = make_ctx({"two": _table("two", index, [4.0, 4.0])})
    # A constant still needs the points of the method that forecasts it; the usual message names them.
    with pytest.raises(InvalidArguments, match=r"needs at least 9 points .*; the series has 2\. Use a longer table"):
        await _forecast(ctx, "two", horizon=2, method="seasonal_naive")
    ok = await _forecast(make_ctx({"three": _table("three", pd.date_range("2026-01-01", periods=3), [4.0] * 3)}),
                         "three", horizon=2, method="seasonal_naive")
    assert [r["forecast"] for r in ok.rows] == pytest.approx([4.0, 4.0])


async def test_only_the_last_max_fit_points_are_fitted_with_a_note(make_ctx, tabledata):
    n = MAX_FIT_POINTS + 100
    frame = tabledata.daily_sales(n=n, start="2022-01-01")
    index = pd.DatetimeIndex(pd.to_datetime(frame["fecha"]), freq="D")
    ctx = make_ctx({"long": _table("long", index, frame["pedidos"])})
    result = await _forecast(ctx, "long", horizon=7, method="holt_winters")
    y = pd.Series(frame["pedidos"].to_numpy(), index=index).iloc[-MAX_FIT_POINTS:]
    direct = ExponentialSmoothing(y, trend="add", seasonal="add", seasonal_periods=7,
                                  initialization_method="estimated").fit()
    np.testing.assert_allclose(_columns(result)[0], direct.forecast(7).to_numpy(), rtol=1e-9)
    start = index[-MAX_FIT_POINTS].strftime("%Y-%m-%d")
    assert result.extra["history"] == {"points": MAX_FIT_POINTS, "start": start, "end": index[-1].strftime("%Y-%m-%d")}
    assert f"The series: only the last {MAX_FIT_POINTS} of {n} daily periods (from {start}) were used to fit" in (
        result.warnings[0]
    )
    # Each group is cut on its own, and its note names it.
    grouped = {"g": _table("g", index, frame["pedidos"], group="web")}
    result = await _forecast(make_ctx(grouped), "g", horizon=7, method="holt_winters", group_by="g")
    assert result.warnings[0].startswith(f"Series g=web: only the last {MAX_FIT_POINTS} of {n} daily periods")
    np.testing.assert_allclose(_columns(result)[0], direct.forecast(7).to_numpy(), rtol=1e-9)


async def test_long_season_sarimax_uses_fourier_terms_and_matches_statsmodels(make_ctx):
    y = _weekly()
    ctx = make_ctx({"weekly": _table("weekly", y.index, y)})
    result = await _forecast(ctx, "weekly", horizon=8, method="sarimax", confidence=0.9)
    params = result.extra["params"]
    assert result.extra["frequency"] == "weekly" and result.extra["seasonal_period"] == 52
    assert params["seasonal_order"] == [0, 0, 0, 0] and params["fourier_period"] == 52
    assert params["fourier_terms"] in (2, 4)
    assert not any(key.startswith(("sin(", "cos(")) for key in params)  # harmonics' coefficients stay out of extra
    fourier = Fourier(period=52, order=params["fourier_terms"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = SARIMAX(y, exog=fourier.in_sample(y.index), order=tuple(params["order"]), trend=params["trend"]).fit(
            disp=False, cov_type="none"
        )
    forecast = direct.get_forecast(8, exog=fourier.out_of_sample(8, y.index))
    bounds = forecast.conf_int(alpha=0.1).to_numpy()
    mean, lower, upper = _columns(result)
    np.testing.assert_allclose(mean, forecast.predicted_mean.to_numpy(), rtol=1e-7)
    np.testing.assert_allclose(lower, bounds[:, 0], rtol=1e-7)
    np.testing.assert_allclose(upper, bounds[:, 1], rtol=1e-7)
    assert params["aic"] == pytest.approx(direct.aic)
    # The backtest refits the same Fourier form on the history minus the horizon.
    train = y.iloc[:-8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refit = SARIMAX(train, exog=fourier.in_sample(train.index), order=tuple(params["order"]),
                        trend=params["trend"]).fit(disp=False, cov_type="none")
    held = refit.get_forecast(8, exog=fourier.out_of_sample(8, train.index)).predicted_mean.to_numpy()
    assert result.extra["backtest"]["mae"] == pytest.approx(np.mean(np.abs(held - y.iloc[-8:].to_numpy())))
    # The seasonal-lag form is kept for seasons up to FOURIER_ABOVE (the daily tests check m = 7).
    assert models.FOURIER_ABOVE == 12


async def test_long_season_minimum_is_two_seasons(make_ctx):
    y = _weekly(n=90)
    ctx = make_ctx({"w": _table("w", y.index, y)})
    with pytest.raises(InvalidArguments, match="sarimax with seasonal_period 52 needs at least 104 points .2 full seasons.; "
                                              "the series has 90"):
        await _forecast(ctx, "w", horizon=4, method="sarimax", seasonal_period=52)


def test_long_season_ets_searches_additive_errors_only():
    y = _weekly(n=110)
    forms = models._ets_forms(y, 52)
    assert {f["error"] for f in forms} == {"add"} and {f["seasonal"] for f in forms} == {None, "add", "mul"}
    assert {f["error"] for f in models._ets_forms(y, 12)} == {"add", "mul"}
    fitted = models.fit("ets", y, 52)
    form = fitted.spec
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = ETSModel(y, seasonal_periods=52 if form["seasonal"] else None, **form).fit(disp=False)
    np.testing.assert_allclose(fitted.predict(6, 0.95).mean, direct.forecast(6).to_numpy(), rtol=1e-9)
    assert fitted.params["aicc"] == pytest.approx(direct.aicc)
