"""acp_query (16.4, 16.6): SQLite over datasets, typed columns, read-only enforcement, results saved."""

import csv
import json
import sqlite3

import pytest
from analytics_acp.errors import InvalidArguments, ReadOnlyViolation
from analytics_acp_bridge.serving import own_tools
from analytics_acp_bridge.store.datasets import DatasetStore

HEADERS = [{"name": "fecha", "type": "date"}, {"name": "canal", "type": "string"}, {"name": "pedidos", "type": "integer"},
           {"name": "importe", "type": "number"}]


@pytest.fixture
def store(tmp_path):
    s = DatasetStore(tmp_path)
    rows = [{"fecha": f"2026-{m:02d}-{d:02d}", "canal": c, "pedidos": m * d + i, "importe": (m * d + i) * 1.25}
            for m in (7, 8, 9) for d in range(1, 29) for i, c in enumerate(("web", "app"))]
    s.write_dataset("ventas_x", HEADERS, iter(rows), {"origin": "acp"})
    s.write_dataset("other_x", [{"name": "a", "type": "integer"}], iter([{"a": 1}]), {"origin": "acp"})
    return s


def test_bridge_query_totals_and_saved_result(store, tmp_path):
    sql = "SELECT strftime('%m', fecha) AS mes, SUM(pedidos) AS pedidos, SUM(importe) AS importe FROM ventas_x GROUP BY mes"
    response, note = own_tools.query(store, sql)
    expected = sqlite3.connect(":memory:")
    expected.execute("CREATE TABLE t (fecha TEXT, pedidos INTEGER, importe REAL)")
    with open(tmp_path / "acp-data" / "ventas_x.csv", encoding="utf-8") as f:
        expected.executemany("INSERT INTO t VALUES (?, ?, ?)", [(r["fecha"], int(r["pedidos"]), float(r["importe"])) for r in csv.DictReader(f)])
    want = expected.execute("SELECT strftime('%m', fecha), SUM(pedidos), SUM(importe) FROM t GROUP BY 1").fetchall()
    assert [(r["mes"], r["pedidos"], r["importe"]) for r in response["rows"]] == want
    assert response["notice"] == "Showing all 3 result rows." and response["datasets_used"] == ["ventas_x"]
    dataset_id = response["dataset"]
    assert note == f"The full result was saved as dataset «{dataset_id}» in acp-data/{dataset_id}.csv. You saw 3 of 3 rows."
    meta = json.loads((tmp_path / "acp-data" / f"{dataset_id}.meta.json").read_text(encoding="utf-8"))
    assert meta["origin"] == "query" and meta["sql"] == sql and meta["row_count"] == 3
    assert meta["headers"] == [{"name": "mes", "type": "string"}, {"name": "pedidos", "type": "integer"}, {"name": "importe", "type": "number"}]
    # typed columns: comparing numbers works numerically, not as text
    big, _ = own_tools.query(store, "SELECT COUNT(*) AS n FROM ventas_x WHERE pedidos > 100")
    assert big["rows"][0]["n"] == expected.execute("SELECT COUNT(*) FROM t WHERE pedidos > 100").fetchone()[0]


def test_bridge_query_sample_is_50_rows_and_save_as(store):
    response, note = own_tools.query(store, "SELECT * FROM ventas_x", save_as="todo")
    assert response["total_rows"] == 168 and response["returned_rows"] == 50 and response["truncated"]
    assert response["notice"] == "Showing 50 of 168 result rows." and "You saw 50 of 168 rows." in note
    assert store.get("todo").meta["headers"][0] == {"name": "fecha", "type": "date"}
    again, _ = own_tools.query(store, "SELECT 1 AS uno FROM other_x", save_as="todo")  # replaces its own result
    assert store.get("todo").row_count == 1
    with pytest.raises(InvalidArguments, match="read-only"):
        own_tools.query(store, "SELECT 1 AS x", save_as="ventas_x")
    with pytest.raises(InvalidArguments):
        own_tools.query(store, "SELECT 1 AS x", save_as="Bad Name")


@pytest.mark.parametrize("sql", [
    "DELETE FROM ventas_x",
    "DROP TABLE ventas_x",
    "UPDATE ventas_x SET pedidos = 0",
    "INSERT INTO ventas_x (pedidos) VALUES (1)",
    "CREATE TABLE t AS SELECT * FROM ventas_x",
    "PRAGMA table_info(ventas_x)",
    "ATTACH DATABASE '/tmp/x.db' AS x",
    "WITH a AS (SELECT 1) DELETE FROM ventas_x",
    "SELECT 1; DROP TABLE ventas_x",
    "VACUUM",
])
def test_bridge_query_read_only(store, sql):
    with pytest.raises(ReadOnlyViolation) as info:
        own_tools.query(store, sql)
    assert info.value.name == "ACP_READ_ONLY_VIOLATION"
    assert store.get("ventas_x").row_count == 168


def test_bridge_query_authorizer_blocks_what_the_parser_misses(store):
    from analytics_acp_bridge.query import sql as q

    # Even if the parse check were skipped, SQLite's authorizer refuses anything but reads.
    original = q.check_read_only
    q.check_read_only = lambda sql: None
    try:
        for sql in ("DELETE FROM ventas_x", "PRAGMA writable_schema = 1", "ATTACH DATABASE ':memory:' AS y"):
            with pytest.raises(ReadOnlyViolation):
                q.run_query(store, sql)
    finally:
        q.check_read_only = original


@pytest.mark.parametrize("sql", ["SELEC nonsense", "hello", "SELECT * FORM ventas_x", "1 + 1"])
def test_bridge_query_invalid_sql_is_invalid_arguments_not_a_write(store, sql):
    # A typo is not a write attempt: SQLite's own syntax error comes back as ACP_INVALID_ARGUMENTS.
    with pytest.raises(InvalidArguments, match="SQLite error"):
        own_tools.query(store, sql)


def test_bridge_query_unknown_table_lists_datasets(store):
    with pytest.raises(InvalidArguments, match="ventas_x"):
        own_tools.query(store, "SELECT * FROM nope")


def test_bridge_query_typed_load_of_booleans_nulls_and_text(tmp_path):
    s = DatasetStore(tmp_path)
    headers = [{"name": "ok", "type": "boolean"}, {"name": "n", "type": "integer"}, {"name": "x", "type": "number"},
               {"name": "cp", "type": "string"}]
    rows = [{"ok": True, "n": 10, "x": 1.5, "cp": "08001"}, {"ok": False, "n": None, "x": None, "cp": ""},
            {"ok": None, "n": 2, "x": 2.0, "cp": "28013"}]
    s.write_dataset("typed", headers, iter(rows), {"origin": "acp"})
    response, _ = own_tools.query(s, "SELECT SUM(ok) AS oks, COUNT(ok) AS known, SUM(n) AS n, typeof(MAX(n)) AS t, "
                                     "SUM(x) AS x, COUNT(cp) AS cps, MIN(cp) AS first_cp FROM typed")
    assert response["rows"] == [{"oks": 1, "known": 2, "n": 12, "t": "integer", "x": 3.5, "cps": 2, "first_cp": "08001"}]


def test_bridge_query_answer_has_readable_floats_and_dataset_keeps_exact(tmp_path):
    # Issue 23.5: a SUM of prices comes back from SQLite as 12790.109999999999; the model reads 12790.11,
    # while the saved result dataset (the host table) keeps the exact double.
    s = DatasetStore(tmp_path)
    prices = [0.1, 0.2, 12789.81]
    s.write_dataset("precios", [{"name": "importe", "type": "number"}, {"name": "n", "type": "integer"}],
                    iter([{"importe": p, "n": 1} for p in prices]), {"origin": "acp"})
    exact = sqlite3.connect(":memory:").execute(
        "SELECT SUM(v) FROM (SELECT 0.1 AS v UNION ALL SELECT 0.2 UNION ALL SELECT 12789.81)").fetchone()[0]
    assert repr(exact) == "12790.109999999999"  # the noise is real: the case the issue saw
    response, _ = own_tools.query(s, "SELECT SUM(importe) AS importe, SUM(n) AS n, 0.5 AS half FROM precios")
    assert response["rows"] == [{"importe": 12790.11, "n": 3, "half": 0.5}]
    assert "12790.11," in json.dumps(response) and "12790.109999999999" not in json.dumps(response)
    with open(tmp_path / "acp-data" / f"{response['dataset']}.csv", encoding="utf-8") as f:
        assert next(csv.DictReader(f))["importe"] == "12790.109999999999"
