"""Autocontext blocks of the example source (7.1): one per kind of behaviour the core must handle."""

from __future__ import annotations

from analytics_acp import BlockSpec, UpstreamError

from .data import CHANNELS, TABLES, table_row_count
from .resources import account_of


def _tables(resource_id, ctx):
    account = account_of(resource_id, ctx.credentials)
    return [{"table": name, "resource_id": f"{account}.{name}", "rows": table_row_count(account, name)} for name in TABLES]


def _table_schema(resource_id, ctx):
    account = account_of(resource_id, ctx.credentials)
    wanted = [resource_id.split(".", 1)[1]] if "." in resource_id else list(TABLES)
    return [
        {"table": f"{account}.{name}", "columns": [{"name": c, "type": t} for c, t in TABLES[name]]}
        for name in wanted
    ]


def _channels(resource_id, ctx):
    return [{"channel": c, "label": c.replace("_", " ").title()} for c in CHANNELS]


def _quota(resource_id, ctx):
    # Always fails: the core must isolate it (7.3) and count it in system_info.warnings.
    raise UpstreamError("The quota endpoint is unavailable (503). Retry later.")


BLOCKS = [
    BlockSpec(id="tables", description="Tables of the account with their row counts.", fetch=_tables,
              applies_to=["account"]),
    BlockSpec(id="table_schema", description="Columns and types of the table, or of every table of the account.",
              fetch=_table_schema, applies_to=["account", "table"], ttl_s=21600),
    BlockSpec(id="channels", description="Acquisition channels used in the channel column of orders.",
              fetch=_channels, ttl_s=86400, needs_credentials=False),
    BlockSpec(id="quota", description="Remaining daily API quota of the account.", fetch=_quota),
]
