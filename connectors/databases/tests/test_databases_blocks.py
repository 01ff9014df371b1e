"""Autocontext blocks on every engine: views in `tables`, foreign keys, the first-15-tables cap, row estimates."""

from __future__ import annotations

import sqlite3

import duckdb
import pytest
from analytics_acp_databases import blocks
from analytics_acp_databases.blocks import FIRST_TABLES

# 18 filler tables (more than the 15 of table_schemas), a parent/child pair with a foreign key, a view.
N_FILLER = 18


def _ddl(quote, schema_prefix=""):
    p = schema_prefix
    stmts = [f"CREATE TABLE {p}{quote(f't{i:02d}')} (id INTEGER PRIMARY KEY)" for i in range(N_FILLER)]
    stmts += [
        f"CREATE TABLE {p}customers (id INTEGER PRIMARY KEY, name VARCHAR(20))",
        f"CREATE TABLE {p}orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES {p}customers (id), amount INTEGER)",
        f"CREATE VIEW {p}big_orders AS SELECT * FROM {p}orders WHERE amount > 10",
        f"INSERT INTO {p}customers VALUES (1, 'ana'), (2, 'luis')",
        f"INSERT INTO {p}orders VALUES (1, 1, 5), (2, 1, 50), (3, 2, 70)",
    ]
    return stmts


def _check(ctx, database_id, table_id, label):
    """Assertions shared by every engine; label(name) is how the engine names a table in blocks."""
    tables = {t["name"]: t for t in blocks.block_tables(database_id, ctx)["tables"]}
    assert tables[label("big_orders")]["kind"] == "view" and "rows_estimate" not in tables[label("big_orders")]
    assert tables[label("orders")]["kind"] == "table"
    schemas = blocks.block_table_schemas(database_id, ctx)
    assert len(schemas) == FIRST_TABLES  # database level: the first 15 tables only
    orders = blocks.block_table_schemas(table_id, ctx)
    assert len(orders) == 1 and orders[0]["table"] == label("orders")
    fk = orders[0]["foreign_keys"]
    assert fk == [{"columns": ["customer_id"], "references": f"{label('customers')}(id)"}]
    assert {c["name"]: c.get("primary_key", False) for c in orders[0]["columns"]} == {"id": True, "customer_id": False, "amount": False}
    return tables


def test_sqlite_blocks_views_keys_and_cap(tmp_path, make_ctx):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        for s in _ddl(lambda n: n):
            con.execute(s)
    ctx = make_ctx({"type": "sqlite", "path": str(path)}, tool="autocontext")
    tables = _check(ctx, "shop", "shop.orders", lambda n: n)
    assert tables["orders"]["rows_estimate"] == 3


def test_duckdb_blocks_views_keys_and_cap(tmp_path, make_ctx):
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    for s in _ddl(lambda n: n):
        con.execute(s)
    con.close()
    ctx = make_ctx({"type": "duckdb", "path": str(path)}, tool="autocontext")
    tables = _check(ctx, "shop", "shop.main.orders", lambda n: f"main.{n}")
    assert tables["main.orders"]["rows_estimate"] == 3


@pytest.mark.services
def test_pg_blocks_views_keys_and_cap(pg_schema, make_ctx):
    creds, schema, admin = pg_schema
    with admin.begin() as conn:
        for s in _ddl(lambda n: n, f'"{schema}".'):
            conn.exec_driver_sql(s)
        conn.exec_driver_sql(f'ANALYZE "{schema}".orders')
    ctx = make_ctx(creds, tool="autocontext")
    tables = _check(ctx, f"test.{schema}", f"test.{schema}.orders", lambda n: f"{schema}.{n}")
    assert tables[f"{schema}.orders"]["rows_estimate"] == 3  # pg_class.reltuples after ANALYZE


@pytest.mark.services
def test_maria_blocks_views_keys_and_cap(maria_db, make_ctx):
    creds, name, admin = maria_db
    with admin.begin() as conn:
        for s in _ddl(lambda n: n, f"`{name}`."):
            conn.exec_driver_sql(s)
        conn.exec_driver_sql(f"ANALYZE TABLE `{name}`.orders")
    ctx = make_ctx(creds, tool="autocontext")
    tables = _check(ctx, name, f"{name}.orders", lambda n: n)
    assert tables["orders"]["rows_estimate"] == 3
