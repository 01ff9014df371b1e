"""The ``forecast`` extraction: a host table (8.8) in, a forecast window with intervals out.

The rows never pass through the model: the tool gets ``table_ref``, asks the
host for the table with ``acp/read_table`` and fits statsmodels in a worker
thread (fits take seconds; the event loop keeps serving).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import numpy as np
import pandas as pd
from analytics_acp.context import CallContext, HostTable
from analytics_acp.declarations import Extraction, Header
from analytics_acp.errors import InvalidArguments, UpstreamError

from . import backtest, frequency, models, series
from .arguments import ForecastArguments

Step = Callable[[str], None]  # told before each model fit (progress; a cancelled call stops there)

MAX_SERIES = 100
MAX_FIT_POINTS = 1000


async def run(args: ForecastArguments, ctx: CallContext) -> Extraction:
    """Tool entry point: read the host table, fit in a worker thread."""
    table = await ctx.read_table(args.table_ref)
    fits = 0

    def step(what: str) -> None:
        # Before each model fit: a cancelled call stops here; progress counts the fits (issue 28).
        nonlocal fits
        if ctx.cancelled:
            raise UpstreamError("The forecast was cancelled.")
        fits += 1
        ctx.progress(fits, None, f"fitting {what}")

    return await anyio.to_thread.run_sync(compute, table, args, step)


def _describe_key(keys: list[str], values: tuple) -> str:
    return ", ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))


def _fit_one(y: pd.Series, args: ForecastArguments, m: int, label: str, step: Step | None = None) -> dict[str, Any]:
    """Plan, fit, forecast and backtest one regular series (``step`` is told before each model fit)."""
    explicit = args.seasonal_period is not None
    method = "sarimax" if args.method == "arima" else args.method
    if y.nunique() == 1 and len(y) >= models.min_points("seasonal_naive", 1)[0]:
        # Nothing to fit: some methods drift off a constant (Theta adds a trend), the random walk repeats it.
        # Too short a constant still fails below like any short series, naming the minimum.
        fitted = models.fit("seasonal_naive", y, 1)
        notes = [f"{label.capitalize()} is constant ({y.iloc[0]:g}), so it is forecast as that value "
                 f"(seasonal_naive without season) instead of {args.method}."]
        return {"y": y, "fitted": fitted, "forecast": fitted.predict(args.horizon, args.confidence),
                "backtest": {"skipped": "the series is constant"}, "candidates": None, "warnings": notes}
    if method == "auto":
        fitted, test, candidates, notes = backtest.choose_auto(y, args.horizon, m, explicit, args.confidence, label, step)
    else:
        if step is not None:
            step(f"{method} for {label}")
        m_eff, notes = models.plan_season(method, len(y), m, explicit, label)
        fitted = models.fit(method, y, m_eff)
        test, candidates = backtest.backtest(fitted, y, args.horizon, args.confidence), None
    forecast = fitted.predict(args.horizon, args.confidence)
    return {"y": y, "fitted": fitted, "forecast": forecast, "backtest": test, "candidates": candidates,
            "warnings": notes + fitted.notes}


def compute(table: HostTable, args: ForecastArguments, step: Step | None = None) -> Extraction:
    """Build the series, fit each one and shape the forecast window as an extraction (8.2)."""
    frame = series.table_frame(table)
    keys = series.key_columns(frame, table, args.group_by)
    if args.value_column == args.time_column or args.value_column in keys or args.time_column in keys:
        raise InvalidArguments("time_column, value_column and group_by must name different columns.")
    times, warnings = series.time_values(frame, table, args.time_column)
    values, value_warnings = series.number_values(
        frame, table, args.value_column, "value_column", exclude={args.time_column, *keys}
    )
    warnings += value_warnings
    if keys:
        groups = [(k if isinstance(k, tuple) else (k,), idx) for k, idx in frame.groupby(keys, dropna=False, sort=True).indices.items()]
        if len(groups) > MAX_SERIES:
            raise InvalidArguments(
                f"group_by {', '.join(keys)} gives {len(groups)} series; the limit is {MAX_SERIES}. "
                "Filter or aggregate the table first, or group by fewer columns."
            )
    else:
        groups = [((), np.arange(len(frame)))]
    freq = (
        frequency.FREQUENCIES[args.frequency]
        if args.frequency
        else frequency.infer_frequency([times.iloc[idx] for _, idx in groups])
    )
    rule, moved = frequency.pandas_rule(freq, times)
    if moved:
        warnings.append(f"For a {freq.name} series, {moved}.")
    m = args.seasonal_period or freq.season
    results, skipped = [], []
    for key, idx in groups:
        label = f"series {_describe_key(keys, key)}" if keys else "the series"
        try:
            y, notes = frequency.regular_series(
                times.iloc[idx], values.iloc[idx], freq, rule, aggregate=args.aggregate, fill=args.fill, label=label
            )
            if len(y) > MAX_FIT_POINTS:
                notes.append(
                    f"{label.capitalize()}: only the last {MAX_FIT_POINTS} of {len(y)} {freq.name} periods "
                    f"(from {freq.fmt(y.index[-MAX_FIT_POINTS])}) were used to fit; older history slows the fit "
                    "and adds little to a short-term forecast."
                )
                y = y.iloc[-MAX_FIT_POINTS:]
            result = _fit_one(y, args, m, label, step)
        except InvalidArguments as exc:
            if not keys:
                raise
            skipped.append((label, exc))
            continue
        result["key"] = key
        result["warnings"] = notes + result["warnings"]
        results.append(result)
    if not results:
        label, exc = skipped[0]  # type: ignore[misc]
        raise InvalidArguments(f"No series could be forecast. First problem, {label}: {exc.message}")  # type: ignore[misc]
    warnings += [f"{label.capitalize()} was skipped: {exc.message}" for label, exc in skipped]
    for result in results:
        warnings += result["warnings"]
        if args.horizon > len(result["y"]):
            warnings.append(
                f"The horizon ({args.horizon}) is longer than the history ({len(result['y'])} points); far-out values are weak."
            )
    return _extraction(table, args, keys, freq, results, warnings)


def _series_extra(result: dict[str, Any], args: ForecastArguments, freq: frequency.Frequency) -> dict[str, Any]:
    fitted, y = result["fitted"], result["y"]
    out: dict[str, Any] = {
        "method": fitted.method,
        "seasonal_period": fitted.m,
        "params": fitted.params,
        "history": {"points": len(y), "start": freq.fmt(y.index[0]), "end": freq.fmt(y.index[-1])},
        "backtest": result["backtest"],
    }
    if result["candidates"] is not None:
        out["candidates"] = result["candidates"]
    return out


def _extraction(
    table: HostTable,
    args: ForecastArguments,
    keys: list[str],
    freq: frequency.Frequency,
    results: list[dict[str, Any]],
    warnings: list[str],
) -> Extraction:
    rows = []
    for result in results:
        forecast = result["forecast"]
        key_values = {k: series.key_text(v) for k, v in zip(keys, result["key"], strict=True)}
        for i, stamp in enumerate(forecast.index):
            rows.append({
                args.time_column: freq.fmt(stamp),
                **key_values,
                "forecast": float(forecast.mean[i]),
                "lower": float(forecast.lower[i]),
                "upper": float(forecast.upper[i]),
            })
    pct = f"{args.confidence * 100:g}%"
    headers = [Header(args.time_column, "datetime" if freq.datetime else "date", "dimension", f"Forecast {freq.unit}")]
    for k in keys:
        declared = table.header_type(k)
        headers.append(Header(k, declared if declared in ("string", "integer", "boolean") else "string", "dimension"))  # type: ignore[arg-type]
    headers += [
        Header("forecast", "number", "metric", f"Point forecast of {args.value_column}"),
        Header("lower", "number", "metric", f"Lower bound of the {pct} prediction interval"),
        Header("upper", "number", "metric", f"Upper bound of the {pct} prediction interval"),
    ]
    first = min(r["forecast"].index[0] for r in results)
    last = max(r["forecast"].index[-1] for r in results)
    dates = [first.strftime("%Y-%m-%d"), last.strftime("%Y-%m-%d")]
    methods = sorted({r["fitted"].method for r in results})
    label = models.LABELS[methods[0]] if len(methods) == 1 else "Per-series"
    unit = freq.unit + ("s" if args.horizon != 1 else "")
    window = f"{args.horizon} {freq.name} periods from {freq.fmt(first)} to {freq.fmt(last)}"
    if keys:
        description = (
            f"{label} forecasts of {args.value_column} per {', '.join(keys)} from table {table.ref!r}: "
            f"{len(results)} series x {window}, with the {pct} prediction interval in lower/upper."
        )
        extra: dict[str, Any] = {"series": [{"key": dict(zip(keys, map(series.key_text, r["key"]), strict=True)),
                                             **_series_extra(r, args, freq)} for r in results]}
    else:
        description = (
            f"{label} forecast of {args.value_column} from table {table.ref!r}: {window}, "
            f"with the {pct} prediction interval in lower/upper."
        )
        extra = _series_extra(results[0], args, freq)
        bt = results[0]["backtest"]
        if "mae" in bt:
            description += f" Backtest on the last {bt['holdout_points']} points: MAE {bt['mae']:.4g}"
            description += f", sMAPE {bt['smape']:.3g}%." if bt.get("smape") is not None else "."
    extra = {"requested_method": args.method, "frequency": freq.name, "confidence": args.confidence,
             "horizon": args.horizon, **extra}
    effective = {
        "table_ref": args.table_ref, "time_column": args.time_column, "value_column": args.value_column,
        "horizon": args.horizon, "method": args.method, "confidence": args.confidence,
        "aggregate": args.aggregate, "fill": args.fill,
    }
    for name in ("seasonal_period", "group_by", "frequency"):
        if getattr(args, name) is not None:
            effective[name] = getattr(args, name)
    return Extraction(
        rows=rows,
        headers=headers,
        description=description,
        title=f"{label} forecast of {args.value_column} ({args.horizon} {unit})",
        dates=dates,
        extra=extra,
        warnings=warnings,
        arguments=effective,
    )
