"""The example connector's declaration (4.2): schemas, resource_id, cost model and catalog."""

from __future__ import annotations

from pathlib import Path

from analytics_acp import CatalogEntry, ConnectorInfo, CostSpec, Defaults, ResourceIdSpec

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
    )
