"""What ``prediction`` declares: identity, setup (nothing to set up) and the two tools' schemas.

Both tools read a host table through ``table_ref`` (8.8), so no tool needs a
resource or credentials: the capability's resource_id is ``format: "none"`` (6.1)
and the alta asks for nothing. Tools name their code with ``lazy("module:function")``: it (statsmodels,
matplotlib) is imported on first call only.
"""

from __future__ import annotations

from pathlib import Path

from analytics_acp import NO_RESOURCE, ConnectorInfo, Defaults, ToolSpec, lazy

from . import __version__
from .arguments import ForecastArguments, PlotArguments

PACKAGE_DIR = Path(__file__).resolve().parents[2]
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


def tool_specs() -> list[ToolSpec]:
    """The two tools; neither needs a resource or credentials."""
    return [
        ToolSpec(
            name="forecast",
            title="Forecast a time series",
            description=(
                "Forecast a numeric column of a host table: the next horizon periods with forecast, lower "
                "and upper, per group_by series. extra has the method, its parameters and a backtest (MAE, MAPE, "
                "skill_vs_naive...): quote it when you report the forecast."
            ),
            run=lazy("analytics_acp_prediction.forecast_tool:run"),
            arguments=ForecastArguments,
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
            arguments=PlotArguments,
            kind="info",
            needs_resource=False,
            needs_credentials=False,
        ),
    ]
