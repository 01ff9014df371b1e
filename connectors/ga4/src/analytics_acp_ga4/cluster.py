"""run_report_by_regex_cluster: one dimension's values grouped by ordered regexes, metrics per cluster.

Each cluster is its own filtered request (its regex AND NOT every earlier cluster's regex; '(other)'
is NOT any of them), so GA4 computes every metric for the cluster itself: users are de-duplicated,
rates and averages are exact. Nothing is ever summed across dimension values.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext, Extraction, Header, InvalidArguments

from . import names
from .arguments import OTHER, RegexClusterArguments
from .report import describe, fetch_report, source
from .request import date_range, window


def _regex_expr(dimension: str, regex: str, case: bool) -> Any:
    from google.analytics.data_v1beta import Filter, FilterExpression

    return FilterExpression(filter=Filter(field_name=dimension, string_filter=Filter.StringFilter(
        match_type=Filter.StringFilter.MatchType.PARTIAL_REGEXP, value=regex, case_sensitive=case)))


def _cluster_filter(dimension: str, regexes: list[str], index: int | None, case: bool) -> Any:
    """Cluster ``index`` (None = '(other)'): its regex and none of the earlier ones."""
    from google.analytics.data_v1beta import FilterExpression, FilterExpressionList

    earlier = regexes if index is None else regexes[:index]
    parts = [] if index is None else [_regex_expr(dimension, regexes[index], case)]
    parts += [FilterExpression(not_expression=_regex_expr(dimension, r, case)) for r in earlier]
    return parts[0] if len(parts) == 1 else FilterExpression(and_group=FilterExpressionList(expressions=parts))


def run_report_by_regex_cluster(arguments: RegexClusterArguments, ctx: CallContext) -> Extraction:
    """The run_report_by_regex_cluster tool."""
    property_id = ctx.require_resource_id()
    warnings: list[str] = []
    dimension = names.apply_aliases([arguments.dimension], "dimension", warnings)[0]
    # The model checked 1-25 clusters, distinct names other than '(other)', regexes that compile.
    labels = [c.name for c in arguments.clusters]
    regexes = [c.regex for c in arguments.clusters]
    metrics = names.apply_aliases(list(arguments.metrics), "metric", warnings)
    breakdown = names.apply_aliases(list(arguments.dimensions), "dimension", warnings)
    if dimension in breakdown:  # after alias mapping, so not a rule of the model
        raise InvalidArguments(f"'{dimension}' is the clustered dimension; do not repeat it in 'dimensions'.")
    start, end, s, e = window(arguments.start_date, arguments.end_date)
    case = arguments.case_sensitive
    rows: list[list[Any]] = []
    headers: list[Header] | None = None
    totals: dict[str, Any] = {}
    last = None
    pages = 0
    n = len(labels) + 2  # one request per cluster, '(other)', the overall totals (issue 28: request k of n)
    for k, (index, label) in enumerate([*enumerate(labels), (None, OTHER)], 1):
        report = fetch_report(ctx, property_id, metrics=metrics, dimensions=breakdown, ranges=[date_range(start, end)],
                              dim_filter=_cluster_filter(dimension, regexes, index, case), totals=not breakdown,
                              row_progress=False)
        ctx.progress(k, n, f"request {k} of {n}")
        pages += report.pages
        if headers is None:
            headers = [Header(name="cluster", type="string", role="dimension",
                              description=f"Cluster of {dimension} (first matching regex; '(other)' matches none)")] + report.headers
        warnings += [w for w in report.warnings if w not in warnings]
        if breakdown:
            rows += [[label, *r] for r in report.rows]
        elif report.totals:
            # No breakdown: the cluster's row is the API's TOTAL of the filtered request (exact for users and rates).
            values = report.totals[0]["values"]
            if index is not None or any(values.get(m) for m in metrics):
                rows.append([label, *(values.get(m) for m in metrics)])
        last = report
    assert headers is not None and last is not None
    overall = fetch_report(ctx, property_id, metrics=metrics, dimensions=[], ranges=[date_range(start, end)], limit=1,
                           row_progress=False)
    ctx.progress(n, n, f"request {n} of {n}")
    if overall.totals:
        totals = overall.totals[0]["values"]
    effective = {**arguments.given(), "dimension": dimension, "metrics": metrics, "dimensions": breakdown, "start_date": start,
                 "end_date": end}
    desc = describe(property_id, metrics, ["cluster", *breakdown], {}) + (
        f" Clusters of {dimension} by regex (first match wins): "
        + "; ".join(f"{n} = /{r}/" for n, r in zip(labels, regexes, strict=True)) + "; (other) = the rest.")
    return Extraction(rows=rows, columns=[h.name for h in headers], headers=headers, description=desc,
                      title=f"GA4 {property_id} · {dimension} clusters · {start}→{end}", dates=[s, e],
                      totals=totals or None, extra={"quota": last.quota} if last.quota else None, warnings=warnings,
                      arguments=effective,
                      source=source(property_id, "analyticsdata.v1beta.runReport", last, pages=pages + overall.pages))
