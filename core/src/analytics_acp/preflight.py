"""The cost preflight of a paid tool (9.2): estimate before running, refuse above the limit."""

from __future__ import annotations

from .arguments import ToolArguments
from .context import CallContext
from .declarations import CostEstimate, ToolSpec
from .envelope import CallRecord
from .errors import CostLimitExceeded, UpstreamError
from .plugins import LoadedConnector


def cost_preflight(loaded: LoadedConnector, tool: ToolSpec, args: ToolArguments, ctx: CallContext,
                   record: CallRecord) -> None:
    """Ask ``estimate_cost``; record it on ctx and system_info; ACP_COST_LIMIT_EXCEEDED says how to narrow."""
    estimate = loaded.hook.estimate_cost(tool=tool, arguments=args, ctx=ctx)
    if estimate is None:
        raise UpstreamError(f"{tool.name} is a paid tool but the connector gave no cost estimate.")
    if not isinstance(estimate, CostEstimate):
        estimate = CostEstimate(usd=float(estimate))
    record.cost_estimate_usd = ctx.cost_estimate_usd = round(float(estimate.usd), 6)
    if estimate.usd > ctx.cost_limit_usd:
        cost, limit = _dollars(float(estimate.usd), float(ctx.cost_limit_usd))
        raise CostLimitExceeded(
            f"The query would cost about ${cost} and the limit is ${limit}. "
            f"Narrow the query ({estimate.hint}) or ask the user to raise the limit.",
            {"estimate_usd": round(float(estimate.usd), 6), "limit_usd": ctx.cost_limit_usd, **estimate.data},
        )


def _dollars(cost: float, limit: float) -> tuple[str, str]:
    """Cents as in 9.2's message, more decimals (up to 6) when cents would print the two amounts alike.

    With the default limit of 0, a small query read "about $0.00 and the limit is $0.00".
    """
    for places in range(2, 7):
        pair = f"{cost:.{places}f}", f"{limit:.{places}f}"
        if pair[0] != pair[1]:
            break
    return pair
