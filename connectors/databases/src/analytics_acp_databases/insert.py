"""insert_rows (8.8.2): write a host dataset (table_ref) into a table, in one transaction.

Order matters: the access mode (10.6, with table_rules) is checked before the host is asked for
the rows; the rows come from ``acp/read_table`` only; every value is converted to the target
column's type before the first INSERT, and any failure rolls the whole transaction back.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import logging
from typing import Any

import anyio
import sqlalchemy as sa
from analytics_acp import CallContext, Info, InvalidArguments
from sqlalchemy.exc import DBAPIError

from . import catalog
from .arguments import InsertRows
from .engines import Source, open_write
from .execute import call_target
from .resource_ids import Target, has_schema_level, parse_target, split_parts
from .sqlerrors import map_error

log = logging.getLogger(__name__)

CHUNK_ROWS = 1000


def resolve_table(table: str, base: Target, credentials: dict[str, Any], backend: str, default_schema: str | None) -> Target:
    """The target table: relative names resolve against the call's resource (database, schema)."""
    parts = split_parts(table, backend)
    if len(parts) == 1:
        return Target(database=base.database, schema=base.schema or default_schema, table=parts[0])
    if has_schema_level(backend):
        if len(parts) == 2:
            return Target(database=base.database, schema=parts[0], table=parts[1])
        return parse_target(table, credentials)
    full = parse_target(table, credentials)
    if not full.table:
        raise InvalidArguments(f"table {table!r} names a database, not a table: use <table> or <database>.<table>.")
    return full


async def run_insert_rows(arguments: InsertRows, ctx: CallContext) -> Info:
    """Check access, read the host table, write it in one transaction; report rows written."""
    credentials = ctx.require_credentials()
    mode, ref = arguments.mode, arguments.table_ref
    base = call_target(ctx)
    source = catalog.source_for(ctx, base)
    backend = source.backend
    target = resolve_table(arguments.table, base, credentials, backend, (ctx.config or {}).get("default_schema"))
    source = catalog.source_for(ctx, target)
    table_id = target.id(backend)
    ctx.check_access(table_id, "replace" if mode == "replace" else "add")
    host = await ctx.read_table(ref)
    if not host.columns:
        raise InvalidArguments(f"Host table {ref!r} has no columns; nothing to insert.")
    create = arguments.create_if_missing
    written, created = await anyio.to_thread.run_sync(_write, source, target, host, create, mode)
    return Info(
        data={"table": table_id, "rows_written": written, "created": created, "mode": mode, "table_ref": ref},
        title=f"insert_rows · {table_id}",
    )


def _write(source: Source, target: Target, host: Any, create: bool, mode: str) -> tuple[int, bool]:
    is_duckdb = source.credentials.get("type") == "duckdb"
    lock = source.file_lock() if is_duckdb else None
    if lock:
        lock.acquire()
    try:
        if is_duckdb:
            source.dispose_file_engines()  # DuckDB: one file cannot be open read-only and read-write at once
        conn = open_write(source)
        created: list[sa.Table] = []
        try:
            with conn.begin():
                return _write_in(conn, source, target, host, create, mode, created)
        except Exception as exc:
            if created and conn.dialect.name == "mysql":
                # MySQL/MariaDB commit DDL implicitly: undo the CREATE by hand, once the failed
                # transaction has been rolled back (no statement can run inside it any more).
                _drop_quietly(conn, created[0])
            if isinstance(exc, DBAPIError):
                raise map_error(exc, source.credentials, target.id(source.backend), source.timeout_s, writing=True) from None
            raise
        finally:
            conn.close()
    finally:
        if is_duckdb:
            source.dispose_file_engines()
        if lock:
            lock.release()


def _write_in(conn: sa.Connection, source: Source, target: Target, host: Any, create: bool, mode: str,
              created_tables: list[sa.Table]) -> tuple[int, bool]:
    schema = target.schema if has_schema_level(source.backend) else None
    table_id = target.id(source.backend)
    created = False
    if not _has_table(conn, source, schema, target.table):  # type: ignore[arg-type]
        if not create:
            raise InvalidArguments(
                f"Table {table_id} does not exist. Set create_if_missing: true to create it from the dataset's columns, "
                f"or call autocontext for {target.database} to see the tables."
            )
        columns = [sa.Column(name, _sa_type(host.header_type(name), conn.dialect.name)) for name in host.columns]
        table = sa.Table(target.table, sa.MetaData(), *columns, schema=schema)  # type: ignore[arg-type]
        created = True  # created below, after every value converted
    else:
        table = _existing_table(conn, source, schema, target.table)  # type: ignore[arg-type]
        unknown = [c for c in host.columns if c not in table.c]
        if unknown:
            raise InvalidArguments(
                f"Columns {', '.join(unknown)} of the dataset are not in {table_id} (columns: {', '.join(table.c.keys())}). "
                "Rename them in the dataset (for example with a query) before inserting."
            )
    converters = {name: _converter(table.c[name].type, conn.dialect.name) for name in host.columns}
    rows = []
    for i, row in enumerate(host.rows):
        out = {}
        for name in host.columns:
            value = row.get(name)
            try:
                out[name] = None if value is None or value == "" and not isinstance(table.c[name].type, sa.String) else converters[name](value)
            except (ValueError, TypeError, decimal.InvalidOperation):
                raise InvalidArguments(
                    f"Row {i + 1}, column {name}: {str(value)[:40]!r} is not a valid {table.c[name].type}. Nothing was written."
                ) from None
        rows.append(out)
    if created:
        table.create(conn)
        created_tables.append(table)
    if mode == "replace":
        conn.execute(table.delete())
    for start in range(0, len(rows), CHUNK_ROWS):
        conn.execute(table.insert(), rows[start : start + CHUNK_ROWS])
    return len(rows), created


def _drop_quietly(conn: sa.Connection, table: sa.Table) -> None:
    try:
        with conn.begin():
            table.drop(conn)
    except Exception as exc:  # the insert's own error is the one to report
        log.debug("dropping the half-created table failed: %s", type(exc).__name__)


class _Bare:
    """Adapter giving catalog functions a session-like view of a write connection."""

    def __init__(self, conn: sa.Connection, source: Source):
        self.conn, self.source, self.backend = conn, source, conn.dialect.name


def _has_table(conn: sa.Connection, source: Source, schema: str | None, table: str) -> bool:
    return catalog.has_table(_Bare(conn, source), schema, table)  # type: ignore[arg-type]


def _existing_table(conn: sa.Connection, source: Source, schema: str | None, table: str) -> sa.Table:
    """The target as a SQLAlchemy Table: reflected, or (DuckDB, whose reflection is broken) built from duckdb_columns()."""
    if conn.dialect.name != "duckdb":
        return sa.Table(table, sa.MetaData(), schema=schema, autoload_with=conn)
    from sqlglot import exp

    from .types_map import acp_type

    columns = catalog.table_columns(_Bare(conn, source), schema, table)  # type: ignore[arg-type]
    return sa.Table(
        table, sa.MetaData(),
        *[sa.Column(c["name"], _sa_type(acp_type(exp.DataType.build(c["type"], dialect="duckdb")), "duckdb")) for c in columns],
        schema=schema,
    )


def _sa_type(acp: str | None, dialect: str) -> Any:
    aware = dialect in ("postgresql", "duckdb")
    return {
        "integer": sa.BigInteger(),
        "number": sa.Double(),
        "boolean": sa.Boolean(),
        "date": sa.Date(),
        "datetime": sa.DateTime(timezone=aware),
        "json": sa.JSON() if dialect != "duckdb" else sa.Text(),
    }.get(acp or "string", sa.Text())


def _parse_datetime(value: Any, aware_ok: bool) -> dt.datetime:
    if isinstance(value, dt.datetime):
        parsed = value
    else:
        parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if parsed.tzinfo is not None and not aware_ok:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "t", "1", "yes"):
        return True
    if text in ("false", "f", "0", "no"):
        return False
    raise ValueError(value)


def _converter(sa_type: Any, dialect: str) -> Any:
    """Host value -> Python value the driver accepts for this column type."""
    aware_ok = dialect in ("postgresql", "duckdb")
    if isinstance(sa_type, sa.Boolean):
        return _parse_bool
    if isinstance(sa_type, sa.DateTime):
        return lambda v: _parse_datetime(v, aware_ok)
    if isinstance(sa_type, sa.Date):
        return lambda v: v if isinstance(v, dt.date) else dt.date.fromisoformat(str(v)[:10])
    if isinstance(sa_type, sa.Integer):
        return lambda v: int(decimal.Decimal(str(v))) if not isinstance(v, int) else v
    if isinstance(sa_type, sa.Numeric):
        return lambda v: v if isinstance(v, (int, float)) and not isinstance(v, bool) else float(decimal.Decimal(str(v)))
    if isinstance(sa_type, sa.JSON):
        return lambda v: json.loads(v) if isinstance(v, str) else v
    return lambda v: v if isinstance(v, str) else json.dumps(v) if isinstance(v, (dict, list)) else str(v)
