"""execute_query: run one read-only SELECT under a hard byte cap and stream its pages (8.2, 8.5, 9.2, 15.3).

The preflight already dry-ran the query (statement type, tables, estimate). The job runs with
``maximumBytesBilled`` derived from cost_limit_usd (the second fence: BigQuery itself refuses
to bill more) and labels naming the connector and tool. Rows are read a page at a time from
jobs.getQueryResults and converted straight from the page's JSON, so a million-row result is
never held in memory: the core writes each batch to the table file as it comes. A page that
fails half-way raises, and the core then delivers no table at all.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

from analytics_acp import CallContext, Extraction, Header, UpstreamError
from analytics_acp_google import retry as policy

from . import client as bq
from . import costs, dryrun, types_map
from .arguments import QueryArguments
from .errors import to_acp
from .lookup import Finder
from .resource_ids import BqRef
from .sqltext import apply_window, compact_sql, sql_dates

log = logging.getLogger(__name__)

PAGE_ROWS = 10_000


def run_execute_query(arguments: QueryArguments, ctx: CallContext) -> Extraction:
    """Run the query (after the preflight) and return a streaming Extraction."""
    from google.cloud import bigquery

    sql, window = apply_window(arguments.query, arguments.start_date, arguments.end_date)
    ref = bq.call_ref(ctx)
    dry = dryrun.recall(ctx, sql)
    if dry is None:  # called without the core's preflight (direct use): same checks, same order
        dry = dryrun.run(ctx, sql, ref)
        dryrun.check_read_only(dry)
        dryrun.check_tables(ctx, dry)
    price = costs.price_per_tib(ctx.config or {})
    max_bytes = costs.maximum_bytes_billed(float(ctx.cost_limit_usd or 0), price)
    project = bq.billing_project(ctx, ref)
    client = bq.client_for(ctx, project)
    config = bigquery.QueryJobConfig(labels=dryrun.labels(ctx.tool), use_query_cache=True,
                                     job_timeout_ms=int(bq.job_timeout_s() * 1000))
    if max_bytes is not None:
        config.maximum_bytes_billed = max_bytes
    dataset = dryrun.default_dataset(ref)
    if dataset:
        config.default_dataset = dataset
    where = bq.location(ctx) or dry.location

    def fail(exc: BaseException) -> Exception:
        return to_acp(exc, resource=ctx.resource_id, limit_usd=ctx.cost_limit_usd, max_bytes=max_bytes,
                      finder=Finder(ctx, client), ctx=ctx)

    job = None
    try:
        job = bq.call(ctx, client.query, sql, job_config=config, location=where, project=project, job_retry=None)
        ctx.on_cancel(partial(_cancel_in_background, job))  # the client cancelled: the job's cost stops there
        ctx.progress(0, None, f"job {job.job_id} running")
        # Wait for the job (its own bound: a legitimately long job polls; the call's budget gets the wait back),
        # then page with the call's per-request timeouts.
        started = time.monotonic()
        try:
            job.result(max_results=0, retry=bq.poll_retry(ctx), timeout=bq.job_timeout_s(), job_retry=None)
        finally:
            policy.budget(ctx).extend(time.monotonic() - started)
        pages = bq.call(ctx, job.result, page_size=PAGE_ROWS, job_retry=None, read_timeout=True)
    except concurrent.futures.TimeoutError:
        _cancel(job)
        raise UpstreamError(
            f"The query did not finish within {bq.job_timeout_s():.0f} s and was cancelled. "
            "Narrow it (fewer rows or columns, a shorter date range) or aggregate in SQL."
        ) from None
    except Exception as exc:
        raise fail(exc) from None
    schema = [f.to_api_repr() for f in (pages.schema or [])]
    headers = [Header(name=f["name"], type=types_map.acp_type(f), description=f.get("description")) for f in schema]  # type: ignore[arg-type]
    billed = int(job.total_bytes_billed or 0)
    processed = int(job.total_bytes_processed or 0)
    cache_hit = bool(job.cache_hit)
    subject = ctx.resource_id or project
    return Extraction(
        rows=_stream(pages, types_map.row_converter(schema), fail, ctx),
        columns=[f["name"] for f in schema],
        headers=headers,
        description=f"BigQuery {_describe(ref, project)}. SQL: {compact_sql(sql)}",
        title=f"BigQuery · {subject}",
        dates=window or sql_dates(sql),
        extra={"bytes_processed": processed, "cache_hit": cache_hit},
        source={
            "job_id": job.job_id,
            "location": job.location,
            "project": project,
            "statement_type": dry.statement_type,
            "total_bytes_processed": processed,
            "total_bytes_billed": billed,
            "maximum_bytes_billed": max_bytes,
            "cache_hit": cache_hit,
        },
        cost_actual_usd=0.0 if cache_hit else costs.usd(billed, price),
        arguments=arguments.given(),
    )


def _describe(ref: BqRef | None, project: str) -> str:
    if ref is None:
        return f"project {project}"
    if ref.table:
        return f"table {ref.id}"
    return f"dataset {ref.id}" if ref.dataset else f"project {ref.project}"


def _stream(pages: Any, convert: Any, fail: Any, ctx: CallContext) -> Iterator[tuple]:
    """Rows page by page, straight from each page's JSON (``page.raw_page``); errors become typed ACP errors.
    Progress is rows read of the job's totalRows; a cancelled call reads no further page."""
    total = int(pages.total_rows) if getattr(pages, "total_rows", None) is not None else None
    done = 0
    try:
        for page in pages.pages:
            raw = page.raw_page or {}
            rows = raw.get("rows") or ()
            yield from map(convert, rows)
            done += len(rows)
            ctx.progress(done, total, f"{done} of {total} rows" if total is not None else f"{done} rows")
            if ctx.cancelled:
                raise UpstreamError("The query was cancelled while its results were read.")
    except UpstreamError:
        raise
    except Exception as exc:
        raise fail(exc) from None


def _cancel_in_background(job: Any) -> None:
    # on_cancel callbacks run on the event loop: jobs.cancel is an HTTP request, so it gets its own thread.
    threading.Thread(target=_cancel, args=(job,), name="analytics-acp-bq-cancel", daemon=True).start()


def _cancel(job: Any) -> None:
    if job is None:
        return
    try:
        job.cancel(retry=None, timeout=(2.0, 5.0))
    except Exception as exc:  # the timeout is the error to report
        log.debug("job cancel failed: %s", type(exc).__name__)
