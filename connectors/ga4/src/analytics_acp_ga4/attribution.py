"""compare_conversion_models: key events and revenue per channel under three views of credit.

first user (firstUserDefaultChannelGroup), session (sessionDefaultChannelGroup) and the property's
reporting attribution model (defaultChannelGroup, the attribution-scoped dimension). Shares are
each channel's part of that view's total, so the model sees credit move between views.
"""

from __future__ import annotations

from analytics_acp import CallContext, Extraction, Header

from .arguments import ConversionModelsArguments
from .report import fetch_report, source
from .request import date_range, window

MODELS = [("first_user", "firstUserDefaultChannelGroup"), ("session", "sessionDefaultChannelGroup"),
          ("attributed", "defaultChannelGroup")]


def compare_conversion_models(arguments: ConversionModelsArguments, ctx: CallContext) -> Extraction:
    """The compare_conversion_models tool."""
    property_id = ctx.require_resource_id()
    events = list(arguments.key_events)
    key_metrics = [f"keyEvents:{e}" for e in events] or ["keyEvents"]
    metrics = [*key_metrics, "totalRevenue"]
    start, end, s, e = window(arguments.start_date, arguments.end_date)
    by_model: dict[str, dict[str, tuple[float, float]]] = {}
    totals: dict[str, tuple[float, float]] = {}
    last = None
    pages = 0
    # Issue 28: request k of n; a cancelled call sends no further request (its budget raises, retry.py).
    for k, (model, dimension) in enumerate(MODELS, 1):
        report = fetch_report(ctx, property_id, metrics=metrics, dimensions=[dimension], ranges=[date_range(start, end)],
                              row_progress=False)
        ctx.progress(k, len(MODELS), f"request {k} of {len(MODELS)}")
        pages += report.pages
        table = by_model.setdefault(model, {})
        for row in report.rows:
            key_events = sum(v or 0 for v in row[1:-1])
            table[row[0]] = (key_events, row[-1] or 0)
        t = report.totals[0]["values"] if report.totals else {}
        totals[model] = (sum(t.get(m) or 0 for m in key_metrics), t.get("totalRevenue") or 0)
        last = report
    assert last is not None
    channels = sorted({c for table in by_model.values() for c in table},
                      key=lambda c: -by_model["attributed"].get(c, (0, 0))[0])
    headers = [Header("channel", "string", "dimension", "Default channel group")]
    for model, dimension in MODELS:
        headers.append(Header(f"key_events_{model}", "number", "metric", f"Key events credited by {dimension}"))
    for model, _ in MODELS:
        headers.append(Header(f"share_{model}", "number", "metric", f"Share of the {model} view's key events (0-1)"))
    for model, dimension in MODELS:
        headers.append(Header(f"revenue_{model}", "number", "metric", f"Total revenue credited by {dimension}"))
    headers.append(Header("share_shift_first_user_to_attributed", "number", "metric",
                          "share_attributed minus share_first_user: credit gained (+) or lost (-) under the reporting model"))
    rows = []
    for channel in channels:
        ke = [by_model[m].get(channel, (0, 0))[0] for m, _ in MODELS]
        shares = [round(k / totals[m][0], 4) if totals[m][0] else 0.0 for k, (m, _) in zip(ke, MODELS, strict=True)]
        revenue = [by_model[m].get(channel, (0, 0))[1] for m, _ in MODELS]
        rows.append([channel, *ke, *shares, *revenue, round(shares[2] - shares[0], 4)])
    last.pages = pages
    named = ", ".join(events) if events else "all key events"
    return Extraction(
        rows=rows, columns=[h.name for h in headers], headers=headers,
        description=(f"GA4 property {property_id}. Metrics: {', '.join(metrics)} ({named}). Dimensions: channel under "
                     "firstUserDefaultChannelGroup, sessionDefaultChannelGroup and defaultChannelGroup (reporting attribution)."),
        title=f"GA4 {property_id} · conversion models · {start}→{end}", dates=[s, e],
        totals={f"key_events_{m}": totals[m][0] for m, _ in MODELS} | {f"revenue_{m}": totals[m][1] for m, _ in MODELS},
        extra={"quota": last.quota} if last.quota else None,
        arguments={**arguments.given(), "key_events": events, "start_date": start, "end_date": end},
        source=source(property_id, "analyticsdata.v1beta.runReport", last),
    )
