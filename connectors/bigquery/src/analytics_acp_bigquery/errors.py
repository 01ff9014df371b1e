"""BigQuery failures -> typed ACP errors (12.1), refining the shared Google mapping.

- ``bytesBilledLimitExceeded`` (the client raises it as a 500) -> ACP_COST_LIMIT_EXCEEDED: the second fence held.
- 404 "not found in location X" -> ACP_RESOURCE_NOT_FOUND naming the dataset's own location.
- ``invalidQuery`` / ``invalid`` (400) -> ACP_INVALID_ARGUMENTS with BigQuery's message.
- 403 ``quotaExceeded``/``rateLimitExceeded`` -> ACP_UPSTREAM_ERROR with advice; other 403 -> ACP_RESOURCE_NOT_FOUND.
- 401, refresh failures -> ACP_CREDENTIALS_INVALID; timeouts, 5xx -> ACP_UPSTREAM_ERROR (shared mapping).
Messages never carry credentials: only BigQuery's own text, which names tables, not tokens.
"""

from __future__ import annotations

import concurrent.futures
import re
from typing import Any

from analytics_acp import AcpError, CostLimitExceeded, InvalidArguments, ResourceNotFound, UpstreamError

_LOCATION = re.compile(r"not found in location ([A-Za-z0-9-]+)", re.IGNORECASE)
_DATASET = re.compile(r"Dataset ([A-Za-z0-9.:_-]+)")


def reasons(exc: BaseException) -> list[str]:
    """The ``reason`` of every error item BigQuery attached to ``exc``."""
    out = []
    for item in getattr(exc, "errors", None) or []:
        if isinstance(item, dict) and item.get("reason"):
            out.append(str(item["reason"]))
    return out


def engine_message(exc: BaseException) -> str:
    """BigQuery's own message, without the client's job/location footer."""
    for item in getattr(exc, "errors", None) or []:
        if isinstance(item, dict) and item.get("message"):
            return str(item["message"])
    text = str(getattr(exc, "message", None) or exc)
    return text.split("\n\nLocation:")[0].strip()


def to_acp(exc: BaseException, *, resource: str | None = None, limit_usd: float | None = None,
           max_bytes: int | None = None, locate: Any = None) -> AcpError:
    """Map ``exc``; ``locate(dataset_id)`` may return a dataset's location for the not-found-in-location message."""
    if isinstance(exc, AcpError):
        return exc
    cause = getattr(exc, "cause", None)
    if type(exc).__name__ == "RetryError" and isinstance(cause, Exception):
        exc = cause  # retries ran out (bounded deadline): report what kept failing, e.g. a rate limit
    why = reasons(exc)
    code = getattr(exc, "code", None)
    message = engine_message(exc)
    if "bytesBilledLimitExceeded" in why:
        return CostLimitExceeded(
            f"BigQuery stopped the query before billing it: it needs more than the cost limit allows ({message}). "
            "Narrow the query (fewer columns, shorter date range, filter by partition) or ask the user to raise the limit.",
            {"limit_usd": limit_usd, "maximum_bytes_billed": max_bytes},
        )
    if "quotaExceeded" in why or "rateLimitExceeded" in why or code == 429:
        which = "rate limit" if "rateLimitExceeded" in why or code == 429 else "quota"
        return UpstreamError(
            f"BigQuery {which} exceeded ({message}). Wait a minute and retry; if it persists, the project's quota "
            "must be raised in the Google Cloud console or the query made cheaper."
        )
    if code == 404:
        where = _LOCATION.search(message)
        if where:
            return ResourceNotFound(_location_message(message, where.group(1), locate))
    if code == 400 and ("invalidQuery" in why or "invalid" in why):
        return InvalidArguments(f"BigQuery rejected the query: {message} Fix the SQL (validate_query shows the error position).")
    if isinstance(exc, concurrent.futures.TimeoutError):
        return UpstreamError("BigQuery did not answer in time. Retry later, or narrow the query so it runs faster.")
    from analytics_acp_google.errors import to_acp_error

    return to_acp_error(exc, resource=resource)


def _location_message(message: str, job_location: str, locate: Any) -> str:
    dataset = _DATASET.search(message)
    actual = None
    if dataset and locate is not None:
        try:
            actual = locate(dataset.group(1).replace(":", "."))
        except Exception:
            actual = None
    where = f"The dataset is in {actual}, but the job ran in {job_location}. " if actual else f"The job ran in {job_location}. "
    return (
        f"{message}. {where}A job must run in its data's location: ask the user to leave config.location empty "
        f"(the data's own location is then used){f' or set it to {actual}' if actual else ''}."
    )
