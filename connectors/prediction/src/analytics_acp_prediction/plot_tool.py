"""The ``plot`` info tool: a host table (8.8) drawn as a PNG, returned as ``screenshot_path`` (8.10).

The image never goes into model_response: the host reads the file and shows it
to the model. Charts go to ACP_TMP_DIR (never the server folder) and are written
atomically. matplotlib is used through its object API with the Agg canvas, so
no global pyplot state is shared between calls.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pandas as pd
from analytics_acp.context import CallContext, HostTable
from analytics_acp.declarations import Info
from analytics_acp.errors import InvalidArguments

from . import series
from .arguments import PlotArguments

DPI = 100


def chart_dir(ctx: CallContext) -> Path:
    """Where charts go: the runtime's tmp dir (ACP_TMP_DIR), else the env variable, else a private temp dir."""
    base = ctx.tmp_dir or (Path(os.environ["ACP_TMP_DIR"]) if os.environ.get("ACP_TMP_DIR") else None)
    if base is None:
        base = Path(tempfile.mkdtemp(prefix="analytics-acp-prediction-"))
    base = Path(base).resolve()
    base.mkdir(parents=True, exist_ok=True)
    return base


async def run(args: PlotArguments, ctx: CallContext) -> Info:
    """Tool entry point: read the table(s) from the host, draw in a worker thread."""
    table = await ctx.read_table(args.table_ref)
    forecast = await ctx.read_table(args.forecast_ref) if args.forecast_ref else None
    out_dir = chart_dir(ctx)
    return await anyio.to_thread.run_sync(draw, table, forecast, args, out_dir)


def _x_values(frame: pd.DataFrame, table: HostTable, name: str) -> tuple[pd.Series, str]:
    """The x column parsed as dates, numbers or labels (its kind decides the axis)."""
    series.require_column(frame, table, name, "x")
    present = frame[name].dropna()
    times = series.parse_times(frame[name])
    if table.header_type(name) in series.DATE_TYPES or (len(present) and times.notna().sum() >= 0.9 * len(present)):
        return times, "date"
    numbers = series.parse_numbers(frame[name])
    if table.header_type(name) not in ("string",) and len(present) and numbers.notna().sum() >= 0.9 * len(present):
        return numbers, "number"
    return frame[name].map(lambda v: "" if v is None else str(v)), "label"


def _layers(
    frame: pd.DataFrame, table: HostTable, args: PlotArguments, x_name: str
) -> tuple[list[tuple[str, pd.DataFrame]], str, list[str]]:
    """Sorted (label, frame with x/y/lower/upper) layers, the x kind and warnings."""
    x, kind = _x_values(frame, table, x_name)
    data = pd.DataFrame({"x": x})
    warnings: list[str] = []
    exclude = {x_name}
    for i, column in enumerate(args.y):
        data[f"y{i}"], notes = series.number_values(frame, table, column, "y", exclude=exclude)
        warnings += notes
    if args.lower:
        data["lower"], _ = series.number_values(frame, table, args.lower, "lower", exclude=exclude)
        data["upper"], _ = series.number_values(frame, table, args.upper, "upper", exclude=exclude)
    data = data[data["x"].notna()] if kind != "label" else data
    if kind != "label":
        data = data.sort_values("x", kind="stable")
    group = args.group_by
    if group:
        series.require_column(frame, table, group, "group_by")
        data["g"] = frame[group].map(lambda v: "" if v is None else str(v))
        return [(str(g), part) for g, part in data.groupby("g", sort=True)], kind, warnings
    return [("", data)], kind, warnings


def draw(table: HostTable, forecast: HostTable | None, args: PlotArguments, out_dir: Path) -> Info:
    """Render the chart to ``out_dir`` (atomically) and return the 8.10 artifact for the host."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    frame = series.table_frame(table)
    layers, kind, warnings = _layers(frame, table, args, args.x)
    width, height = args.width, args.height
    fig = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    labels: list[str] = []
    colors: dict[str, Any] = {}  # group -> colour of its first line, reused by its forecast
    positions = None
    if kind == "label" or args.kind == "bar":
        categories = list(dict.fromkeys(v for _, part in layers for v in part["x"]))
        positions = {v: i for i, v in enumerate(categories)}
    n_bars = len(layers) * len(args.y)
    points = 0
    for li, (group, part) in enumerate(layers):
        xs = part["x"].map(positions).to_numpy(dtype=float) if positions is not None else part["x"].to_numpy()
        for yi, column in enumerate(args.y):
            label = f"{column} ({group})" if group else column
            labels.append(label)
            ys = part[f"y{yi}"].to_numpy(dtype=float)
            points += int(np.isfinite(ys).sum())
            if args.kind == "bar":
                slot = li * len(args.y) + yi
                bar_width = 0.8 / n_bars
                ax.bar(xs - 0.4 + bar_width * (slot + 0.5), ys, width=bar_width, label=label)
            elif args.kind == "scatter":
                ax.scatter(xs, ys, label=label, s=12)
            else:
                (line,) = ax.plot(xs, ys, label=label, linewidth=1.6)
                colors.setdefault(group, line.get_color())
        if "lower" in part:
            band = f"{args.lower}–{args.upper}" + (f" ({group})" if group else "")
            ax.fill_between(xs, part["lower"].to_numpy(dtype=float), part["upper"].to_numpy(dtype=float), alpha=0.2, label=band)
    if forecast is not None:
        labels += _draw_forecast(ax, forecast, args, kind, positions, colors)
    if positions is not None:
        names = list(positions)
        step = max(1, len(names) // 20)  # at most ~20 tick labels stay readable
        ax.set_xticks(range(0, len(names), step), [_tick(n) for n in names[::step]], rotation=30, ha="right")
    elif kind == "date":
        locator = AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    title = args.title or f"{', '.join(args.y)} by {args.x}"
    ax.set_title(title)
    ax.set_xlabel(args.x)
    ax.set_ylabel(args.y[0] if len(args.y) == 1 else "value")
    ax.grid(True, alpha=0.3)
    if len(labels) > 1 or args.lower or forecast is not None:
        ax.legend(loc="best", fontsize="small")
    path = _save(fig, out_dir)
    data = {
        "screenshot_path": str(path),
        "format": "png",
        "width": width,
        "height": height,
        "bytes": path.stat().st_size,
        "title": title,
        "series": labels,
        "points": points,
        "notice": "The chart is attached as an image. Describe what it shows; do not repeat the numbers row by row.",
    }
    return Info(data=data, warnings=warnings, title=title)


def _tick(value: Any) -> str:
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d") if value == value.normalize() else value.strftime("%Y-%m-%d %H:%M")
    return str(value)[:24]


def _draw_forecast(
    ax: Any, forecast: HostTable, args: PlotArguments, kind: str, positions: dict | None, colors: dict[str, Any]
) -> list[str]:
    """Overlay a forecast dataset (columns x, forecast, lower, upper) after the history."""
    frame = series.table_frame(forecast)
    if "forecast" not in frame.columns:
        raise InvalidArguments(
            f"forecast_ref {forecast.ref!r} has no 'forecast' column (columns: {', '.join(frame.columns)}). "
            "Pass the dataset the forecast tool produced."
        )
    x, fkind = _x_values(frame, forecast, args.x)
    if fkind != kind and not (positions is not None and fkind == "label"):
        raise InvalidArguments(f"forecast_ref: column {args.x!r} is {fkind}s but the table's x is {kind}s.")
    data = pd.DataFrame({"x": x, "f": series.parse_numbers(frame["forecast"])})
    has_band = "lower" in frame.columns and "upper" in frame.columns
    if has_band:
        data["lo"], data["hi"] = series.parse_numbers(frame["lower"]), series.parse_numbers(frame["upper"])
    keys = [c for c in frame.columns if c not in {args.x, "forecast", "lower", "upper"}]
    groups = data.groupby(frame[keys].astype(str).agg(", ".join, axis=1)) if keys else [("", data)]
    labels = []
    for group, part in groups:
        part = part.sort_values("x") if fkind != "label" else part
        if positions is not None:
            for v in part["x"]:
                positions.setdefault(v, len(positions))
            xs = part["x"].map(positions).to_numpy(dtype=float)
        else:
            xs = part["x"].to_numpy()
        label = "forecast" + (f" ({group})" if group else "")
        (line,) = ax.plot(
            xs, part["f"].to_numpy(dtype=float), linestyle="--", linewidth=1.6, label=label, color=colors.get(str(group))
        )
        labels.append(label)
        if has_band:
            ax.fill_between(
                xs, part["lo"].to_numpy(dtype=float), part["hi"].to_numpy(dtype=float), alpha=0.2, color=line.get_color()
            )
    return labels


def _save(fig: Any, out_dir: Path) -> Path:
    """Write the PNG atomically (temp file + os.replace) under ``out_dir``."""
    stamp = datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
    final = out_dir / f"prediction_plot_{stamp}_{uuid.uuid4().hex[:8]}.png"
    handle, temp = tempfile.mkstemp(dir=out_dir, prefix=".chart-", suffix=".png.tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            fig.savefig(out, format="png", dpi=DPI)
        os.replace(temp, final)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return final
