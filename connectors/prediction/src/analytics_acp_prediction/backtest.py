"""Holdout backtests and the ``auto`` choice.

A backtest refits the same model form on all points but the last ``horizon``,
forecasts those points and compares. The errors tell the model how far to trust
the forecast; ``skill_vs_naive`` compares against repeating the last season.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from analytics_acp.errors import InvalidArguments

from . import models


def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def errors(actual: np.ndarray, predicted: np.ndarray) -> dict[str, float | None]:
    """MAE, RMSE, MAPE (None when an actual value is 0) and sMAPE, in percent for the last two."""
    actual = np.asarray(actual, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    diff = predicted - actual
    mae = float(np.mean(np.abs(diff)))
    rmse = float(np.sqrt(np.mean(diff**2)))
    mape = float(np.mean(np.abs(diff / actual)) * 100) if np.all(actual != 0) else None
    scale = np.abs(actual) + np.abs(predicted)
    safe = np.where(scale == 0, 1.0, scale)
    smape = float(np.mean(np.where(scale == 0, 0.0, 2 * np.abs(diff) / safe)) * 100)
    return {"mae": _number(mae), "rmse": _number(rmse), "mape": mape if mape is None else _number(mape), "smape": _number(smape)}


def naive_forecast(train: pd.Series, h: int, m: int) -> np.ndarray:
    """Repeat the last season of ``train`` (the last value when ``m`` is 1): the benchmark."""
    season = max(1, min(m, len(train)))
    last = np.asarray(train, dtype=float)[-season:]
    return np.resize(last, h)


def score(method: str, y: pd.Series, h: int, m: int, confidence: float, spec: dict[str, Any] | None) -> dict[str, Any]:
    """Fit ``method`` on ``y`` minus its last ``h`` points and measure the forecast of those points."""
    train, test = y.iloc[:-h], y.iloc[-h:]
    fitted = models.fit(method, train, m, spec)
    forecast = fitted.predict(h, confidence)
    actual = np.asarray(test, dtype=float)
    out: dict[str, Any] = {"holdout_points": h, "train_points": len(train), "seasonal_period": m}
    out.update(errors(actual, forecast.mean))
    naive = errors(actual, naive_forecast(train, h, m))
    out["naive_mae"] = naive["mae"]
    if naive["mae"]:
        out["skill_vs_naive"] = _number(1 - out["mae"] / naive["mae"])
    inside = (actual >= forecast.lower) & (actual <= forecast.upper)
    out["interval_coverage"] = float(np.mean(inside))  # empirical; compare with interval_confidence
    out["interval_confidence"] = confidence
    return out


def backtest(fitted: models.Fitted, y: pd.Series, h: int, confidence: float) -> dict[str, Any]:
    """Backtest of ``fitted``'s form on a holdout of ``h`` points, or ``{"skipped": reason}``."""
    need, why = models.min_points(fitted.method, fitted.m)
    if len(y) - h < need:
        return {
            "skipped": f"a holdout of {h} points leaves {len(y) - h}, fewer than the {need} ({why}) "
            f"{fitted.method} needs; use a shorter horizon to get a backtest"
        }
    try:
        return score(fitted.method, y, h, fitted.m, confidence, fitted.spec or None)
    except InvalidArguments as exc:
        return {"skipped": f"the model could not be refitted on the training part ({exc.message})"}


def choose_auto(
    y: pd.Series, h: int, m: int, explicit: bool, confidence: float, label: str,
    step: Callable[[str], None] | None = None,
) -> tuple[models.Fitted, dict[str, Any], list[dict[str, Any]], list[str]]:
    """Backtest every candidate method on the last ``h`` points, refit the best (lowest MAE) on all points.

    ``step(what)`` is called before each candidate's fit (progress, and where a cancelled call stops).

    Returns the fitted winner, its backtest, the candidates' scores and warnings.
    """
    candidates: list[dict[str, Any]] = []
    best: tuple[float, str, int, dict[str, Any]] | None = None
    n_train = len(y) - h
    for method in models.AUTO_CANDIDATES:
        try:
            m_train, _ = models.plan_season(method, n_train, m, explicit)
        except InvalidArguments:
            continue
        if step is not None:
            step(f"{method} for {label} (backtest)")
        try:
            result = score(method, y, h, m_train, confidence, None)
        except InvalidArguments:
            continue
        entry = {"method": method, "seasonal_period": m_train, **{k: result[k] for k in ("mae", "rmse", "smape")}}
        candidates.append(entry)
        if result["mae"] is not None and (best is None or result["mae"] < best[0]):
            best = (result["mae"], method, m_train, result)
    warnings: list[str] = []
    if best is None:
        # Too short to hold out `h` points for any method: fall back to ETS chosen by AICc.
        m_full, notes = models.plan_season("ets", len(y), m, explicit, label)
        fitted = models.fit("ets", y, m_full)
        warnings.append(
            f"{label.capitalize()} is too short to backtest on {h} points, so auto fell back to ets chosen by AICc; "
            "use a shorter horizon for a backtested choice."
        )
        return fitted, {"skipped": "too few points for a holdout of the horizon"}, candidates, warnings + notes
    _, method, _, result = best
    m_full, notes = models.plan_season(method, len(y), m, explicit, label)
    fitted = models.fit(method, y, m_full)
    candidates.sort(key=lambda c: math.inf if c["mae"] is None else c["mae"])
    return fitted, result, candidates, warnings + notes
