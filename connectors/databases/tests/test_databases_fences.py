"""The second layer alone (10.4): execute_sql with the sqlglot guard switched off, on every database.

The guard is replaced by one that accepts any text, so each statement reaches the database's own
fence (SQLite mode=ro + authorizer, DuckDB read_only + locked configuration, PostgreSQL READ ONLY
transaction + one statement per execution, MariaDB READ ONLY transaction without multi-statements).
Every data-changing statement must fail with a typed error and leave the data unchanged; the tests
read the tables (and the directory) afterwards.

Statements the database itself does not refuse to a privileged user (MariaDB ``INTO OUTFILE``,
``SET GLOBAL``, ``GET_LOCK``; PostgreSQL ``COPY ... TO`` a server file, advisory locks) are stopped
by the guard only; they are in the guard's corpus (test_databases_readonly / test_databases_services),
and one of them (a replication slot) is checked against the server below.
DuckDB temporary tables and CHECKPOINT are accepted on a read-only file and change nothing in it.
"""

from __future__ import annotations

import os
import sqlite3

import duckdb
import pytest
from analytics_acp import AcpError
from analytics_acp_databases.arguments import ExecuteSql
from analytics_acp_databases.engines import USER_SQL, Source, open_read
from analytics_acp_databases.execute import run_execute_sql
from sqlalchemy.exc import DBAPIError


def _run(sql, ctx):
    """Run and consume; return the error (a typed AcpError) or None when the database accepted it."""
    try:
        list(run_execute_sql(ExecuteSql.parse({"sql": sql}), ctx).rows)
    except AcpError as exc:
        return exc
    return None


# --- SQLite

SQLITE_WRITES = [
    "DELETE FROM ventas",
    "UPDATE ventas SET pedidos = 0",
    "INSERT INTO ventas SELECT * FROM ventas",
    "REPLACE INTO ventas VALUES ('2026-09-28', 'online', 1, 1)",
    "SELECT 1; DELETE FROM ventas",
    "COMMIT; DELETE FROM ventas",
    "CREATE TABLE t2 AS SELECT * FROM ventas",
    "DROP TABLE ventas",
    "CREATE TEMP TABLE t3 (a INTEGER)",
    "ATTACH DATABASE '{dir}/evil.db' AS evil",
    "PRAGMA query_only = OFF",
    "PRAGMA writable_schema = ON",
    "PRAGMA journal_mode = DELETE",
    "VACUUM INTO '{dir}/copy.db'",
    "SELECT load_extension('{dir}/x')",
]


def _sqlite_state(path):
    with sqlite3.connect(path) as con:
        return con.execute("SELECT count(*), sum(pedidos), (SELECT group_concat(name) FROM sqlite_master) FROM ventas").fetchone()


@pytest.mark.parametrize("sql", SQLITE_WRITES)
def test_sqlite_fence_without_guard(sql, no_guard, sales_db, make_ctx, tmp_path):
    before, files = _sqlite_state(sales_db), sorted(os.listdir(tmp_path))
    error = _run(sql.format(dir=tmp_path), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    assert error is not None, "the database accepted a write"
    assert _sqlite_state(sales_db) == before
    assert sorted(os.listdir(tmp_path)) == files


# --- DuckDB

DUCK_WRITES = [
    "DELETE FROM ventas",
    "UPDATE ventas SET pedidos = 0",
    "INSERT INTO ventas SELECT * FROM ventas",
    "SELECT 1; DELETE FROM ventas",
    "COMMIT; DELETE FROM ventas",
    "CREATE TABLE t2 AS SELECT 1 AS a",
    "DROP TABLE ventas",
    "COPY ventas TO '{dir}/out.csv'",
    "COPY (SELECT 1) TO '{dir}/out.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{dir}/exp'",
    "ATTACH '{dir}/evil.duckdb' AS evil",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "RESET lock_configuration",
    "SET lock_configuration = false; SET enable_external_access = true; COPY ventas TO '{dir}/out2.csv'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_csv('{dir}/x.csv')",
]


def _duck_state(path):
    con = duckdb.connect(path, read_only=True)
    try:
        return con.execute("SELECT count(*), sum(pedidos), (SELECT string_agg(table_name, ',') FROM duckdb_tables()) FROM ventas").fetchone()
    finally:
        con.close()


@pytest.mark.parametrize("sql", DUCK_WRITES)
def test_duckdb_fence_without_guard(sql, no_guard, duck_db, make_ctx, tmp_path):
    (tmp_path / "x.csv").write_text("a\n1\n")
    before = _duck_state(duck_db)
    files = [f for f in sorted(os.listdir(tmp_path)) if not f.endswith(".wal")]
    error = _run(sql.format(dir=tmp_path), make_ctx({"type": "duckdb", "path": duck_db}, "tienda"))
    assert error is not None, "the database accepted the statement"
    assert _duck_state(duck_db) == before
    assert [f for f in sorted(os.listdir(tmp_path)) if not f.endswith(".wal")] == files


# --- PostgreSQL


@pytest.fixture
def pg_orders(pg_schema):
    creds, schema, admin = pg_schema
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE TABLE "{schema}".orders (id int PRIMARY KEY, amount numeric)')
        conn.exec_driver_sql(f'INSERT INTO "{schema}".orders VALUES (1, 10), (2, 20)')
        conn.exec_driver_sql(f'CREATE SEQUENCE "{schema}".seq')
    return creds, schema, admin


def _pg_state(admin, schema):
    with admin.connect() as conn:
        return (
            conn.exec_driver_sql(f'SELECT count(*), sum(amount) FROM "{schema}".orders').fetchone(),
            conn.exec_driver_sql(f'SELECT last_value, is_called FROM "{schema}".seq').fetchone(),
            conn.exec_driver_sql(f"SELECT count(*) FROM pg_tables WHERE schemaname = '{schema}'").scalar(),
            conn.exec_driver_sql("SELECT count(*) FROM pg_largeobject_metadata").scalar(),
        )


PG_WRITES = [
    "DELETE FROM orders",
    "UPDATE orders SET amount = 0",
    "INSERT INTO orders VALUES (3, 30)",
    "WITH x AS (DELETE FROM orders RETURNING *) SELECT * FROM x",
    "SELECT 1; DELETE FROM orders",
    "COMMIT; DELETE FROM {s}.orders",
    "COMMIT; BEGIN READ WRITE; DELETE FROM {s}.orders; COMMIT",
    "SET default_transaction_read_only = off; COMMIT; DELETE FROM {s}.orders",
    "SELECT * INTO stolen FROM orders",
    "CREATE TABLE t2 AS SELECT 1 AS a",
    "TRUNCATE orders",
    "DROP TABLE orders",
    "SELECT nextval('seq')",
    "SELECT setval('seq', 42)",
    "SELECT * FROM orders FOR UPDATE",
    "COPY orders FROM '/etc/hostname'",
    "DO $$ BEGIN DELETE FROM orders; END $$",
    "EXPLAIN ANALYZE DELETE FROM orders",
    "EXPLAIN SELECT 1; DELETE FROM orders",
    "EXPLAIN SELECT 1; COMMIT; BEGIN READ WRITE; DELETE FROM {s}.orders; COMMIT",
    "EXPLAIN SELECT 1; SET default_transaction_read_only = off; COMMIT; DELETE FROM {s}.orders",
]


@pytest.mark.services
@pytest.mark.parametrize("sql", PG_WRITES)
def test_pg_fence_without_guard(sql, no_guard, pg_orders, make_ctx):
    creds, schema, admin = pg_orders
    before = _pg_state(admin, schema)
    error = _run(sql.format(s=f'"{schema}"'), make_ctx(creds, f"test.{schema}"))
    assert error is not None, "the database accepted a write"
    assert _pg_state(admin, schema) == before


@pytest.mark.services
def test_pg_side_effects_the_fence_lets_run_are_rolled_back(no_guard, pg_orders, make_ctx):
    """lo_import and set_config are not refused by a READ ONLY transaction; the rollback at the end undoes them."""
    creds, schema, admin = pg_orders
    before = _pg_state(admin, schema)
    ctx = make_ctx(creds, f"test.{schema}")
    assert _run("SELECT lo_import('/etc/hostname')", ctx) is None
    assert _run("SELECT set_config('default_transaction_read_only', 'off', false)", ctx) is None
    assert _run("DELETE FROM orders", ctx) is not None
    assert _pg_state(admin, schema) == before


@pytest.mark.services
def test_pg_admin_functions_that_outlive_the_rollback_are_stopped_by_the_guard(pg_orders, make_ctx):
    """A superuser's READ ONLY transaction still creates replication slots: only the guard stops it."""
    from analytics_acp import ReadOnlyViolation

    creds, schema, admin = pg_orders
    slot = f"acp_{schema}"
    with pytest.raises(ReadOnlyViolation):
        run_execute_sql(ExecuteSql.parse({"sql": f"SELECT pg_create_physical_replication_slot('{slot}')"}), make_ctx(creds, f"test.{schema}"))
    with admin.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s", (slot,)).scalar() == 0


@pytest.mark.services
def test_pg_user_sql_is_one_statement_per_execution(pg_orders):
    """On a client-side cursor (EXPLAIN, validate_sql's probe) the model's SQL uses the extended protocol."""
    creds, schema, admin = pg_orders
    before = _pg_state(admin, schema)
    with open_read(Source(creds, {}, "test"), schema) as session:
        conn = session.conn.execution_options(no_parameters=True, **{USER_SQL: True})
        with pytest.raises(DBAPIError) as info:
            conn.exec_driver_sql(f'COMMIT; BEGIN READ WRITE; DELETE FROM "{schema}".orders; COMMIT')
        assert "multiple commands" in str(info.value)
    assert _pg_state(admin, schema) == before


# --- MariaDB


@pytest.fixture
def maria_orders(maria_db):
    creds, name, admin = maria_db
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE `{name}`.orders (id INT PRIMARY KEY, amount DECIMAL(10,2))")
        conn.exec_driver_sql(f"INSERT INTO `{name}`.orders VALUES (1, 10), (2, 20)")
        conn.exec_driver_sql(f"CREATE SEQUENCE `{name}`.seq")
    return creds, name, admin


def _maria_state(admin, name):
    with admin.connect() as conn:
        return (
            conn.exec_driver_sql(f"SELECT count(*), sum(amount) FROM `{name}`.orders").fetchone(),
            conn.exec_driver_sql(f"SELECT next_not_cached_value FROM `{name}`.seq").scalar(),
            sorted(r[0] for r in conn.exec_driver_sql(f"SHOW FULL TABLES FROM `{name}`")),
        )


MARIA_WRITES = [
    "DELETE FROM orders",
    "UPDATE orders SET amount = 0",
    "INSERT INTO orders VALUES (3, 30)",
    "REPLACE INTO orders VALUES (1, 99)",
    "SELECT 1; DELETE FROM orders",
    "COMMIT; DELETE FROM orders",
    "CREATE TABLE t2 AS SELECT 1 AS a",
    "CREATE TEMPORARY TABLE t3 (a INT)",
    "DROP TABLE orders",
    "TRUNCATE orders",
    "ALTER TABLE orders ADD COLUMN b INT",
    "RENAME TABLE orders TO orders2",
    "SELECT NEXTVAL(seq)",
    "LOAD DATA INFILE '/etc/hostname' INTO TABLE orders",
    "SELECT * FROM orders FOR UPDATE",
    "SET SESSION TRANSACTION READ WRITE; DELETE FROM orders",
]


@pytest.mark.services
@pytest.mark.parametrize("sql", MARIA_WRITES)
def test_maria_fence_without_guard(sql, no_guard, maria_orders, make_ctx):
    creds, name, admin = maria_orders
    before = _maria_state(admin, name)
    error = _run(sql, make_ctx(creds, name))
    assert error is not None, "the database accepted a write"
    assert _maria_state(admin, name) == before


@pytest.mark.services
def test_maria_session_changes_do_not_outlive_the_call(no_guard, maria_orders, make_ctx):
    """A statement that ends the transaction or flips the session mode only affects its own call."""
    creds, name, admin = maria_orders
    before = _maria_state(admin, name)
    for opener in ("COMMIT", "SET SESSION TRANSACTION READ WRITE", "SET SESSION max_statement_time = 0"):
        _run(opener, make_ctx(creds, name))  # accepted or not, it returns no rows
        assert _run("DELETE FROM orders", make_ctx(creds, name)) is not None
    assert _maria_state(admin, name) == before
