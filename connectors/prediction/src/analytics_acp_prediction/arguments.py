"""The argument models of ``forecast`` and ``plot`` (issue 38.1): the core publishes their schemas and hands each
tool its parsed object. A light module (pydantic and the core only): declaration.py imports it at start-up, and the
method, frequency, aggregate and fill names the tool modules use are the ones declared here."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from analytics_acp import NotBlank, TableRef, ToolArguments
from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

Method = Literal["auto", "holt_winters", "ets", "sarimax", "arima", "theta", "seasonal_naive"]
FrequencyName = Literal["hourly", "daily", "weekly", "monthly", "quarterly", "yearly"]
Aggregate = Literal["sum", "mean", "last", "min", "max"]
Fill = Literal["interpolate", "zero", "previous"]
Kind = Literal["line", "bar", "scatter"]
MAX_HORIZON = 1000
MAX_SEASONAL_PERIOD = 366
DEFAULT_CONFIDENCE = 0.95

TABLE_REF = "Id of a host dataset or report (not rows, not SQL). The host resolves the rows."


def _one_or_more(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _names(value: list[str]) -> list[str]:
    if not value or any(not v.strip() for v in value):
        raise ValueError("must name at least one column, and no empty name.")
    return value


# A column name or a list of them: parsed as the list, published as either form.
ColumnNames = Annotated[
    list[str], BeforeValidator(_one_or_more), WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})
]


class ForecastArguments(ToolArguments):
    """forecast: a numeric column of a host table, horizon periods ahead, per group_by series."""

    table_ref: TableRef = Field(description=TABLE_REF)
    time_column: NotBlank = Field(description="Dates or timestamps.")
    value_column: NotBlank = Field(description="The numeric column.")
    horizon: int = Field(ge=1, le=MAX_HORIZON, description="Periods ahead (14 = 14 days of daily data).")
    method: Method = Field("auto", description="auto backtests all and keeps the best.")
    seasonal_period: int | None = Field(None, ge=1, le=MAX_SEASONAL_PERIOD,
                                        description="Points per season (daily: 7; 1: none). Default: from the frequency.")
    confidence: float = Field(DEFAULT_CONFIDENCE, description="Coverage of lower/upper.")
    group_by: ColumnNames | None = Field(None, description="Column(s) splitting the series: one forecast each.")
    frequency: FrequencyName | None = Field(None, description="Default: from the dates (a coarser one aggregates).")
    aggregate: Aggregate = Field("sum", description="Per period.")
    fill: Fill = Field("interpolate", description="For empty periods (zero suits counts).")

    @field_validator("confidence")
    @classmethod
    def _coverage(cls, value: float) -> float:
        value = value / 100 if 1 < value < 100 else value  # 95 means 95%
        if not 0.5 <= value < 1:
            raise ValueError("must be between 0.5 and 0.999 (for example 0.8 or 0.95; 95 is read as 95%).")
        return value


class PlotArguments(ToolArguments):
    """plot: a host table drawn as a PNG, optionally with a band or a forecast after the history."""

    table_ref: TableRef = Field(description=TABLE_REF)
    x: NotBlank = Field(description="Horizontal axis column.")
    y: ColumnNames = Field(description="Numeric column(s), one line or bar set each.")
    lower: str | None = Field(None, description="Column: lower edge of a band.")
    upper: str | None = Field(None, description="Column: upper edge of a band.")
    forecast_ref: TableRef | None = Field(
        None, description="A forecast's output, drawn after the history with its band (time column named as x).")
    group_by: str | None = Field(None, description="Column: one line per value.")
    kind: Kind = "line"
    title: str | None = None
    width: int = Field(1000, ge=200, le=4000)
    height: int = Field(600, ge=150, le=3000)

    @field_validator("y")
    @classmethod
    def _some_columns(cls, value: list[str]) -> list[str]:
        return _names(value)

    @model_validator(mode="after")
    def _band_pairs(self) -> PlotArguments:
        if bool(self.lower) != bool(self.upper):
            raise ValueError("lower and upper go together: pass both band columns or neither.")
        return self
