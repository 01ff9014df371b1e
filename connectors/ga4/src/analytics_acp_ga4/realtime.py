"""run_realtime_report: the last minutes of activity (Data API runRealtimeReport), typed, with the API's totals."""

from __future__ import annotations

import datetime as dt

from analytics_acp import CallContext, Extraction

from . import names
from .arguments import RealtimeArguments
from .clients import BadRequest, call, client, message_to_dict
from .report import diagnose_bad_request
from .request import dimension_filter
from .typing_map import converter, dimension_header, metric_header


def run_realtime_report(arguments: RealtimeArguments, ctx: CallContext) -> Extraction:
    """The run_realtime_report tool."""
    from google.analytics.data_v1beta import Dimension, Metric, MetricAggregation, MinuteRange, RunRealtimeReportRequest

    property_id = ctx.require_resource_id()
    warnings: list[str] = []
    metrics = names.apply_aliases(list(arguments.metrics), "metric", warnings)
    dimensions = names.apply_aliases(list(arguments.dimensions), "dimension", warnings)
    start, end = arguments.start_minutes_ago, arguments.end_minutes_ago
    limit = arguments.limit
    request = RunRealtimeReportRequest(
        property=f"properties/{property_id}", dimensions=[Dimension(name=d) for d in dimensions],
        metrics=[Metric(name=m) for m in metrics], minute_ranges=[MinuteRange(start_minutes_ago=start, end_minutes_ago=end)],
        metric_aggregations=[MetricAggregation.TOTAL], return_property_quota=True,
        **({"limit": limit} if limit else {}),
    )
    flt = dimension_filter(arguments.dimension_filters)
    if flt is not None:
        request.dimension_filter = flt
    try:
        resp = call(client(ctx, "data").run_realtime_report, request, resource=property_id, ctx=ctx, raw_400=True)
    except BadRequest as bad:
        diagnose_bad_request(ctx, property_id, metrics, dimensions, bad.exc)
        raise
    headers = [dimension_header(h.name) for h in resp.dimension_headers]
    headers += [metric_header(h.name, h.type_.name, None) for h in resp.metric_headers]
    conv = [converter(h) for h in headers]
    rows = [[f(v.value) for f, v in zip(conv, [*r.dimension_values, *r.metric_values], strict=False)] for r in resp.rows]
    n = len(resp.dimension_headers)
    totals = ({h.name: f(v.value) for h, f, v in zip(headers[n:], conv[n:], resp.totals[0].metric_values, strict=False)}
              if resp.totals else None)
    quota = message_to_dict(resp.property_quota) if "property_quota" in resp else None
    today = dt.date.today().isoformat()
    return Extraction(
        rows=rows, columns=[h.name for h in headers], headers=headers,
        description=(f"GA4 property {property_id} realtime, {start}→{end} minutes ago. Metrics: {', '.join(metrics)}."
                     + (f" Dimensions: {', '.join(dimensions)}." if dimensions else "")),
        title=f"GA4 {property_id} · realtime · last {start + 1} min", dates=[today], totals=totals,
        extra={"quota": quota} if quota else None, warnings=warnings,
        arguments={**arguments.given(), "metrics": metrics, "dimensions": dimensions, "start_minutes_ago": start, "end_minutes_ago": end},
        source={"property": f"properties/{property_id}", "api": "analyticsdata.v1beta.runRealtimeReport",
                "row_count": resp.row_count, **({"property_quota": quota} if quota else {})},
    )
