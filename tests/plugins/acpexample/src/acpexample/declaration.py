"""The example connector's declaration (4.2): schemas, resource_id, cost model, catalog, tools and blocks.

Declared once, here (issue 27.6): the core registers the tools and blocks of the ConnectorInfo. Their functions are
named with ``lazy("module:function")`` and imported on first use; shared values live in constants.py.
"""

from __future__ import annotations

from pathlib import Path

from analytics_acp import (
    BlockSpec,
    CatalogEntry,
    ConnectorInfo,
    CostSpec,
    Defaults,
    ResourceIdSpec,
    ToolSpec,
    lazy,
)

from .arguments import AddNote, CaptureSession, ListCustomers, QueryOrders, TableStats, Window

CREDENTIALS_SCHEMA = {
    "oneOf": [
        {
            "title": "API key",
            "description": "A key of the example API: full access to every account.",
            "type": "object",
            "properties": {
                "type": {"type": "string", "const": "api_key"},
                "api_key": {
                    "type": "string",
                    "title": "API key",
                    "description": "Secret key; starts with ex_.",
                    "writeOnly": True,
                    "minLength": 8,
                },
            },
            "required": ["type", "api_key"],
        },
        {
            "title": "Public access",
            "description": "No secret: only the public demo accounts are visible.",
            "type": "object",
            "properties": {"type": {"type": "string", "const": "public"}},
            "required": ["type"],
        },
    ]
}

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "access_mode": {
            "type": "string",
            "title": "Access mode",
            "description": "What tools may change: onlyRead (default), readAndOnlyAdd or full.",
            "enum": ["onlyRead", "readAndOnlyAdd", "full"],
            "enumNames": ["Read only", "Read and add", "Full"],
            "default": "onlyRead",
        },
        "table_rules": {
            "type": "string",
            "title": "Table rules",
            "description": 'JSON list of {"pattern": "<regex>", "mode": "<access_mode>"}; the first match wins.',
            "contentMediaType": "application/json",
        },
        "price_per_row_usd": {
            "type": "number",
            "title": "Price per row (USD)",
            "description": "Price of one row of the premium report.",
            "default": 0.001,
            "minimum": 0,
        },
    },
    "required": [],
}

CATALOG = [
    CatalogEntry(name="events", title="Events", group="Tracking", description="One row per tracked event.",
                 tools=["capture_session"]),
    CatalogEntry(name="pages", title="Pages", group="Navigation", description="Pages visited in the session.",
                 required=True, tools=["capture_session"]),
    CatalogEntry(name="cookies", title="Cookies", group="Storage", description="Cookies set during the session.",
                 tools=["capture_session"]),
]


def declaration() -> ConnectorInfo:
    """The ConnectorInfo returned by the connector_declaration hook."""
    return ConnectorInfo(
        id="example",
        name="Example source",
        version="0.1.0",
        description="Example analytics source with deterministic orders, customers and sessions.",
        instructions=(
            "Example ACP. Call autocontext without arguments to list the accounts, then with the account id "
            "to learn its tables and channels before extracting orders."
        ),
        resource_id=ResourceIdSpec(
            title="Account or table",
            description="Account id (acctNN), optionally followed by .table (orders, customers or events).",
            format="<account>[.<table>]",
            examples=["acct01", "acct01.orders"],
            separators=[".", "/"],
            levels=["account", "table"],
        ),
        defaults=Defaults(row_limit=25, cost_limit_usd=0, field_limit=6, tables=["events"]),
        credentials_schema=CREDENTIALS_SCHEMA,
        config_schema=CONFIG_SCHEMA,
        cost=CostSpec(model="per_row", description="The premium report costs price_per_row_usd per hourly row; "
                      "every other tool is free."),
        cache_ttl_s=3600,
        table_catalog=CATALOG,
        icon="icon.svg",
        package_dir=Path(__file__).resolve().parents[2],
        tools=tool_specs(),
        blocks=block_specs(),
    )


def tool_specs() -> list[ToolSpec]:
    """The tools; query_orders is the default extraction tool (4.2)."""
    return [
        ToolSpec(
            name="query_orders", title="Query orders", kind="extraction", default=True, run=lazy("acpexample.tools:query_orders"),
            description="Orders of an account (one row per order) in a date window, optionally for one channel. "
                        "Window defaults: 7daysAgo to yesterday.",
            arguments=QueryOrders,
        ),
        ToolSpec(
            name="list_customers", title="List customers", kind="extraction", run=lazy("acpexample.tools:list_customers"),
            description="Customers of an account with signup date, segment, lifetime value and visits.",
            arguments=ListCustomers,
        ),
        ToolSpec(
            name="capture_session", title="Capture a session", kind="extraction", multitable=True, run=lazy("acpexample.tools:capture_session"),
            description="Simulated browsing session of the account's site: events, pages, cookies and a summary.",
            arguments=CaptureSession,
        ),
        ToolSpec(
            name="premium_report", title="Premium hourly report", kind="extraction", paid=True, run=lazy("acpexample.tools:premium_report"),
            description="Paid hourly sessions and revenue of an account in a date window (priced per row).",
            arguments=Window,
        ),
        ToolSpec(
            name="table_stats", title="Host table statistics", run=lazy("acpexample.tools:table_stats"), needs_resource=False,
            needs_credentials=False,
            description="Count, min, max, mean and sum of the numeric columns of a host dataset or report.",
            arguments=TableStats,
        ),
        ToolSpec(
            name="account_info", title="Account details", run=lazy("acpexample.tools:account_info"),
            description="Name, region, visibility and tables of an account.",
        ),
        ToolSpec(
            name="add_note", title="Add a note", run=lazy("acpexample.tools:add_note"), read_only_hint=False,
            description="Append a text note to the account. Needs access_mode readAndOnlyAdd or full.",
            arguments=AddNote,
        ),
        ToolSpec(
            name="live_status", title="Live API status", run=lazy("acpexample.tools:live_status"),
            description="Status of the live upstream API for the account.",
        ),
    ]


def block_specs() -> list[BlockSpec]:
    """The blocks: id, description, levels, TTL and fetcher together (7.1, 7.4)."""
    return [
        BlockSpec(id="tables", description="Tables of the account with their row counts.", fetch=lazy("acpexample.blocks:tables"),
                  applies_to=["account"]),
        BlockSpec(id="table_schema", description="Columns and types of the table, or of every table of the account.",
                  fetch=lazy("acpexample.blocks:table_schema"), applies_to=["account", "table"], ttl_s=21600),
        BlockSpec(id="channels", description="Acquisition channels used in the channel column of orders.",
                  fetch=lazy("acpexample.blocks:channels"), ttl_s=86400, needs_credentials=False),
        BlockSpec(id="quota", description="Remaining daily API quota of the account.", fetch=lazy("acpexample.blocks:quota")),
    ]
