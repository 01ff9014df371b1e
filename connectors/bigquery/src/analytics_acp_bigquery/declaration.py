"""What the `bigquery` connector declares: identity, setup schemas (5.5.1), resource_id (6.1), cost (9.1), tools, blocks.

Imports nothing heavy: plugin.py loads it at start-up. Tools and blocks name the functions doing the work with
``lazy("module:function")``: google-cloud-bigquery loads on the first call. Shared values live in constants.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analytics_acp import BlockSpec, ConnectorInfo, CostSpec, Defaults, ResourceIdSpec, ToolSpec, lazy
from analytics_acp_google.schemas import (
    AUTOCONTEXT_CONCURRENCY,
    CHECK_SETUP,
    api_endpoint_property,
    credentials_schema,
    timeout_property,
)

from .arguments import LoadRowsArguments, QueryArguments, ValidateQueryArguments
from .constants import DEFAULT_PRICE_PER_TIB_USD, LEVELS, SCOPES

VERSION = "0.1.0"
PACKAGE_DIR = Path(__file__).resolve().parents[2]

# Repeated in every tool's resource_id (6.2): brief (issue 23.3); backticks, '/' and domain-scoped projects
# are normalized (resource_ids.py).
RESOURCE_DESCRIPTION = "<project>[.<dataset>[.<table>]]; tables may be wildcards (events_*)."

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {
            "type": "string",
            "title": "Location",
            "description": "Job location. Empty: the dataset location.",
            "examples": ["EU", "US", "europe-west1"],
        },
        "billing_project": {
            "type": "string",
            "title": "Billing project",
            "description": "Project where query and load jobs run and are billed. Empty: the resource's project.",
        },
        "price_per_tib_usd": {
            "type": "number",
            "title": "Price per TiB (USD)",
            "description": "On-demand price used for estimates and for the maximumBytesBilled cap. 0: no per-byte billing (reservations).",
            "default": DEFAULT_PRICE_PER_TIB_USD,
            "minimum": 0,
        },
        "access_mode": {
            "type": "string",
            "title": "Access mode",
            "description": "onlyRead: queries only. readAndOnlyAdd: load_rows may also create tables and append rows.",
            "enum": ["onlyRead", "readAndOnlyAdd"],
            "enumNames": ["Read only", "Read and add"],
            "default": "onlyRead",
        },
        "table_rules": {
            "type": "string",
            "title": "Table rules",
            "description": 'JSON list of {"pattern": "<regex>", "mode": "<access_mode>"}; the first pattern found in the target table id (<project>.<dataset>.<table>) wins.',
            "contentMediaType": "application/json",
            "examples": ['[{"pattern": "\\\\.sandbox\\\\.", "mode": "readAndOnlyAdd"}]'],
        },
        "api_endpoint": api_endpoint_property(),
        "timeout_s": timeout_property(),
    },
    "required": [],
}

INSTRUCTIONS = (
    "Google BigQuery with a hard cost cap. Queries are billed by bytes scanned: call validate_query first to see the "
    "statement type, bytes and estimated cost against the limit, then execute_query. Select only the columns you need, "
    "filter partitioned tables by their partition column and date-sharded tables (events_*) with _TABLE_SUFFIX "
    "BETWEEN 'YYYYMMDD' AND 'YYYYMMDD'; LIMIT does not reduce the bytes scanned. Only SELECT statements run. "
    "Call autocontext for a dataset to see its tables, shards and schemas. The full result is stored by the host."
)

# Tool texts say what the tool is for and when to use it, each argument once (issue 23.3: tools/list is read
# in every conversation).
EXECUTE_DESCRIPTION = (
    "Extract the full result of one read-only GoogleSQL SELECT. A dry run first refuses anything else and queries "
    "over the cost limit (saying how to narrow them). Date window: {{start_date}}/{{end_date}}, e.g. _TABLE_SUFFIX "
    "BETWEEN FORMAT_DATE('%Y%m%d', '{{start_date}}') AND ..."
)

VALIDATE_DESCRIPTION = (
    "Dry-run a query (free) before execute_query: validity (BigQuery's error and position), statement type, bytes, "
    "estimated cost against the cost limit, referenced tables and the result schema."
)

LOAD_DESCRIPTION = (
    "Append a host dataset's rows (table_ref) to a BigQuery table with a load job (never replace); rows never travel "
    "in arguments. Needs access_mode readAndOnlyAdd or a table rule allowing it."
)


def connector_info() -> ConnectorInfo:
    """The ConnectorInfo of `bigquery` (4.2)."""
    return ConnectorInfo(
        tools=tool_specs(), blocks=block_specs(),  # declared once: the core registers them
        id="bigquery",
        name="Google BigQuery",
        version=VERSION,
        description="Read-only BigQuery SQL with a mandatory dry run, a hard cost cap and append-only loads from host tables.",
        resource_id=ResourceIdSpec(
            title="Project, dataset or table",
            description=RESOURCE_DESCRIPTION,
            format="<project>[.<dataset>[.<table>]]",
            examples=["mi-proyecto", "mi-proyecto.analytics_123", "mi-proyecto.analytics_123.events_*"],
            separators=[".", "/"],
            levels=list(LEVELS),
        ),
        instructions=INSTRUCTIONS,
        defaults=Defaults(row_limit=25, cost_limit_usd=0),
        credentials_schema=credentials_schema(scopes=SCOPES, product="BigQuery"),
        check_setup=CHECK_SETUP,  # the key loads, offline (analytics_acp_google.offline_check)
        config_schema=CONFIG_SCHEMA,
        cost=CostSpec(model="per_byte", description="On-demand BigQuery pricing per TiB processed (price_per_tib_usd, "
                                                      "default 6.25), at least 10 MB per referenced table; cache hits are free."),
        cache_ttl_s=3600,
        autocontext_concurrency=AUTOCONTEXT_CONCURRENCY,  # blocks are independent Google calls (issue 26.1)
        icon="icon.svg",
        package_dir=PACKAGE_DIR,
        access_rule_keys=["table_rules"],
    )


def tool_specs() -> list[ToolSpec]:
    """execute_query (default extraction, paid), validate_query (info) and load_rows (write, 8.8.2)."""
    return [
        ToolSpec(
            name="execute_query",
            title="Run a BigQuery query",
            description=EXECUTE_DESCRIPTION,
            run=lazy("analytics_acp_bigquery.execute:run_execute_query"),
            kind="extraction",
            default=True,
            paid=True,
            arguments=QueryArguments,
        ),
        ToolSpec(
            name="validate_query",
            title="Validate a BigQuery query (dry run)",
            description=VALIDATE_DESCRIPTION,
            run=lazy("analytics_acp_bigquery.validate:run_validate_query"),
            kind="info",
            arguments=ValidateQueryArguments,
        ),
        ToolSpec(
            name="load_rows",
            title="Append rows from a host dataset",
            description=LOAD_DESCRIPTION,
            run=lazy("analytics_acp_bigquery.load:run_load_rows"),
            kind="info",
            read_only_hint=False,
            arguments=LoadRowsArguments,
        ),
    ]


def block_specs() -> list[BlockSpec]:
    """datasets (project), tables and table_schemas (dataset, table), with the ids and descriptions of 15.3."""
    return [
        BlockSpec(
            id="datasets",
            description="Project datasets with their location.",
            fetch=lazy("analytics_acp_bigquery.blocks:block_datasets"),
            applies_to=["project"],
            ttl_s=6 * 3600,
        ),
        BlockSpec(
            id="tables",
            description=("Dataset tables and views. Date-sharded tables (name_YYYYMMDD) are grouped as name_* "
                         "with the shard count and the latest shard."),
            fetch=lazy("analytics_acp_bigquery.blocks:block_tables"),
            applies_to=["dataset"],  # 7.2
            ttl_s=3600,
        ),
        BlockSpec(
            id="table_schemas",
            description=("Schema (columns, type, mode and description) of the table or of the first 15 tables in the "
                         "dataset. For sharded tables, the latest shard is used."),
            fetch=lazy("analytics_acp_bigquery.blocks:block_table_schemas"),
            applies_to=["dataset", "table"],
            ttl_s=6 * 3600,
        ),
    ]
