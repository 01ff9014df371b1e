"""Autocontext blocks (7.1, 7.3): compact facts the model needs to write its next query.

Every block runs on the read-only fence with a short timeout and a time budget; the core caches
them per credential identity with each block's TTL (7.4) and isolates failures per block.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from analytics_acp import CallContext, ResourceNotFound

from . import catalog, types_map
from .credentials import ENGINE_TITLES
from .engines import Session, open_read
from .resource_ids import Target, has_schema_level, parse_target, sqlglot_dialect
from .sqlerrors import map_error

FIRST_TABLES = 15
FREQUENT_TABLES = 5
FREQUENT_COLUMNS = 8
FREQUENT_MAX_DISTINCT = 10
FREQUENT_SAMPLE_ROWS = 100_000
MAX_LISTED_TABLES = 200
QUERY_TIMEOUT_S = 10.0
BLOCK_BUDGET_S = 20.0

DIALECT_NOTES = {
    "sqlite": "SQLite: dates are usually TEXT 'YYYY-MM-DD'; use date(col), strftime('%Y-%m', col); identifiers in double quotes.",
    "duckdb": "DuckDB: date_trunc('month', col), strftime(col, '%Y-%m'), col::DATE; identifiers in double quotes.",
    "postgresql": "PostgreSQL: date_trunc('month', col), col::date, to_char(col, 'YYYY-MM'); identifiers in double quotes; unquoted names fold to lower case.",
    "mysql": "MySQL: DATE(col), DATE_FORMAT(col, '%Y-%m'); identifiers in backticks.",
    "mariadb": "MariaDB: DATE(col), DATE_FORMAT(col, '%Y-%m'); identifiers in backticks.",
}


@contextmanager
def _session(resource_id: str, ctx: CallContext, timeout_s: float = QUERY_TIMEOUT_S):
    credentials = ctx.require_credentials()
    target = parse_target(resource_id, credentials)
    source = catalog.source_for(ctx, target)
    timeout = min(timeout_s, source.timeout_s)
    try:
        session = open_read(source, timeout_s=timeout)
    except sa.exc.DBAPIError as exc:
        raise map_error(exc, credentials, resource_id, timeout) from None
    try:
        yield session, target
    except sa.exc.DBAPIError as exc:
        raise map_error(exc, credentials, resource_id, timeout) from None
    finally:
        session.close()


def _quoted(session: Session, schema: str | None, table: str) -> str:
    prep = session.conn.dialect.identifier_preparer
    return f"{prep.quote_schema(schema)}.{prep.quote(table)}" if schema else prep.quote(table)


def _schema_of(session: Session, target: Target) -> str | None:
    if not has_schema_level(session.backend):
        return target.database if session.backend in ("mysql", "mariadb") else None
    return target.schema or catalog.default_schema(session)


def _first_tables(session: Session, target: Target, limit: int) -> list[tuple[str | None, str]]:
    """(schema, table) pairs the block covers: the table itself, or the first tables of the schema/database."""
    schema = _schema_of(session, target)
    if target.table:
        names = {t["name"] for t in catalog.list_tables(session, schema)}
        if target.table not in names:
            raise ResourceNotFound(f"Table {target.table!r} does not exist. Call autocontext for {target.database} to list its tables.")
        return [(schema, target.table)]
    if target.schema or not has_schema_level(session.backend):
        return [(schema, t["name"]) for t in catalog.list_tables(session, schema, limit)][:limit]
    out: list[tuple[str | None, str]] = []
    schemas = catalog.list_schemas(session)
    ordered = ([schema] if schema in schemas else []) + [s for s in schemas if s != schema]
    for s in ordered:
        out += [(s, t["name"]) for t in catalog.list_tables(session, s, limit)]
        if len(out) >= limit:
            break
    return out[:limit]


def _label(session: Session, schema: str | None, table: str) -> str:
    if has_schema_level(session.backend) and schema:
        return f"{schema}.{table}"
    return table


def block_database_info(resource_id: str, ctx: CallContext) -> dict[str, Any]:
    """Engine, version, database, default schema, dialect notes, access mode."""
    with _session(resource_id, ctx) as (session, target):
        backend = session.backend
        out: dict[str, Any] = {
            "engine": ENGINE_TITLES.get(backend, backend),
            "sql_dialect": sqlglot_dialect(backend) or backend,
            "server_version": catalog.server_version(session),
            "database": target.database,
            "levels": "database.schema.table" if has_schema_level(backend) else "database.table",
        }
        default = catalog.default_schema(session)
        if has_schema_level(backend) and default:
            out["default_schema"] = (ctx.config or {}).get("default_schema") or default
        out["notes"] = DIALECT_NOTES.get(backend, "Write SQL in the engine's own dialect.")
        out["access_mode"] = (ctx.config or {}).get("access_mode") or "onlyRead"
        if backend not in ("sqlite", "duckdb", "postgresql", "mysql", "mariadb"):
            out["read_only_fence"] = "SQL parser only: use a read-only database user."
        return out


def block_schemas(resource_id: str, ctx: CallContext) -> Any:
    """Schemas with table counts (databases for MySQL/MariaDB)."""
    with _session(resource_id, ctx) as (session, target):
        if session.backend in ("mysql", "mariadb"):
            return [{"database": d, "tables": len(catalog.list_tables(session, d, 10_000))} for d in catalog.list_databases(session)]
        if not has_schema_level(session.backend):
            return [{"schema": "main", "tables": len(catalog.list_tables(session, None, 10_000)), "note": "single schema: use <database>.<table>"}]
        return [{"schema": s, "tables": len(catalog.list_tables(session, s, 10_000))} for s in catalog.list_schemas(session)]


def block_tables(resource_id: str, ctx: CallContext) -> dict[str, Any]:
    """Tables and views with row estimates."""
    with _session(resource_id, ctx) as (session, target):
        rows: list[dict[str, Any]] = []
        if target.schema or not has_schema_level(session.backend):
            schemas = [_schema_of(session, target)]
        else:
            schemas = catalog.list_schemas(session)  # type: ignore[assignment]
        for schema in schemas:
            for t in catalog.list_tables(session, schema, MAX_LISTED_TABLES + 1):
                entry = {"name": _label(session, schema, t["name"]), "kind": t["kind"]}
                if t.get("rows_estimate") is not None:
                    entry["rows_estimate"] = int(t["rows_estimate"])
                rows.append(entry)
        out: dict[str, Any] = {"tables": rows[:MAX_LISTED_TABLES]}
        if len(rows) > MAX_LISTED_TABLES:
            out["note"] = f"Showing the first {MAX_LISTED_TABLES} tables; pass a schema resource_id for the rest."
        return out


def block_table_schemas(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Columns, keys and comments of the table or of the first 15 tables."""
    with _session(resource_id, ctx) as (session, target):
        out = []
        for schema, table in _first_tables(session, target, FIRST_TABLES):
            columns = []
            pk = set(catalog.primary_key(session, schema, table))
            for col in catalog.table_columns(session, schema, table):
                entry: dict[str, Any] = {"name": col["name"], "type": col["type"]}
                if not col["nullable"]:
                    entry["nullable"] = False
                if col["name"] in pk:
                    entry["primary_key"] = True
                if col.get("comment"):
                    entry["comment"] = col["comment"]
                columns.append(entry)
            item: dict[str, Any] = {"table": _label(session, schema, table), "columns": columns}
            fks = catalog.foreign_keys(session, schema, table)
            if fks:
                item["foreign_keys"] = [
                    {"columns": fk["constrained_columns"], "references": f"{_label(session, fk.get('referred_schema') or schema, fk['referred_table'])}({', '.join(fk['referred_columns'])})"}
                    for fk in fks
                ]
            comment = catalog.table_comment(session, schema, table)
            if comment:
                item["comment"] = comment
            out.append(item)
        return out


def _typed_columns(session: Session, schema: str | None, table: str) -> list[tuple[str, str | None]]:
    dialect = sqlglot_dialect(session.backend)
    out = []
    for col in catalog.table_columns(session, schema, table):
        out.append((col["name"], types_map.acp_type(types_map._build(col["type"], dialect))))
    return out


def block_date_ranges(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """MIN/MAX of each date/datetime column (first 15 tables at database/schema level)."""
    started = time.monotonic()
    with _session(resource_id, ctx) as (session, target):
        prep = session.conn.dialect.identifier_preparer
        out = []
        for schema, table in _first_tables(session, target, FIRST_TABLES):
            if time.monotonic() - started > BLOCK_BUDGET_S:
                out.append({"note": "Time budget reached; ask for a table resource_id for the rest."})
                break
            cols = [name for name, kind in _typed_columns(session, schema, table) if kind in ("date", "datetime")]
            if not cols:
                continue
            select = ", ".join(f"MIN({prep.quote(c)}), MAX({prep.quote(c)})" for c in cols)
            row = session.conn.exec_driver_sql(f"SELECT {select} FROM {_quoted(session, schema, table)}").fetchone()
            for i, c in enumerate(cols):
                lo, hi = row[2 * i], row[2 * i + 1]
                if lo is None and hi is None:
                    continue
                out.append({"table": _label(session, schema, table), "column": c, "min": types_map._generic(lo), "max": types_map._generic(hi)})
        return out


def block_frequent_values(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Values of low-cardinality text columns (at most 10 distinct in a sample), with counts."""
    started = time.monotonic()
    with _session(resource_id, ctx) as (session, target):
        prep = session.conn.dialect.identifier_preparer
        out: list[dict[str, Any]] = []
        for schema, table in _first_tables(session, target, FREQUENT_TABLES if not target.table else 1):
            cols = [name for name, kind in _typed_columns(session, schema, table) if kind == "string"][:FREQUENT_COLUMNS]
            for c in cols:
                if time.monotonic() - started > BLOCK_BUDGET_S:
                    out.append({"note": "Time budget reached; ask for a table resource_id for the rest."})
                    return out
                q = prep.quote(c)
                sql = (
                    f"SELECT v, COUNT(*) AS n FROM (SELECT {q} AS v FROM {_quoted(session, schema, table)} LIMIT {FREQUENT_SAMPLE_ROWS}) s "
                    f"WHERE v IS NOT NULL GROUP BY v ORDER BY n DESC, v LIMIT {FREQUENT_MAX_DISTINCT + 1}"
                )
                rows = session.conn.exec_driver_sql(sql).fetchall()
                if not rows or len(rows) > FREQUENT_MAX_DISTINCT:
                    continue
                out.append({
                    "table": _label(session, schema, table),
                    "column": c,
                    "values": [{"value": types_map._generic(v), "count": int(n)} for v, n in rows],
                })
        return out
