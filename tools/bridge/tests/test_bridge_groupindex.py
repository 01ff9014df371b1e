"""Adaptive covering indexes on cached acp_query tables: a plain GROUP BY that SQLite sorts gets an
index the second time it is seen, answers stay the same, and the index dies with its table."""

import os
import sqlite3

import pytest
from analytics_acp.errors import ReadOnlyViolation
from analytics_acp_bridge.query import sql as q
from analytics_acp_bridge.query.cache import TableCache
from analytics_acp_bridge.query.groupshape import group_shape
from analytics_acp_bridge.serving import own_tools
from analytics_acp_bridge.store.datasets import DatasetStore

HEADERS = [
    {"name": "channel", "type": "string"}, {"name": "amount", "type": "number"},
    {"name": "qty", "type": "integer"}, {"name": "day", "type": "string"}, {"name": "note", "type": "string"},
]
GROUP_SQL = ("SELECT channel, COUNT(*) AS n, SUM(amount) AS total, AVG(qty) AS avg_qty, MIN(day) AS first_day, "
             "MAX(day) AS last_day FROM sales_g GROUP BY channel ORDER BY channel")


def _rows(channels=("web", "app", "shop")):
    # Amounts are multiples of 0.25: every sum is exact whatever order SQLite adds them in.
    return iter([
        {"channel": channels[i % len(channels)], "amount": (i % 17) * 0.25, "qty": i % 5,
         "day": f"2024-01-{1 + i % 28:02d}", "note": f"n{i}"}
        for i in range(600)
    ])


@pytest.fixture
def store(tmp_path):
    s = DatasetStore(tmp_path)
    s.write_dataset("sales_g", HEADERS, _rows(), {"origin": "acp"})
    s.write_dataset("other_g", [{"name": "channel", "type": "string"}, {"name": "w", "type": "integer"}],
                    iter([{"channel": "web", "w": 2}, {"channel": "app", "w": 3}]), {"origin": "acp"})
    return s


def _run(store, cache, sql=GROUP_SQL):
    response, _ = own_tools.query(store, sql, cache=cache)
    return response["rows"]


def _plan(store, cache, sql=GROUP_SQL):
    conn = sqlite3.connect(":memory:", uri=True)
    try:
        cache.attach(conn, [store.get("sales_g")], lambda c, d: q._load(c, store, d))
        return " | ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
    finally:
        conn.close()


def test_bridge_groupindex_second_sighting_builds_one_covering_index(store):
    expected = _run(store, None)  # no cache: no index, the reference answer
    cache = TableCache()
    first = _run(store, cache)
    dataset = store.get("sales_g")
    assert cache.indexes(dataset) == []  # seen once: remembered only
    assert "TEMP B-TREE FOR GROUP BY" in _plan(store, cache)
    size_before = cache.size
    second = _run(store, cache)
    indexes = cache.indexes(dataset)
    assert len(indexes) == 1
    assert '("channel", "amount", "day", "qty")' in indexes[0][1]
    plan = _plan(store, cache)
    assert "COVERING INDEX" in plan and indexes[0][0] in plan and "TEMP B-TREE" not in plan
    assert cache.size > size_before  # the index's pages count in the budget
    third = _run(store, cache)
    assert expected == first == second == third
    assert len(cache.indexes(dataset)) == 1 and cache.loads == 1


def test_bridge_groupindex_changed_csv_drops_the_index(store):
    cache = TableCache()
    _run(store, cache)
    _run(store, cache)
    old = store.get("sales_g")
    assert len(cache.indexes(old)) == 1
    path = old.path
    tmp = path.with_name(".swap.tmp")
    tmp.write_bytes(path.read_bytes().replace(b"shop,", b"shoq,"))
    os.replace(tmp, path)
    rows = _run(store, cache)
    assert [r["channel"] for r in rows] == ["app", "shoq", "web"]
    assert cache.indexes(store.get("sales_g")) == [] and cache.loads == 2
    assert "TEMP B-TREE FOR GROUP BY" in _plan(store, cache)


@pytest.mark.parametrize("sql", [
    "SELECT s.channel, SUM(o.w) AS w FROM sales_g s JOIN other_g o ON o.channel = s.channel GROUP BY s.channel",
    "SELECT upper(channel) AS c, COUNT(*) AS n FROM sales_g GROUP BY upper(channel)",
    "SELECT qty % 2 AS odd, COUNT(*) AS n FROM sales_g GROUP BY qty % 2",
    "SELECT channel, COUNT(*) AS n FROM sales_g GROUP BY 1",
    "SELECT channel, COUNT(*) AS n FROM (SELECT * FROM sales_g) GROUP BY channel",
    "WITH t AS (SELECT channel FROM sales_g) SELECT channel, COUNT(*) AS n FROM t GROUP BY channel",
])
def test_bridge_groupindex_other_shapes_create_none(store, sql):
    cache = TableCache()
    first = _run(store, cache, sql)
    assert _run(store, cache, sql) == first
    assert cache.indexes(store.get("sales_g")) == [] and cache.indexes(store.get("other_g")) == []


def test_bridge_groupindex_too_many_columns_create_none():
    headers = {"t": [f"c{i}" for i in range(10)]}
    wide = q.check_read_only("SELECT c0, " + ", ".join(f"SUM(c{i})" for i in range(1, 9)) + " FROM t GROUP BY c0")
    narrow = q.check_read_only("SELECT c0, SUM(c1) AS s FROM t WHERE c2 > 0 GROUP BY c0")
    assert group_shape(wide, headers) is None
    shape = group_shape(narrow, headers)
    assert shape is not None and shape.columns == ("c0", "c1", "c2")


def test_bridge_groupindex_at_most_two_per_dataset(store):
    cache = TableCache()
    shapes = [
        "SELECT channel, SUM(qty) AS s FROM sales_g GROUP BY channel",
        "SELECT day, SUM(amount) AS s FROM sales_g GROUP BY day",
        "SELECT qty, COUNT(*) AS n FROM sales_g GROUP BY qty",
        "SELECT note, COUNT(*) AS n FROM sales_g GROUP BY note",
    ]
    answers = [_run(store, cache, sql) for sql in shapes]
    assert [_run(store, cache, sql) for sql in shapes] == answers
    assert [_run(store, cache, sql) for sql in shapes] == answers
    assert len(cache.indexes(store.get("sales_g"))) == 2


def test_bridge_groupindex_index_that_would_not_fit_is_dropped(store):
    probe = TableCache()
    _run(store, probe)
    cache = TableCache(budget_bytes=probe.size)  # the table fits, the table plus an index does not
    answer = _run(store, cache)
    assert _run(store, cache) == answer and _run(store, cache) == answer
    dataset = store.get("sales_g")
    assert cache.cached_ids() == ["sales_g"] and cache.indexes(dataset) == [] and cache.size <= cache.budget


@pytest.mark.parametrize("sql", [
    "DELETE FROM sales_g", "CREATE INDEX d0.i ON sales_g (note)",
    "INSERT INTO sales_g (channel) VALUES ('x')",
])
def test_bridge_groupindex_indexed_tables_stay_read_only(store, sql):
    cache = TableCache()
    expected = _run(store, cache)
    _run(store, cache)
    assert len(cache.indexes(store.get("sales_g"))) == 1
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
    assert _run(store, cache) == expected and len(cache.indexes(store.get("sales_g"))) == 1


def test_bridge_groupindex_query_connection_cannot_drop_the_index(store):
    cache = TableCache()
    _run(store, cache)
    _run(store, cache)
    (name, _sql), = cache.indexes(store.get("sales_g"))
    conn = sqlite3.connect(":memory:", uri=True)
    try:
        cache.attach(conn, [store.get("sales_g")], lambda c, d: q._load(c, store, d))
        conn.set_authorizer(q.read_only)  # what run_query sets before the query's SQL runs
        with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
            conn.execute(f"DROP INDEX d0.{name}")
    finally:
        conn.close()
    assert [n for n, _ in cache.indexes(store.get("sales_g"))] == [name]
