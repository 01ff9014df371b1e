"""acp_query's table cache: a dataset is loaded once, reused while its CSV is unchanged, reloaded
when it changes, bounded in memory, and never writable through a query."""

import csv
import os
import sqlite3

import pytest
from analytics_acp.errors import InvalidArguments, ReadOnlyViolation
from analytics_acp_bridge.query import sql as q
from analytics_acp_bridge.query.cache import TableCache
from analytics_acp_bridge.serving import own_tools
from analytics_acp_bridge.store.datasets import DatasetStore

HEADERS = [{"name": "canal", "type": "string"}, {"name": "pedidos", "type": "integer"}]
SUM_SQL = "SELECT canal, SUM(pedidos) AS pedidos FROM ventas_x GROUP BY canal ORDER BY canal"


def _rows(scale: int):
    return iter([{"canal": c, "pedidos": scale * (i + 1)} for i in range(50) for c in ("app", "web")])


@pytest.fixture
def store(tmp_path):
    s = DatasetStore(tmp_path)
    s.write_dataset("ventas_x", HEADERS, _rows(1), {"origin": "acp"})
    s.write_dataset("other_x", [{"name": "a", "type": "integer"}], iter([{"a": 7}]), {"origin": "acp"})
    return s


def _totals(store, cache, sql=SUM_SQL):
    response, _ = own_tools.query(store, sql, cache=cache)
    return [(r["canal"], r["pedidos"]) for r in response["rows"]]


def test_bridge_querycache_reuses_a_loaded_table(store):
    cache = TableCache()
    assert _totals(store, cache) == [("app", 1275), ("web", 1275)]
    assert _totals(store, cache) == [("app", 1275), ("web", 1275)]
    own_tools.query(store, "SELECT COUNT(*) AS n FROM ventas_x WHERE pedidos > 10", cache=cache)
    assert cache.loads == 1  # three queries, one load from CSV
    assert cache.cached_ids() == ["ventas_x"]
    assert cache.size > 0


def test_bridge_querycache_reloads_when_the_csv_changes(store):
    cache = TableCache()
    assert _totals(store, cache) == [("app", 1275), ("web", 1275)]
    # Same size and mtime as before, only the content differs: the inode (os.replace) still tells.
    path = store.get("ventas_x").path
    before = path.stat()
    text = path.read_bytes().replace(b"app,", b"apq,")
    tmp = path.with_name(".swap.tmp")
    tmp.write_bytes(text)
    os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(tmp, path)
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert _totals(store, cache) == [("apq", 1275), ("web", 1275)]
    assert cache.loads == 2 and cache.cached_ids() == ["ventas_x"]  # the stale table was dropped


def test_bridge_querycache_reloads_a_csv_edited_in_place(tmp_path):
    store = DatasetStore(tmp_path)
    path = tmp_path / "acp-data" / "notas.csv"
    path.parent.mkdir()
    path.write_text("n\r\n1\r\n2\r\n", encoding="utf-8")
    cache = TableCache()
    assert _totals_n(store, cache) == 3
    with path.open("a", encoding="utf-8", newline="") as handle:  # same inode, new size and mtime
        csv.writer(handle, lineterminator="\r\n").writerow([40])
    assert _totals_n(store, cache) == 43
    assert cache.loads == 2


def _totals_n(store, cache):
    response, _ = own_tools.query(store, "SELECT SUM(n) AS s FROM notas", cache=cache)
    return response["rows"][0]["s"]


def test_bridge_querycache_save_as_replacement_is_seen(store):
    cache = TableCache()
    own_tools.query(store, "SELECT canal FROM ventas_x WHERE pedidos = 1", save_as="mine", cache=cache)
    first, _ = own_tools.query(store, "SELECT COUNT(*) AS n FROM mine", cache=cache)
    own_tools.query(store, "SELECT canal FROM ventas_x", save_as="mine", cache=cache)
    second, _ = own_tools.query(store, "SELECT COUNT(*) AS n FROM mine", cache=cache)
    assert (first["rows"][0]["n"], second["rows"][0]["n"]) == (2, 100)


def test_bridge_querycache_deleted_dataset_is_gone(store):
    cache = TableCache()
    _totals(store, cache)
    path = store.get("ventas_x").path
    path.unlink()
    path.with_name("ventas_x.meta.json").unlink()
    with pytest.raises(InvalidArguments, match="no such table"):
        own_tools.query(store, SUM_SQL, cache=cache)
    assert cache.cached_ids() == []


def test_bridge_querycache_budget_evicts_least_recently_used(store):
    probe = TableCache()
    _totals(store, probe)
    cache = TableCache(budget_bytes=probe.size)  # room for about one of the two tables
    _totals(store, cache)
    own_tools.query(store, "SELECT a FROM other_x", cache=cache)
    assert cache.cached_ids() == ["other_x"] and cache.size <= cache.budget
    # An evicted table is loaded again, with the same answer.
    assert _totals(store, cache) == [("app", 1275), ("web", 1275)]
    assert cache.loads == 3


def test_bridge_querycache_zero_budget_keeps_nothing_but_answers(store):
    cache = TableCache(budget_bytes=0)
    both = "SELECT (SELECT SUM(pedidos) FROM ventas_x) + (SELECT SUM(a) FROM other_x) AS total"
    response, _ = own_tools.query(store, both, cache=cache)
    assert response["rows"] == [{"total": 2557}]
    assert cache.cached_ids() == [] and cache.size == 0


def test_bridge_querycache_more_datasets_than_attach_slots(tmp_path):
    store = DatasetStore(tmp_path)
    for i in range(12):  # SQLite attaches at most 10 databases; the rest load into the query database
        store.write_dataset(f"part_{i}", [{"name": "v", "type": "integer"}], iter([{"v": i}]), {"origin": "acp"})
    sql = " UNION ALL ".join(f"SELECT v FROM part_{i}" for i in range(12))
    response, _ = own_tools.query(store, f"SELECT SUM(v) AS s FROM ({sql})", cache=TableCache())
    assert response["rows"] == [{"s": sum(range(12))}]


@pytest.mark.parametrize("sql", [
    "DELETE FROM ventas_x", "UPDATE ventas_x SET pedidos = 0", "INSERT INTO ventas_x VALUES ('x', 1)",
    "DROP TABLE ventas_x", "CREATE INDEX d0.i ON ventas_x (canal)",
    "CREATE TRIGGER d0.t AFTER INSERT ON ventas_x BEGIN SELECT 1; END",
])
def test_bridge_querycache_cached_tables_are_read_only(store, sql):
    cache = TableCache()
    assert _totals(store, cache) == [("app", 1275), ("web", 1275)]
    original = q.check_read_only
    q.check_read_only = lambda _sql: None  # only SQLite's authorizer stands between the SQL and the cache
    try:
        with pytest.raises(ReadOnlyViolation):
            conn, result = q.run_query(store, sql, cache)
            try:
                list(result.records())
            finally:
                conn.close()
    finally:
        q.check_read_only = original
    assert _totals(store, cache) == [("app", 1275), ("web", 1275)]
    assert cache.loads == 1


def test_bridge_querycache_clear_drops_everything(store):
    cache = TableCache()
    _totals(store, cache)
    cache.clear()
    assert cache.cached_ids() == [] and cache.size == 0
    assert _totals(store, cache) == [("app", 1275), ("web", 1275)]
    assert cache.loads == 2


def test_bridge_querycache_table_too_big_for_memdb_loads_into_the_query(store):
    cache = TableCache()

    def loader(conn, dataset):
        if conn.execute("PRAGMA database_list").fetchone()[2].startswith("/analytics-acp-query-"):
            raise sqlite3.OperationalError("database or disk is full")  # what memdb says past its max size
        q._load(conn, store, dataset)

    conn = sqlite3.connect(":memory:", uri=True)
    try:
        leftover = cache.attach(conn, [store.get("ventas_x")], loader)
        assert [d.id for d in leftover] == ["ventas_x"] and cache.cached_ids() == []
    finally:
        conn.close()
