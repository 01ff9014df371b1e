"""SQLite columns are typed from their values over the whole result (8.6; issue 14.1).

SQLite's declared type is an affinity: any value can sit in any column and dates are text. The
connector marks its columns ``infer`` (declared type as a hint) and the core's result builder
types each over every row: integer + number -> number, date + datetime -> datetime, any other
mix -> string with every value text, ``YYYY-MM-DD`` text -> date. Checked through the core's real
builder (build_extraction), inline and spilled to a table file.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import sys

import pytest
from analytics_acp.results.extraction import build_extraction
from analytics_acp.results.settings import BuildSettings
from analytics_acp.tablefile import read_table_uri
from analytics_acp_databases.arguments import ExecuteSql
from analytics_acp_databases.execute import run_execute_sql


@pytest.fixture
def mixed_db(tmp_path):
    path = tmp_path / "mixed.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE p (y INTEGER)")
        con.executemany("INSERT INTO p VALUES (?)", [(5,), ("n/a",), (7,)])
        con.execute("CREATE TABLE d (fecha TEXT, pedidos INTEGER)")
        con.executemany("INSERT INTO d VALUES (?, ?)", [("2026-01-01", 3), ("2026-01-02", 4)])
        con.execute("CREATE TABLE e (flag BOOLEAN, amount NUMERIC(10,2), zip TEXT, code TEXT)")
        con.executemany("INSERT INTO e VALUES (?, ?, ?, ?)", [(1, 12, "08001", "12"), (0, 13, "28013", "13")])
    return str(path)


def table(sql, db, make_ctx, tmp_path, inline_max_bytes=1 << 20):
    ex = run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "sqlite", "path": db}, "mixed"))
    out = build_extraction(ex, BuildSettings(row_limit=5, inline_max_bytes=inline_max_bytes, tmp_dir=tmp_path))
    data = out.system_data
    rows = data["table"] if data["format"] == "inline" else read_table_uri(data["table_uri"])
    return {h["name"]: h["type"] for h in data["headers"]}, rows


CASES = [
    ("SELECT 1 AS i UNION ALL SELECT 2.5", {"i": "number"}, [{"i": 1}, {"i": 2.5}]),
    ("SELECT 1 AS m UNION ALL SELECT 'abc'", {"m": "string"}, [{"m": "1"}, {"m": "abc"}]),
    ("SELECT y FROM p ORDER BY rowid", {"y": "string"}, [{"y": "5"}, {"y": "n/a"}, {"y": "7"}]),
    ("SELECT '2026-01-01' AS t UNION ALL SELECT '2026-01-02 10:15:00'", {"t": "datetime"},
     [{"t": "2026-01-01T00:00:00.000Z"}, {"t": "2026-01-02T10:15:00.000Z"}]),
    ("SELECT fecha, pedidos FROM d ORDER BY fecha", {"fecha": "date", "pedidos": "integer"},
     [{"fecha": "2026-01-01", "pedidos": 3}, {"fecha": "2026-01-02", "pedidos": 4}]),
    # Declared types are hints that win when every value fits: BOOLEAN of 0/1, NUMERIC of whole values.
    # TEXT is no hint: '12' reads as 12 (16.6), a leading zero keeps the column text.
    ("SELECT flag, amount, zip, code FROM e ORDER BY rowid", {"flag": "boolean", "amount": "number", "zip": "string", "code": "integer"},
     [{"flag": True, "amount": 12, "zip": "08001", "code": 12}, {"flag": False, "amount": 13, "zip": "28013", "code": 13}]),
]


@pytest.mark.parametrize(("sql", "types", "rows"), CASES)
def test_sqlite_columns_typed_over_every_value(sql, types, rows, mixed_db, make_ctx, tmp_path):
    assert table(sql, mixed_db, make_ctx, tmp_path) == (types, rows)


@pytest.mark.parametrize(("sql", "types", "rows"), CASES)
def test_same_types_when_the_table_is_spilled_to_a_file(sql, types, rows, mixed_db, make_ctx, tmp_path):
    assert table(sql, mixed_db, make_ctx, tmp_path, inline_max_bytes=0) == (types, rows)


def test_late_widening_rewrites_a_streamed_result_without_holding_it(mixed_db, make_ctx, tmp_path):
    # 200k date rows, then one datetime: the column becomes datetime after the rows went to the file,
    # so the file is rewritten as a stream; the rows never exist all at once.
    n = 200_000
    sql = (
        f"WITH RECURSIVE r(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM r WHERE k < {n - 1}) "
        "SELECT k, CASE WHEN k = " + str(n - 1) + " THEN '2026-03-01 08:30:00' ELSE date('2026-01-01', '+' || (k % 50) || ' days') END AS t, "
        "CASE WHEN k = 7 THEN 'x' ELSE k END AS v FROM r"
    )
    gc.collect()
    base = sys.getallocatedblocks()
    peak = 0
    ex = run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "sqlite", "path": mixed_db}, "mixed"))

    def watch(rows):
        nonlocal peak
        for i, row in enumerate(rows):
            if i % 5000 == 0:
                peak = max(peak, sys.getallocatedblocks() - base)
            yield row

    ex.rows = watch(ex.rows)
    out = build_extraction(ex, BuildSettings(row_limit=3, inline_max_bytes=4096, tmp_dir=tmp_path))
    assert out.system_data["format"] == "file" and out.total_rows == n
    assert {h["name"]: h["type"] for h in out.system_data["headers"]} == {"k": "integer", "t": "datetime", "v": "string"}
    assert out.model_response["rows"][0] == {"k": 0, "t": "2026-01-01T00:00:00.000Z", "v": "0"}
    with open(out.files[0], encoding="utf-8") as fh:
        text = fh.read()
    rows = json.loads(text)
    assert rows[7]["v"] == "x" and rows[8]["v"] == "8" and rows[-1]["t"] == "2026-03-01T08:30:00.000Z"
    assert all(r["t"].endswith(".000Z") for r in rows[::997])
    assert peak < 100_000, peak  # 200k rows alive would be ~800k blocks
