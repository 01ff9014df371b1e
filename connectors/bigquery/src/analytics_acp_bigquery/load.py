"""load_rows (8.8.2, 10.6): append a host table (table_ref) to a BigQuery table with a load job.

Order matters: the access mode (access_mode, then table_rules, first match wins) is checked
before any request, so in onlyRead nothing reaches BigQuery or the host. The job is always
WRITE_APPEND (never WRITE_TRUNCATE); a missing table is created from the typed headers only
when create_if_missing is set. A load job is all or nothing on BigQuery's side.

Progress (issue 28) is rows sent of the total, per uploaded chunk; a cancel stops before the next
chunk (the resumable session is never finalized, so no job runs and no table or row appears, as when
an upload fails), or cancels the load job once the upload is done (jobs.cancel: nothing committed).
"""

from __future__ import annotations

import io
import json
from functools import partial
from itertools import accumulate
from typing import Any

import anyio
from analytics_acp import CallContext, Info, InvalidArguments, UpstreamError
from analytics_acp_google import retry as policy

from . import client as bq
from . import upload
from .arguments import LoadRowsArguments
from .errors import to_acp
from .execute import _cancel_in_background
from .resource_ids import BqRef, resolve_table
from .types_map import BQ_TYPE_FOR

# The upload's own retries (google-resumable-media: 1 s, 2 s backoff); its default of 6 waits about a minute.
UPLOAD_RETRIES = 2


async def run_load_rows(arguments: LoadRowsArguments, ctx: CallContext) -> Info:
    """Check access, read the host table, run the load job; report rows appended."""
    ctx.require_credentials()
    ref = arguments.table_ref
    base = bq.call_ref(ctx)
    target = resolve_table(arguments.table, base)
    if target.is_wildcard:
        raise InvalidArguments(f"{target.id} is a wildcard; load_rows appends to one table.")
    ctx.check_access(target.id, "add")  # 10.6: before the host or BigQuery is asked anything
    host = await ctx.read_table(ref)
    if not host.columns:
        raise InvalidArguments(f"Host table {ref!r} has no columns; nothing to load.")
    create = arguments.create_if_missing
    result = await anyio.to_thread.run_sync(_load, ctx, target, host, create)
    return Info(data={"table": target.id, "table_ref": ref, **result}, title=f"load_rows · {target.id}",
                source={"job_id": result.get("job_id"), "location": result.get("location")})


def _load(ctx: CallContext, target: BqRef, host: Any, create: bool) -> dict[str, Any]:
    from google.api_core.exceptions import NotFound
    from google.cloud import bigquery

    project = bq.billing_project(ctx, target)
    client = bq.client_for(ctx, project)
    table_id = target.id
    created = False
    try:
        table = bq.call(ctx, client.get_table, table_id)
    except NotFound:
        table = None
    except Exception as exc:
        raise to_acp(exc, resource=table_id, ctx=ctx) from None
    config = bigquery.LoadJobConfig(
        source_format=bigquery.SourceFormat.NEWLINE_DELIMITED_JSON,
        write_disposition=bigquery.WriteDisposition.WRITE_APPEND,
        labels={"acp_connector": "bigquery", "acp_tool": "load_rows"},
    )
    if table is None:
        if not create:
            raise InvalidArguments(
                f"Table {table_id} does not exist. Set create_if_missing: true to create it from the dataset's columns, "
                f"or call autocontext for {target.project}.{target.dataset} to see the tables."
            )
        config.create_disposition = bigquery.CreateDisposition.CREATE_IF_NEEDED
        config.schema = [bigquery.SchemaField(name, BQ_TYPE_FOR.get(host.header_type(name) or "string", "STRING"))
                         for name in host.columns]
        created = True
    else:
        config.create_disposition = bigquery.CreateDisposition.CREATE_NEVER
        known = {f.name for f in table.schema}
        unknown = [c for c in host.columns if c not in known]
        if unknown:
            raise InvalidArguments(
                f"Columns {', '.join(unknown)} of the dataset are not in {table_id} (columns: {', '.join(sorted(known))}). "
                "Rename them in the dataset (for example with a query) before loading."
            )
        config.autodetect = False  # the table's schema (what load_table_from_json sent)
    texts = {c for c in host.columns if (host.header_type(c) or "string") == "string"}
    lines = [json.dumps(_plain(row, host.columns, texts), ensure_ascii=False).encode() for row in host.rows]
    data = b"\n".join(lines)
    try:
        if len(data) > upload.CHUNK_BYTES:  # several chunks: progress and cancel between them
            metadata = {"configuration": {**config.to_api_repr()}}
            metadata["configuration"]["load"]["destinationTable"] = {
                "projectId": target.project, "datasetId": target.dataset, "tableId": target.table}
            ends = list(accumulate(len(line) + 1 for line in lines))  # offset just past each row
            job = client.job_from_resource(upload.upload_in_chunks(ctx, project, metadata, data, ends))
        else:  # one request (multipart under 5 MB)
            job = client.load_table_from_file(io.BytesIO(data), table_id, size=len(data), job_config=config,
                                              project=project, num_retries=UPLOAD_RETRIES,
                                              timeout=policy.budget(ctx).timeouts()[1], location=bq.location(ctx) or None)
        ctx.progress(len(lines), len(lines), f"{len(lines)} of {len(lines)} rows sent; load job {job.job_id}")
        ctx.on_cancel(partial(_cancel_in_background, job))  # a load job is atomic: cancelled, it commits nothing
        job.result(retry=bq.poll_retry(ctx), timeout=bq.job_timeout_s())
    except upload.Cancelled:
        raise UpstreamError(f"The load into {table_id} was cancelled before its last chunk; nothing was loaded.") from None
    except Exception as exc:
        raise to_acp(exc, resource=table_id, ctx=ctx) from None
    return {"rows_appended": int(job.output_rows or 0), "created": created, "write_disposition": "WRITE_APPEND",
            "job_id": job.job_id, "location": job.location}


def _plain(row: dict[str, Any], columns: list[str], texts: set[str]) -> dict[str, Any]:
    """The row with only the dataset's columns; nulls (and empty non-text cells) left out: a missing key loads as NULL."""
    return {c: v for c in columns if (v := row.get(c)) is not None and (v != "" or c in texts)}
