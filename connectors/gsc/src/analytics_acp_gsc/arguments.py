"""The argument model of each `gsc` tool (issue 38.1): the core publishes their schemas and hands each tool its
parsed object. Search Console's own rules on combinations (hour needs hourly_all, searchAppearance goes alone…) are
validators here, so a refused request never reaches the API. A light module: declaration.py imports it at start-up."""

from __future__ import annotations

import re
from typing import Annotated, Any

from analytics_acp import DateText, EndDate, NotBlank, StartDate, TableRef, ToolArguments
from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

from .budget import MINUTE_LIMIT
from .constants import (
    FILTER_DIMENSIONS,
    METRICS,
    OPERATORS,
    AggregationType,
    DataState,
    Dimension,
    FilterDimension,
    Operator,
    SearchType,
)

PT_DATE = "YYYY-MM-DD, YYYYMMDD, NdaysAgo, yesterday, today (Pacific Time)."
ORDER_ITEM = re.compile(r"^\s*(-?)([A-Za-z_][A-Za-z0-9_]*)(?:\s+(asc|desc))?\s*$", re.I)


def _case_insensitive(options: list[str]) -> Any:
    """Filter items are published as plain objects: their names are matched regardless of case."""
    by_lower = {o.lower(): o for o in options}
    return BeforeValidator(lambda v: by_lower.get(v.lower(), v) if isinstance(v, str) else v)


def _query_only() -> list[Dimension]:
    return ["query"]  # the default grouping (15.2)


class Filter(ToolArguments):
    """One AND-ed dimension filter."""

    dimension: Annotated[FilterDimension, _case_insensitive(FILTER_DIMENSIONS)]
    operator: Annotated[Operator, _case_insensitive(OPERATORS)] = "equals"
    expression: NotBlank


# Described by their signature, not a nested schema (issue 23.3: tools/list is read in every conversation).
Filters = Annotated[list[Filter], WithJsonSchema({"type": "array", "items": {"type": "object"}})]
FILTERS_DESCRIPTION = (f"AND-ed {{dimension (not date/hour), operator {'|'.join(OPERATORS)} (default equals), "
                       "expression (value or RE2 regex)}.")


class QueryArguments(ToolArguments):
    """What search_analytics and compare_periods share: the request Search Console answers, its rules checked."""

    dimensions: list[Dimension] = Field(
        default_factory=_query_only, json_schema_extra={"uniqueItems": True},
        description="Default [\"query\"]. hour needs hourly_all; searchAppearance goes alone.")
    filters: Filters = Field(default_factory=list, description=FILTERS_DESCRIPTION)
    search_type: SearchType = "web"
    # Omitted, Search Console aggregates "auto": that is the published default, and nothing is sent.
    aggregation_type: AggregationType | None = Field(None, json_schema_extra={"default": "auto"})
    data_state: DataState = Field("final", description="all/hourly_all add fresh days, flagged provisional.")
    row_cap: int | None = Field(None, ge=1, description="Keep the first N rows only.")

    @field_validator("dimensions")
    @classmethod
    def _once_each(cls, dims: list[str]) -> list[str]:
        if len(set(dims)) != len(dims):
            raise ValueError("must not repeat a dimension.")
        return dims

    @model_validator(mode="after")
    def _search_console_rules(self) -> QueryArguments:
        dims = self.dimensions
        if "hour" in dims and self.data_state != "hourly_all":
            raise ValueError('The hour dimension needs data_state "hourly_all" (hourly data covers the last 10 days).')
        if "searchAppearance" in dims and len(dims) > 1:
            raise ValueError(
                "searchAppearance cannot be combined with other dimensions (Search Console's rule). Step 1: group by "
                "searchAppearance alone to list the appearance types. Step 2: filter on one of them "
                '({"dimension": "searchAppearance", "operator": "equals", "expression": "<TYPE>"}) and group by the '
                "other dimensions.")
        page_used = "page" in dims or any(f.dimension == "page" for f in self.filters)
        if self.aggregation_type == "byProperty" and page_used:
            raise ValueError('aggregation_type "byProperty" cannot be used when grouping or filtering by page '
                             '(Search Console then aggregates by page). Use "auto" or "byPage".')
        if self.aggregation_type == "byNewsShowcasePanel" and (
                self.search_type not in ("discover", "googleNews") or page_used or "searchAppearance" in dims):
            raise ValueError('aggregation_type "byNewsShowcasePanel" needs search_type discover or googleNews and '
                             "no page grouping or filter and no searchAppearance dimension.")
        if self.search_type in ("discover", "googleNews") and "query" in dims:
            raise ValueError(f"search_type {self.search_type} has no queries: group by page, country, device or date "
                             "instead.")
        return self

    @property
    def flags_provisional(self) -> bool:
        """Rows carry the provisional column: fresh data was asked for and rows are per day/hour (15.2)."""
        return self.data_state in ("all", "hourly_all") and ("date" in self.dimensions or "hour" in self.dimensions)


class SearchAnalyticsArguments(QueryArguments):
    """search_analytics: the query over one window, optionally sorted."""

    start_date: StartDate | None = Field(None, description=PT_DATE)
    end_date: EndDate | None = Field(None, description="Last day.")
    order_by: list[str] = Field(default_factory=list, description="E.g. [\"impressions desc\"]. Default: clicks desc.")

    @model_validator(mode="after")
    def _order_by_columns(self) -> SearchAnalyticsArguments:
        columns = [*self.dimensions, *METRICS, *(["provisional"] if self.flags_provisional else [])]
        for item in self.order_by:
            m = ORDER_ITEM.match(item)
            if not m or m.group(2) not in columns:
                raise ValueError(f"order_by {item!r} is not valid: use a column ({', '.join(columns)}) optionally "
                                 'followed by asc or desc, e.g. "impressions desc".')
        return self

    def order(self) -> list[tuple[str, bool]]:
        """``order_by`` as [(column, descending)] ("clicks desc", "-position", "query")."""
        out = []
        for item in self.order_by:
            m = ORDER_ITEM.match(item)
            assert m is not None  # checked by _order_by_columns
            out.append((m.group(2), m.group(1) == "-" or (m.group(3) or "").lower() == "desc"))
        return out


class ComparePeriodsArguments(QueryArguments):
    """compare_periods: the query over two windows, joined on the dimensions (so no date or hour)."""

    # Published without date and hour; parsed with them, so that asking for them gets the reason and the way out.
    dimensions: Annotated[list[Dimension], WithJsonSchema(
        {"type": "array", "items": {"enum": FILTER_DIMENSIONS, "type": "string"}})] = Field(
        default_factory=_query_only, json_schema_extra={"uniqueItems": True},
        description="Default [\"query\"]. searchAppearance goes alone.")
    start_date: StartDate | None = Field(None, description="Current window: " + PT_DATE)
    end_date: EndDate | None = Field(None, description="Its last day.")
    compare_start_date: DateText | None = Field(None, description="Previous window. Default: the equal window before.")
    compare_end_date: DateText | None = None

    @field_validator("dimensions")
    @classmethod
    def _no_time(cls, dims: list[str]) -> list[str]:
        if "date" in dims or "hour" in dims:
            raise ValueError("compare_periods joins the two windows on the dimensions, so date and hour cannot be "
                             "dimensions. Use search_analytics with the date dimension for a daily series.")
        return dims

    @model_validator(mode="after")
    def _previous_window(self) -> ComparePeriodsArguments:
        if bool(self.compare_start_date) != bool(self.compare_end_date):
            raise ValueError("Give both compare_start_date and compare_end_date, or neither (then the previous "
                             "window of the same length is used).")
        return self


class InspectUrlsArguments(ToolArguments):
    """inspect_urls: URLs given, or a host table's URL column (8.8), or both."""

    urls: list[str] = Field(default_factory=list, max_length=MINUTE_LIMIT, description="Absolute URLs under the property.")
    table_ref: TableRef | None = Field(
        None, description="Id of a host dataset or report with the URLs (the host resolves the rows).")
    url_column: str | None = Field(None, description="Default url, else page.")
    language_code: str | None = Field(None, description="BCP-47 language of issue messages, e.g. en-US.")

    @field_validator("urls")
    @classmethod
    def _absolute(cls, urls: list[str]) -> list[str]:
        urls = [u.strip() for u in urls if u.strip()]
        bad = [u for u in urls if not absolute_url(u)]
        if bad:
            raise ValueError(f"URLs must be absolute http(s) URLs; not valid: {', '.join(bad[:5])}.")
        return urls

    @model_validator(mode="after")
    def _some_source(self) -> InspectUrlsArguments:
        if self.url_column and not self.table_ref:
            raise ValueError("url_column only applies with table_ref.")
        if not self.urls and not self.table_ref:
            raise ValueError("Give urls (a list of page URLs of the property) or table_ref (a host table with a url "
                             "column).")
        return self


def absolute_url(url: str) -> bool:
    """An http(s) URL (what the URL Inspection API inspects)."""
    return url.lower().startswith(("http://", "https://"))
