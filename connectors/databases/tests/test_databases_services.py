"""PostgreSQL and MariaDB on 127.0.0.1 (DESIGN.md services): types, fences, bypasses, errors, inserts, blocks.

Each test works in its own schema/database and drops it; skipped with a reason when the server
is absent, failed in CI.
"""

from __future__ import annotations

import uuid

import pytest
from analytics_acp import (
    CredentialsInvalid,
    HostTable,
    InvalidArguments,
    ReadOnlyViolation,
    ResourceNotFound,
    UpstreamError,
)
from analytics_acp_databases import blocks
from analytics_acp_databases.arguments import ExecuteSql, InsertRows, ValidateSql
from analytics_acp_databases.engines import Source, open_read
from analytics_acp_databases.execute import run_execute_sql
from analytics_acp_databases.insert import run_insert_rows
from analytics_acp_databases.resources import list_resources
from analytics_acp_databases.validate import run_validate_sql

pytestmark = pytest.mark.services


def _types(ex):
    return {h.name: h.type for h in ex.headers}


# --- PostgreSQL


@pytest.fixture
def pg(pg_schema):
    creds, schema, admin = pg_schema
    with admin.begin() as conn:
        conn.exec_driver_sql(
            f'CREATE TABLE "{schema}".orders (id bigint PRIMARY KEY, day date NOT NULL, at timestamptz, amount numeric(12,2), '
            f"big bigint, paid boolean, meta jsonb, channel text)"
        )
        conn.exec_driver_sql(f"COMMENT ON COLUMN \"{schema}\".orders.channel IS 'Sales channel'")
        conn.exec_driver_sql(
            f"INSERT INTO \"{schema}\".orders VALUES (1, '2026-09-01', '2026-09-01 10:15:00+02', 1234.56, 9007199254740993, true, '{{\"k\": 1}}', 'web'), "
            f"(2, '2026-09-02', '2026-09-02 00:00:00+00', 10.00, 2, false, '[1, 2]', 'shop')"
        )
        conn.exec_driver_sql(f"CREATE SEQUENCE \"{schema}\".seq")
    return creds, schema, admin


def _pg_count(admin, schema):
    with admin.connect() as conn:
        return conn.exec_driver_sql(f'SELECT count(*), sum(amount) FROM "{schema}".orders').fetchone()


def test_pg_typed_headers(pg, make_ctx, consume):
    creds, schema, _ = pg
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM orders ORDER BY id"}), make_ctx(creds, f"test.{schema}"))
    rows = consume(ex)
    assert _types(ex) == {"id": "integer", "day": "date", "at": "datetime", "amount": "number", "big": "integer", "paid": "boolean", "meta": "json", "channel": "string"}
    assert rows[0] == {"id": 1, "day": "2026-09-01", "at": "2026-09-01T08:15:00.000Z", "amount": 1234.56, "big": 9007199254740993, "paid": True, "meta": {"k": 1}, "channel": "web"}
    assert rows[1]["meta"] == [1, 2]
    assert ex.title == "PostgreSQL · test on 127.0.0.1:5432"


def test_pg_session_is_read_only_with_timeout(pg):
    creds, _, _ = pg
    with open_read(Source(creds, {"statement_timeout_s": 7}, "test")) as session:
        assert session.conn.exec_driver_sql("SHOW transaction_read_only").scalar() == "on"
        assert session.conn.exec_driver_sql("SHOW statement_timeout").scalar() == "7s"


PG_BYPASSES = [
    "DELETE FROM orders",
    "SELECT 1; DELETE FROM orders",
    "COMMIT; DELETE FROM orders",
    "WITH x AS (DELETE FROM orders RETURNING *) SELECT * FROM x",
    "SELECT * INTO stolen FROM orders",
    "COPY orders TO '/tmp/acp_orders.csv'",
    "CALL nothing()",
    "SET default_transaction_read_only = off",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT nextval('seq')",
    "DO $$ BEGIN DELETE FROM orders; END $$",
    "SELECT 1 /* x */; TRUNCATE orders",
    "EXPLAIN ANALYZE DELETE FROM orders",
    "SELECT * FROM orders FOR UPDATE",
]


@pytest.mark.parametrize("sql", PG_BYPASSES)
def test_pg_bypass_corpus(sql, pg, make_ctx):
    creds, schema, admin = pg
    before = _pg_count(admin, schema)
    with pytest.raises(ReadOnlyViolation):
        run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx(creds, f"test.{schema}"))
    assert _pg_count(admin, schema) == before


@pytest.mark.parametrize(
    "sql",
    ["DELETE FROM {s}.orders", "SELECT nextval('{s}.seq')", "CREATE TABLE {s}.x (a int)"],
)
def test_pg_database_fence_alone(sql, pg):
    """Without the guard, the READ ONLY transaction itself refuses writes and side effects."""
    creds, schema, admin = pg
    before = _pg_count(admin, schema)
    from sqlalchemy.exc import DBAPIError

    with open_read(Source(creds, {}, "test")) as session:
        with pytest.raises(DBAPIError) as info:
            session.conn.exec_driver_sql(sql.format(s=f'"{schema}"'))
        assert "read-only transaction" in str(info.value)
    assert _pg_count(admin, schema) == before


def test_pg_set_config_does_not_outlive_the_session(pg):
    """Even a session setting changed on the fenced connection is rolled back with the transaction."""
    creds, _, _ = pg
    source = Source(creds, {}, "test")
    with open_read(source) as session:
        session.conn.exec_driver_sql("SELECT set_config('default_transaction_read_only', 'off', false)")
    with open_read(source) as session:
        assert session.conn.exec_driver_sql("SHOW default_transaction_read_only").scalar() == "on"


def test_pg_unknown_table_and_credentials(pg, make_ctx):
    creds, schema, _ = pg
    with pytest.raises(InvalidArguments) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM nope"}), make_ctx(creds, f"test.{schema}"))
    assert "does not exist" in info.value.message and f"autocontext for test.{schema}" in info.value.message
    bad = {**creds, "user": f"nobody_{uuid.uuid4().hex[:6]}", "password": "S3cr3t-Pa55"}
    with pytest.raises(CredentialsInvalid) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1"}), make_ctx(bad, "test"))
    assert "S3cr3t-Pa55" not in info.value.message
    with pytest.raises(ResourceNotFound):
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1"}), make_ctx(creds, f"nodb_{uuid.uuid4().hex[:6]}"))


def test_pg_url_credentials_are_scrubbed_from_driver_errors(make_ctx, need):
    need(5432, "PostgreSQL")
    url = "postgresql://postgres:TopSecret%21pw@127.0.0.1:5432/test"
    with pytest.raises(InvalidArguments) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM no_such_table_here"}), make_ctx({"type": "url", "url": url}, "test"))
    assert "TopSecret" not in info.value.message and url not in info.value.message
    unreachable = "postgresql://postgres:TopSecret%21pw@127.0.0.1:1/test"
    with pytest.raises(UpstreamError) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1"}), make_ctx({"type": "url", "url": unreachable}, "test"))
    assert "TopSecret" not in info.value.message


def test_pg_statement_timeout(pg, make_ctx, consume):
    creds, schema, _ = pg
    with pytest.raises(UpstreamError) as info:
        consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT pg_sleep(5)"}), make_ctx(creds, f"test.{schema}", {"statement_timeout_s": 0.2})))
    assert "statement_timeout_s" in info.value.message


def test_pg_streams_from_a_server_side_cursor(pg, make_ctx):
    creds, schema, _ = pg
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT g AS n FROM generate_series(1, 25000) g"}), make_ctx(creds, f"test.{schema}"))
    it = iter(ex.rows)
    assert next(it) == (1,)
    assert sum(1 for _ in it) == 24999


def test_pg_insert_rows_modes(pg, make_ctx):
    import anyio

    creds, schema, admin = pg
    host = {"ds": HostTable(ref="ds", headers=[{"name": "d", "type": "date"}, {"name": "v", "type": "number"}, {"name": "ok", "type": "boolean"}],
                            rows=[{"d": "2026-01-01", "v": 1.5, "ok": True}, {"d": "2026-01-02", "v": "2", "ok": "false"}])}
    ro = make_ctx(creds, f"test.{schema}", {}, tool="insert_rows", tables=host)
    with pytest.raises(ReadOnlyViolation):
        anyio.run(run_insert_rows, InsertRows.parse({"table_ref": "ds", "table": "loaded", "create_if_missing": True}), ro)
    add = make_ctx(creds, f"test.{schema}", {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=host)
    info = anyio.run(run_insert_rows, InsertRows.parse({"table_ref": "ds", "table": "loaded", "create_if_missing": True}), add)
    assert info.data["rows_written"] == 2 and info.data["created"] is True and info.data["table"] == f"test.{schema}.loaded"
    with admin.connect() as conn:
        assert conn.exec_driver_sql(f'SELECT d::text, v, ok FROM "{schema}".loaded ORDER BY d').fetchall() == [("2026-01-01", 1.5, True), ("2026-01-02", 2.0, False)]
    with pytest.raises(ReadOnlyViolation):
        anyio.run(run_insert_rows, InsertRows.parse({"table_ref": "ds", "table": "loaded", "mode": "replace"}), add)


def test_pg_blocks_and_listing(pg, make_ctx):
    creds, schema, _ = pg
    ctx = make_ctx(creds, f"test.{schema}", tool="autocontext")
    rid = f"test.{schema}"
    assert blocks.block_database_info(rid, ctx)["engine"] == "PostgreSQL"
    assert {"name": f"{schema}.orders", "kind": "table", "rows_estimate": 2} in blocks.block_tables(rid, ctx)["tables"] or any(
        t["name"] == f"{schema}.orders" for t in blocks.block_tables(rid, ctx)["tables"]
    )
    table = blocks.block_table_schemas(f"{rid}.orders", ctx)[0]
    cols = {c["name"]: c for c in table["columns"]}
    assert cols["id"]["primary_key"] is True and cols["day"]["nullable"] is False and cols["channel"]["comment"] == "Sales channel"
    ranges = {r["column"]: r for r in blocks.block_date_ranges(f"{rid}.orders", ctx)}
    assert ranges["day"]["min"] == "2026-09-01" and ranges["day"]["max"] == "2026-09-02"
    freq = blocks.block_frequent_values(f"{rid}.orders", ctx)
    assert {"value": "web", "count": 1} in freq[0]["values"]
    ids = [r.resource_id for r in list_resources(ctx)]
    assert f"test.{schema}" in ids and f"test.{schema}.orders" in ids


def test_pg_validate_sql_reports_columns_without_running(pg, make_ctx):
    creds, schema, admin = pg
    ctx = make_ctx(creds, f"test.{schema}", tool="validate_sql")
    out = run_validate_sql(ValidateSql.parse({"sql": "SELECT day, sum(amount) AS total FROM orders WHERE day >= '{{start_date}}' GROUP BY day"}), ctx).data
    assert out["valid"] and out["read_only"] and out["columns"] == [{"name": "day", "type": "date"}, {"name": "total", "type": "number"}]
    assert run_validate_sql(ValidateSql.parse({"sql": "DELETE FROM orders"}), ctx).data["statement_type"] == "DELETE"
    assert _pg_count(admin, schema)[0] == 2


# --- MariaDB


@pytest.fixture
def maria(maria_db):
    creds, name, admin = maria_db
    with admin.begin() as conn:
        conn.exec_driver_sql(
            f"CREATE TABLE `{name}`.orders (id BIGINT PRIMARY KEY, day DATE NOT NULL, at DATETIME, amount DECIMAL(12,2), "
            f"big BIGINT, paid BOOLEAN, meta JSON, channel VARCHAR(20) COMMENT 'Sales channel')"
        )
        conn.exec_driver_sql(
            f"INSERT INTO `{name}`.orders VALUES (1, '2026-09-01', '2026-09-01 10:15:00', 1234.56, 9007199254740993, 1, '{{\"k\": 1}}', 'web'), "
            f"(2, '2026-09-02', '2026-09-02 00:00:00', 10.00, 2, 0, '[1, 2]', 'shop')"
        )
    return creds, name, admin


def _maria_count(admin, name):
    with admin.connect() as conn:
        return conn.exec_driver_sql(f"SELECT count(*), sum(amount) FROM `{name}`.orders").fetchone()


def test_maria_typed_headers(maria, make_ctx, consume):
    creds, name, _ = maria
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM orders ORDER BY id"}), make_ctx(creds, name))
    rows = consume(ex)
    assert _types(ex) == {"id": "integer", "day": "date", "at": "datetime", "amount": "number", "big": "integer", "paid": "boolean", "meta": "json", "channel": "string"}
    assert rows[0] == {"id": 1, "day": "2026-09-01", "at": "2026-09-01T10:15:00", "amount": 1234.56, "big": 9007199254740993, "paid": True, "meta": {"k": 1}, "channel": "web"}


MARIA_BYPASSES = [
    "DELETE FROM orders",
    "SELECT 1; DELETE FROM orders",
    "COMMIT; DELETE FROM orders",
    "SELECT * FROM orders INTO OUTFILE '/tmp/acp_out.txt'",
    "SELECT 1 INTO @x",
    "LOAD DATA INFILE '/etc/hostname' INTO TABLE orders",
    "CALL nothing()",
    "SET SESSION TRANSACTION READ WRITE",
    "DO SLEEP(0)",
    "HANDLER orders OPEN",
    "SELECT GET_LOCK('x', 1)",
    "REPLACE INTO orders (id, day) VALUES (1, '2026-01-01')",
    "SELECT 1 /* ; */ ; UPDATE orders SET amount = 0",
    "SELECT * FROM orders FOR UPDATE",
]


@pytest.mark.parametrize("sql", MARIA_BYPASSES)
def test_maria_bypass_corpus(sql, maria, make_ctx):
    creds, name, admin = maria
    before = _maria_count(admin, name)
    with pytest.raises(ReadOnlyViolation):
        run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx(creds, name))
    assert _maria_count(admin, name) == before


def test_maria_database_fence_alone(maria):
    from sqlalchemy.exc import DBAPIError

    creds, name, admin = maria
    before = _maria_count(admin, name)
    with open_read(Source(creds, {}, name)) as session:
        with pytest.raises(DBAPIError) as info:
            session.conn.exec_driver_sql("DELETE FROM orders")
        assert "READ ONLY" in str(info.value).upper()
        with pytest.raises(DBAPIError):  # pymysql sends no multi-statements
            session.conn.exec_driver_sql("SELECT 1; SELECT 2")
    assert _maria_count(admin, name) == before


def test_maria_wrong_password_is_credentials_invalid_and_scrubbed(maria, make_ctx):
    creds, name, admin = maria
    user = f"acp_{uuid.uuid4().hex[:8]}"
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE USER '{user}'@'%%' IDENTIFIED BY 'Right-Pass-1'")
        conn.exec_driver_sql(f"CREATE USER '{user}'@'localhost' IDENTIFIED BY 'Right-Pass-1'")
        conn.exec_driver_sql(f"GRANT SELECT ON `{name}`.* TO '{user}'@'%%'")
        conn.exec_driver_sql(f"GRANT SELECT ON `{name}`.* TO '{user}'@'localhost'")
    try:
        good = {**creds, "user": user, "password": "Right-Pass-1"}
        ok = run_execute_sql(ExecuteSql.parse({"sql": "SELECT count(*) AS n FROM orders"}), make_ctx(good, name))
        assert list(ok.rows) == [(2,)]
        with pytest.raises(CredentialsInvalid) as info:
            run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1"}), make_ctx({**good, "password": "Wrong-Pass-9"}, name))
        assert "Wrong-Pass-9" not in info.value.message and "Right-Pass-1" not in info.value.message
        url = f"mysql+pymysql://{user}:Wrong-Pass-9@127.0.0.1:3306/{name}"
        with pytest.raises(CredentialsInvalid) as info:
            run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1"}), make_ctx({"type": "url", "url": url}, name))
        assert "Wrong-Pass-9" not in info.value.message
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP USER '{user}'@'%%'")
            conn.exec_driver_sql(f"DROP USER '{user}'@'localhost'")


def test_maria_unknown_table_and_timeout(maria, make_ctx, consume):
    creds, name, _ = maria
    with pytest.raises(InvalidArguments) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM nope"}), make_ctx(creds, name))
    assert "doesn't exist" in info.value.message and f"autocontext for {name}" in info.value.message
    with pytest.raises(UpstreamError) as info:
        consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT SLEEP(3) FROM orders"}), make_ctx(creds, name, {"statement_timeout_s": 0.3})))
    assert "statement_timeout_s" in info.value.message


def test_maria_insert_rows_is_all_or_nothing(maria, make_ctx):
    import anyio

    creds, name, admin = maria
    rows = [{"id": 10 + i, "day": f"2026-10-{i + 1:02d}", "amount": 1.0} for i in range(5)] + [{"id": 99, "day": "not a date", "amount": 1}]
    host = {"bad": HostTable(ref="bad", headers=[{"name": "id", "type": "integer"}, {"name": "day", "type": "date"}, {"name": "amount", "type": "number"}], rows=rows)}
    ctx = make_ctx(creds, name, {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=host)
    with pytest.raises(InvalidArguments) as info:
        anyio.run(run_insert_rows, InsertRows.parse({"table_ref": "bad", "table": "orders"}), ctx)
    assert "Row 6, column day" in info.value.message
    assert _maria_count(admin, name)[0] == 2
    host["good"] = HostTable(ref="good", headers=host["bad"].headers, rows=rows[:5])
    info2 = anyio.run(run_insert_rows, InsertRows.parse({"table_ref": "good", "table": "orders"}), ctx)
    assert info2.data["rows_written"] == 5 and _maria_count(admin, name)[0] == 7
    # a duplicate key fails inside the database: the transaction rolls back every row
    with pytest.raises(UpstreamError):
        anyio.run(run_insert_rows, InsertRows.parse({"table_ref": "good", "table": "orders"}), ctx)
    assert _maria_count(admin, name)[0] == 7


def test_maria_blocks(maria, make_ctx):
    creds, name, _ = maria
    ctx = make_ctx(creds, name, tool="autocontext")
    info = blocks.block_database_info(name, ctx)
    assert info["engine"] == "MariaDB" and info["levels"] == "database.table"
    assert blocks.block_tables(name, ctx)["tables"][0]["name"] == "orders"
    table = blocks.block_table_schemas(f"{name}.orders", ctx)[0]
    assert {c["name"]: c.get("comment") for c in table["columns"]}["channel"] == "Sales channel"
    assert any(r["column"] == "day" and r["min"] == "2026-09-01" for r in blocks.block_date_ranges(name, ctx))
    ids = [r.resource_id for r in list_resources(ctx)]
    assert name in ids and f"{name}.orders" in ids


def test_maria_streamed_rows_survive_type_reflection(maria, make_ctx):
    """Unbuffered MySQL cursors: reflecting types on the same connection would drop rows; all must arrive."""
    creds, name, admin = maria
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE `{name}`.events (id INT, payload JSON, label TEXT)")
        conn.exec_driver_sql(
            f"INSERT INTO `{name}`.events SELECT seq, JSON_OBJECT('n', seq), CONCAT('e', seq) FROM seq_1_to_12000"
        )
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT id, payload, label FROM events ORDER BY id"}), make_ctx(creds, name))
    assert _types(ex) == {"id": "integer", "payload": "json", "label": "string"}
    rows = list(ex.rows)
    assert len(rows) == 12000 and rows[-1] == (12000, {"n": 12000}, "e12000")


def test_maria_early_stop_leaves_a_healthy_pool(maria, make_ctx):
    """Stopping at limit (or closing the generator) drops the unbuffered connection; later queries are fine."""
    creds, name, _ = maria
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT seq FROM seq_1_to_200000", "limit": 5}), make_ctx(creds, name))
    assert list(ex.rows) == [(1,), (2,), (3,), (4,), (5,)]
    gen = run_execute_sql(ExecuteSql.parse({"sql": "SELECT seq FROM seq_1_to_200000"}), make_ctx(creds, name)).rows
    assert next(gen) == (1,)
    gen.close()
    for _ in range(3):
        again = run_execute_sql(ExecuteSql.parse({"sql": "SELECT count(*) AS n FROM orders"}), make_ctx(creds, name))
        assert list(again.rows) == [(2,)]
