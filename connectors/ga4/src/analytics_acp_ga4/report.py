"""run_report (8.2, 15.1): page by offset until rowCount rows are read, type the columns, keep the API's totals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from analytics_acp import CallContext, Extraction, Header, InvalidArguments, UpstreamError

from . import names
from .arguments import RunReportArguments
from .clients import BadRequest, call, client, message_to_dict
from .request import date_range, dimension_filter, metric_filter, order_bys, window
from .typing_map import converter, dimension_header, metric_header

# Rows asked per request. Google allows 250,000, but the REST client parses a page whole (JSON text, then
# dicts, then protobuf): 100,000-row pages peaked at 376 MB in the connector (bench case 7), so pages are
# 50,000 rows. The API may return fewer rows per page; paging goes on until rowCount.
PAGE_MAX = 50_000


@dataclass
class Report:
    """A report read to completion."""

    headers: list[Header]
    rows: list[list[Any]]
    row_count: int
    totals: list[dict[str, Any]] = field(default_factory=list)  # one per date range, typed, the API's TOTAL rows
    quota: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    currency_code: str | None = None
    time_zone: str | None = None
    pages: int = 0

    @property
    def columns(self) -> list[str]:
        return [h.name for h in self.headers]


def _quota_merge(total: dict[str, Any] | None, page: dict[str, Any]) -> dict[str, Any]:
    # Tokens consumed add up over pages; remaining is the last page's.
    if not total:
        return page
    out = dict(page)
    for bucket, value in page.items():
        if isinstance(value, dict) and isinstance(total.get(bucket), dict):
            out[bucket] = {**value, "consumed": int(total[bucket].get("consumed", 0)) + int(value.get("consumed", 0))}
    return out


def _metadata_warnings(meta: Any) -> list[str]:
    out = []
    if meta.data_loss_from_other_row:
        out.append("Some dimension values were grouped into an '(other)' row because the property hit a cardinality "
                   "limit; narrow the date range or the dimensions for exact rows.")
    if meta.subject_to_thresholding:
        out.append("GA4 applied thresholding (rows with few users withheld, e.g. with Google signals): row sums may be "
                   "lower than the totals.")
    for sample in meta.sampling_metadatas:
        read, space = int(sample.samples_read_count), int(sample.sampling_space_size)
        pct = f" ({100.0 * read / space:.1f}%)" if space else ""
        out.append(f"GA4 sampled this report: {read} of {space} events read{pct}. Use shorter date ranges for unsampled data.")
    restriction = meta.schema_restriction_response
    if restriction and restriction.active_metric_restrictions:
        restricted = ", ".join(r.metric_name for r in restriction.active_metric_restrictions)
        out.append(f"Some metrics are restricted for these credentials and may be withheld: {restricted}.")
    return out


def diagnose_bad_request(ctx: CallContext, property_id: str, metrics: list[str], dimensions: list[str], exc: Any) -> None:
    """After a 400: unknown names with close matches (metadata), or the clashing fields (checkCompatibility)."""
    from analytics_acp_google.errors import scrub

    meta = names.metadata(ctx, property_id)
    unknown = names.unknown_names_error(metrics, dimensions, meta)
    if unknown is not None:
        raise unknown
    clash = incompatible_fields(ctx, property_id, metrics, dimensions)
    if clash:
        raise InvalidArguments(f"These fields cannot be requested together: {', '.join(clash)} "
                               f"(incompatible with the rest of the request). Remove them or call check_compatibility.",
                               data={"incompatible": clash})
    raise InvalidArguments(f"GA4 refused the request: {scrub(getattr(exc, 'message', str(exc)), 300)}")


def incompatible_fields(ctx: CallContext, property_id: str, metrics: list[str], dimensions: list[str]) -> list[str]:
    """Names checkCompatibility reports as INCOMPATIBLE with the request."""
    from google.analytics.data_v1beta import CheckCompatibilityRequest, Dimension, Metric

    data = client(ctx, "data")
    req = CheckCompatibilityRequest(property=f"properties/{property_id}", dimensions=[Dimension(name=d) for d in dimensions],
                                    metrics=[Metric(name=m) for m in metrics])
    resp = call(data.check_compatibility, req, resource=property_id, ctx=ctx)
    out = [c.dimension_metadata.api_name for c in resp.dimension_compatibilities if c.compatibility.name == "INCOMPATIBLE"]
    out += [c.metric_metadata.api_name for c in resp.metric_compatibilities if c.compatibility.name == "INCOMPATIBLE"]
    return out


class ReportPager:
    """One report read page by page (offset paging until rowCount or ``limit`` rows).

    ``start()`` reads the first page (headers, totals, warnings, rowCount); ``rows()`` then yields
    every row, fetching the next pages as it goes, so a big report streams into the core's table file
    instead of sitting in memory. A page that fails raises from ``rows()``: the call fails, never a
    partial table presented as whole (12.1). ``quota`` (the pager's own) adds up as pages arrive.
    """

    def __init__(self, ctx: CallContext, property_id: str, *, metrics: list[str], dimensions: list[str], ranges: list[Any],
                 dim_filter: Any = None, met_filter: Any = None, orders: list[Any] | None = None, limit: int | None = None,
                 keep_empty_rows: bool = False, currency_code: str | None = None, totals: bool = True,
                 row_progress: bool = True):
        from google.analytics.data_v1beta import Dimension, Metric

        self.ctx, self.property_id, self.limit, self.want_totals = ctx, property_id, limit, totals
        self.row_progress = row_progress  # off when the tool reports its own steps (request k of n)
        self.metrics, self.dimensions = metrics, dimensions
        self.base: dict[str, Any] = {
            "property": f"properties/{property_id}", "dimensions": [Dimension(name=d) for d in dimensions],
            "metrics": [Metric(name=m) for m in metrics], "date_ranges": ranges, "keep_empty_rows": keep_empty_rows,
            "return_property_quota": True,
        }
        for key, value in (("dimension_filter", dim_filter), ("metric_filter", met_filter), ("order_bys", orders or None),
                           ("currency_code", currency_code)):
            if value is not None:
                self.base[key] = value
        self.report: Report | None = None
        self.quota: dict[str, Any] = {}
        self._first: Any = None

    def _page(self, offset: int) -> Any:
        from google.analytics.data_v1beta import MetricAggregation, RunReportRequest

        want = PAGE_MAX if self.limit is None else min(PAGE_MAX, self.limit - offset)
        extra = {"metric_aggregations": [MetricAggregation.TOTAL]} if (offset == 0 and self.want_totals) else {}
        request = RunReportRequest(**self.base, offset=offset, limit=want, **extra)
        try:
            resp = call(client(self.ctx, "data").run_report, request, resource=self.property_id, ctx=self.ctx, raw_400=True)
        except BadRequest as bad:
            diagnose_bad_request(self.ctx, self.property_id, self.metrics, self.dimensions, bad.exc)
            raise  # pragma: no cover - diagnose always raises
        if "property_quota" in resp:
            merged = _quota_merge(self.quota or None, message_to_dict(resp.property_quota))
            self.quota.clear()
            self.quota.update(merged)
        return resp

    def start(self) -> Report:
        """Read the first page: headers typed from the response, the API's totals, warnings, rowCount."""
        resp = self._page(0)
        pb = type(resp).pb(resp)  # raw protobuf: much faster than proto-plus wrappers for big pages
        currency = pb.metadata.currency_code or None
        headers = [dimension_header(h.name) for h in pb.dimension_headers]
        headers += [metric_header(h.name, _metric_type_name(h.type_), currency) for h in pb.metric_headers]
        self.converters = [converter(h) for h in headers]
        self.n_dims = len(pb.dimension_headers)
        self.report = Report(headers=headers, rows=[], row_count=pb.row_count, currency_code=currency,
                             time_zone=pb.metadata.time_zone or None, warnings=_metadata_warnings(resp.metadata), pages=1)
        self.report.totals = _typed_totals(pb, headers, self.converters)
        from .resources import remember_settings

        remember_settings(self.ctx, self.property_id, self.report.time_zone, currency)
        self.report.quota = self.quota
        self._first = pb
        return self.report

    def rows(self) -> Iterator[list[Any]]:
        """Every row as a typed list, first page first; later pages are fetched while iterating."""
        assert self.report is not None, "start() first"
        report, pb, offset = self.report, self._first, 0
        self._first = None
        dim_conv, met_conv = self.converters[: self.n_dims], self.converters[self.n_dims:]
        while True:
            for row in pb.rows:
                yield ([f(v.value) for f, v in zip(dim_conv, row.dimension_values, strict=False)]
                       + [f(v.value) for f, v in zip(met_conv, row.metric_values, strict=False)])
            got = len(pb.rows)
            offset += got
            target = report.row_count if self.limit is None else min(report.row_count, self.limit)
            if self.row_progress:
                self.ctx.progress(offset, target, f"{offset} of {target} rows ({report.pages} page{'s' if report.pages > 1 else ''})")
            if offset >= target:
                return
            if got == 0:
                # Never present a partial table as whole (12.1).
                raise UpstreamError(f"GA4 returned an empty page at offset {offset} of {report.row_count} rows; the "
                                    "report changed while paging. Run it again.")
            del pb  # let the previous page go before the next one is parsed
            resp = self._page(offset)
            pb = type(resp).pb(resp)
            report.pages += 1


def fetch_report(ctx: CallContext, property_id: str, **kwargs: Any) -> Report:
    """Run a report and read every page into memory (small reports: blocks, clusters, conversion models)."""
    pager = ReportPager(ctx, property_id, **kwargs)
    report = pager.start()
    report.rows = list(pager.rows())
    return report


def _metric_type_name(value: int) -> str:
    from google.analytics.data_v1beta import MetricType

    try:
        return MetricType(value).name
    except ValueError:
        return "TYPE_FLOAT"


def _typed_totals(pb: Any, headers: list[Header], converters: list[Any]) -> list[dict[str, Any]]:
    n_dims = len(pb.dimension_headers)
    names_ = [h.name for h in headers[n_dims:]]
    out = []
    for row in pb.totals:
        values = {n: f(v.value) for n, f, v in zip(names_, converters[n_dims:], row.metric_values, strict=False)}
        label = next((v.value for v in row.dimension_values if v.value and not v.value.startswith("RESERVED_")), None)
        out.append({"range": label, "values": values})
    return out


def run_report(arguments: RunReportArguments, ctx: CallContext) -> Extraction:
    """The run_report tool."""
    property_id = ctx.require_resource_id()
    warnings: list[str] = []
    metrics = names.apply_aliases(list(arguments.metrics), "metric", warnings)
    dimensions = names.apply_aliases(list(arguments.dimensions), "dimension", warnings)
    start, end, s, e = window(arguments.start_date, arguments.end_date)
    effective = {**arguments.given(), "metrics": metrics, "dimensions": dimensions, "start_date": start, "end_date": end}
    ranges = [date_range(start, end)]
    dates = [s, e]
    compare = arguments.compare_start_date  # the model refused one bound without the other
    if compare:
        cstart, cend, cs, ce = window(arguments.compare_start_date, arguments.compare_end_date, "compare_")
        ranges = [date_range(start, end, "current"), date_range(cstart, cend, "compare")]
        dates += [cs, ce]
    limit = arguments.limit

    def dim_alias(name: str) -> str:
        return names.apply_aliases([name], "dimension", warnings)[0]

    def met_alias(name: str) -> str:
        return names.apply_aliases([name], "metric", warnings)[0]

    pager = ReportPager(
        ctx, property_id, metrics=metrics, dimensions=dimensions, ranges=ranges,
        dim_filter=dimension_filter(arguments.dimension_filters, dimension_aliases=dim_alias),
        met_filter=metric_filter(arguments.metric_filters, metric_aliases=met_alias),
        orders=order_bys(arguments.order_bys, metrics, dimensions), limit=limit,
        keep_empty_rows=arguments.keep_empty_rows, currency_code=arguments.currency_code,
    )
    report = pager.start()
    warnings += report.warnings
    if limit is not None and report.row_count > limit:
        warnings.append(f"Extracted the first {limit} of {report.row_count} rows (limit {limit}).")
    totals, extra = _split_totals(report)

    # Pages and quota are known only once the rows (streamed into the core's table file) are consumed:
    # source and extra are handed over as callables the core calls then (declarations.Extraction).
    def final_source() -> dict[str, Any]:
        return {**source(property_id, "analyticsdata.v1beta.runReport", report), "property_quota": dict(pager.quota)}

    def final_extra() -> dict[str, Any]:
        return {**extra, "quota": dict(pager.quota)}

    return Extraction(
        rows=pager.rows(), columns=report.columns, headers=report.headers,
        description=describe(property_id, metrics, dimensions, effective, compare=dates[2:] if compare else None),
        title=f"GA4 {property_id} · {start}→{end}", dates=dates, totals=totals or None, extra=final_extra,
        warnings=warnings, arguments=effective, source=final_source,
    )


def _split_totals(report: Report) -> tuple[dict[str, Any], dict[str, Any]]:
    """Totals of the (first) date range for ``totals``; the comparison range's go to extra.compare_totals."""
    if not report.totals:
        return {}, {}
    if len(report.totals) == 1:
        return report.totals[0]["values"], {}
    by_label = {t["range"]: t["values"] for t in report.totals}
    current = by_label.get("current", report.totals[0]["values"])
    other = by_label.get("compare", report.totals[-1]["values"])
    return current, {"compare_totals": other}


def describe(property_id: str, metrics: list[str], dimensions: list[str], arguments: dict[str, Any],
             compare: list[str] | None = None) -> str:
    """8.2's description: "GA4 property 123. Metrics: …. Dimensions: …. Filter: …"."""
    parts = [f"GA4 property {property_id}.", f"Metrics: {', '.join(metrics)}."]
    if dimensions:
        parts.append(f"Dimensions: {', '.join(dimensions)}.")
    filters = []
    for key in ("dimension_filters", "metric_filters"):
        if arguments.get(key):
            filters.append(f"{key} {json.dumps(arguments[key], separators=(',', ':'), ensure_ascii=False)}")
    if filters:
        parts.append(f"Filter: {'; '.join(filters)}.")
    if compare:
        parts.append(f"Compared with {compare[0]}→{compare[1]} (dateRange column).")
    return " ".join(parts)


def source(property_id: str, api: str, report: Report, pages: int | None = None) -> dict[str, Any]:
    """system_info.source (8.4): property, API, rowCount, pages (``pages`` when several reports made one table),
    currency, time zone, property_quota."""
    out: dict[str, Any] = {"property": f"properties/{property_id}", "api": api, "row_count": report.row_count,
                           "pages": report.pages if pages is None else pages}
    if report.currency_code:
        out["currency_code"] = report.currency_code
    if report.time_zone:
        out["time_zone"] = report.time_zone
    if report.quota:
        out["property_quota"] = report.quota
    return out

