"""acp_query's progress and cancel in process (issue 28.3), with the kit's RecordingSignals: rows loaded in
order then the final step; a cancel mid-load interrupts SQLite, caches and saves nothing, and the next query works."""

from __future__ import annotations

import json
import sqlite3

import pytest
from analytics_acp.kit.fakes import RecordingSignals
from analytics_acp_bridge.query.cache import TableCache
from analytics_acp_bridge.serving import own_tools
from analytics_acp_bridge.store.datasets import DatasetStore

ROWS = 23_000  # five load batches (query.BATCH), the last one partial


def _store(tmp_path) -> DatasetStore:
    store = DatasetStore(tmp_path / "p")
    store.dir.mkdir(parents=True)
    with (store.dir / "big.csv").open("w", newline="") as handle:
        handle.write("i,s\r\n")
        handle.writelines(f"{i},r{i}\r\n" for i in range(ROWS))
    meta = {"id": "big", "origin": "acp", "row_count": ROWS,
            "headers": [{"name": "i", "type": "integer"}, {"name": "s", "type": "string"}]}
    (store.dir / "big.meta.json").write_text(json.dumps(meta))
    return store


def test_query_progress_is_rows_loaded_then_the_final_step(tmp_path):
    store, cache, signals = _store(tmp_path), TableCache(), RecordingSignals()
    response, _ = own_tools.query(store, "SELECT count(*) AS n FROM big", None, cache, signals)
    assert response["rows"] == [{"n": ROWS}]
    done = [s[0] for s in signals.seen]
    assert done == [5000, 10000, 15000, 20000, ROWS, ROWS + 1]
    assert {s[1] for s in signals.seen} == {ROWS + 1}
    assert signals.seen[-1][2] == "query done: 1 result row"
    again = RecordingSignals()
    own_tools.query(store, "SELECT count(*) AS n FROM big", None, cache, again)
    assert again.seen == [(1, 1, "query done: 1 result row")]  # cached: nothing to load, only the final step


def test_query_cancelled_mid_load_caches_and_saves_nothing(tmp_path):
    store, cache = _store(tmp_path), TableCache()
    signals = RecordingSignals(cancel_after=10_000)
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        own_tools.query(store, "SELECT count(*) AS n FROM big", None, cache, signals)
    assert signals.cancelled and max(s[0] for s in signals.seen) == 10_000  # stopped at the next batch
    assert cache.cached_ids() == [] and cache.loads == 0  # the half-loaded table was dropped
    assert store.unfinished() == [] and sorted(p.name for p in store.dir.iterdir()) == ["big.csv", "big.meta.json"]
    response, _ = own_tools.query(store, "SELECT count(*) AS n FROM big", None, cache)
    assert response["rows"] == [{"n": ROWS}] and cache.cached_ids() == ["big"]


def test_query_cancelled_while_its_statement_runs_is_interrupted(tmp_path):
    store, cache = _store(tmp_path), TableCache()
    signals = RecordingSignals()
    sql = ("WITH RECURSIVE c(x) AS (SELECT max(i) FROM big UNION ALL SELECT x + 1 FROM c WHERE x < 1e15) "
           "SELECT x FROM c")
    # The result streams into its CSV; the cancel lands once the first rows are written (no timing).
    original = store.write_dataset

    def cancel_while_writing(dataset_id, headers, rows, *args, **kwargs):
        def rows_then_cancel():
            for n, row in enumerate(rows):
                if n == 20_000:
                    signals.cancel()  # what a notifications/cancelled does: runs the interrupt callback
                yield row
        return original(dataset_id, headers, rows_then_cancel(), *args, **kwargs)

    store.write_dataset = cancel_while_writing  # type: ignore[method-assign]
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        own_tools.query(store, sql, None, cache, signals)
    assert store.unfinished() == [] and sorted(p.name for p in store.dir.iterdir()) == ["big.csv", "big.meta.json"]
