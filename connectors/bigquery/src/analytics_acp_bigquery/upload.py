"""load_rows' resumable upload in chunks of CHUNK_BYTES, for progress and cancellation (issue 28).

The BigQuery client uploads in 100 MB chunks with no hook between them, so a load of more than one
chunk runs the resumable protocol here (initiate, PUT each chunk with its Content-Range, 308 until
the last, whose answer is the load job). Between chunks it reports the rows the server acknowledged
and stops once the call is cancelled: the session is never finalized, so no job runs and no table or
row appears, as when an upload fails.
"""

from __future__ import annotations

import bisect
import uuid
from functools import partial
from typing import Any

from analytics_acp import CallContext
from analytics_acp_google import retry as policy

from . import client as bq

# A multiple of 256 KiB (the API's rule for chunks but the last); Google suggests at least 8 MiB.
CHUNK_BYTES = 8 * 1024 * 1024
GOOGLE_BASE = "https://bigquery.googleapis.com"


class Cancelled(Exception):
    """The client cancelled between two chunks of the upload."""


def _checked(resp: Any) -> Any:
    if resp.status_code >= 400:
        from google.api_core.exceptions import from_http_response

        raise from_http_response(resp)  # mapped by errors.to_acp like the client's own errors
    return resp


def _post(session: Any, url: str, metadata: dict[str, Any], timeouts: tuple[float, float]) -> Any:
    return _checked(session.post(url, json=metadata, timeout=timeouts, allow_redirects=False))


def _put(session: Any, url: str, chunk: bytes, content_range: str, timeouts: tuple[float, float]) -> Any:
    return _checked(session.put(url, data=chunk, headers={"Content-Range": content_range}, timeout=timeouts,
                                allow_redirects=False))


def upload_in_chunks(ctx: CallContext, project: str, metadata: dict[str, Any], data: bytes, ends: list[int]) -> dict[str, Any]:
    """Upload ``data`` (NDJSON; ``ends`` = the offset just past each row) for the load job ``metadata``;
    return the job resource. Raises ``Cancelled`` before a chunk once the call is cancelled."""
    from analytics_acp_google.credentials import build_credentials
    from analytics_acp_google.endpoint import api_endpoint
    from google.auth.transport.requests import AuthorizedSession

    base = api_endpoint(ctx.config) or GOOGLE_BASE
    url = f"{base}/upload/bigquery/v2/projects/{project}/jobs?uploadType=resumable"
    metadata = {**metadata, "jobReference": {"projectId": project, "jobId": f"acp_load_{uuid.uuid4().hex}",
                                             **({"location": bq.location(ctx)} if bq.location(ctx) else {})}}
    host, total, rows = bq.host(ctx), len(data), len(ends)
    with AuthorizedSession(build_credentials(ctx.require_credentials(), bq.SCOPES)) as session:
        session_url = policy.call(partial(_post, session, url, metadata), ctx=ctx, host=host).headers["Location"]
        offset = 0
        while True:
            if offset:
                sent = bisect.bisect_right(ends, offset)
                ctx.progress(sent, rows, f"{sent} of {rows} rows sent")
            if ctx.cancelled:
                raise Cancelled
            end = min(offset + CHUNK_BYTES, total)
            resp = policy.call(partial(_put, session, session_url, data[offset:end], f"bytes {offset}-{end - 1}/{total}"),
                               ctx=ctx, host=host)
            if resp.status_code != 308:
                return dict(resp.json())
            acknowledged = resp.headers.get("Range")  # "bytes=0-N": what the server kept
            offset = int(acknowledged.rpartition("-")[2]) + 1 if acknowledged else 0
