"""The cost preflight of execute_query (9.2), run by the core through the estimate_cost hook.

Order (15.3): dry run -> read-only by statementType (10.4) -> table_rules (10.6) -> estimate.
The core compares the estimate with cost_limit_usd and refuses with ACP_COST_LIMIT_EXCEEDED;
the message completes as "Narrow the query (fewer columns, shorter date range, filter by
partition) or ask the user to raise the limit."
"""

from __future__ import annotations

from analytics_acp import CallContext, CostEstimate

from . import costs, dryrun
from .arguments import QueryArguments
from .client import call_ref
from .sqltext import apply_window


def query_of(arguments: QueryArguments) -> str:
    """The SQL of a call with the date window applied (8.9)."""
    return apply_window(arguments.query, arguments.start_date, arguments.end_date)[0]


def estimate(arguments: QueryArguments, ctx: CallContext) -> CostEstimate:
    """Dry-run the query, refuse writes and disallowed tables, and price it."""
    sql = query_of(arguments)
    dry = dryrun.run(ctx, sql, call_ref(ctx))
    dryrun.check_read_only(dry)
    dryrun.check_tables(ctx, dry)
    dryrun.remember(ctx, sql, dry)
    price = costs.price_per_tib(ctx.config or {})
    billed = costs.billed_estimate(dry.total_bytes_processed, len(dry.referenced_tables))
    return CostEstimate(
        usd=costs.usd(billed, price),
        hint=costs.NARROW_HINT,
        data={
            "total_bytes_processed": dry.total_bytes_processed,
            "estimated_bytes_billed": billed,
            "price_per_tib_usd": price,
            "statement_type": dry.statement_type,
        },
    )
