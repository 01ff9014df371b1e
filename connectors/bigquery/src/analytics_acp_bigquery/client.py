"""The google-cloud-bigquery Client of a call: credentials in memory, api_endpoint, bounded retries.

Clients are kept in the connector's state (``CLIENTS``, analytics_acp.state) per (hash of the whole
credentials, endpoint, billing project), so the access token derived from a service account is reused
within a session (10.1.3 allows in-memory derived-token caches keyed by credential identity); nothing is
written anywhere, and the server's stop closes them.
Google's own defaults retry for 600 s (connection errors and rate limits included): every request
goes through ``call()``, which turns the library's retry off and runs it under the shared policy
of analytics_acp_google.retry (one deadline per call, (connect, read) timeouts, 5xx-only retries).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from analytics_acp import CallContext, ResourceRequired
from analytics_acp.state import identity_key, keyed_cache

from .constants import SCOPES
from .resource_ids import BqRef, parse

log = logging.getLogger(__name__)


def _close(client: Any) -> None:
    try:
        client.close()
    except Exception as exc:  # a client whose sessions are already gone: nothing left to close
        log.debug("BigQuery client close failed: %s", type(exc).__name__)


# (hash of credentials, endpoint, billing project) -> bigquery.Client; closed when pushed out and at the server's stop.
CLIENTS = keyed_cache("bigquery.clients", 8, on_evict=_close)


def call_ref(ctx: CallContext) -> BqRef | None:
    """The call's resource as a BqRef (None when the call has none)."""
    return parse(ctx.resource_id) if ctx.resource_id else None


def billing_project(ctx: CallContext, ref: BqRef | None) -> str:
    """Where jobs run: config.billing_project, else the resource's project, else the credentials' own project."""
    config = ctx.config or {}
    chosen = str(config.get("billing_project") or "").strip()
    if chosen:
        return chosen
    if ref is not None:
        return ref.project
    own = _credentials_project(ctx.credentials or {})
    if own:
        return own
    raise ResourceRequired(
        "Pass resource_id (<project>[.<dataset>[.<table>]]) or ask the user to set billing_project; "
        "call autocontext without resource_id to list the projects."
    )


def _credentials_project(credentials: dict[str, Any]) -> str | None:
    if credentials.get("type") == "service_account":
        from analytics_acp_google.credentials import service_account_info

        info = service_account_info(credentials) or {}
        return str(info.get("project_id") or "") or None
    return credentials.get("quota_project_id") or None


def location(ctx: CallContext) -> str | None:
    """config.location, or None to let BigQuery use the data's own location."""
    return str((ctx.config or {}).get("location") or "").strip() or None


def job_timeout_s() -> float:
    """How long a query job may run before it is cancelled (env ANALYTICS_ACP_BIGQUERY_JOB_TIMEOUT_S, default 300)."""
    try:
        return max(1.0, float(os.environ.get("ANALYTICS_ACP_BIGQUERY_JOB_TIMEOUT_S", "300")))
    except ValueError:
        return 300.0


DEFAULT_HOST = "bigquery.googleapis.com"
GRANT = "in Google Cloud IAM, give it BigQuery Data Viewer and BigQuery Job User on the project"


def host(ctx: CallContext) -> str:
    """The host calls go to (the api_endpoint's, else Google's), for messages."""
    from analytics_acp_google.endpoint import endpoint_host

    return endpoint_host(ctx.config) or DEFAULT_HOST


def call(ctx: CallContext, fn: Any, *args: Any, listing: bool = False, read_timeout: bool = False, **kwargs: Any) -> Any:
    """``fn(*args, retry=None, timeout=..., **kwargs)`` under the call's budget and the shared retry policy.

    ``listing`` drains a page iterator inside the policy; ``read_timeout`` passes the read timeout as one
    number (job.result does arithmetic on it). Unreachable hosts and timeouts raise typed errors; Google's
    HTTP errors are re-raised for ``errors.to_acp``.
    """
    from analytics_acp_google import retry as policy

    def attempt(timeouts: tuple[float, float]) -> Any:
        result = fn(*args, retry=None, timeout=timeouts[1] if read_timeout else timeouts, **kwargs)
        return list(result) if listing else result

    return policy.call(attempt, ctx=ctx, host=host(ctx))


def poll_retry(ctx: CallContext) -> Any:
    """The retry of a job's polling (transient 5xx only, none once the call is cancelled), bounded by the job timeout."""
    from analytics_acp_google.retry import api_core_retry, budget

    return api_core_retry(budget(ctx), timeout_s=job_timeout_s())


def client_for(ctx: CallContext, project: str) -> Any:
    """A bigquery.Client for the call's credentials, endpoint and billing project (cached in memory)."""
    from analytics_acp_google.endpoint import api_endpoint

    credentials = ctx.require_credentials()
    endpoint = api_endpoint(ctx.config or {})
    return ctx.state(CLIENTS).get_or_make(identity_key(credentials, endpoint, project),
                                          lambda: _make(credentials, endpoint, project))


def _make(credentials: dict[str, Any], endpoint: str | None, project: str) -> Any:
    from analytics_acp_google.credentials import build_credentials
    from google.cloud import bigquery

    options = {"api_endpoint": endpoint} if endpoint else None
    return bigquery.Client(project=project, credentials=build_credentials(credentials, SCOPES), client_options=options)

