"""What the credentials can see: databases, schemas, tables (with row estimates), columns.

Runs on fenced read-only sessions (engines.open_read). Reflection goes through SQLAlchemy's
Inspector; row-count estimates use each engine's statistics instead of counting.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from analytics_acp import CallContext, ResourceNotFound
from sqlalchemy.engine import Connection

from .engines import Session, Source, open_read
from .resource_ids import Target, credential_database, has_schema_level
from .state import DATABASES

log = logging.getLogger(__name__)

SYSTEM_SCHEMAS = {
    "postgresql": {"pg_catalog", "information_schema", "pg_toast"},
    "duckdb": {"information_schema", "pg_catalog"},
    "mysql": {"information_schema", "mysql", "performance_schema", "sys"},
    "mariadb": {"information_schema", "mysql", "performance_schema", "sys"},
}


def source_for(ctx: CallContext, target: Target | None) -> Source:
    """The Source of a call: credentials, config, the target's database and the connector's state (its engines)."""
    credentials = ctx.require_credentials()
    database = target.database if target else credential_database(credentials)
    return Source(credentials=credentials, config=dict(getattr(ctx, "config", None) or {}), database=database,
                  state=ctx.state(DATABASES))


def default_schema(session: Session) -> str | None:
    """The connection's default schema (public, main; the database itself for MySQL)."""
    if session.backend == "duckdb":  # duckdb_engine's inspector does not work with DuckDB 2 catalogs
        return str(session.conn.exec_driver_sql("SELECT current_schema()").scalar())
    try:
        return sa.inspect(session.conn).default_schema_name
    except Exception:
        return None


def server_version(session: Session) -> str:
    """Server version text (no secrets in it)."""
    backend = session.conn.dialect.name
    sql = {"sqlite": "SELECT sqlite_version()", "duckdb": "SELECT version()", "postgresql": "SHOW server_version"}.get(backend, "SELECT version()")
    try:
        return str(session.conn.exec_driver_sql(sql).scalar())
    except Exception:
        info = getattr(session.conn.dialect, "server_version_info", None)
        return ".".join(str(p) for p in info) if info else "unknown"


def list_databases(session: Session) -> list[str]:
    """Databases of the server the user may connect to (one for file databases)."""
    backend = session.backend
    if backend == "postgresql":
        rows = session.conn.exec_driver_sql(
            "SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate "
            "AND has_database_privilege(datname, 'CONNECT') ORDER BY datname"
        )
        return [r[0] for r in rows]
    if backend in ("mysql", "mariadb"):
        return [s for s in sa.inspect(session.conn).get_schema_names() if s not in SYSTEM_SCHEMAS[backend]]
    return [session.source.database] if session.source.database else []


def list_schemas(session: Session) -> list[str]:
    """User schemas of the database (system schemas left out)."""
    backend = session.backend
    if not has_schema_level(backend):
        return []
    if backend == "duckdb":
        rows = session.conn.exec_driver_sql(
            "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = current_database() ORDER BY schema_name"
        )
        names = [r[0] for r in rows]
    else:
        names = sa.inspect(session.conn).get_schema_names()
    hidden = SYSTEM_SCHEMAS.get(backend, set())
    return [n for n in names if n not in hidden and not n.startswith("pg_temp") and not n.startswith("pg_toast")]


def list_tables(session: Session, schema: str | None, limit: int = 500) -> list[dict[str, Any]]:
    """Tables and views of a schema: name, kind and an estimated row count where the engine keeps one."""
    backend = session.backend
    conn = session.conn
    if backend == "postgresql":
        rows = conn.exec_driver_sql(
            "SELECT c.relname, c.relkind, c.reltuples::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %(s)s AND c.relkind IN ('r','p','v','m','f') ORDER BY c.relname LIMIT %(l)s",
            {"s": schema or "public", "l": limit},
        )
        kinds = {"r": "table", "p": "table", "v": "view", "m": "materialized view", "f": "foreign table"}
        return [{"name": r[0], "kind": kinds.get(r[1], "table"), "rows_estimate": (int(r[2]) if r[2] is not None and r[2] >= 0 else None)} for r in rows]
    if backend in ("mysql", "mariadb"):
        rows = conn.exec_driver_sql(
            "SELECT table_name, table_type, table_rows FROM information_schema.tables WHERE table_schema = %(s)s ORDER BY table_name LIMIT %(l)s",
            {"s": schema or session.source.database, "l": limit},
        )
        return [{"name": r[0], "kind": "view" if "VIEW" in str(r[1]) else "table", "rows_estimate": r[2] if "VIEW" not in str(r[1]) else None} for r in rows]
    if backend == "duckdb":
        rows = conn.exec_driver_sql(
            "SELECT table_name, 'table', estimated_size FROM duckdb_tables() WHERE schema_name = ? AND database_name = current_database() "
            "UNION ALL SELECT view_name, 'view', NULL FROM duckdb_views() WHERE schema_name = ? AND database_name = current_database() AND NOT internal "
            "ORDER BY 1 LIMIT ?",
            (schema or "main", schema or "main", limit),
        )
        return [{"name": r[0], "kind": r[1], "rows_estimate": r[2]} for r in rows]
    if backend == "sqlite":
        rows = conn.exec_driver_sql(  # type: ignore[assignment]
            "SELECT name, type FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name LIMIT ?",
            (limit,),
        ).fetchall()
        out = []
        for name, kind in rows:
            estimate = None
            if kind == "table":
                try:  # SQLite keeps no statistics by default; counting is cheap for local files
                    estimate = conn.exec_driver_sql(f"SELECT count(*) FROM {_quote(conn, name)}").scalar()
                except Exception:
                    estimate = None
            out.append({"name": name, "kind": kind, "rows_estimate": estimate})
        return out
    insp = sa.inspect(conn)
    names = [{"name": n, "kind": "table", "rows_estimate": None} for n in insp.get_table_names(schema=schema)]
    names += [{"name": n, "kind": "view", "rows_estimate": None} for n in insp.get_view_names(schema=schema)]
    return sorted(names, key=lambda t: t["name"])[:limit]  # type: ignore[arg-type, return-value]


def table_columns(session: Session, schema: str | None, table: str) -> list[dict[str, Any]]:
    """Reflected columns: name, type text, nullable, comment; raises ResourceNotFound for an unknown table."""
    if session.backend == "duckdb":
        rows = session.conn.exec_driver_sql(
            "SELECT column_name, data_type, is_nullable, comment FROM duckdb_columns() WHERE database_name = current_database() "
            "AND schema_name = ? AND table_name = ? ORDER BY column_index",
            (schema or default_schema(session), table),
        ).fetchall()
        if not rows:
            raise ResourceNotFound(f"Table {schema}.{table} does not exist. Call autocontext for the database to list its tables.")
        return [{"name": r[0], "type": str(r[1]), "nullable": bool(r[2]), "comment": r[3]} for r in rows]
    try:
        cols = sa.inspect(session.conn).get_columns(table, schema=schema)
    except sa.exc.NoSuchTableError:
        where = f"{schema}.{table}" if schema else table
        raise ResourceNotFound(f"Table {where} does not exist. Call autocontext for the database to list its tables.") from None
    json_cols = _mariadb_json_columns(session, schema, table) if session.backend == "mariadb" else set()
    return [
        {"name": c["name"], "type": "JSON" if c["name"] in json_cols else type_text(c["type"], session.conn),
         "nullable": bool(c.get("nullable", True)), "comment": c.get("comment")}
        for c in cols
    ]


def _mariadb_json_columns(session: Session, schema: str | None, table: str) -> set[str]:
    """MariaDB stores JSON as LONGTEXT with a json_valid(col) check: read the checks back."""
    import sqlglot
    from sqlglot import exp

    try:
        rows = session.conn.exec_driver_sql(
            "SELECT check_clause FROM information_schema.check_constraints WHERE constraint_schema = %(s)s AND table_name = %(t)s",
            {"s": schema or session.source.database, "t": table},
        ).fetchall()
    except Exception:
        return set()
    out = set()
    for (clause,) in rows:
        try:
            tree = sqlglot.parse_one(str(clause), read="mysql")
        except Exception:
            continue
        name = (tree.name if isinstance(tree, exp.Anonymous) else tree.sql_name()).lower() if isinstance(tree, exp.Func) else ""
        if name in ("json_valid", "is_json") or isinstance(tree, exp.IsJSON if hasattr(exp, "IsJSON") else ()):
            col = tree.find(exp.Column)
            if col is not None:
                out.add(col.name)
    return out


def has_table(session: Session, schema: str | None, table: str) -> bool:
    """Whether the table (or view) exists."""
    if session.backend == "duckdb":
        return any(t["name"] == table for t in list_tables(session, schema or default_schema(session), 100_000))
    return sa.inspect(session.conn).has_table(table, schema=schema)


def primary_key(session: Session, schema: str | None, table: str) -> list[str]:
    """Primary key columns (empty when none or unknown)."""
    try:
        if session.backend == "duckdb":
            row = session.conn.exec_driver_sql(
                "SELECT constraint_column_names FROM duckdb_constraints() WHERE database_name = current_database() "
                "AND schema_name = ? AND table_name = ? AND constraint_type = 'PRIMARY KEY'",
                (schema or default_schema(session), table),
            ).fetchone()
            return list(row[0]) if row else []
        return list(sa.inspect(session.conn).get_pk_constraint(table, schema=schema).get("constrained_columns") or [])
    except Exception:
        return []


def foreign_keys(session: Session, schema: str | None, table: str) -> list[dict[str, Any]]:
    """Foreign keys as {columns, referred_schema, referred_table, referred_columns}."""
    try:
        if session.backend == "duckdb":
            rows = session.conn.exec_driver_sql(
                "SELECT constraint_column_names, referenced_table, referenced_column_names FROM duckdb_constraints() "
                "WHERE database_name = current_database() AND schema_name = ? AND table_name = ? AND constraint_type = 'FOREIGN KEY'",
                (schema or default_schema(session), table),
            ).fetchall()
            return [{"constrained_columns": list(r[0]), "referred_schema": None, "referred_table": r[1], "referred_columns": list(r[2])} for r in rows]
        return list(sa.inspect(session.conn).get_foreign_keys(table, schema=schema))  # type: ignore[arg-type]
    except Exception:
        return []


def table_comment(session: Session, schema: str | None, table: str) -> str | None:
    """The table's comment, if any."""
    try:
        if session.backend == "duckdb":
            return session.conn.exec_driver_sql(
                "SELECT comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ? AND table_name = ?",
                (schema or default_schema(session), table),
            ).scalar()
        return sa.inspect(session.conn).get_table_comment(table, schema=schema).get("text")
    except Exception:
        return None


def type_text(sa_type: Any, conn: Connection) -> str:
    """A column type as the database names it (VARCHAR(20), DATE, NUMERIC(10, 2)...)."""
    try:
        return str(sa_type.compile(dialect=conn.dialect))
    except Exception:
        return str(type(sa_type).__name__).upper()


def schema_for_inference(session: Session, tables: list[str], default: str | None) -> dict[str, Any]:
    """{[schema:]{table: {column: type}}} for sqlglot, from cached reflection of the referenced tables."""

    def reflect(schema: str | None, table: str) -> dict[str, str]:
        return {c["name"]: c["type"] for c in table_columns(session, schema, table)}

    return _inference_schema(session.source, tables, default, reflect) or {}


def cached_schema_for_inference(source: Source, tables: list[str], default: str | None) -> dict[str, Any] | None:
    """``schema_for_inference`` from the column cache alone, without a connection.

    None when something needs the database: a table not reflected yet (or expired), or a
    schema-qualified query with unqualified tables and no known default schema.
    """
    if (not default and 0 < len(tables) <= 12 and max(t.count(".") for t in tables) == 1
            and any("." not in t for t in tables)):
        return None  # the connection's default schema is needed
    return _inference_schema(source, tables, default, None)


def _inference_schema(source: Source, tables: list[str], default: str | None,
                      reflect: Callable[[str | None, str], dict[str, str]] | None) -> dict[str, Any] | None:
    """The nested schema of ``tables`` from the column cache, reflecting misses with ``reflect``.

    {} when sqlglot gets no schema (too many tables, names deeper than schema.table, a failed
    reflection); None when a table is not cached and there is no ``reflect``.
    """
    if not tables or len(tables) > 12:
        return {}
    depth = max(len(t.split(".")) for t in tables)
    if depth > 2:
        return {}
    ident = source.credentials_key
    cache = source.state.columns
    nested: dict[str, Any] = {}
    for name in tables:
        parts = name.split(".")
        schema = parts[0] if len(parts) == 2 else None
        key = (ident, source.database, schema, parts[-1])
        columns = cache.get(key)
        if columns is None:
            if reflect is None:
                return None
            try:
                columns = reflect(schema, parts[-1])
            except Exception:
                return {}
            cache.put(key, columns)
        if depth == 2:
            nested.setdefault(schema or default or "", {})[parts[-1]] = columns
        else:
            nested[parts[-1]] = columns
    return nested


def resolve_schema_or_table(target: Target, ctx: CallContext) -> Target:
    """``<database>.<name>``: a schema if one has that name, else a table of the default schema."""
    try:
        source = source_for(ctx, target)
        with open_read(source, timeout_s=10) as session:
            if target.schema in list_schemas(session):
                return target
            schema = default_schema(session)
            names = {t["name"] for t in list_tables(session, schema)}
            if target.schema in names:
                return Target(database=target.database, schema=schema, table=target.schema)
    except Exception as exc:  # unreachable source: keep the schema reading; the call reports the real error
        log.debug("schema-or-table lookup failed: %s", type(exc).__name__)
    return target


def _quote(conn: Connection, name: str) -> str:
    return conn.dialect.identifier_preparer.quote(name)
