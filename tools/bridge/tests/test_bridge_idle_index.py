"""A preload's further indexes are built while no query uses the table, and a query stops them
(query/indexbuild.py, issue 39.3): a memdb database lets no reader in while a connection writes to
it, so a build that went on would hold the query until it ended."""

import sqlite3
import threading
from typing import Any

import pytest
from analytics_acp.tablefile import file_uri, write_table_file
from analytics_acp_bridge.calls.results import store_extraction
from analytics_acp_bridge.query import indexbuild, preload
from analytics_acp_bridge.query.cache import TableCache
from analytics_acp_bridge.query.sql import run_query
from analytics_acp_bridge.store.datasets import DatasetStore

HEADERS = [{"name": "id", "type": "integer"}, {"name": "channel", "type": "string"},
           {"name": "day", "type": "date"}, {"name": "amount", "type": "number"}]
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
GROUP_BY = "SELECT channel, COUNT(*) AS n, SUM(amount) AS total FROM {} GROUP BY channel ORDER BY channel"


class Holder:
    """Stands in for the idle build's CREATE INDEX: a write transaction that runs until interrupted."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.errors: list[str] = []

    def __call__(self, conn: sqlite3.Connection, table: str, name: str, columns: Any, budget: int) -> bool | None:
        conn.execute("BEGIN IMMEDIATE")  # a writer: the memdb database now refuses new readers
        self.started.set()
        try:
            conn.execute(ENDLESS).fetchone()
        except sqlite3.OperationalError as exc:
            conn.rollback()
            self.errors.append(str(exc))
            return None
        return True


@pytest.fixture
def extracted(tmp_path, monkeypatch):
    """A 3,000-row dataset preloaded with one index ahead and a second one being "built" by a Holder."""
    monkeypatch.setattr(preload, "INDEX_MIN_ROWS", 1_000)
    holder = Holder()
    monkeypatch.setattr(indexbuild, "create_index", holder)  # the idle build's only; the preload's first is real
    store, cache, loaders = DatasetStore(tmp_path / "p"), TableCache(), []
    rows = [{"id": i, "channel": ("web", "app", "store")[i % 3], "day": f"2026-01-{i % 28 + 1:02d}",
             "amount": i * 0.5} for i in range(3_000)]
    path = write_table_file(rows, tmp_path / "server-tmp")

    def start(*args):
        loaders.append(preload.start(cache, *args))
        return loaders[-1]

    stored, _ = store_extraction(
        store, source="s", acp_id="databases", tool="execute_sql", model_response={}, system_info={},
        system_data={"format": "file", "headers": HEADERS, "table_uri": file_uri(path)},
        owned_dir=tmp_path / "server-tmp", preload=start,
    )
    loader = loaders[0]
    assert loader.done.wait(120) and loader.indexes == ["acp_ahead_1"] and holder.started.wait(120)
    yield store, cache, stored[0].dataset_id, loader.later, holder
    cache.clear()


def _query(store, cache, sql):
    conn, result = run_query(store, sql, cache)
    try:
        return list(result.records())
    finally:
        conn.close()


def test_bridge_a_query_stops_the_idle_index_build_and_runs_at_once(extracted):
    store, cache, dataset_id, later, holder = extracted
    assert later is not None and not later.finished.is_set()  # still "building", holding the write lock
    rows = _query(store, cache, GROUP_BY.format(dataset_id))
    assert rows == _query(store, None, GROUP_BY.format(dataset_id)) and len(rows) == 3
    assert later.finished.is_set() and later.stopped and later.built == []
    assert holder.errors == ["interrupted"]  # rolled back: the table is as it was, with its first index
    assert [name for name, _ in cache.indexes(store.get(dataset_id))] == ["acp_ahead_1"]
    assert cache.loads == 0


def test_bridge_dropping_the_table_stops_its_idle_index_build(extracted):
    store, cache, dataset_id, later, holder = extracted
    cache.clear()
    assert later.finished.is_set() and later.stopped and holder.errors == ["interrupted"]
    assert cache.cached_ids() == []


class LateStatement:
    """A connection whose build starts its statement only after the first interrupt was sent (and lost)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn, self.interrupts, self.go = conn, 0, threading.Event()

    def interrupt(self) -> None:
        self.interrupts += 1
        self.conn.interrupt()  # nothing runs yet: SQLite drops it when the next statement starts
        self.go.set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def test_bridge_idle_build_stop_interrupts_again_a_statement_that_started_late(monkeypatch):
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    late = LateStatement(conn)
    started = threading.Event()

    def build(c, table, name, columns, budget):
        started.set()
        late.go.wait(60)  # between "not stopped yet" and the statement: the first interrupt comes here
        try:
            c.execute(ENDLESS).fetchone()
        except sqlite3.OperationalError:
            return None
        return True

    monkeypatch.setattr(indexbuild, "create_index", build)
    job = indexbuild.IdleBuild(late, "t", [("i1", ["a"])], 1 << 30)  # type: ignore[arg-type]
    job.start(lambda _job: None)
    assert started.wait(60)
    assert job.stop() and job.built == [] and late.interrupts >= 2
    conn.close()
