"""Forecasting methods, one function each, all fitted by statsmodels.

Each ``fit_<method>(y, m, spec)`` takes a regular series (DatetimeIndex with a
freq), the effective seasonal period ``m`` (1 = no season) and, optionally, a
``spec`` that fixes the model form (so a backtest refits the same form on less
data). Without ``spec`` the automatic choices run (ETS form by AICc, SARIMAX
order by AIC over a small grid). statsmodels is imported here, on first use.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from analytics_acp.errors import InvalidArguments

# Candidates of ``auto``, in tie-break order.
AUTO_CANDIDATES = ("ets", "holt_winters", "sarimax", "theta", "seasonal_naive")
LABELS = {
    "holt_winters": "Holt-Winters",
    "ets": "ETS",
    "sarimax": "SARIMAX",
    "theta": "Theta",
    "seasonal_naive": "Seasonal naive",
}
# Seasons longer than this (24 hourly, 52 weekly) enter SARIMAX as Fourier terms: a seasonal
# ARIMA with 24 or 52 lags has a large state and takes minutes to fit.
FOURIER_ABOVE = 12
SEED = 0  # ETS forms whose intervals statsmodels simulates (multiplicative ones) stay reproducible.


@dataclass
class Forecast:
    """Point forecast and prediction interval for the next ``len(mean)`` periods."""

    index: pd.DatetimeIndex
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


@dataclass
class Fitted:
    """A fitted model: what it is (method, m, spec, params) and how to forecast from it."""

    method: str
    m: int
    spec: dict[str, Any]
    params: dict[str, Any]
    predict: Callable[[int, float], Forecast]
    notes: list[str] = field(default_factory=list)


def min_points(method: str, m: int) -> tuple[int, str]:
    """Fewest points ``method`` needs with seasonal period ``m``, and why (for error messages)."""
    seasonal = m > 1
    method = "sarimax" if method == "arima" else method
    if method == "holt_winters":
        return (2 * m, "2 full seasons") if seasonal else (5, "level and trend")
    if method == "ets":
        return (2 * m, "2 full seasons") if seasonal else (5, "level and trend")
    if method == "sarimax":
        if seasonal and m > FOURIER_ABOVE:
            return (max(2 * m, 10), "2 full seasons")
        return (max(3 * m, 10), "3 full seasons") if seasonal else (10, "order selection")
    if method == "theta":
        return (2 * m, "2 full seasons to deseasonalize") if seasonal else (4, "trend and level")
    if method == "seasonal_naive":
        return (m + 2, "one full season plus 2 points") if seasonal else (3, "last value plus 2 points")
    raise ValueError(method)


def _works_with(n: int, m: int, exclude: str) -> list[str]:
    """Methods that can fit ``n`` points: those that keep the season first, then those without it."""
    seasonal, plain = [], []
    for method in AUTO_CANDIDATES:
        if method == exclude:
            continue
        if m > 1 and n >= min_points(method, m)[0]:
            seasonal.append(f"'{method}' with seasonal_period {m}")
        elif n >= min_points(method, 1)[0] and not (m > 1 and method == "holt_winters"):
            plain.append(f"'{method}' without season" if m > 1 else f"'{method}'")
    return seasonal + plain


def plan_season(method: str, n: int, m: int, explicit: bool, label: str = "the series") -> tuple[int, list[str]]:
    """The seasonal period ``method`` will use on ``n`` points, or ACP_INVALID_ARGUMENTS naming the minimum.

    An inferred season that does not fit is dropped with a warning (except for
    holt_winters, which is seasonal by definition); an explicit one is an error.
    """
    need, why = min_points(method, m)
    if n >= need:
        return m, []
    if m > 1 and not explicit and method != "holt_winters" and n >= min_points(method, 1)[0]:
        return 1, [
            f"{label.capitalize()} has {n} points, fewer than the {need} ({why}) a season of {m} needs; "
            f"{method} was fitted without seasonality."
        ]
    season = f" with seasonal_period {m}" if m > 1 else ""
    options = _works_with(n, m, exclude=method)
    advice = f"Use method {' or '.join(options[:2])}" if options else "Use a longer table"
    if method == "holt_winters" and m > 1 and n >= min_points("holt_winters", 1)[0]:
        advice += ", or seasonal_period 1 for Holt's linear trend"
    raise InvalidArguments(f"{method}{season} needs at least {need} points ({why}); {label} has {n}. {advice}.")


def _future_index(y: pd.Series, h: int) -> pd.DatetimeIndex:
    return pd.date_range(y.index[-1], periods=h + 1, freq=y.index.freq)[1:]


def _scalars(values: dict[str, Any]) -> dict[str, Any]:
    """JSON-safe scalar parameters (arrays such as initial seasons are left out)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, (bool, np.bool_)):
            out[key] = bool(value)
        elif isinstance(value, (int, float, np.integer, np.floating)):
            number = float(value)
            out[key] = number if math.isfinite(number) else None
        elif isinstance(value, str):
            out[key] = value
    return out


class _Quiet(warnings.catch_warnings):
    """Silence statsmodels' fit chatter but remember whether the optimiser failed to converge."""

    def __init__(self) -> None:
        super().__init__(record=True)

    def __enter__(self):
        self.log = super().__enter__()
        warnings.simplefilter("always")
        return self

    @property
    def converged(self) -> bool:
        return not any("converge" in str(w.message).lower() for w in self.log)  # type: ignore[union-attr]


def _convergence_note(quiet: _Quiet, method: str) -> list[str]:
    return [] if quiet.converged else [f"The {method} optimiser reported a convergence warning; treat the fit with care."]


def fit_holt_winters(y: pd.Series, m: int, spec: dict[str, Any] | None = None) -> Fitted:
    """Additive Holt-Winters (statsmodels ExponentialSmoothing); Holt's linear trend when ``m`` is 1."""
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    seasonal = m > 1
    with _Quiet() as quiet:
        result = ExponentialSmoothing(
            y,
            trend="add",
            seasonal="add" if seasonal else None,
            seasonal_periods=m if seasonal else None,
            initialization_method="estimated",
        ).fit()

    alpha = float(result.params["smoothing_level"])
    beta = float(result.params.get("smoothing_trend") or 0.0)
    gamma = float(result.params.get("smoothing_seasonal") or 0.0) if seasonal else 0.0
    estimated = 4 + (m + 1 if seasonal else 0)  # alpha, beta, l0, b0 (+ gamma and m seasonal states)
    sigma = math.sqrt(float(result.sse) / max(1, len(y) - estimated))

    def predict(h: int, confidence: float) -> Forecast:
        mean = np.asarray(result.forecast(h), dtype=float)
        half = _normal_quantile(confidence) * sigma * holt_winters_spread(h, alpha, beta, gamma, m)
        return Forecast(_future_index(y, h), mean, mean - half, mean + half)

    params = _scalars({k: v for k, v in result.params.items() if k not in ("use_boxcox", "lamda", "remove_bias")})
    params.update(trend="add", seasonal="add" if seasonal else None, aic=result.aic)
    params["interval"] = "analytic h-step variance of additive Holt-Winters (ETS(A,A,A) form, normal errors)"
    return Fitted("holt_winters", m, {}, params, predict, _convergence_note(quiet, "holt_winters"))


def holt_winters_spread(h: int, alpha: float, beta_star: float, gamma: float, m: int) -> np.ndarray:
    """sqrt(Var(e_{n+k}) / sigma^2) for k = 1..h of additive Holt-Winters.

    statsmodels' ExponentialSmoothing is the error-correction model l_t = l + b + alpha e,
    b_t = b + alpha beta* e, s_t = s_{t-m} + gamma e (its seasonal update uses the previous
    level), so the k-step error is e_{n+k} + sum_j c_j e_{n+k-j} with c_j = alpha (1 + j beta*)
    + gamma [j divisible by m] (Hyndman et al. 2008, class 1): the variance grows with k
    exactly as much as the fitted smoothing says, and never shrinks.
    """
    steps = np.arange(1, h, dtype=float)
    c = alpha * (1 + steps * beta_star)
    if m > 1 and gamma:
        c = c + gamma * (np.arange(1, h) % m == 0)
    return np.sqrt(1 + np.concatenate([[0.0], np.cumsum(c**2)]))


def _normal_quantile(confidence: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2))


def _ets_forms(y: pd.Series, m: int) -> list[dict[str, Any]]:
    positive = bool((y > 0).all())
    # Multiplicative errors only for short seasons: with 24 or 52 seasonal states they double a slow search.
    errors = ["add", "mul"] if positive and m <= FOURIER_ABOVE else ["add"]
    trends = [(None, False), ("add", False), ("add", True)]
    seasons = [None] + ((["add", "mul"] if positive else ["add"]) if m > 1 else [])
    return [
        {"error": e, "trend": t, "damped_trend": d, "seasonal": s}
        for e in errors
        for (t, d) in trends
        for s in seasons
    ]


def fit_ets(y: pd.Series, m: int, spec: dict[str, Any] | None = None) -> Fitted:
    """ETS state-space model (statsmodels ETSModel); without ``spec`` the form with the lowest AICc wins."""
    from statsmodels.tsa.exponential_smoothing.ets import ETSModel

    best = None
    quiet = None
    for form in [spec] if spec else _ets_forms(y, m):
        try:
            with _Quiet() as q:
                result = ETSModel(y, seasonal_periods=m if form["seasonal"] else None, **form).fit(disp=False)
        except (ValueError, np.linalg.LinAlgError):
            continue
        score = result.aicc if math.isfinite(result.aicc) else math.inf
        if best is None or score < best[0]:
            best, quiet = (score, form, result), q
    if best is None:
        raise InvalidArguments("statsmodels could not fit any ETS form to this series. Use method 'theta' or 'seasonal_naive'.")
    _, form, result = best
    n = len(y)

    def predict(h: int, confidence: float) -> Forecast:
        frame = result.get_prediction(start=n, end=n + h - 1, rng=np.random.default_rng(SEED)).summary_frame(
            alpha=1 - confidence
        )
        return Forecast(
            _future_index(y, h),
            np.asarray(frame["mean"], dtype=float),
            np.asarray(frame["pi_lower"], dtype=float),
            np.asarray(frame["pi_upper"], dtype=float),
        )

    params = _scalars(dict(zip(result.model.param_names, result.params, strict=False)))
    params = {k: v for k, v in params.items() if not k.startswith("initial_seasonal")}
    params.update(
        model=result.model.short_name, aicc=result.aicc, error=form["error"], trend=form["trend"],
        damped_trend=form["damped_trend"], seasonal=form["seasonal"],
    )
    return Fitted("ets", m, dict(form), params, predict, _convergence_note(quiet, "ets"))  # type: ignore[arg-type]


def _differences(y: pd.Series, m: int) -> tuple[int, int]:
    """Non-seasonal d by repeated KPSS tests and seasonal D by STL seasonal strength (> 0.64), like auto.arima."""
    from statsmodels.tsa.seasonal import STL
    from statsmodels.tsa.stattools import kpss

    D = 0
    x = np.asarray(y, dtype=float)
    if m > 1 and len(x) >= 2 * m + 1:
        with _Quiet():
            parts = STL(x, period=m, robust=True).fit()
        denominator = np.var(parts.seasonal + parts.resid)
        strength = 1 - np.var(parts.resid) / denominator if denominator > 0 else 0.0
        if strength > 0.64:
            D = 1
            x = x[m:] - x[:-m]
    d = 0
    while d < 2 and len(x) > 8 and np.ptp(x) > 0:
        with _Quiet():
            _, p_value, *_ = kpss(x, regression="c", nlags="auto")
        if p_value >= 0.05:
            break
        d += 1
        x = np.diff(x)
    return d, D


def _fourier(m: int, order: int) -> Any:
    from statsmodels.tsa.deterministic import Fourier

    return Fourier(period=m, order=order)


def _best_sarimax(y: pd.Series, forms: list[dict[str, Any]], best: tuple | None = None) -> tuple | None:
    """The (aic, form, result, warnings) of the lowest-AIC form among ``forms`` (and ``best``)."""
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    for form in forms:
        k = form.get("fourier", 0)
        exog = _fourier(form["period"], k).in_sample(y.index) if k else None
        try:
            with _Quiet() as quiet:
                # No parameter covariance is reported, so skip computing it (the slow part of many fits).
                result = SARIMAX(
                    y, exog=exog, order=tuple(form["order"]), seasonal_order=tuple(form["seasonal_order"]),
                    trend=form["trend"],
                ).fit(disp=False, cov_type="none")
        except (ValueError, np.linalg.LinAlgError):
            continue
        score = result.aic if math.isfinite(result.aic) else math.inf
        if best is None or score < best[0]:
            best = (score, form, result, quiet)
    return best


def fit_sarimax(y: pd.Series, m: int, spec: dict[str, Any] | None = None) -> Fitted:
    """SARIMAX (statsmodels); without ``spec`` d/D are tested and the order chosen by AIC in two small grids.

    First the seasonal part and trend with a (1, d, 1) core, then (p, q) in 0..2 with that
    seasonal part: 14 fits at most instead of the 54 of the full grid. Seasons longer than
    FOURIER_ABOVE use 2 or 4 Fourier harmonics as regressors instead of seasonal lags.
    """
    if spec:
        best = _best_sarimax(y, [spec])
    else:
        fourier = m > FOURIER_ABOVE
        d, D = _differences(y, 1 if fourier else m)
        trends = ["c"] if d + D == 0 else [None, "c"] if d + D == 1 else [None]
        if fourier:
            seasons = [{"seasonal_order": (0, 0, 0, 0), "fourier": k, "period": m} for k in sorted({min(2, m // 2), min(4, m // 2)})]
        elif m > 1:
            seasons = [{"seasonal_order": (P, D, Q, m)} for (P, Q) in [(0, 0), (1, 0), (0, 1)]]
        else:
            seasons = [{"seasonal_order": (0, 0, 0, 0)}]
        # The trend term acts on the differenced series: with one difference a constant is a drift.
        stage1 = [{"order": (1, d, 1), "trend": t, **season} for season in seasons for t in trends]
        best = _best_sarimax(y, stage1)
        if best is not None:
            chosen = best[1]
            stage2 = [
                {**chosen, "order": (p, d, q)}
                for p in range(3)
                for q in range(3)
                if (p, q) != (1, 1)
            ]
            best = _best_sarimax(y, stage2, best)
    if best is None:
        raise InvalidArguments("statsmodels could not fit SARIMAX to this series. Use method 'ets' or 'theta'.")
    _, form, result, quiet = best
    return _sarimax_fitted("sarimax", y, m, form, result, quiet)


def _sarimax_fitted(method: str, y: pd.Series, m: int, form: dict[str, Any], result: Any, quiet: Any) -> Fitted:
    k = form.get("fourier", 0)

    def predict(h: int, confidence: float) -> Forecast:
        exog = _fourier(form["period"], k).out_of_sample(h, y.index) if k else None
        forecast = result.get_forecast(h, exog=exog)
        bounds = np.asarray(forecast.conf_int(alpha=1 - confidence), dtype=float)
        return Forecast(_future_index(y, h), np.asarray(forecast.predicted_mean, dtype=float), bounds[:, 0], bounds[:, 1])

    params = _scalars(dict(zip(result.model.param_names, result.params, strict=False)))
    params = {key: v for key, v in params.items() if not (key.startswith("sin(") or key.startswith("cos("))}
    params.update(
        order=list(form["order"]), seasonal_order=list(form["seasonal_order"]), trend=form["trend"], aic=result.aic
    )
    if k:
        params.update(fourier_terms=k, fourier_period=form["period"])
    notes = _convergence_note(quiet, method) if quiet is not None else []
    return Fitted(method, m, dict(form), params, predict, notes)


def fit_theta(y: pd.Series, m: int, spec: dict[str, Any] | None = None) -> Fitted:
    """Theta method (statsmodels ThetaModel, theta = 2); deseasonalized with period ``m`` when it tests seasonal."""
    from statsmodels.tsa.forecasting.theta import ThetaModel

    seasonal = m > 1
    with _Quiet() as quiet:
        model = ThetaModel(y, period=m if seasonal else None, deseasonalize=seasonal)
        result = model.fit()

    def predict(h: int, confidence: float) -> Forecast:
        mean = np.asarray(result.forecast(h), dtype=float)
        bounds = np.asarray(result.prediction_intervals(h, alpha=1 - confidence), dtype=float)
        return Forecast(_future_index(y, h), mean, bounds[:, 0], bounds[:, 1])

    params = _scalars(dict(result.params.items()))
    params.update(theta=2.0, deseasonalized=bool(getattr(model, "deseasonalize", False)), period=m if seasonal else None)
    return Fitted("theta", m, {}, params, predict, _convergence_note(quiet, "theta"))


def fit_seasonal_naive(y: pd.Series, m: int, spec: dict[str, Any] | None = None) -> Fitted:
    """Seasonal naive as SARIMAX(0,0,0)(0,1,0,m) in statsmodels (random walk when ``m`` is 1): repeats the last season."""
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    form = (
        {"order": (0, 0, 0), "seasonal_order": (0, 1, 0, m), "trend": None}
        if m > 1
        else {"order": (0, 1, 0), "seasonal_order": (0, 0, 0, 0), "trend": None}
    )
    with _Quiet() as quiet:
        result = SARIMAX(y, order=form["order"], seasonal_order=form["seasonal_order"]).fit(disp=False)
    return _sarimax_fitted("seasonal_naive", y, m, form, result, quiet)


FITTERS: dict[str, Callable[..., Fitted]] = {
    "holt_winters": fit_holt_winters,
    "ets": fit_ets,
    "sarimax": fit_sarimax,
    "theta": fit_theta,
    "seasonal_naive": fit_seasonal_naive,
}


def _limit_blas_threads() -> None:
    """Run BLAS single-threaded in this server process (before every fit: idempotent, about 2 ms, so no
    module flag remembers it; issue 38.2).

    The fits multiply tiny matrices; OpenBLAS worker threads only add contention (measured:
    SARIMAX order selection 3 s single-threaded vs 25 s with default threads on 2 busy cores).
    """
    import scipy.linalg  # noqa: F401  (loads scipy's own OpenBLAS, which statsmodels' filters use)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def fit(method: str, y: pd.Series, m: int, spec: dict[str, Any] | None = None) -> Fitted:
    """Fit ``method`` ('arima' is SARIMAX) to ``y`` with seasonal period ``m``."""
    _limit_blas_threads()
    method = "sarimax" if method == "arima" else method
    try:
        return FITTERS[method](y, m, spec)
    except InvalidArguments:
        raise
    except (ValueError, np.linalg.LinAlgError) as exc:
        others = [f"'{x}'" for x in AUTO_CANDIDATES if x != method][:2]
        raise InvalidArguments(
            f"statsmodels could not fit {method} to this series ({exc}). Use method {' or '.join(others)}."
        ) from exc
