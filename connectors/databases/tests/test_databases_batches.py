"""Batch conversion and raw-cursor batches: the fast paths give exactly what the converters give."""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
import uuid

import pytest
from analytics_acp.results.table import build_table
from analytics_acp_databases import types_map
from analytics_acp_databases.arguments import ExecuteSql
from analytics_acp_databases.execute import BATCH_ROWS, run_execute_sql

SAMPLES = [0, 1, 7, -3, 2.5, float("nan"), "", "2026-01-02", "12", '{"a": 1}', True, False,
           decimal.Decimal("1.50"), dt.date(2026, 1, 2), dt.datetime(2026, 1, 2, 3, 4), b"\x01\xff", [1, 2], {"k": "v"},
           uuid.UUID(int=5)]
KINDS = ["integer", "number", "boolean", "string", "date", "datetime", "json", None]


@pytest.mark.parametrize("kind", KINDS)
def test_passthrough_types_are_left_unchanged_by_their_converter(kind):
    """Skipping the converter for a passthrough type must not change any value of that type."""
    convert = types_map.converter(kind)
    for value in SAMPLES:
        if type(value) in types_map._PASSTHROUGH[kind] and type(value) not in (dict, list):
            out = convert(value)
            assert out is value or (out == value and type(out) is type(value)), (kind, value, out)


@pytest.mark.parametrize("kind", KINDS)
def test_batch_conversion_equals_converting_every_cell(kind):
    """Mixed-type columns (SQLite) take the per-column path; the result is the cell-by-cell one."""
    convert = types_map.converter(kind)
    batch = [(i, value, None) for i, value in enumerate(SAMPLES)]
    kinds = ["integer", kind, "string"]
    converters = [types_map.converter(k) for k in kinds]
    got = types_map.convert_batch(batch, kinds, converters)
    expected = [(i, convert(value), None) for i, value in enumerate(SAMPLES)]
    assert [repr(r) for r in got] == [repr(r) for r in expected]


def test_a_batch_of_final_values_is_passed_through_as_is():
    batch = [(1, "web", "2026-01-01", 2.5, None, "x"), (2, "app", None, 3, 4, "y")]
    kinds = ["integer", "string", "date", "number", "integer", "string"]
    assert types_map.convert_batch(batch, kinds, [types_map.converter(k) for k in kinds]) is batch
    mixed = [(1, "web"), (2, b"\x00")]  # a BLOB in a SQLite TEXT column
    assert types_map.convert_batch(mixed, ["integer", "string"], [types_map.converter("integer"), types_map.converter("string")]) == [
        (1, "web"), (2, "00")]


BLOB_SQL = (
    "SELECT 1 AS n, x'00ff' AS b, x'1234' AS h, 'web' AS t UNION ALL SELECT 2, 'abc', x'5678', x'0a' "
    "UNION ALL SELECT 3, NULL, NULL, 'app'"
)
BLOB_ROWS = [  # hex text, then typed like any text: a column of x'1234', x'5678' reads as integers (16.6)
    {"n": 1, "b": "00ff", "h": 1234, "t": "web"},
    {"n": 2, "b": "abc", "h": 5678, "t": "0a"},
    {"n": 3, "b": None, "h": None, "t": "app"},
]


@pytest.mark.parametrize("inline_max_bytes", [1 << 20, 0])
def test_sqlite_blobs_reach_the_table_as_hex_text(tmp_path, make_ctx, inline_max_bytes):
    """pysqlite gives str/int/float/bytes/None; every BLOB is hex text in the table, inline or in its file."""
    from analytics_acp.results.extraction import build_extraction
    from analytics_acp.results.settings import BuildSettings
    from analytics_acp.tablefile import read_table_uri

    db = tmp_path / "b.sqlite"
    sqlite3.connect(db).close()
    ex = run_execute_sql(ExecuteSql.parse({"sql": BLOB_SQL}), make_ctx({"type": "sqlite", "path": str(db)}, "b"))
    data = build_extraction(ex, BuildSettings(row_limit=5, inline_max_bytes=inline_max_bytes, tmp_dir=tmp_path)).system_data
    assert data["format"] == ("inline" if inline_max_bytes else "file")
    assert (data["table"] if inline_max_bytes else read_table_uri(data["table_uri"])) == BLOB_ROWS
    assert {h["name"]: h["type"] for h in data["headers"]} == {"n": "integer", "b": "string", "h": "integer", "t": "string"}


@pytest.fixture
def counted_db(tmp_path) -> str:
    path = tmp_path / "n.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (n INTEGER, label TEXT, x REAL)")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?)", ((i, f"r{i}" if i % 3 else b"\x0a", i / 4) for i in range(1, 2 * BATCH_ROWS + 501)))
    return str(path)


@pytest.mark.parametrize("limit", [None, BATCH_ROWS - 1, BATCH_ROWS, BATCH_ROWS + 1, 2 * BATCH_ROWS + 500, 2 * BATCH_ROWS + 501])
def test_raw_cursor_batches_keep_every_row_order_and_limit(counted_db, make_ctx, limit):
    """Rows across batch boundaries (first batch via SQLAlchemy, the rest from the DB-API cursor)."""
    total = 2 * BATCH_ROWS + 500
    args = {"sql": "SELECT n, label, x FROM t ORDER BY n"} | ({"limit": limit} if limit else {})
    ex = run_execute_sql(ExecuteSql.parse(args), make_ctx({"type": "sqlite", "path": counted_db}, "n"))
    table = build_table(ex.rows, headers=ex.headers, columns=ex.columns, inline_max_bytes=1 << 30)
    rows = [tuple(r.values()) for r in table.table or []]
    expect = min(total, limit or total)
    assert len(rows) == expect
    assert rows == [(i, f"r{i}" if i % 3 else "0a", i / 4) for i in range(1, expect + 1)]  # BLOBs as hex text
    assert bool(ex.warnings) == (limit is not None and limit < total)


def test_closing_the_rows_early_stops_them_and_releases_the_connection(counted_db, make_ctx):
    """A host that stops reading closes the rows, as it would a generator: nothing more comes, the connection is back."""
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT n FROM t ORDER BY n"}), make_ctx({"type": "sqlite", "path": counted_db}, "n"))
    assert next(ex.rows) == (1,)
    ex.rows.close()
    assert list(ex.rows) == []
    again = run_execute_sql(ExecuteSql.parse({"sql": "SELECT count(*) FROM t"}), make_ctx({"type": "sqlite", "path": counted_db}, "n"))
    assert list(again.rows) == [(2 * BATCH_ROWS + 500,)]
