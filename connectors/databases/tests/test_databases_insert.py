"""insert_rows (8.8.2, 10.6): access modes and table_rules, create_if_missing, replace, all or nothing."""

from __future__ import annotations

import json
import sqlite3

import anyio
import duckdb
import pytest
from analytics_acp import HostTable, HostTablesUnsupported, InvalidArguments, ReadOnlyViolation
from analytics_acp.errors import TableNotFound
from analytics_acp_databases.arguments import ExecuteSql, InsertRows
from analytics_acp_databases.execute import run_execute_sql
from analytics_acp_databases.insert import run_insert_rows

HEADERS = [{"name": "fecha", "type": "date"}, {"name": "canal", "type": "string"}, {"name": "pedidos", "type": "integer"}, {"name": "importe", "type": "number"}]
ROWS = [{"fecha": "2026-09-29", "canal": "online", "pedidos": 100, "importe": 5400.5}, {"fecha": "2026-09-30", "canal": "online", "pedidos": "101", "importe": "5500"}]


def _tables():
    return {"ds_forecast": HostTable(ref="ds_forecast", headers=HEADERS, rows=[dict(r) for r in ROWS])}


def _count(path, table="ventas"):
    with sqlite3.connect(path) as con:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _insert(ctx, **arguments):
    return anyio.run(run_insert_rows, InsertRows.parse(arguments), ctx)


@pytest.mark.parametrize(
    ("config", "allowed"),
    [
        ({}, False),
        ({"access_mode": "onlyRead"}, False),
        ({"access_mode": "readAndOnlyAdd"}, True),
        ({"access_mode": "full"}, True),
        ({"access_mode": "onlyRead", "table_rules": json.dumps([{"pattern": r"^ventas\.ventas$", "mode": "readAndOnlyAdd"}])}, True),
        ({"access_mode": "full", "table_rules": json.dumps([{"pattern": r"\.ventas$", "mode": "onlyRead"}])}, False),
        ({"access_mode": "onlyRead", "table_rules": json.dumps([{"pattern": "other", "mode": "full"}])}, False),
    ],
)
def test_append_follows_access_mode_and_rules(config, allowed, sales_db, make_ctx):
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", config, tool="insert_rows", tables=_tables())
    if allowed:
        out = _insert(ctx, table_ref="ds_forecast", table="ventas")
        assert out.data == {"table": "ventas.ventas", "rows_written": 2, "created": False, "mode": "append", "table_ref": "ds_forecast"}
        assert _count(sales_db) == 362
    else:
        with pytest.raises(ReadOnlyViolation) as info:
            _insert(ctx, table_ref="ds_forecast", table="ventas")
        assert "access_mode" in info.value.message
        assert _count(sales_db) == 360


def test_access_is_checked_before_the_host_is_asked(sales_db, make_ctx):
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {}, tool="insert_rows", tables=_tables())
    asked = ctx.table_reader.requests
    with pytest.raises(ReadOnlyViolation):
        _insert(ctx, table_ref="ds_forecast", table="ventas")
    assert asked == []


def test_inserted_values_are_typed_and_readable(sales_db, make_ctx, consume):
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=_tables())
    _insert(ctx, table_ref="ds_forecast", table="ventas")
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM ventas WHERE fecha > '2026-09-28' ORDER BY fecha"}), ctx)
    assert consume(ex) == [{"fecha": "2026-09-29", "canal": "online", "pedidos": 100, "importe": 5400.5},
                           {"fecha": "2026-09-30", "canal": "online", "pedidos": 101, "importe": 5500.0}]


def test_create_if_missing_needs_the_flag_and_add_access(sales_db, make_ctx):
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=_tables())
    with pytest.raises(InvalidArguments) as info:
        _insert(ctx, table_ref="ds_forecast", table="prevision")
    assert "create_if_missing" in info.value.message and "autocontext" in info.value.message
    out = _insert(ctx, table_ref="ds_forecast", table="prevision", create_if_missing=True)
    assert out.data["created"] is True and _count(sales_db, "prevision") == 2
    with sqlite3.connect(sales_db) as con:
        types = {r[1]: r[2] for r in con.execute("PRAGMA table_info(prevision)")}
    assert types == {"fecha": "DATE", "canal": "TEXT", "pedidos": "BIGINT", "importe": "FLOAT"} or types["fecha"] == "DATE"


def test_replace_needs_full(sales_db, make_ctx):
    add = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=_tables())
    with pytest.raises(ReadOnlyViolation):
        _insert(add, table_ref="ds_forecast", table="ventas", mode="replace")
    full = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "full"}, tool="insert_rows", tables=_tables())
    assert _insert(full, table_ref="ds_forecast", table="ventas", mode="replace").data["rows_written"] == 2
    assert _count(sales_db) == 2


def test_bad_value_writes_nothing(sales_db, make_ctx):
    tables = _tables()
    tables["ds_forecast"].rows.append({"fecha": "2026-10-01", "canal": "online", "pedidos": "many", "importe": 1})
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "full"}, tool="insert_rows", tables=tables)
    with pytest.raises(InvalidArguments) as info:
        _insert(ctx, table_ref="ds_forecast", table="ventas", mode="replace")
    assert "Row 3, column pedidos" in info.value.message
    assert _count(sales_db) == 360  # the replace's DELETE never ran or was rolled back


def test_database_failure_mid_insert_rolls_back(sales_db, make_ctx):
    """Duplicate primary key on the second chunk row: the first rows are rolled back too."""
    dup = [dict(ROWS[0]), {"fecha": "2026-09-28", "canal": "online", "pedidos": 1, "importe": 1.0}]
    tables = {"dup": HostTable(ref="dup", headers=HEADERS, rows=dup)}
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=tables)
    from analytics_acp import AcpError

    with pytest.raises(AcpError):
        _insert(ctx, table_ref="dup", table="ventas")
    assert _count(sales_db) == 360


def test_unknown_columns_and_refs(sales_db, make_ctx):
    tables = {"odd": HostTable(ref="odd", headers=[{"name": "fecha", "type": "date"}, {"name": "extra", "type": "string"}], rows=[{"fecha": "2026-01-01", "extra": "x"}])}
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "full"}, tool="insert_rows", tables=tables)
    with pytest.raises(InvalidArguments) as info:
        _insert(ctx, table_ref="odd", table="ventas")
    assert "extra" in info.value.message and "fecha" in info.value.message
    with pytest.raises(TableNotFound):
        _insert(ctx, table_ref="missing", table="ventas")
    no_host = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "full"}, tool="insert_rows")
    with pytest.raises(HostTablesUnsupported):
        _insert(no_host, table_ref="odd", table="ventas")


def test_duckdb_insert_and_query_again(duck_db, make_ctx, consume):
    """DuckDB cannot hold read-only and read-write handles of one file: the connector switches cleanly."""
    rctx = make_ctx({"type": "duckdb", "path": duck_db}, "tienda")
    assert consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT count(*) AS n FROM ventas"}), rctx)) == [{"n": 360}]
    wctx = make_ctx({"type": "duckdb", "path": duck_db}, "tienda.main", {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=_tables())
    out = _insert(wctx, table_ref="ds_forecast", table="ventas")
    assert out.data["table"] == "tienda.main.ventas" and out.data["rows_written"] == 2
    assert consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT count(*) AS n FROM ventas"}), rctx)) == [{"n": 362}]
    out = _insert(wctx, table_ref="ds_forecast", table="nuevo", create_if_missing=True)
    con = duckdb.connect(duck_db, read_only=True)
    try:
        assert con.execute("SELECT fecha, pedidos FROM nuevo ORDER BY fecha").fetchall()[0][1] == 100
    finally:
        con.close()


def test_sqlite_writes_are_one_transaction_including_ddl(sales_db):
    """insert_rows' SQLite connection emits its own BEGIN, so a CREATE TABLE rolls back with the inserts."""
    from analytics_acp_databases.engines import Source, open_write

    conn = open_write(Source({"type": "sqlite", "path": sales_db}))
    try:
        with pytest.raises(RuntimeError):
            with conn.begin():
                conn.exec_driver_sql("CREATE TABLE t_tx (a INTEGER)")
                conn.exec_driver_sql("INSERT INTO ventas VALUES ('2027-01-01', 'x', 1, 1.0)")
                raise RuntimeError("fail after DDL and DML")
    finally:
        conn.close()
    with sqlite3.connect(sales_db) as con:
        assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 't_tx'").fetchone() == (0,)
    assert _count(sales_db) == 360


def test_conversion_errors_happen_before_any_create(sales_db, make_ctx):
    tables = {"bad": HostTable(ref="bad", headers=[{"name": "k", "type": "integer"}], rows=[{"k": 1}, {"k": "not a number"}])}
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=tables)
    with pytest.raises(InvalidArguments):
        _insert(ctx, table_ref="bad", table="nueva", create_if_missing=True)
    with sqlite3.connect(sales_db) as con:
        assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'nueva'").fetchone() == (0,)
