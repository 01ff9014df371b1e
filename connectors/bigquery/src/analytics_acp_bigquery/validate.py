"""validate_query (info, 15.3 step 1): the dry run's verdict without running anything.

A syntax error is an answer, not a tool error: ``valid: false`` with BigQuery's message and
the ``[line:column]`` position it reports.
"""

from __future__ import annotations

import re
from typing import Any

from analytics_acp import AcpError, CallContext, Info

from . import client as bq
from . import costs, dryrun
from .arguments import ValidateQueryArguments
from .errors import engine_message
from .preflight import query_of
from .sharding import collapse_referenced

_POSITION = re.compile(r"\[(\d+):(\d+)\]")
SYNTAX_REASONS = ("invalidQuery", "invalid")


def run_validate_query(arguments: ValidateQueryArguments, ctx: CallContext) -> Info:
    """Dry-run the query and report statement type, read-only, bytes, cost against the limit, tables and schema."""
    sql = query_of(arguments)
    limit = float(ctx.cost_limit_usd or 0)
    try:
        dry = dryrun.run(ctx, sql, bq.call_ref(ctx), keep=SYNTAX_REASONS)
    except AcpError:
        raise  # rejected credentials, unreachable Google…: a tool error, not ``valid: false``
    except Exception as exc:  # only BigQuery's invalidQuery/invalid get here
        return Info(data=_invalid(engine_message(exc), limit), title="validate_query · invalid")
    for table in dry.referenced_tables:  # 10.6: validates table_rules too (a read is always allowed)
        ctx.check_access(table, "read")
    price = costs.price_per_tib(ctx.config or {})
    billed = costs.billed_estimate(dry.total_bytes_processed, len(dry.referenced_tables))
    estimate = costs.usd(billed, price)
    data = {
        "valid": True,
        "statement_type": dry.statement_type,
        "read_only": dry.statement_type in dryrun.READ_ONLY_TYPES,
        "total_bytes_processed": dry.total_bytes_processed,
        "human_bytes": costs.human_bytes(dry.total_bytes_processed),
        "estimated_cost_usd": estimate,
        "cost_limit_usd": ctx.cost_limit_usd,
        "within_cost_limit": estimate <= limit,
        "referenced_tables": collapse_referenced(dry.referenced_tables),
        "result_schema": [_column(f) for f in dry.schema],
    }
    return Info(data=data, title=f"validate_query · {dry.statement_type}", source={"location": dry.location})


def _column(field: dict[str, Any]) -> dict[str, Any]:
    out = {"name": field.get("name"), "type": field.get("type")}
    if (field.get("mode") or "").upper() == "REPEATED":
        out["mode"] = "REPEATED"
    return out


def _invalid(engine: str, limit: float) -> dict[str, Any]:
    out: dict[str, Any] = {"valid": False, "error": engine}
    found = _POSITION.search(engine)
    if found:
        out["position"] = {"line": int(found.group(1)), "column": int(found.group(2))}
    out["cost_limit_usd"] = limit
    return out
