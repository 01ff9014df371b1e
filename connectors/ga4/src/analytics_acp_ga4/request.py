"""Parsed arguments (arguments.py) -> Data API request parts (filters, order_bys, date ranges)."""

from __future__ import annotations

import re
from typing import Any

from analytics_acp import InvalidArguments, resolve_date

from .arguments import DimensionFilter, MetricFilter, OrderBy

DEFAULT_START, DEFAULT_END = "28daysAgo", "yesterday"


def window(start: str | None, end: str | None, prefix: str = "") -> tuple[str, str, str, str]:
    """(start as given, end as given, start resolved, end resolved); defaults 28daysAgo -> yesterday."""
    start = (start or DEFAULT_START).strip()
    end = (end or DEFAULT_END).strip()
    s = resolve_date(start, argument=f"{prefix}start_date")
    e = resolve_date(end, argument=f"{prefix}end_date")
    if s > e:
        raise InvalidArguments(f"{prefix}start_date {s} is after {prefix}end_date {e}.")
    return start, end, s, e


def _api_date(value: str) -> str:
    # The API accepts YYYY-MM-DD, NdaysAgo, yesterday and today; YYYYMMDD is ours, so send it resolved.
    return resolve_date(value) if re.fullmatch(r"\d{8}", value) else value


def date_range(start: str, end: str, name: str | None = None) -> Any:
    """A DateRange (the API resolves NdaysAgo in the property's time zone)."""
    from google.analytics.data_v1beta import DateRange

    return DateRange(start_date=_api_date(start), end_date=_api_date(end), **({"name": name} if name else {}))


def _string_filter(item: DimensionFilter) -> Any:
    from google.analytics.data_v1beta import Filter

    if item.match_type == "IN_LIST":
        return Filter.InListFilter(values=item.values, case_sensitive=item.case_sensitive)
    return Filter.StringFilter(match_type=getattr(Filter.StringFilter.MatchType, item.match_type), value=item.value,
                               case_sensitive=item.case_sensitive)


def dimension_filter(items: list[DimensionFilter], dimension_aliases: Any = None) -> Any:
    """A FilterExpression AND-ing the given dimension filters (each optionally negated), or None."""
    from google.analytics.data_v1beta import Filter, FilterExpression, FilterExpressionList

    if not items:
        return None
    exprs = []
    for item in items:
        field_name = dimension_aliases(item.field.strip()) if dimension_aliases else item.field.strip()
        spec = _string_filter(item)
        key = "in_list_filter" if isinstance(spec, Filter.InListFilter) else "string_filter"
        expr = FilterExpression(filter=Filter(field_name=field_name, **{key: spec}))
        if item.negate:
            expr = FilterExpression(not_expression=expr)
        exprs.append(expr)
    return exprs[0] if len(exprs) == 1 else FilterExpression(and_group=FilterExpressionList(expressions=exprs))


def metric_filter(items: list[MetricFilter], metric_aliases: Any = None) -> Any:
    """A FilterExpression AND-ing numeric metric filters, or None."""
    from google.analytics.data_v1beta import Filter, FilterExpression, FilterExpressionList, NumericValue

    if not items:
        return None
    exprs = []
    for item in items:
        field_name = metric_aliases(item.field.strip()) if metric_aliases else item.field.strip()
        if item.operation == "BETWEEN":
            low, high = item.values or (0.0, 0.0)
            flt = Filter(field_name=field_name, between_filter=Filter.BetweenFilter(
                from_value=NumericValue(double_value=low), to_value=NumericValue(double_value=high)))
        else:
            flt = Filter(field_name=field_name, numeric_filter=Filter.NumericFilter(
                operation=getattr(Filter.NumericFilter.Operation, item.operation),
                value=NumericValue(double_value=item.value)))
        exprs.append(FilterExpression(filter=flt))
    return exprs[0] if len(exprs) == 1 else FilterExpression(and_group=FilterExpressionList(expressions=exprs))


def order_bys(items: list[OrderBy], metrics: list[str], dimensions: list[str]) -> list[Any]:
    """OrderBy list; each field must be among the request's (aliased) metrics or dimensions."""
    from google.analytics.data_v1beta import OrderBy as ApiOrderBy

    out = []
    for i, item in enumerate(items):
        name = item.field.strip()
        if name in metrics:
            out.append(ApiOrderBy(metric=ApiOrderBy.MetricOrderBy(metric_name=name), desc=item.desc))
        elif name in dimensions:
            out.append(ApiOrderBy(dimension=ApiOrderBy.DimensionOrderBy(dimension_name=name), desc=item.desc))
        else:
            raise InvalidArguments(f"order_bys[{i}]: '{name}' is not among the requested metrics or dimensions.")
    return out
