"""Arguments -> Data API request parts (filters, order_bys, date ranges). Validation errors name the argument."""

from __future__ import annotations

import re
from typing import Any

from analytics_acp import InvalidArguments, resolve_date

MATCH_TYPES = ("EXACT", "BEGINS_WITH", "ENDS_WITH", "CONTAINS", "FULL_REGEXP", "PARTIAL_REGEXP")
OPERATIONS = ("EQUAL", "LESS_THAN", "LESS_THAN_OR_EQUAL", "GREATER_THAN", "GREATER_THAN_OR_EQUAL", "BETWEEN")
DEFAULT_START, DEFAULT_END = "28daysAgo", "yesterday"


def names_argument(arguments: dict[str, Any], key: str, *, required: bool = False) -> list[str]:
    """A list-of-strings argument (a single string is accepted as a one-element list)."""
    value = arguments.get(key)
    if value is None or value == []:
        if required:
            raise InvalidArguments(f"'{key}' is required: a list of API names.")
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidArguments(f"'{key}' must be a list of strings.")
    return value


def window(arguments: dict[str, Any], prefix: str = "") -> tuple[str, str, str, str]:
    """(start as given, end as given, start resolved, end resolved); defaults 28daysAgo -> yesterday."""
    start = str(arguments.get(f"{prefix}start_date") or DEFAULT_START).strip()
    end = str(arguments.get(f"{prefix}end_date") or DEFAULT_END).strip()
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


def _string_filter(item: dict[str, Any], index: int, argument: str) -> Any:
    from google.analytics.data_v1beta import Filter

    match_type = str(item.get("match_type") or "EXACT").upper()
    case = bool(item.get("case_sensitive", False))
    if match_type == "IN_LIST":
        values = item.get("values")
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise InvalidArguments(f"{argument}[{index}]: IN_LIST needs 'values', a non-empty list of strings.")
        return Filter.InListFilter(values=values, case_sensitive=case)
    if match_type not in MATCH_TYPES:
        raise InvalidArguments(f"{argument}[{index}]: match_type must be one of {', '.join(MATCH_TYPES)}, IN_LIST.")
    value = item.get("value")
    if not isinstance(value, str):
        raise InvalidArguments(f"{argument}[{index}]: 'value' (a string) is required for {match_type}.")
    if match_type in ("FULL_REGEXP", "PARTIAL_REGEXP"):
        check_regex(value, f"{argument}[{index}].value")
    return Filter.StringFilter(match_type=getattr(Filter.StringFilter.MatchType, match_type), value=value, case_sensitive=case)


def check_regex(pattern: str, where: str) -> None:
    """ACP_INVALID_ARGUMENTS for a regex that does not compile (GA4 uses RE2; Python catches the usual mistakes)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise InvalidArguments(f"{where}: invalid regular expression {pattern!r} ({exc}).") from None


def dimension_filter(items: Any, argument: str = "dimension_filters", dimension_aliases: Any = None) -> Any:
    """A FilterExpression AND-ing the given dimension filters (each optionally negated), or None."""
    from google.analytics.data_v1beta import Filter, FilterExpression, FilterExpressionList

    if not items:
        return None
    if not isinstance(items, list):
        raise InvalidArguments(f"'{argument}' must be a list of {{field, match_type, value|values, case_sensitive, not}}.")
    exprs = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("field"), str) or not item["field"].strip():
            raise InvalidArguments(f"{argument}[{i}] needs 'field' (a dimension API name).")
        field_name = dimension_aliases(item["field"].strip()) if dimension_aliases else item["field"].strip()
        spec = _string_filter(item, i, argument)
        key = "in_list_filter" if isinstance(spec, Filter.InListFilter) else "string_filter"
        expr = FilterExpression(filter=Filter(field_name=field_name, **{key: spec}))
        if item.get("not"):
            expr = FilterExpression(not_expression=expr)
        exprs.append(expr)
    return exprs[0] if len(exprs) == 1 else FilterExpression(and_group=FilterExpressionList(expressions=exprs))


def metric_filter(items: Any, metric_aliases: Any = None) -> Any:
    """A FilterExpression AND-ing numeric metric filters, or None."""
    from google.analytics.data_v1beta import Filter, FilterExpression, FilterExpressionList, NumericValue

    if not items:
        return None
    if not isinstance(items, list):
        raise InvalidArguments("'metric_filters' must be a list of {field, operation, value}.")
    exprs = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("field"), str):
            raise InvalidArguments(f"metric_filters[{i}] needs 'field' (a metric API name).")
        op = str(item.get("operation") or "").upper()
        if op not in OPERATIONS:
            raise InvalidArguments(f"metric_filters[{i}]: operation must be one of {', '.join(OPERATIONS)}.")
        field_name = metric_aliases(item["field"].strip()) if metric_aliases else item["field"].strip()
        if op == "BETWEEN":
            values = item.get("values")
            if not (isinstance(values, list) and len(values) == 2 and all(_number(v) for v in values)):
                raise InvalidArguments(f"metric_filters[{i}]: BETWEEN needs 'values': [from, to].")
            flt = Filter(field_name=field_name, between_filter=Filter.BetweenFilter(
                from_value=NumericValue(double_value=float(values[0])), to_value=NumericValue(double_value=float(values[1]))))
        else:
            if not _number(item.get("value")):
                raise InvalidArguments(f"metric_filters[{i}]: 'value' must be a number.")
            flt = Filter(field_name=field_name, numeric_filter=Filter.NumericFilter(
                operation=getattr(Filter.NumericFilter.Operation, op), value=NumericValue(double_value=float(item["value"]))))
        exprs.append(FilterExpression(filter=flt))
    return exprs[0] if len(exprs) == 1 else FilterExpression(and_group=FilterExpressionList(expressions=exprs))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def order_bys(items: Any, metrics: list[str], dimensions: list[str]) -> list[Any]:
    """OrderBy list from [{field, desc}] or ["-sessions", "date"]; the field must be in the request."""
    from google.analytics.data_v1beta import OrderBy

    out = []
    for i, item in enumerate(items or []):
        if isinstance(item, str):
            item = {"field": item.lstrip("-"), "desc": item.startswith("-")}
        if not isinstance(item, dict) or not isinstance(item.get("field"), str):
            raise InvalidArguments(f"order_bys[{i}] must be {{field, desc}} or a name ('-sessions' for descending).")
        name, desc = item["field"].strip(), bool(item.get("desc", False))
        if name in metrics:
            out.append(OrderBy(metric=OrderBy.MetricOrderBy(metric_name=name), desc=desc))
        elif name in dimensions:
            out.append(OrderBy(dimension=OrderBy.DimensionOrderBy(dimension_name=name), desc=desc))
        else:
            raise InvalidArguments(f"order_bys[{i}]: '{name}' is not among the requested metrics or dimensions.")
    return out
