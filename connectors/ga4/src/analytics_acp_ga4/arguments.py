"""The argument model of each `ga4` tool (issue 38.1): the core publishes their schemas and hands each tool its
parsed object. Filter and order items are parsed into typed objects (case-insensitive enum words, IN_LIST needs
values, a regex must compile…) but published by their signature in the description rather than as nested schemas
(issue 23.3: tools/list is read in every conversation). A light module: declaration.py imports it at start-up."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from analytics_acp import DateText, EndDate, NotBlank, StartDate, ToolArguments
from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

MatchType = Literal["EXACT", "BEGINS_WITH", "ENDS_WITH", "CONTAINS", "FULL_REGEXP", "PARTIAL_REGEXP", "IN_LIST"]
Operation = Literal["EQUAL", "LESS_THAN", "LESS_THAN_OR_EQUAL", "GREATER_THAN", "GREATER_THAN_OR_EQUAL", "BETWEEN"]
StepMatch = Literal["EXACT", "BEGINS_WITH", "CONTAINS", "FULL_REGEXP", "PARTIAL_REGEXP"]
Upper = BeforeValidator(lambda v: v.upper() if isinstance(v, str) else v)  # "contains" reads as CONTAINS


def check_regex(pattern: str) -> str:
    """A regular expression that compiles (GA4 uses RE2; Python catches the usual mistakes)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression ({exc}).") from None
    return pattern


OTHER = "(other)"  # the cluster of the values no regex matches


class DimensionFilter(ToolArguments):
    """{field, match_type, value | values (IN_LIST), case_sensitive, not}."""

    field: NotBlank
    match_type: Annotated[MatchType, Upper] = "EXACT"
    value: str | None = None
    values: list[str] | None = None
    case_sensitive: bool = False
    negate: bool = Field(False, alias="not")

    @model_validator(mode="after")
    def _operand(self) -> DimensionFilter:
        if self.match_type == "IN_LIST":
            if not self.values:
                raise ValueError("IN_LIST needs 'values', a non-empty list of strings.")
        elif self.value is None:
            raise ValueError(f"'value' (a string) is required for {self.match_type}.")
        elif self.match_type.endswith("REGEXP"):
            check_regex(self.value)
        return self


class MetricFilter(ToolArguments):
    """{field, operation, value | values [from, to] (BETWEEN)}."""

    field: NotBlank
    operation: Annotated[Operation, Upper]
    value: float | None = None
    values: list[float] | None = None

    @model_validator(mode="after")
    def _operand(self) -> MetricFilter:
        if self.operation == "BETWEEN":
            if not self.values or len(self.values) != 2:
                raise ValueError("BETWEEN needs 'values': [from, to].")
        elif self.value is None:
            raise ValueError("'value' (a number) is required.")
        return self


class OrderBy(ToolArguments):
    """{field, desc}; a bare name orders ascending, '-name' descending."""

    field: NotBlank
    desc: bool = False


def _order_item(value: Any) -> Any:
    if isinstance(value, str):
        return {"field": value.lstrip("-"), "desc": value.startswith("-")}
    return value


DimensionFilters = Annotated[list[DimensionFilter], WithJsonSchema({"type": "array", "items": {"type": "object"}})]
MetricFilters = Annotated[list[MetricFilter], WithJsonSchema({"type": "array", "items": {"type": "object"}})]
OrderBys = Annotated[list[Annotated[OrderBy, BeforeValidator(_order_item)]], WithJsonSchema({"type": "array"})]

DIMENSION_FILTERS = ("AND-ed {field, match_type EXACT (default)|BEGINS_WITH|ENDS_WITH|CONTAINS|FULL_REGEXP|PARTIAL_REGEXP"
                     "|IN_LIST, value (IN_LIST: values, a list), case_sensitive, not}.")
METRIC_FILTERS = ("AND-ed {field, operation EQUAL|LESS_THAN|LESS_THAN_OR_EQUAL|GREATER_THAN|GREATER_THAN_OR_EQUAL"
                  "|BETWEEN, value (BETWEEN: values [from, to])}.")
ORDER_BYS = "Requested fields, e.g. [\"-sessions\", \"date\"] ('-': descending) or [{field, desc}]."
Start = Annotated[StartDate | None, Field(description="YYYY-MM-DD, NdaysAgo, yesterday, today. Default 28daysAgo.")]
End = Annotated[EndDate | None, Field(description="Default yesterday.")]


class RunReportArguments(ToolArguments):
    """run_report: metrics by dimensions over a window, optionally against a second one."""

    metrics: list[str] = Field(min_length=1, max_length=10, description="API names, e.g. sessions, keyEvents:purchase.")
    dimensions: list[str] = Field(default_factory=list, max_length=9,
                                  description="API names, e.g. date, sessionDefaultChannelGroup.")
    start_date: Start = None
    end_date: End = None
    compare_start_date: DateText | None = Field(None, description="A second range (adds a dateRange column).")
    compare_end_date: DateText | None = None
    dimension_filters: DimensionFilters = Field(default_factory=list, description=DIMENSION_FILTERS)
    metric_filters: MetricFilters = Field(default_factory=list, description=METRIC_FILTERS)
    order_bys: OrderBys = Field(default_factory=list, description=ORDER_BYS)
    limit: int | None = Field(None, ge=1, description="Rows to extract. Default: all.")
    keep_empty_rows: bool = Field(False, description="Keep all-zero rows.")
    currency_code: str | None = Field(None, description="ISO 4217. Default: property's.")

    @model_validator(mode="after")
    def _second_range(self) -> RunReportArguments:
        if bool(self.compare_start_date) != bool(self.compare_end_date):
            raise ValueError("Give both compare_start_date and compare_end_date for a second date range.")
        return self


class Cluster(ToolArguments):
    """One named regex (RE2, partial match)."""

    name: str
    regex: str

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return check_regex(value)

    @field_validator("name")
    @classmethod
    def _not_other(cls, value: str) -> str:
        if value == OTHER:
            raise ValueError(f"{OTHER!r} is reserved for the values no cluster matches.")
        return value


class RegexClusterArguments(ToolArguments):
    """run_report_by_regex_cluster: one dimension's values grouped by ordered regexes."""

    dimension: NotBlank = Field(description="Whose values are clustered, e.g. pagePath.")
    clusters: list[Cluster] = Field(min_length=1, max_length=25, description="In order; regex is RE2, partial match.")
    metrics: list[str] = Field(min_length=1, max_length=10)
    dimensions: list[str] = Field(default_factory=list, max_length=4, description="Breakdown, e.g. date.")
    start_date: Start = None
    end_date: End = None
    case_sensitive: bool = False

    @field_validator("clusters")
    @classmethod
    def _distinct_names(cls, clusters: list[Cluster]) -> list[Cluster]:
        names = [c.name for c in clusters]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"the cluster name {repeated[0]!r} is repeated.")
        return clusters


class ConversionModelsArguments(ToolArguments):
    """compare_conversion_models: key events (default all) over a window."""

    key_events: list[str] = Field(default_factory=list, description="E.g. purchase. Default: all.")
    start_date: Start = None
    end_date: End = None

    @field_validator("key_events")
    @classmethod
    def _event_names(cls, events: list[str]) -> list[str]:
        for e in events:
            if ":" in e or not e.strip():
                raise ValueError(f"takes event names such as 'purchase' (got {e!r}).")
        return [e.strip() for e in events]


class RealtimeArguments(ToolArguments):
    """run_realtime_report: the last minutes."""

    metrics: list[str] = Field(min_length=1, description="activeUsers, eventCount, keyEvents, screenPageViews.")
    dimensions: list[str] = Field(default_factory=list, description="E.g. country, deviceCategory, eventName, minutesAgo.")
    start_minutes_ago: int = Field(29, ge=0, le=59, description="29: the last 30 minutes (up to 59 on 360 properties).")
    end_minutes_ago: int = Field(0, ge=0, le=59)
    dimension_filters: DimensionFilters = Field(default_factory=list, description=DIMENSION_FILTERS)
    limit: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _range(self) -> RealtimeArguments:
        if self.start_minutes_ago < self.end_minutes_ago:
            raise ValueError("start_minutes_ago must be >= end_minutes_ago (start is further in the past).")
        return self


class FunnelStep(ToolArguments):
    """One step: an event, or a page path."""

    name: NotBlank
    event_name: str | None = None
    page_path: str | None = Field(None, description="Instead of event_name.")
    match_type: Annotated[StepMatch, Upper] = Field("EXACT", description="For page_path.")
    directly_followed_by: bool = Field(False, description="Right after the previous step.")

    @model_validator(mode="after")
    def _one_target(self) -> FunnelStep:
        if bool(self.event_name) == bool(self.page_path):
            raise ValueError("needs exactly one of 'event_name' or 'page_path'.")
        if self.page_path and self.match_type.endswith("REGEXP"):
            check_regex(self.page_path)
        return self


class FunnelArguments(ToolArguments):
    """run_funnel_report: 1-10 steps, open or closed."""

    steps: list[FunnelStep] = Field(min_length=1, max_length=10)
    is_open_funnel: bool = Field(False, description="Users may enter at any step.")
    start_date: Start = None
    end_date: End = None


class CompatibilityArguments(ToolArguments):
    """check_compatibility: the fields to check together."""

    metrics: list[str] = Field(default_factory=list)
    dimensions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _something(self) -> CompatibilityArguments:
        if not self.metrics and not self.dimensions:
            raise ValueError("Give 'metrics' and/or 'dimensions' to check.")
        return self


class MetadataArguments(ToolArguments):
    """get_metadata: a search over the property's dimensions and metrics."""

    query: str | None = Field(None, description="Words to find in names and descriptions.")
    kind: Literal["all", "dimensions", "metrics"] = "all"
    custom_only: bool = False
