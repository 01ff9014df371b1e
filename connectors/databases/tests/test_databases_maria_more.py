"""MariaDB (and PostgreSQL config) rules not covered elsewhere: table_rules, replace, DDL compensation, validate_sql, default_schema."""

from __future__ import annotations

import json

import anyio
import pytest
from analytics_acp import HostTable, ReadOnlyViolation, UpstreamError
from analytics_acp_databases.arguments import ExecuteSql, InsertRows, ValidateSql
from analytics_acp_databases.execute import run_execute_sql
from analytics_acp_databases.insert import run_insert_rows
from analytics_acp_databases.validate import run_validate_sql

pytestmark = pytest.mark.services

HEADERS = [{"name": "id", "type": "integer"}, {"name": "amount", "type": "number"}]


@pytest.fixture
def maria(maria_db):
    creds, name, admin = maria_db
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE `{name}`.orders (id INT PRIMARY KEY, amount DECIMAL(10,2), day DATE)")
        conn.exec_driver_sql(f"CREATE TABLE `{name}`.audit (id INT PRIMARY KEY)")
        conn.exec_driver_sql(f"INSERT INTO `{name}`.orders VALUES (1, 10, '2026-09-01'), (2, 20, '2026-09-02')")
    return creds, name, admin


def _count(admin, name, table="orders"):
    with admin.connect() as conn:
        return conn.exec_driver_sql(f"SELECT count(*) FROM `{name}`.`{table}`").scalar()


def _tables(rows):
    return {"ds": HostTable(ref="ds", headers=HEADERS, rows=rows)}


def _insert(ctx, **arguments):
    return anyio.run(run_insert_rows, InsertRows.parse(arguments), ctx)


def test_maria_table_rules_decide_per_table(maria, make_ctx):
    creds, name, admin = maria
    rules = json.dumps([{"pattern": rf"^{name}\.orders$", "mode": "readAndOnlyAdd"}, {"pattern": r"\.audit$", "mode": "onlyRead"}])
    rows = [{"id": 3, "amount": 30}]
    ctx = make_ctx(creds, name, {"access_mode": "onlyRead", "table_rules": rules}, tool="insert_rows", tables=_tables(rows))
    assert _insert(ctx, table_ref="ds", table="orders").data["rows_written"] == 1
    with pytest.raises(ReadOnlyViolation):
        _insert(ctx, table_ref="ds", table="orders", mode="replace")  # the rule grants add, not replace
    full = make_ctx(creds, name, {"access_mode": "full", "table_rules": rules}, tool="insert_rows", tables=_tables([{"id": 9}]))
    with pytest.raises(ReadOnlyViolation):
        _insert(full, table_ref="ds", table="audit")  # the rule wins over the default mode
    assert _count(admin, name) == 3 and _count(admin, name, "audit") == 0


def test_maria_replace_is_all_or_nothing(maria, make_ctx):
    creds, name, admin = maria
    dup = [{"id": 7, "amount": 1}, {"id": 7, "amount": 2}]  # duplicate key: fails inside the database after the DELETE
    ctx = make_ctx(creds, name, {"access_mode": "full"}, tool="insert_rows", tables=_tables(dup))
    with pytest.raises(UpstreamError):
        _insert(ctx, table_ref="ds", table="orders", mode="replace")
    assert _count(admin, name) == 2
    ok = make_ctx(creds, name, {"access_mode": "full"}, tool="insert_rows", tables=_tables(dup[:1]))
    assert _insert(ok, table_ref="ds", table="orders", mode="replace").data["rows_written"] == 1
    assert _count(admin, name) == 1


def test_maria_created_table_is_dropped_when_the_insert_fails(maria, make_ctx):
    """MariaDB commits CREATE TABLE implicitly; a failing insert afterwards drops the new table again."""
    creds, name, admin = maria
    rows = [{"id": 1, "amount": 1}, {"id": 2**70, "amount": 2}]  # out of BIGINT range: refused by the server
    ctx = make_ctx(creds, name, {"access_mode": "readAndOnlyAdd"}, tool="insert_rows", tables=_tables(rows))
    with pytest.raises(UpstreamError):
        _insert(ctx, table_ref="ds", table="fresh", create_if_missing=True)
    with admin.connect() as conn:
        assert conn.exec_driver_sql(f"SHOW TABLES FROM `{name}` LIKE 'fresh'").fetchall() == []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id /*! INTO OUTFILE '{out}' */ FROM orders",
        "SELECT id FROM orders /*M! INTO DUMPFILE '{out}' */ LIMIT 1",
        "SELECT 1 AS a /*!50000 , GET_LOCK('acp_{tag}', 0) */ FROM DUAL",
    ],
)
def test_maria_executable_comments_are_refused(sql, maria, make_ctx, tmp_path):
    """MariaDB runs /*! ... */ text; its READ ONLY transaction lets a FILE-privileged user write files."""
    import os
    import uuid

    creds, name, admin = maria
    tag = uuid.uuid4().hex[:8]
    out = f"/tmp/acp_exec_comment_{tag}.txt"  # the server writes on its own host: this machine in tests
    with pytest.raises(ReadOnlyViolation) as info:
        run_execute_sql(ExecuteSql.parse({"sql": sql.format(out=out, tag=tag)}), make_ctx(creds, name))
    assert "Executable comment" in info.value.message
    assert not os.path.exists(out)
    with admin.connect() as conn:
        assert conn.exec_driver_sql(f"SELECT IS_FREE_LOCK('acp_{tag}')").scalar() == 1


def test_maria_validate_sql(maria, make_ctx):
    creds, name, admin = maria
    ctx = make_ctx(creds, name, tool="validate_sql")
    out = run_validate_sql(ValidateSql.parse({"sql": "SELECT day, SUM(amount) AS total FROM orders WHERE day >= '{{start_date}}' GROUP BY day"}), ctx).data
    assert out["valid"] and out["read_only"] and out["dialect"] == "mysql"
    assert out["columns"] == [{"name": "day", "type": "date"}, {"name": "total", "type": "number"}]
    bad = run_validate_sql(ValidateSql.parse({"sql": "SELECT 1 INTO OUTFILE '/tmp/x'"}), ctx).data
    assert bad["valid"] is False and bad["read_only"] is False and bad["statement_type"] == "SELECT ... INTO"
    missing = run_validate_sql(ValidateSql.parse({"sql": "SELECT * FROM nope"}), ctx).data
    assert missing["valid"] is False and "autocontext" in missing["error"]
    assert _count(admin, name) == 2


def test_pg_default_schema_config_resolves_unqualified_names(pg_schema, make_ctx, consume):
    creds, schema, admin = pg_schema
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE TABLE "{schema}".only_here (v int)')
        conn.exec_driver_sql(f'INSERT INTO "{schema}".only_here VALUES (5)')
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT v FROM only_here"}), make_ctx(creds, "test", {"default_schema": schema}))
    assert consume(ex) == [{"v": 5}]
    from analytics_acp import InvalidArguments

    with pytest.raises(InvalidArguments):  # without it, the name is looked up in public
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT v FROM only_here"}), make_ctx(creds, "test"))
