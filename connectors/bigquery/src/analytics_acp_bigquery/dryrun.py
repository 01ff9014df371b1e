"""The dry run (9.2, 10.4): statement type, bytes, referenced tables and result schema, at no cost.

Every paid decision comes from it: the statement type decides read-only (no regex), the
bytes decide the cost preflight. The preflight (estimate_cost hook) and the tool run get
the same CallContext, so the dry run of a call is remembered on it (``REMEMBERED``, a CallSlot) and not repeated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analytics_acp import CallContext, ReadOnlyViolation
from analytics_acp.state import CallSlot

from . import client as bq
from .errors import reasons, to_acp
from .lookup import Finder
from .resource_ids import BqRef

READ_ONLY_TYPES = frozenset({"SELECT"})
LABELS_CONNECTOR = "bigquery"


@dataclass
class DryRun:
    """What BigQuery's dry run says about a query."""

    statement_type: str
    total_bytes_processed: int
    referenced_tables: list[str]
    schema: list[dict[str, Any]] = field(default_factory=list)
    location: str | None = None


# The preflight's dry run of this call, by its SQL (the tool's run reads it back).
REMEMBERED: CallSlot[dict[str, DryRun]] = CallSlot("bigquery.dry_run", lambda ctx: {})


def labels(tool: str) -> dict[str, str]:
    """Job labels so an admin can audit ACP jobs (label values: lowercase, digits, _ and -)."""
    return {"acp_connector": LABELS_CONNECTOR, "acp_tool": tool.lower().replace(".", "_")[:63]}


def default_dataset(ref: BqRef | None) -> str | None:
    """``project.dataset`` of the resource, so unqualified table names resolve against it."""
    return ref.dataset_id if ref is not None else None


def run(ctx: CallContext, sql: str, ref: BqRef | None, *, keep: tuple[str, ...] = ()) -> DryRun:
    """Dry-run ``sql`` (jobs.insert with dryRun) in the billing project; errors become typed ACP errors,
    except those whose BigQuery reason is in ``keep`` (validate_query answers syntax errors itself)."""
    from google.cloud import bigquery

    project = bq.billing_project(ctx, ref)
    client = bq.client_for(ctx, project)
    config = bigquery.QueryJobConfig(dry_run=True, use_query_cache=False, labels=labels(ctx.tool))
    dataset = default_dataset(ref)
    if dataset:
        config.default_dataset = dataset
    try:
        job = bq.call(ctx, client.query, sql, job_config=config, location=bq.location(ctx), project=project, job_retry=None)
    except Exception as exc:
        if keep and getattr(exc, "code", None) == 400 and set(reasons(exc)) & set(keep):  # a 401 may say "invalid" too
            raise
        raise to_acp(exc, resource=ctx.resource_id, finder=Finder(ctx, client), ctx=ctx) from None
    return DryRun(
        statement_type=str(job.statement_type or "UNKNOWN").upper(),
        total_bytes_processed=int(job.total_bytes_processed or 0),
        referenced_tables=[f"{t.project}.{t.dataset_id}.{t.table_id}" for t in (job.referenced_tables or [])],
        schema=[f.to_api_repr() for f in (job.schema or [])],
        location=job.location,
    )


def check_read_only(dry: DryRun) -> None:
    """10.4: anything but SELECT is refused, as the dry run classified it (15.3 step 4)."""
    if dry.statement_type not in READ_ONLY_TYPES:
        raise ReadOnlyViolation(
            f"This ACP is read-only: only SELECT statements are executed (the query is {dry.statement_type})."
        )


def check_tables(ctx: CallContext, dry: DryRun) -> None:
    """10.6: every referenced table is checked against table_rules for a read."""
    for table in dry.referenced_tables:
        ctx.check_access(table, "read")


def remember(ctx: CallContext, sql: str, dry: DryRun) -> None:
    """Keep the preflight's dry run for the same call's run (it ends with the call's context)."""
    remembered = ctx.state(REMEMBERED)
    remembered.clear()  # one at a time: the run asks for the SQL the preflight checked
    remembered[sql] = dry


def recall(ctx: CallContext, sql: str) -> DryRun | None:
    """The dry run remembered for this call and SQL, if any."""
    return ctx.state(REMEMBERED).get(sql)
