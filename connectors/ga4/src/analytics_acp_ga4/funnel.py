"""run_funnel_report (Data API v1alpha runFunnelReport): steps by event name or page path, open or closed."""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext, Extraction, Header

from .arguments import FunnelArguments, FunnelStep
from .clients import call, client, message_to_dict
from .request import window
from .typing_map import converter

COLUMNS = {"activeUsers": "active_users", "funnelStepCompletionRate": "completion_rate",
           "funnelStepAbandonments": "abandonments", "funnelStepAbandonmentRate": "abandonment_rate"}


def _step(item: FunnelStep) -> Any:
    from google.analytics.data_v1alpha import (
        FunnelEventFilter,
        FunnelFieldFilter,
        FunnelFilterExpression,
        StringFilter,
    )
    from google.analytics.data_v1alpha import (
        FunnelStep as ApiStep,
    )

    # The model checked a name, exactly one of event_name/page_path, the match type and a page_path regex.
    if item.event_name:
        expr = FunnelFilterExpression(funnel_event_filter=FunnelEventFilter(event_name=item.event_name))
    else:
        expr = FunnelFilterExpression(funnel_field_filter=FunnelFieldFilter(
            field_name="pagePath",
            string_filter=StringFilter(match_type=getattr(StringFilter.MatchType, item.match_type), value=item.page_path)))
    return ApiStep(name=item.name.strip(), is_directly_followed_by=item.directly_followed_by, filter_expression=expr)


def run_funnel_report(arguments: FunnelArguments, ctx: CallContext) -> Extraction:
    """The run_funnel_report tool."""
    from google.analytics.data_v1alpha import DateRange, Funnel, RunFunnelReportRequest

    property_id = ctx.resource_id
    steps = [_step(item) for item in arguments.steps]
    start, end, s, e = window(arguments.start_date, arguments.end_date)
    is_open = arguments.is_open_funnel
    request = RunFunnelReportRequest(property=f"properties/{property_id}",
                                     date_ranges=[DateRange(start_date=start, end_date=end)],
                                     funnel=Funnel(is_open_funnel=is_open, steps=steps), return_property_quota=True)
    resp = call(client(ctx, "data_alpha").run_funnel_report, request, resource=property_id, ctx=ctx)
    table = resp.funnel_table
    headers = [Header("step", "string", "dimension", "Funnel step (position. name)")]
    metric_names = [h.name for h in table.metric_headers]
    for h in table.metric_headers:
        kind = "integer" if h.type_.name == "TYPE_INTEGER" else "number"
        headers.append(Header(COLUMNS.get(h.name, h.name), kind, "metric", f"GA4 {h.name}" + (" (0-1)" if "Rate" in h.name else "")))  # type: ignore[arg-type]
    conv = [converter(h) for h in headers[1:]]
    n_dims = len(table.dimension_headers)
    rows = []
    for r in table.rows:
        label = r.dimension_values[0].value if r.dimension_values else ""
        if n_dims > 1 and any(v.value not in ("", "RESERVED_TOTAL") for v in r.dimension_values[1:]):
            continue  # breakdown rows are not requested; keep the per-step totals
        rows.append([label, *(f(v.value) for f, v in zip(conv, r.metric_values, strict=False))])
    quota = message_to_dict(resp.property_quota) if "property_quota" in resp else None
    kind = "open" if is_open else "closed"
    return Extraction(
        rows=rows, columns=[h.name for h in headers], headers=headers,
        description=(f"GA4 property {property_id} {kind} funnel ({len(steps)} steps: "
                     + " → ".join(st.name for st in steps) + f"). Metrics: {', '.join(metric_names)}. Dimensions: funnelStepName."),
        title=f"GA4 {property_id} · funnel · {start}→{end}", dates=[s, e], extra={"quota": quota} if quota else None,
        arguments={**arguments.given(), "is_open_funnel": is_open, "start_date": start, "end_date": end},
        source={"property": f"properties/{property_id}", "api": "analyticsdata.v1alpha.runFunnelReport",
                **({"property_quota": quota} if quota else {})},
    )
