"""execute_sql on real SQLite and DuckDB files: typed headers, dates, limit, streaming, errors (8.2, 8.6, 8.9, 9.3)."""

from __future__ import annotations

import duckdb
import pytest
from analytics_acp import CredentialsInvalid, InvalidArguments, ResourceNotFound
from analytics_acp_databases.arguments import ExecuteSql, ValidateSql
from analytics_acp_databases.execute import literal_date, run_execute_sql, unique_names

SPEC_SQL = (
    "SELECT fecha, SUM(pedidos) AS pedidos, SUM(importe) AS importe FROM ventas "
    "WHERE fecha BETWEEN '2026-07-01' AND '2026-09-28' GROUP BY fecha ORDER BY fecha"
)


def _types(ex):
    return {h.name: h.type for h in ex.headers}


def built(ex):
    """What the core builds from the extraction (8.6 typing over every row): ({name: Header}, rows)."""
    from analytics_acp.results import build_table

    table = build_table(ex.rows, headers=ex.headers, columns=ex.columns, inline_max_bytes=1 << 30)
    return {h.name: h for h in table.headers}, table.table


def test_spec_session_query_on_the_example_database(sales_db, make_ctx, consume):
    """16.7: 90 rows, typed fecha/pedidos/importe, dates from the window, spec-like title/description."""
    ex = run_execute_sql(ExecuteSql.parse({"sql": SPEC_SQL}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    assert iter(ex.rows) is ex.rows  # an iterator: the rows stream from the cursor, never a list
    headers, rows = built(ex)
    assert len(rows) == 90
    assert ex.columns == ["fecha", "pedidos", "importe"]
    assert {n: h.type for n, h in headers.items()} == {"fecha": "date", "pedidos": "integer", "importe": "number"}
    assert ex.dates == ["2026-07-01", "2026-09-28"]
    assert ex.title == "SQLite · ventas.sqlite"
    assert ex.description.startswith("SQLite database ventas.sqlite (ventas). SQL: SELECT fecha, SUM(pedidos)")
    assert rows[0]["fecha"] == "2026-07-01" and isinstance(rows[0]["pedidos"], int)


def test_sqlite_types_from_declared_columns_and_expressions(tmp_path, make_ctx, consume):
    import sqlite3

    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE e (d DATE, ts TIMESTAMP, flag BOOLEAN, amount NUMERIC(10,2), payload JSON, name TEXT)")
        con.execute("INSERT INTO e VALUES ('2026-01-02', '2026-01-02 10:15:00', 1, 12.5, '{\"a\": 1}', 'x')")
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT d, ts, flag, amount, payload, name, count(*) AS n, 1.5 AS r FROM e GROUP BY 1,2,3,4,5,6"}), make_ctx({"type": "sqlite", "path": str(path)}, "t"))
    headers, rows = built(ex)
    assert {n: h.type for n, h in headers.items()} == {"d": "date", "ts": "datetime", "flag": "boolean", "amount": "number", "payload": "json", "name": "string", "n": "integer", "r": "number"}
    assert rows == [{"d": "2026-01-02", "ts": "2026-01-02T10:15:00.000Z", "flag": True, "amount": 12.5, "payload": {"a": 1}, "name": "x", "n": 1, "r": 1.5}]


def test_duckdb_typed_headers_and_values(duck_db, make_ctx, consume):
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM tipos"}), make_ctx({"type": "duckdb", "path": duck_db}, "tienda"))
    rows = consume(ex)
    assert _types(ex) == {"d": "date", "ts": "datetime", "n": "number", "big": "integer", "huge": "integer", "b": "boolean", "j": "json", "s": "string"}
    row = rows[0]
    assert row["d"] == "2026-09-01"
    assert row["ts"] == "2026-09-01T08:15:00.000Z"  # timestamptz -> UTC ISO 8601
    assert row["n"] == 1234.56 and isinstance(row["n"], float)
    assert row["big"] == 9007199254740993 and row["huge"] == 12345678901234567890
    assert row["b"] is True and row["j"] == {"k": [1, 2]}


def test_template_markers_left_unsubstituted_are_rejected(sales_db, make_ctx):
    with pytest.raises(InvalidArguments) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM ventas WHERE fecha >= '{{start_date}}'"}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    assert "did not substitute" in info.value.message


def test_dates_from_literals_of_every_form(sales_db, make_ctx):
    sql = (
        "SELECT count(*) AS n FROM ventas WHERE (fecha BETWEEN '2026-08-01' AND '2026-08-31') "
        "OR (fecha BETWEEN '2026-07-01' AND '2026-07-31') OR fecha = '2026-09-01 00:00:00' OR canal = '2026-13-45'"
    )
    ex = run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    list(ex.rows)
    assert ex.dates == ["2026-07-01", "2026-07-31", "2026-08-01", "2026-08-31", "2026-09-01"]
    no_dates = run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1 AS x"}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    list(no_dates.rows)
    assert no_dates.dates is None  # the core puts today's local date (8.2)


def test_literal_date_parsing():
    assert literal_date("2026-02-03") == "2026-02-03"
    assert literal_date("2026-02-03T10:00:00") == "2026-02-03"
    assert literal_date("20260203") is None and literal_date("2026-02-30") is None and literal_date("web") is None


def test_limit_caps_the_extraction_and_warns(sales_db, make_ctx, consume):
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM ventas ORDER BY fecha", "limit": 7}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    assert len(consume(ex)) == 7
    assert any("limit=7" in w for w in ex.warnings)
    full = run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM ventas", "limit": 1000}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    assert len(consume(full)) == 360 and full.warnings == []


def test_duplicate_column_names_are_made_unique():
    assert unique_names(["id", "id", "name", "id"]) == ["id", "id_2", "name", "id_3"]
    # Issue 39: distinct texts take a shortcut; empty, missing or non-text names still go the long way.
    assert unique_names(["a", "a_2", "b"]) == ["a", "a_2", "b"]
    assert unique_names(["a", "", None, 3]) == ["a", "column", "column_2", "3"]
    assert unique_names(["a_2", "a", "a"]) == ["a_2", "a", "a_3"]


def test_unknown_table_tells_the_model_to_call_autocontext(sales_db, make_ctx):
    with pytest.raises(InvalidArguments) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM nope"}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    assert "no such table: nope" in info.value.message and "autocontext for ventas" in info.value.message
    with pytest.raises(InvalidArguments) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT nope FROM ventas"}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    assert "no such column: nope" in info.value.message


def test_duckdb_unknown_table_and_column(duck_db, make_ctx):
    for sql in ("SELECT * FROM nope", "SELECT nope FROM ventas"):
        with pytest.raises(InvalidArguments) as info:
            run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "duckdb", "path": duck_db}, "tienda"))
        assert "Call autocontext for tienda" in info.value.message


def test_missing_file_is_credentials_invalid_and_wrong_database_not_found(tmp_path, sales_db, make_ctx):
    with pytest.raises(CredentialsInvalid) as info:
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1"}), make_ctx({"type": "sqlite", "path": str(tmp_path / "missing.sqlite")}, "missing"))
    # Issue 34.2: the message shows the full path it tried (a relative path's folder is the question).
    assert str(tmp_path / "missing.sqlite") in info.value.message
    with pytest.raises(ResourceNotFound):
        run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1"}), make_ctx({"type": "sqlite", "path": sales_db}, "otra"))
    assert not (tmp_path / "missing.sqlite").exists()  # queries never create files


def test_statement_timeout_interrupts_sqlite(sales_db, make_ctx, consume):
    from analytics_acp import UpstreamError

    slow = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    with pytest.raises(UpstreamError) as info:
        consume(run_execute_sql(ExecuteSql.parse({"sql": slow}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas", {"statement_timeout_s": 0.3})))
    assert "statement_timeout_s" in info.value.message


def test_statement_timeout_interrupts_duckdb(duck_db, make_ctx, consume):
    from analytics_acp import UpstreamError

    slow = "SELECT count(*) FROM range(100000000000) a"
    with pytest.raises(UpstreamError) as info:
        consume(run_execute_sql(ExecuteSql.parse({"sql": slow}), make_ctx({"type": "duckdb", "path": duck_db}, "tienda", {"statement_timeout_s": 0.5})))
    assert "statement_timeout_s" in info.value.message


def test_explain_runs_and_keeps_dates(sales_db, make_ctx, consume):
    ex = run_execute_sql(ExecuteSql.parse({"sql": "EXPLAIN QUERY PLAN SELECT * FROM ventas WHERE fecha >= '2026-09-01'"}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas"))
    assert consume(ex)
    assert ex.dates == ["2026-09-01"]
    assert ex.source["statement_type"] == "EXPLAIN"


def test_duckdb_schema_resource_sets_the_default_schema(tmp_path, make_ctx, consume):
    path = tmp_path / "wh.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA sales; CREATE TABLE sales.orders AS SELECT 1 AS id")
    con.close()
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT id FROM orders"}), make_ctx({"type": "duckdb", "path": str(path)}, "wh.sales"))
    assert consume(ex) == [{"id": 1}]


def test_validate_sql_on_sqlite(sales_db, make_ctx):
    from analytics_acp_databases.validate import run_validate_sql

    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas", tool="validate_sql")
    ok = run_validate_sql(ValidateSql.parse({"sql": "SELECT fecha, canal, SUM(importe) AS total FROM ventas WHERE fecha >= '{{start_date}}' GROUP BY 1, 2"}), ctx).data
    assert ok == {
        "dialect": "sqlite", "uses_date_window": True, "statement_type": "SELECT", "read_only": True, "referenced_tables": ["ventas"],
        "valid": True, "columns": [{"name": "fecha", "type": "date"}, {"name": "canal", "type": "string"}, {"name": "total", "type": "number"}],
    }
    bad = run_validate_sql(ValidateSql.parse({"sql": "WITH x AS (DELETE FROM ventas RETURNING *) SELECT * FROM x"}), ctx).data
    assert bad["valid"] is False and bad["read_only"] is False and bad["statement_type"] == "DELETE"
    missing = run_validate_sql(ValidateSql.parse({"sql": "SELECT * FROM ventass"}), ctx).data
    assert missing["valid"] is False and "autocontext" in missing["error"]


def test_an_unconsumed_extraction_releases_its_connection(sales_db, make_ctx):
    """If the core never iterates the rows (an error elsewhere), the fenced connection is still returned to the pool."""
    import gc

    from analytics_acp_databases.catalog import source_for

    creds = {"type": "sqlite", "path": sales_db}
    ctx = make_ctx(creds, "ventas")
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM ventas"}), ctx)
    pool = source_for(ctx, None).engine(read_only=True).pool  # the engine the call used: the connector's state keeps it
    assert pool.checkedout() == 1
    del ex
    gc.collect()
    assert pool.checkedout() == 0


def test_roles_of_an_aggregate_query(sales_db, make_ctx, consume):
    """8.6 roles: GROUP BY columns are dimensions, numeric aggregates metrics; plain selects get none."""
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas")
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT fecha, canal, SUM(pedidos) AS pedidos, AVG(importe) AS ticket, MAX(canal) AS m FROM ventas GROUP BY fecha, 2"}), ctx)
    headers, _ = built(ex)
    assert {n: h.role for n, h in headers.items()} == {"fecha": "dimension", "canal": "dimension", "pedidos": "metric", "ticket": "metric", "m": None}
    plain, _ = built(run_execute_sql(ExecuteSql.parse({"sql": "SELECT * FROM ventas"}), ctx))
    assert all(h.role is None for h in plain.values())
