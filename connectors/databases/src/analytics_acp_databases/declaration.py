"""What the `databases` connector declares: identity, setup schemas (5.5), resource_id (6.1), tools and blocks.

This module imports nothing heavy: plugin.py loads it at server start-up. Tools and blocks name the functions
doing the work with ``lazy("module:function")``: their modules (SQLAlchemy, sqlglot, drivers) load on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analytics_acp import BlockSpec, ConnectorInfo, Defaults, ResourceIdSpec, ToolSpec, lazy

from .arguments import ExecuteSql, InsertRows, ValidateSql

VERSION = "0.1.0"
PACKAGE_DIR = Path(__file__).resolve().parents[2]

SERVER_DIALECTS = ["postgresql", "mysql", "mariadb"]

# Repeated in every tool's resource_id (6.2): brief; autocontext lists ready-to-use ids (issue 23.3).
RESOURCE_DESCRIPTION = "<database>[.<schema>[.<table>]]; SQLite/DuckDB: the file name sans extension."

CREDENTIALS_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "title": "SQLite file",
            "description": "A local SQLite database file, opened read-only for queries.",
            "required": ["type", "path"],
            "properties": {
                "type": {"const": "sqlite"},
                "path": {"type": "string", "format": "path", "title": "Database file", "description": "Absolute path of the .sqlite/.db file.", "examples": ["/data/ventas.sqlite"]},
            },
        },
        {
            "type": "object",
            "title": "DuckDB file",
            "description": "A local DuckDB database file, opened read-only (no file system access) for queries.",
            "required": ["type", "path"],
            "properties": {
                "type": {"const": "duckdb"},
                "path": {"type": "string", "format": "path", "title": "Database file", "description": "Absolute path of the .duckdb file.", "examples": ["/data/ventas.duckdb"]},
            },
        },
        {
            "type": "object",
            "title": "Database server",
            "description": "PostgreSQL, MySQL or MariaDB server. Queries run in a read-only transaction with a statement timeout.",
            "required": ["type", "dialect", "host", "user"],
            "properties": {
                "type": {"const": "server"},
                "dialect": {"type": "string", "title": "Engine", "enum": SERVER_DIALECTS, "enumNames": ["PostgreSQL", "MySQL", "MariaDB"], "default": "postgresql"},
                "host": {"type": "string", "title": "Host", "examples": ["127.0.0.1"]},
                "port": {"type": "integer", "title": "Port", "description": "Empty: 5432 for PostgreSQL, 3306 for MySQL/MariaDB.", "minimum": 1, "maximum": 65535},
                "user": {"type": "string", "title": "User"},
                "password": {"type": "string", "title": "Password", "writeOnly": True},
                "database": {"type": "string", "title": "Database", "description": "Database to connect to (the default resource's database)."},
            },
        },
        {
            "type": "object",
            "title": "SQLAlchemy URL",
            "description": (
                "Any SQLAlchemy URL whose driver is installed (postgresql+psycopg, mysql+pymysql, mssql+pyodbc, trino, snowflake...). "
                "For engines other than PostgreSQL, MySQL/MariaDB, SQLite and DuckDB only the SQL parser guard applies: use a read-only database user."
            ),
            "required": ["type", "url"],
            "properties": {
                "type": {"const": "url"},
                "url": {"type": "string", "title": "URL", "writeOnly": True, "examples": ["postgresql+psycopg://reader@db.example.com:5432/shop"]},
            },
        },
    ]
}

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "access_mode": {
            "type": "string",
            "title": "Access mode",
            "description": "onlyRead: queries only. readAndOnlyAdd: insert_rows may create tables and append rows. full: insert_rows may also replace a table's rows.",
            "enum": ["onlyRead", "readAndOnlyAdd", "full"],
            "enumNames": ["Read only", "Read and add", "Full"],
            "default": "onlyRead",
        },
        "table_rules": {
            "type": "string",
            "title": "Table rules",
            "description": 'JSON list of {"pattern": "<regex>", "mode": "<access_mode>"}; the first pattern found in the target table id (<database>[.<schema>].<table>) wins.',
            "contentMediaType": "application/json",
            "examples": ['[{"pattern": "^analytics\\\\.public\\\\.sandbox_", "mode": "readAndOnlyAdd"}]'],
        },
        "statement_timeout_s": {
            "type": "number",
            "title": "Statement timeout (s)",
            "description": "Maximum run time of each statement.",
            "default": 60,
            "minimum": 1,
            "maximum": 3600,
        },
        "default_schema": {
            "type": "string",
            "title": "Default schema",
            "description": "Schema for unqualified table names when the resource does not name one. Empty: the database default (public, main).",
        },
    },
    "required": [],
}

INSTRUCTIONS = (
    "SQL databases (SQLite, DuckDB, PostgreSQL, MySQL/MariaDB). Call autocontext for the resource first: it lists the "
    "tables, their columns and types, date ranges and frequent values, so the first query is right. execute_sql runs one "
    "read-only SELECT (WITH ... SELECT, VALUES) in the database's own dialect; write the date window as '{{start_date}}' and "
    "'{{end_date}}' so the host can reload the dataset for another range. Aggregate in SQL rather than extracting raw rows. "
    "The full result is stored by the host as a dataset: pass its id as table_ref to other tools instead of copying rows."
)

# Tool texts say what the tool is for and when to use it, each argument once (issue 23.3: tools/list is
# read in every conversation).
EXECUTE_DESCRIPTION = (
    "Extract the result of one read-only query (SELECT, WITH, VALUES or their EXPLAIN) in the database's dialect. "
    "Date window as quoted markers: WHERE fecha BETWEEN '{{start_date}}' AND '{{end_date}}'. "
    "Call autocontext first for tables and columns."
)

VALIDATE_DESCRIPTION = (
    "Check a query without running it: statement type, whether execute_sql accepts it, referenced tables and the "
    "result's typed columns."
)

INSERT_DESCRIPTION = (
    "Append a host dataset's rows (table_ref) to a table in one transaction; rows never travel in arguments. "
    "Needs access_mode readAndOnlyAdd (append, create) or full (replace)."
)


def connector_info() -> ConnectorInfo:
    """The ConnectorInfo of `databases` (4.2)."""
    return ConnectorInfo(
        tools=tool_specs(), blocks=block_specs(),  # declared once: the core registers them
        id="databases",
        name="SQL databases",
        version=VERSION,
        description="Read-only SQL over SQLite, DuckDB, PostgreSQL, MySQL/MariaDB and any SQLAlchemy URL, with fenced inserts from host tables.",
        resource_id=ResourceIdSpec(
            title="Database, schema or table",
            description=RESOURCE_DESCRIPTION,
            format="<database>[.<schema>[.<table>]]",
            examples=["ventas", "ventas.ventas", "analytics.public", "analytics.public.orders"],
            separators=[".", "/"],
            levels=["database", "schema", "table"],
        ),
        instructions=INSTRUCTIONS,
        defaults=Defaults(row_limit=25, cost_limit_usd=0),
        credentials_schema=CREDENTIALS_SCHEMA,
        config_schema=CONFIG_SCHEMA,
        cache_ttl_s=3600,
        icon="icon.svg",
        package_dir=PACKAGE_DIR,
        access_rule_keys=["table_rules"],
        check_setup=lazy("analytics_acp_databases.offline_check:check_setup"),  # files exist, URLs parse: offline
    )


def tool_specs() -> list[ToolSpec]:
    """execute_sql (default extraction), validate_sql (info) and insert_rows (write, 8.8.2)."""
    return [
        ToolSpec(
            name="execute_sql",
            title="Run a SQL query",
            description=EXECUTE_DESCRIPTION,
            run=lazy("analytics_acp_databases.execute:run_execute_sql"),
            kind="extraction",
            default=True,
            arguments=ExecuteSql,
        ),
        ToolSpec(
            name="validate_sql",
            title="Validate a SQL query",
            description=VALIDATE_DESCRIPTION,
            run=lazy("analytics_acp_databases.validate:run_validate_sql"),
            kind="info",
            arguments=ValidateSql,
        ),
        ToolSpec(
            name="insert_rows",
            title="Insert rows from a host dataset",
            description=INSERT_DESCRIPTION,
            run=lazy("analytics_acp_databases.insert:run_insert_rows"),
            kind="info",
            read_only_hint=False,
            arguments=InsertRows,
        ),
    ]


ALL_LEVELS = ["database", "schema", "table"]


def block_specs() -> list[BlockSpec]:
    """Autocontext blocks (7.1) with their levels and TTLs (7.4: config 24 h, schema 6 h, volumes 1 h)."""
    return [
        BlockSpec(
            id="database_info",
            description="Engine, server version, database, default schema, SQL dialect notes and the effective access mode.",
            fetch=lazy("analytics_acp_databases.blocks:block_database_info"),
            applies_to=ALL_LEVELS,
            ttl_s=24 * 3600,
        ),
        BlockSpec(
            id="schemas",
            description="Schemas of the database (databases of the server for MySQL/MariaDB) with their table counts.",
            fetch=lazy("analytics_acp_databases.blocks:block_schemas"),
            applies_to=["database"],
            ttl_s=6 * 3600,
        ),
        BlockSpec(
            id="tables",
            description="Tables and views with estimated row counts.",
            fetch=lazy("analytics_acp_databases.blocks:block_tables"),
            applies_to=["database", "schema"],
            ttl_s=3600,
        ),
        BlockSpec(
            id="table_schemas",
            description="Columns (type, nullable, primary and foreign keys, comments) of the table, or of the first 15 tables of the database or schema.",
            fetch=lazy("analytics_acp_databases.blocks:block_table_schemas"),
            applies_to=ALL_LEVELS,
            ttl_s=6 * 3600,
        ),
        BlockSpec(
            id="date_ranges",
            description="Minimum and maximum of every date/time column of the table, or of the first 15 tables.",
            fetch=lazy("analytics_acp_databases.blocks:block_date_ranges"),
            applies_to=ALL_LEVELS,
            ttl_s=3600,
        ),
        BlockSpec(
            id="frequent_values",
            description="Most frequent values of low-cardinality text columns (at most 10 distinct values) of the table, or of the first 5 tables.",
            fetch=lazy("analytics_acp_databases.blocks:block_frequent_values"),
            applies_to=ALL_LEVELS,
            ttl_s=3600,
        ),
    ]
