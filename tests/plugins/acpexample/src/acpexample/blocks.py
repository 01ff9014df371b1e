"""Autocontext blocks of the example source (7.1): one per kind of behaviour the core must handle.

declaration.block_specs gives each function here its block id, description, levels and TTL.
"""

from __future__ import annotations

from analytics_acp import UpstreamError

from .constants import CHANNELS
from .data import TABLES, table_row_count
from .resources import account_of


def tables(resource_id, ctx):
    """Tables of the account with their row counts."""
    account = account_of(resource_id, ctx.credentials)
    return [{"table": name, "resource_id": f"{account}.{name}", "rows": table_row_count(account, name)} for name in TABLES]


def table_schema(resource_id, ctx):
    """Columns and types of the table, or of every table of the account."""
    account = account_of(resource_id, ctx.credentials)
    wanted = [resource_id.split(".", 1)[1]] if "." in resource_id else list(TABLES)
    return [
        {"table": f"{account}.{name}", "columns": [{"name": c, "type": t} for c, t in TABLES[name]]}
        for name in wanted
    ]


def channels(resource_id, ctx):
    """The acquisition channels of the orders (no credentials needed)."""
    return [{"channel": c, "label": c.replace("_", " ").title()} for c in CHANNELS]


def quota(resource_id, ctx):
    """The daily quota: always fails."""
    # The core must isolate it (7.3) and count it in system_info.warnings.
    raise UpstreamError("The quota endpoint is unavailable (503). Retry later.")
