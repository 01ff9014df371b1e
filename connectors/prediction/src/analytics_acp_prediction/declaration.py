"""What ``prediction`` declares: identity, setup (nothing to set up) and the two tools' schemas.

Both tools read a host table through ``table_ref`` (8.8), so no tool needs a
resource or credentials: the capability's resource_id is ``format: "none"`` (6.1)
and the alta asks for nothing. Tools name their code with ``lazy("module:function")``: it (statsmodels,
matplotlib) is imported on first call only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analytics_acp import NO_RESOURCE, ConnectorInfo, Defaults, ToolSpec, lazy

from . import __version__

PACKAGE_DIR = Path(__file__).resolve().parents[2]
# Argument texts are brief and said once (issue 23.3: tools/list is read in every conversation).
METHOD_HELP = "auto backtests all and keeps the best."
TABLE_REF = {
    "type": "string",
    "x-acp-input": "table_ref",
    "description": "Id of a host dataset or report (not rows, not SQL). The host resolves the rows.",
}
STRING_OR_LIST = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}

INSTRUCTIONS = (
    "Forecasts and charts over tables the host already holds. Pass the id of a dataset or report as table_ref "
    "(never rows or SQL): the server reads the rows from the host. forecast returns the forecast window with "
    "lower/upper prediction bounds and, in extra, the fitted method and a backtest on the last horizon points "
    "(MAE, RMSE, MAPE, sMAPE, skill_vs_naive). plot draws a PNG chart of a table the host shows you."
)


def connector_info() -> ConnectorInfo:
    """The ConnectorInfo: no resource, no credentials, free (9.1)."""
    return ConnectorInfo(
        tools=tool_specs(),  # declared once: the core registers them
        id="prediction",
        name="Prediction",
        version=__version__,
        description="Time-series forecasts (statsmodels) and PNG charts (matplotlib) over host tables.",
        resource_id=NO_RESOURCE,
        instructions=INSTRUCTIONS,
        defaults=Defaults(row_limit=25, cost_limit_usd=0),
        credentials_schema={"type": "object", "properties": {}},
        delivery=["inject", "suggest", "on_first_call"],
        icon="icon.svg",
        package_dir=PACKAGE_DIR,
    )


FORECAST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "table_ref": TABLE_REF,
        "time_column": {"type": "string", "description": "Dates or timestamps."},
        "value_column": {"type": "string", "description": "The numeric column."},
        "horizon": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "Periods ahead (14 = 14 days of daily data).",
        },
        "method": {
            "type": "string",
            "enum": ["auto", "holt_winters", "ets", "sarimax", "arima", "theta", "seasonal_naive"],
            "default": "auto",
            "description": METHOD_HELP,
        },
        "seasonal_period": {
            "type": "integer",
            "minimum": 1,
            "description": "Points per season (7 in daily data; 1: none). Default: from the frequency.",
        },
        "confidence": {
            "type": "number",
            "default": 0.95,
            "description": "Coverage of lower/upper.",
        },
        "group_by": {
            **STRING_OR_LIST,
            "description": "Column(s) splitting the series: one forecast each.",
        },
        "frequency": {
            "type": "string",
            "enum": ["hourly", "daily", "weekly", "monthly", "quarterly", "yearly"],
            "description": "Default: from the dates (a coarser one aggregates).",
        },
        "aggregate": {
            "type": "string",
            "enum": ["sum", "mean", "last", "min", "max"],
            "default": "sum",
            "description": "Per period.",
        },
        "fill": {
            "type": "string",
            "enum": ["interpolate", "zero", "previous"],
            "default": "interpolate",
            "description": "For empty periods (zero suits counts).",
        },
    },
    "required": ["table_ref", "time_column", "value_column", "horizon"],
}

PLOT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "table_ref": TABLE_REF,
        "x": {"type": "string", "description": "Horizontal axis column."},
        "y": {**STRING_OR_LIST, "description": "Numeric column(s), one line or bar set each."},
        "lower": {"type": "string", "description": "Column: lower edge of a band."},
        "upper": {"type": "string", "description": "Column: upper edge of a band."},
        "forecast_ref": {
            "type": "string",
            "x-acp-input": "table_ref",
            "description": "A forecast's output, drawn after the history with its band (time column named as x).",
        },
        "group_by": {"type": "string", "description": "Column: one line per value."},
        "kind": {"type": "string", "enum": ["line", "bar", "scatter"], "default": "line"},
        "title": {"type": "string"},
        "width": {"type": "integer", "minimum": 200, "maximum": 4000, "default": 1000},
        "height": {"type": "integer", "minimum": 150, "maximum": 3000, "default": 600},
    },
    "required": ["table_ref", "x", "y"],
}


def tool_specs() -> list[ToolSpec]:
    """The two tools; neither needs a resource or credentials."""
    return [
        ToolSpec(
            name="forecast",
            title="Forecast a time series",
            description=(
                "Forecast a numeric column of a host table (table_ref): the next horizon periods with forecast, lower "
                "and upper, per group_by series. extra has the method, its parameters and a backtest (MAE, MAPE, "
                "skill_vs_naive...): quote it when you report the forecast."
            ),
            run=lazy("analytics_acp_prediction.forecast_tool:run"),
            input_schema=FORECAST_SCHEMA,
            kind="extraction",
            needs_resource=False,
            needs_credentials=False,
            default=True,
        ),
        ToolSpec(
            name="plot",
            title="Chart a host table",
            description=(
                "Draw a PNG chart (line, bar or scatter) of a host table (table_ref), optionally with a lower/upper "
                "band or a forecast after the history. You are shown the image."
            ),
            run=lazy("analytics_acp_prediction.plot_tool:run"),
            input_schema=PLOT_SCHEMA,
            kind="info",
            needs_resource=False,
            needs_credentials=False,
        ),
    ]
