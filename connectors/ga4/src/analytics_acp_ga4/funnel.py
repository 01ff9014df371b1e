"""run_funnel_report (Data API v1alpha runFunnelReport): steps by event name or page path, open or closed."""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext, Extraction, Header, InvalidArguments

from .clients import call, client, message_to_dict
from .request import check_regex, window
from .typing_map import converter

MATCH = ("EXACT", "BEGINS_WITH", "CONTAINS", "FULL_REGEXP", "PARTIAL_REGEXP")
COLUMNS = {"activeUsers": "active_users", "funnelStepCompletionRate": "completion_rate",
           "funnelStepAbandonments": "abandonments", "funnelStepAbandonmentRate": "abandonment_rate"}


def _step(item: Any, i: int) -> Any:
    from google.analytics.data_v1alpha import (
        FunnelEventFilter,
        FunnelFieldFilter,
        FunnelFilterExpression,
        FunnelStep,
        StringFilter,
    )

    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"].strip():
        raise InvalidArguments(f"steps[{i}] needs a 'name'.")
    event, path = item.get("event_name"), item.get("page_path")
    if bool(event) == bool(path):
        raise InvalidArguments(f"steps[{i}] needs exactly one of 'event_name' or 'page_path'.")
    if event:
        expr = FunnelFilterExpression(funnel_event_filter=FunnelEventFilter(event_name=str(event)))
    else:
        match = str(item.get("match_type") or "EXACT").upper()
        if match not in MATCH:
            raise InvalidArguments(f"steps[{i}].match_type must be one of {', '.join(MATCH)}.")
        if "REGEXP" in match:
            check_regex(str(path), f"steps[{i}].page_path")
        expr = FunnelFilterExpression(funnel_field_filter=FunnelFieldFilter(
            field_name="pagePath", string_filter=StringFilter(match_type=getattr(StringFilter.MatchType, match), value=str(path))))
    return FunnelStep(name=item["name"].strip(), is_directly_followed_by=bool(item.get("directly_followed_by", False)),
                      filter_expression=expr)


def run_funnel_report(arguments: dict[str, Any], ctx: CallContext) -> Extraction:
    """The run_funnel_report tool."""
    from google.analytics.data_v1alpha import DateRange, Funnel, RunFunnelReportRequest

    property_id = ctx.resource_id
    # FUNNEL_SCHEMA (enforced by the core) guarantees 1-10 step objects, each with a string name.
    steps = [_step(item, i) for i, item in enumerate(arguments["steps"])]
    start, end, s, e = window(arguments)
    is_open = bool(arguments.get("is_open_funnel", False))
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
        arguments={**arguments, "is_open_funnel": is_open, "start_date": start, "end_date": end},
        source={"property": f"properties/{property_id}", "api": "analyticsdata.v1alpha.runFunnelReport",
                **({"property_quota": quota} if quota else {})},
    )
