"""BigQuery failures -> typed ACP errors (12.1), refining the shared Google mapping.

- ``bytesBilledLimitExceeded`` (the client raises it as a 500) -> ACP_COST_LIMIT_EXCEEDED: the second fence held.
- 404 on a dataset/table -> ACP_RESOURCE_NOT_FOUND naming it in full with close names the account can see;
  the location advice only when the dataset exists in another location than the job's.
- ``invalidQuery`` / ``invalid`` (400) -> ACP_INVALID_ARGUMENTS with BigQuery's message.
- 403 ``quotaExceeded``/``rateLimitExceeded`` -> ACP_UPSTREAM_ERROR with advice; other 403 -> ACP_RESOURCE_NOT_FOUND.
- 401, rejected credentials -> ACP_CREDENTIALS_INVALID; unreachable, timeouts, 5xx -> ACP_UPSTREAM_ERROR (shared
  mapping); a 403 names the account and the roles to grant.
Messages never carry credentials: only BigQuery's own text, which names tables, not tokens.
"""

from __future__ import annotations

import concurrent.futures
import re
from typing import Any

from analytics_acp import AcpError, CostLimitExceeded, InvalidArguments, ResourceNotFound, UpstreamError

_LOCATION = re.compile(r"not found in location ([A-Za-z0-9-]+)", re.IGNORECASE)
_MISSING = re.compile(r"Not found: (Dataset|Table) ([A-Za-z0-9.:_$-]+)")


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
           max_bytes: int | None = None, finder: Any = None, ctx: Any = None) -> AcpError:
    """Map ``exc``; ``finder`` (lookup.Finder) looks up locations and close names for a not-found message,
    ``ctx`` names the account in a 403."""
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
        missing = _MISSING.search(message)
        if missing:
            return ResourceNotFound(_not_found_message(missing.group(1), missing.group(2).replace(":", "."),
                                                       _LOCATION.search(message), finder))
    if code == 400 and ("invalidQuery" in why or "invalid" in why):
        return InvalidArguments(f"BigQuery rejected the query: {message} Fix the SQL (validate_query shows the error position).")
    if isinstance(exc, concurrent.futures.TimeoutError):
        return UpstreamError("BigQuery did not answer in time. Retry later, or narrow the query so it runs faster.")
    from analytics_acp_google.credentials import account_of
    from analytics_acp_google.errors import to_acp_error

    from .client import GRANT, host

    return to_acp_error(exc, resource=resource, account=account_of(getattr(ctx, "credentials", None)), grant=GRANT,
                        host=host(ctx) if ctx is not None else None)


def _not_found_message(kind: str, name: str, job_location: Any, finder: Any) -> str:
    """'Dataset p.d does not exist …' with close names, or the location advice when it lives elsewhere."""
    parts = name.split(".")
    dataset_id = ".".join(parts[:2])
    actual = finder.location(dataset_id) if finder is not None and len(parts) >= 2 else None
    where = job_location.group(1) if job_location else None
    if kind == "Dataset" and actual and where and actual.upper() != where.upper():
        return (f"Dataset {dataset_id} is in {actual}, but the job ran in {where}. A job must run in its data's location: "
                f"ask the user to leave config.location empty (the data's own location is then used) or set it to {actual}.")
    if kind == "Table" and actual and len(parts) == 3:
        close = _close(parts[2], finder.tables(dataset_id) if finder is not None else [])
        hint = f" Close names: {', '.join(f'{dataset_id}.{c}' for c in close)}." if close else ""
        return f"Table {name} does not exist.{hint} Call autocontext for {dataset_id} to see its tables."
    seen = finder.datasets(parts[0]) if finder is not None else []
    close = _close(parts[1] if len(parts) > 1 else name, seen)
    hint = f" Close names: {', '.join(f'{parts[0]}.{c}' for c in close)}." if close else ""
    listed = f" Datasets of {parts[0]} these credentials can see: {', '.join(seen[:20])}." if seen and not close else ""
    what = f"Dataset {dataset_id}" if kind == "Dataset" or actual is None else f"Table {name}"
    return (f"{what} does not exist or is not visible to these credentials.{hint}{listed} "
            f"Call autocontext without resource_id to list the projects and datasets.")


def _close(name: str, candidates: list[str]) -> list[str]:
    import difflib

    return difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
