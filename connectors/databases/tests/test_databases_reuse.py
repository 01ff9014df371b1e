"""What execute_sql reuses across calls (issue 19, case 4b): engines per credentials, reflected
columns without a second connection, sqlglot's type inference per SQL text. Counted, never timed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from analytics_acp_databases import engines, execute, types_map
from analytics_acp_databases.arguments import ExecuteSql
from analytics_acp_databases.execute import run_execute_sql
from sqlglot import exp

SQL = "SELECT id, name FROM t WHERE id > {k} ORDER BY id LIMIT 3"


def _db(path, rows: int) -> str:
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, day DATE)")
        con.executemany("INSERT INTO t VALUES (?, ?, '2026-01-01')", [(i, f"n{i}") for i in range(1, rows + 1)])
    return str(path)


def _run(make_ctx, consume, path: str, sql: str) -> list[dict]:
    return consume(run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "sqlite", "path": path}, Path(path).stem)))


def test_one_engine_per_source_across_calls_of_forty_sessions(tmp_path, make_ctx, consume, monkeypatch):
    """40 sources in use at once (more than the old cache of 16): each builds its engine once, not per call,
    and every call still reads its own file."""
    created: list[str] = []
    real = engines._create_engine

    def counting(source, read_only):
        created.append(str(source.credentials.get("path")))
        return real(source, read_only)

    monkeypatch.setattr(engines, "_create_engine", counting)
    paths = [_db(tmp_path / f"s{i}.sqlite", 20 + i) for i in range(40)]
    for _ in range(3):
        for i, path in enumerate(paths):
            rows = _run(make_ctx, consume, path, "SELECT MAX(id) AS m FROM t")
            assert rows == [{"m": 20 + i}]
    assert sorted(created) == sorted(paths)


def test_reflected_columns_need_no_second_connection(tmp_path, make_ctx, consume, monkeypatch):
    """The first call reflects the table on a side connection; later calls find it in the column cache."""
    path = _db(tmp_path / "a.sqlite", 30)
    opened: list[float | None] = []
    real = execute.open_read

    def counting(source, schema=None, timeout_s=None):
        opened.append(timeout_s)
        return real(source, schema, timeout_s)

    monkeypatch.setattr(execute, "open_read", counting)
    first = run_execute_sql(ExecuteSql.parse({"sql": SQL.format(k=0)}), make_ctx({"type": "sqlite", "path": path}, "a"))
    assert len(opened) == 2  # the query's connection + the reflection's
    assert [h["hint"] for h in first.headers] == ["integer", "string"]
    consume(first)
    opened.clear()
    for k in (3, 7, 11):
        ex = run_execute_sql(ExecuteSql.parse({"sql": SQL.format(k=k)}), make_ctx({"type": "sqlite", "path": path}, "a"))
        assert [h["hint"] for h in ex.headers] == ["integer", "string"]
        assert [r["id"] for r in consume(ex)] == [k + 1, k + 2, k + 3]
    assert len(opened) == 3  # one connection per call


def test_inferred_types_remembered_per_sql_and_schema(tmp_path, make_ctx, consume, inference_runs):
    """sqlglot's qualify/annotate run once per SQL text; another schema for the same text is inferred again."""
    one = _db(tmp_path / "one.sqlite", 5)
    two = tmp_path / "two.sqlite"
    with sqlite3.connect(two) as con:  # same table and column names, other declared types
        con.execute("CREATE TABLE t (id TEXT, name INTEGER)")
        con.execute("INSERT INTO t VALUES ('9', 1)")
    sql = "SELECT id, name FROM t ORDER BY id"
    hints = []
    for path in (one, one, one, str(two), str(two)):
        ex = run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "sqlite", "path": path}, Path(path).stem))
        hints.append([h.get("hint") for h in ex.headers])
        consume(ex)
    assert len(inference_runs) == 2
    assert hints == [["integer", "string"]] * 3 + [["string", "integer"]] * 2


@pytest.fixture
def inference_runs(monkeypatch) -> list[int]:
    """One entry per real run of sqlglot's type inference (``types_map.inferred_types``)."""
    runs: list[int] = []
    real = types_map.inferred_types

    def counting(*args, **kwargs):
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(types_map, "inferred_types", counting)
    return runs


def _nested_shape(node):
    # The projection key's rendering before issue 39 (nested tuples): the flat one must tell the same trees apart.
    if isinstance(node, exp.Expression):
        return (node.__class__, tuple((k, _nested_shape(v)) for k, v in node.args.items() if v is not None))
    if isinstance(node, list):
        return tuple(_nested_shape(v) for v in node)
    if node is None or isinstance(node, (str, int, float, bool)):
        return node
    return (type(node).__name__, repr(node))


KEY_CORPUS = [
    "SELECT id, name FROM t WHERE id > 1", "SELECT id, name FROM t WHERE id > 2 ORDER BY id LIMIT 3", "SELECT id, name FROM t",
    "SELECT name, id FROM t", 'SELECT "id", name FROM t', "SELECT id AS name, name FROM t", "SELECT (id, name) FROM t",
    "SELECT DISTINCT id, name FROM t", "SELECT id, name FROM t GROUP BY id, name", "SELECT id, name FROM u",
    "SELECT t.id, name FROM t", "SELECT 1, 'a'", "SELECT 1.0, 'a'", "SELECT '1', 'a'", "SELECT NULL, 'a'", "SELECT id, name FROM t AS x",
    "SELECT id FROM t", "SELECT id FROM (SELECT id FROM t)", "SELECT id FROM (SELECT id FROM t WHERE id > 1)", "SELECT [1, 2]",
    "SELECT CAST(id AS TEXT) FROM t", "SELECT CAST(id AS INTEGER) FROM t", "SELECT COUNT(*) FROM t", "SELECT COUNT(id) FROM t",
]


def test_projection_key_tells_trees_apart_as_the_nested_rendering_did():
    from sqlglot import parse_one

    trees = [parse_one(sql, read="sqlite") for sql in KEY_CORPUS]
    nested = [tuple((k, _nested_shape(v)) for k, v in t.args.items() if k not in types_map._ROW_ONLY_CLAUSES) for t in trees]
    flat = [types_map.projection_key(sql, t) for sql, t in zip(KEY_CORPUS, trees, strict=True)]
    for i in range(len(trees)):
        for j in range(len(trees)):
            assert (flat[i] == flat[j]) == (nested[i] == nested[j]), (KEY_CORPUS[i], KEY_CORPUS[j])
            assert flat[i] != flat[j] or hash(flat[i]) == hash(flat[j])
    assert flat[0] == flat[1] == flat[2] and len(set(flat)) == len(set(nested))


def test_inferred_memo_is_bounded():
    from analytics_acp_databases.state import INFERRED_MEMO_SIZE, DatabaseState
    from sqlglot import parse_one

    memo = DatabaseState().inferred
    for k in range(INFERRED_MEMO_SIZE + 10):
        sql = f"SELECT {k} AS a"
        assert types_map.inferred_types_memo(memo, sql, parse_one(sql), {}, "sqlite", 1) == ["integer"]
    assert len(memo) == INFERRED_MEMO_SIZE


def test_inference_shared_by_queries_that_differ_only_in_filters_order_and_limit(tmp_path, make_ctx, consume, inference_runs):
    """WHERE/ORDER BY/LIMIT/OFFSET of the outer SELECT never change a projection's type: one inference for
    all of them; another projection list, a join or a GROUP BY is inferred on its own."""
    path = _db(tmp_path / "f.sqlite", 40)
    same = [SQL.format(k=k) for k in (0, 5, 9)] + ["SELECT id, name FROM t WHERE name LIKE 'n1%' ORDER BY name DESC LIMIT 2 OFFSET 1"]
    for sql in same:
        ex = run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "sqlite", "path": path}, "f"))
        assert [h["hint"] for h in ex.headers] == ["integer", "string"]
        consume(ex)
    assert len(inference_runs) == 1
    other = {
        "SELECT name, id FROM t WHERE id > 1": ["string", "integer"],
        "SELECT DISTINCT name, id FROM t": ["string", "integer"],
        "SELECT day, COUNT(*) AS n FROM t GROUP BY day": ["date", "integer"],
        "SELECT a.id, b.day FROM t AS a JOIN t AS b ON a.id = b.id WHERE a.id < 3": ["integer", "date"],
    }
    for sql, hints in other.items():
        ex = run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "sqlite", "path": path}, "f"))
        assert [h.get("hint") for h in ex.headers] == hints, sql
        consume(ex)
    assert len(inference_runs) == 1 + len(other)


def test_a_sessions_credentials_are_hashed_once_and_never_served_to_others(tmp_path, make_ctx, consume, monkeypatch):
    """The engines' key (identity_key of the credentials) is worked out once per session credentials dict: another
    session's credentials, or the same dict changed in place, get their own key and read their own file."""
    hashed: list[str] = []
    real = engines.identity_key

    def counting(credentials):
        hashed.append(credentials["path"])
        return real(credentials)

    monkeypatch.setattr(engines, "identity_key", counting)
    a, b = _db(tmp_path / "a.sqlite", 20), _db(tmp_path / "b.sqlite", 30)
    one, two = {"type": "sqlite", "path": a}, {"type": "sqlite", "path": b}

    def max_id(credentials: dict) -> int:
        ctx = make_ctx(credentials, Path(credentials["path"]).stem)
        return consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT MAX(id) AS m FROM t"}), ctx))[0]["m"]

    for _ in range(3):
        assert (max_id(one), max_id(two)) == (20, 30)
    assert hashed == [a, b]
    one["path"] = b  # changed in place: hashed again, and the call reads the file it names now
    assert max_id(one) == 30 and hashed == [a, b, b]
