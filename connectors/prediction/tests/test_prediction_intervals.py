"""Prediction intervals are the models' own h-step forecast-error distributions (issue 14.5).

Seeded simulated series: the 95% interval must cover 85-100% of held-out points per method (the
backtest's ``interval_coverage``, the figure ``extra.backtest`` reports), never narrow as the horizon
grows, and widen for random-walk-like series. ETS and SARIMAX run with a fixed form here (their
automatic form search is tested in test_prediction_models.py) so the suite stays quick.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analytics_acp_prediction import backtest, models
from analytics_acp_prediction.arguments import ForecastArguments
from analytics_acp_prediction.forecast_tool import run

METHODS = ["holt_winters", "ets", "sarimax", "theta", "seasonal_naive"]
H = 14
SEEDS = range(8)


def trending(seed: int, n: int = 120) -> pd.Series:
    """Trend + wandering level + weekly season + noise (a daily sales series)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y = 200 + 0.8 * t + np.cumsum(rng.normal(0, 1.5, n)) + 10 * np.sin(2 * np.pi * t / 7) + rng.normal(0, 2, n)
    return pd.Series(y, index=pd.date_range("2026-01-01", periods=n, freq="D"))


def walk(seed: int, n: int = 120) -> pd.Series:
    """A random walk with drift (no season)."""
    rng = np.random.default_rng(seed)
    return pd.Series(500 + np.cumsum(0.3 + rng.normal(0, 3, n)), index=pd.date_range("2026-01-01", periods=n, freq="D"))


def spec(method: str, m: int) -> dict | None:
    if method == "ets":
        return {"error": "add", "trend": "add", "damped_trend": False, "seasonal": "add" if m > 1 else None}
    if method == "sarimax":
        return {"order": (0, 1, 1), "seasonal_order": (0, 1, 1, m) if m > 1 else (0, 0, 0, 0), "trend": None if m > 1 else "c"}
    return None


def width(method: str, y: pd.Series, m: int, h: int = H) -> np.ndarray:
    forecast = models.fit(method, y, m, spec(method, m)).predict(h, 0.95)
    assert np.all(forecast.lower <= forecast.mean) and np.all(forecast.mean <= forecast.upper)
    return forecast.upper - forecast.lower


@pytest.mark.parametrize("method", METHODS)
def test_95_percent_interval_covers_85_to_100_percent_of_held_out_points(method):
    inside = []
    for seed in SEEDS:
        for series, m in ((trending(seed), 7), (walk(seed), 1)):
            scored = backtest.score(method, series, H, m, 0.95, spec(method, m))
            inside.append(scored["interval_coverage"])
            assert scored["interval_confidence"] == 0.95
    assert 0.85 <= float(np.mean(inside)) <= 1.0, (method, inside)


@pytest.mark.parametrize("method", METHODS)
def test_interval_widens_for_a_random_walk(method):
    w = width(method, walk(0), 1)
    assert np.all(np.diff(w) >= -1e-9 * w[:-1])
    assert w[-1] > 1.5 * w[0]


@pytest.mark.parametrize("method", METHODS)
def test_interval_never_narrows_with_the_horizon_on_a_trending_seasonal_series(method, tabledata):
    # The case: a trending weekly-seasonal daily series whose Holt-Winters interval was
    # narrower at step 14 than at step 1 (2000 simulated paths: Monte Carlo noise, not the model).
    frame = tabledata.daily_sales()
    y = pd.Series(frame["pedidos"].to_numpy(), index=pd.DatetimeIndex(pd.to_datetime(frame["fecha"]), freq="D"))
    w = width(method, y, 7, 28)
    assert np.all(np.diff(w) >= -1e-3 * w[:-1]), np.round(w, 3)
    assert w[-1] >= w[0]


@pytest.mark.parametrize(("alpha", "beta", "gamma", "m"), [(0.5, 0.3, 0.2, 7), (0.8, 0.1, 0.0, 1), (0.05, 0.0, 0.4, 4)])
def test_holt_winters_spread_equals_a_simulation_of_its_own_recursion(alpha, beta, gamma, m):
    # statsmodels' ExponentialSmoothing updates (see _simulate_holt_winters) driven by unit errors:
    # the k-step spread of the simulated paths is the closed form's.
    simulated = _simulate_holt_winters(alpha, beta, gamma, m, horizon=16, paths=40000)
    np.testing.assert_allclose(models.holt_winters_spread(16, alpha, beta, gamma, m), simulated, rtol=0.03)


def _simulate_holt_winters(alpha: float, beta: float, gamma: float, m: int, horizon: int, paths: int) -> np.ndarray:
    """l = a(y - s) + (1-a)(l + b); b = b*(l' - l) + (1-b*) b; s = g(y - l - b) + (1-g) s_{t-m} (statsmodels' fit)."""
    rng = np.random.default_rng(0)
    level, trend, season = np.zeros(paths), np.zeros(paths), np.zeros((m, paths))
    out = np.zeros((horizon, paths))
    for k in range(horizon):
        y = level + trend + season[0] + rng.normal(size=paths)
        out[k] = y
        new_level = alpha * (y - season[0]) + (1 - alpha) * (level + trend)
        new_season = gamma * (y - level - trend) + (1 - gamma) * season[0]
        trend = beta * (new_level - level) + (1 - beta) * trend
        level = new_level
        season = np.vstack([season[1:], new_season[None, :]])
    return out.std(axis=1)


async def test_forecast_extra_reports_the_backtest_coverage_of_the_interval(make_ctx, tabledata):
    table = tabledata.host_table("drift", tabledata.drifting_sales())
    result = await run(ForecastArguments.parse({"table_ref": "drift", "time_column": "fecha", "value_column": "pedidos", "horizon": H,
                        "method": "holt_winters"}), make_ctx({"drift": table}))
    bt = result.extra["backtest"]
    assert bt["interval_confidence"] == 0.95 and 0 <= bt["interval_coverage"] <= 1
    rows = result.rows
    assert rows[-1]["upper"] - rows[-1]["lower"] > rows[0]["upper"] - rows[0]["lower"]
