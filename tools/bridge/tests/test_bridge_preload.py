"""A dataset saved from a table file is loaded for acp_query by a worker while its CSV is written
(preload.py): the first query reuses that table (no CSV load) and sees exactly what loading the CSV
gives; past the budget, for inline tables and for copies, the CSV is loaded as before."""

import json
import os
import shutil
import tempfile
from functools import partial
from pathlib import Path

import pytest
from analytics_acp.tablefile import file_uri, write_table_file
from analytics_acp_bridge.calls.results import store_extraction
from analytics_acp_bridge.query import preload
from analytics_acp_bridge.query.cache import TableCache
from analytics_acp_bridge.query.sql import run_query
from analytics_acp_bridge.store.datasets import Dataset, DatasetStore

HEADERS = [
    {"name": "id", "type": "integer"}, {"name": "channel", "type": "string"}, {"name": "day", "type": "date"},
    {"name": "amount", "type": "number"}, {"name": "paid", "type": "boolean"}, {"name": "extra", "type": "string"},
]


def _row(i: int) -> dict:
    row = {"id": i, "channel": ("web", "app", "a,b", "")[i % 4], "day": f"2026-01-{i % 28 + 1:02d}",
           "amount": i * 0.25 if i % 7 else None, "paid": i % 3 == 0, "extra": f"n{i}"}
    if i % 5000 == 1:  # batches the typed path cannot take: stored as the CSV's text says
        row.update(id=2**70 + i, paid="yes", extra={"k": [i, None]})
    if i % 5000 == 2:
        row.update(id=2.0, channel=12, amount="n/a")
    return row


def _extract(tmp_path, store, cache, n, inline=False, loaders=None, pretty=False):
    rows = [_row(i) for i in range(n)]
    if inline:
        system_data = {"format": "inline", "headers": HEADERS, "table": rows}
    else:
        path = write_table_file(rows, tmp_path / "server-tmp")
        if pretty:  # another server's layout: one value per line, not a chunk of rows per line
            path.write_text(json.dumps([r for r in rows if r["id"] < 2**63], indent=1))  # ijson: 64-bit ints only
        system_data = {"format": "file", "headers": HEADERS, "table_uri": file_uri(path)}

    def start(*args):
        loader = preload.start(cache, *args)
        if loaders is not None:
            loaders.append(loader)
        return loader

    stored, _ = store_extraction(
        store, source="s", acp_id="databases", tool="execute_sql", model_response={}, system_info={},
        system_data=system_data, owned_dir=tmp_path / "server-tmp", preload=start,
    )
    return stored[0].dataset_id


def _all_rows(store, dataset_id, cache):
    conn, result = run_query(store, f"SELECT *, typeof(id), typeof(amount) FROM {dataset_id} ORDER BY rowid", cache)
    try:
        return list(result.records())
    finally:
        conn.close()


def test_bridge_preload_serves_the_first_query_with_the_csv_table(tmp_path):
    store, cache, loaders = DatasetStore(tmp_path / "p"), TableCache(), []
    dataset_id = _extract(tmp_path, store, cache, 12_000, loaders=loaders)
    assert len(loaders[0]._procs) == 1 and loaders[0].indexes == []  # small: one worker, no index ahead
    assert not list((tmp_path / "server-tmp").glob("*"))  # the table file was read and deleted as before
    preloaded = _all_rows(store, dataset_id, cache)
    assert cache.preloaded == 1 and cache.loads == 0  # the first query did not read the CSV
    from_csv = _all_rows(store, dataset_id, None)
    assert len(preloaded) == 12_000 and preloaded == from_csv
    assert not list(Path(tempfile.gettempdir()).glob(f"acp-preload-{os.getpid()}-*"))  # nothing left behind
    assert {r["typeof(id)"] for r in from_csv} == {"integer", "real"}  # the typed and the text path both ran
    assert {r["typeof(amount)"] for r in from_csv} == {"real", "null", "text"}


def _group_by(store, dataset_id, cache):
    sql = (f"SELECT channel, COUNT(*) AS n, SUM(amount) AS total, MIN(day) AS first, MAX(paid) AS paid "
           f"FROM {dataset_id} GROUP BY channel")
    conn, result = run_query(store, sql, cache)
    try:
        return list(result.records())
    finally:
        conn.close()


def test_bridge_preload_splits_a_large_table_file_between_two_workers(tmp_path, monkeypatch):
    # Issue 39.3: both cores are idle once the extraction answered; each worker loads half the lines,
    # and the table is still the CSV's, rows in the file's order.
    monkeypatch.setattr(preload, "SPLIT_BYTES", 1)
    store, cache, loaders = DatasetStore(tmp_path / "p"), TableCache(), []
    dataset_id = _extract(tmp_path, store, cache, 5_000, loaders=loaders)  # three lines of rows
    preloaded = _all_rows(store, dataset_id, cache)
    assert len(loaders[0]._procs) == 2 and cache.preloaded == 1 and cache.loads == 0
    assert preloaded == _all_rows(store, dataset_id, None)
    assert not list(Path(tempfile.gettempdir()).glob(f"acp-preload-{os.getpid()}-*"))


def test_bridge_preload_reads_another_layout_whole_when_split(tmp_path, monkeypatch):
    # A pretty-printed array is not a chunk of rows per line: the halves give up, one worker reads it all.
    monkeypatch.setattr(preload, "SPLIT_BYTES", 1)
    store, cache, loaders = DatasetStore(tmp_path / "p"), TableCache(), []
    dataset_id = _extract(tmp_path, store, cache, 3_000, loaders=loaders, pretty=True)
    preloaded = _all_rows(store, dataset_id, cache)
    assert len(loaders[0]._procs) == 3 and cache.preloaded == 1 and cache.loads == 0
    assert preloaded == _all_rows(store, dataset_id, None)


def test_bridge_preload_indexes_the_likely_group_by_keys_before_the_first_query(tmp_path, monkeypatch):
    # Issue 39.3: the first GROUP BY after an extraction reads a covering index instead of sorting:
    # one for the text column and one for the date column with the fewest values; free text left out.
    # The first is built before any query sees the table, the second after it while no query runs.
    monkeypatch.setattr(preload, "INDEX_MIN_ROWS", 1_000)
    monkeypatch.setattr(preload, "DISTINCT_CAP", 100)
    monkeypatch.setattr(preload, "SPLIT_BYTES", 1)
    store, cache, loaders = DatasetStore(tmp_path / "p"), TableCache(), []
    dataset_id = _extract(tmp_path, store, cache, 5_000, loaders=loaders)
    assert loaders[0].done.wait(120) and loaders[0].indexes == ["acp_ahead_1"]
    later = loaders[0].later
    assert later is not None and later.finished.wait(120)
    assert later.built == ["acp_ahead_2"] and not later.stopped
    first = _group_by(store, dataset_id, cache)
    assert cache.loads == 0
    made = dict(cache.indexes(store.get(dataset_id)))
    assert '("channel", "id", "day", "amount", "paid")' in made["acp_ahead_1"]
    assert '("day", "id", "channel", "amount", "paid")' in made["acp_ahead_2"]  # "extra": past the cap
    assert first == _group_by(store, dataset_id, None) and len(first) == 5  # web, app, "a,b", NULL, 12


@pytest.mark.parametrize("split", [False, True])
def test_bridge_preload_gives_way_past_the_budget(tmp_path, monkeypatch, split):
    if split:  # each half is over the budget too: no worker keeps going, the first query loads the CSV
        monkeypatch.setattr(preload, "SPLIT_BYTES", 1)
    store, cache = DatasetStore(tmp_path / "p"), TableCache(budget_bytes=64 * 1024)
    dataset_id = _extract(tmp_path, store, cache, 12_000)
    rows = _all_rows(store, dataset_id, cache)
    assert cache.preloaded == 0 and len(rows) == 12_000  # loaded from the CSV, used once (too big to keep)


def test_bridge_preload_skips_inline_tables_and_copies(tmp_path):
    store, cache = DatasetStore(tmp_path / "p"), TableCache()
    dataset_id = _extract(tmp_path, store, cache, 300, inline=True)
    assert len(_all_rows(store, dataset_id, cache)) == 300
    assert cache.preloaded == 0 and cache.loads == 1
    copied = store.dir / "copy_x.csv"  # a hand-dropped CSV: today's path
    shutil.copyfile(store.dir / f"{dataset_id}.csv", copied)
    assert len(_all_rows(store, "copy_x", cache)) == 300 and cache.loads == 2


def test_bridge_preload_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv(preload.ENV_PRELOAD, "0")
    store, cache = DatasetStore(tmp_path / "p"), TableCache()
    dataset_id = _extract(tmp_path, store, cache, 500)
    assert len(_all_rows(store, dataset_id, cache)) == 500 and cache.preloaded == 0 and cache.loads == 1


def test_bridge_preload_worker_starts_only_once_the_csv_is_saved(tmp_path):
    # Issue 19.2: while the CSV is written both cores belong to the extraction; the worker waits.
    cache = TableCache()
    path = write_table_file([_row(i) for i in range(3000)], tmp_path / "server-tmp")
    loader = preload.start(cache, "t_early", HEADERS, path)
    assert loader is not None and loader._proc is None  # no worker yet
    path.unlink()  # the bridge deletes the table file once read, before the CSV is in place
    csv_path = tmp_path / "p" / "t_early.csv"
    csv_path.parent.mkdir(parents=True)
    csv_path.write_text("id\n1\n")
    loader.complete(Dataset(id="t_early", path=csv_path, meta={"headers": HEADERS}))
    assert loader._proc is not None
    assert loader.done.wait(120)
    assert loader._proc.returncode == 0  # it read the table file through the descriptor opened at first


def test_bridge_preload_takes_a_number_column_with_ints_past_64_bits(tmp_path):
    # pysqlite cannot bind such an int: the worker used to die on it (the first query then loaded
    # the CSV). The batch now goes in as the CSV's text, and the table is the CSV's.
    store, cache = DatasetStore(tmp_path / "p"), TableCache()
    rows = [{"amount": 2**70 + i if i % 1000 == 7 else (i if i % 2 else i + 0.5)} for i in range(5000)]
    rows += [{"amount": 2**65}, {"amount": 3}]  # a batch of ints only, one past 64 bits
    path = write_table_file(rows, tmp_path / "server-tmp")
    headers = [{"name": "amount", "type": "number"}]
    stored, _ = store_extraction(
        store, source="s", acp_id="databases", tool="execute_sql", model_response={}, system_info={},
        system_data={"format": "file", "headers": headers, "table_uri": file_uri(path)},
        owned_dir=tmp_path / "server-tmp", preload=partial(preload.start, cache),
    )
    dataset_id = stored[0].dataset_id
    sql = f"SELECT amount, typeof(amount) AS t FROM {dataset_id} ORDER BY rowid"
    conn, result = run_query(store, sql, cache)
    try:
        preloaded = list(result.records())
    finally:
        conn.close()
    assert cache.preloaded == 1 and cache.loads == 0
    conn, result = run_query(store, sql, None)
    try:
        assert preloaded == list(result.records())
    finally:
        conn.close()
    assert {r["t"] for r in preloaded} == {"real"} and preloaded[7]["amount"] == float(2**70 + 7)


def test_bridge_preload_frees_deleted_datasets_before_building_the_next(tmp_path, monkeypatch):
    # A dataset deleted by hand no longer holds its table while the next preload builds one
    # (bench case 2 deletes each round's dataset: the bridge's peak held two tables and their indexes).
    store, cache, loaders = DatasetStore(tmp_path / "p"), TableCache(), []
    first = _extract(tmp_path, store, cache, 3_000, loaders=loaders)
    assert len(_all_rows(store, first, cache)) == 3_000 and cache.cached_ids() == [first]
    (store.dir / f"{first}.csv").unlink()
    seen, assemble = [], preload.Preload._assemble

    def spy(self, keeper, outs):
        seen.append(cache.cached_ids())  # what the cache holds while the new table is built
        return assemble(self, keeper, outs)

    monkeypatch.setattr(preload.Preload, "_assemble", spy)
    second = _extract(tmp_path, store, cache, 3_000, loaders=loaders)
    loaders[-1].wait()
    assert seen == [[]] and cache.cached_ids() == [second]


def test_bridge_preload_kills_a_stuck_worker_at_its_bound_and_the_query_loads_the_csv(tmp_path, monkeypatch):
    """Every wait is bounded: a worker that never answers is killed at WORK_BOUND_S; the first query then reads
    the CSV itself (nothing lost, nothing left running)."""
    stuck = tmp_path / "stuck-python"
    stuck.write_text("#!/bin/sh\nexec sleep 600\n")  # called as `<python> -m ...loadworker`: answers nothing
    stuck.chmod(0o755)
    monkeypatch.setattr(preload, "WORK_BOUND_S", 0.5)
    monkeypatch.setattr(preload.sys, "executable", str(stuck))
    store, cache, loaders = DatasetStore(tmp_path / "p"), TableCache(), []
    # Both patches stay for the whole test: the preload's thread reads the bound when it hands the worker its
    # spec, which may come after _extract returns (a first version undid them here and waited 600 s under load).
    dataset_id = _extract(tmp_path, store, cache, 2_000, loaders=loaders)
    rows = _all_rows(store, dataset_id, cache)
    assert len(rows) == 2_000 and cache.preloaded == 0 and cache.loads == 1
    assert all(proc.poll() is not None for proc in loaders[0]._procs)  # the stuck worker was killed


@pytest.mark.parametrize("data", [
    b'[{"a": 1, "b": "x"}, {"a": 2.5, "b": null}]', b'[{"a": 12345678901234567890123}]', b'[{"a": NaN}]',
    b'[{"a": Infinity}]', b'[{"a": 1,}]', b'[1, 2, 3]', b'[]', b'not json', b'[{"a": "0000000000000000000"}]',
])
def test_the_worker_reads_table_lines_as_the_core_does(data):
    """loadworker keeps its own copy of the core's line parser (importing the core would cost the worker ~0.2 s
    of its start): both must read every line alike, and agree on the layout's limits."""
    from analytics_acp import tablefile
    from analytics_acp_bridge.query import loadworker

    assert loadworker._parse(data) == tablefile._parse(data)
    assert loadworker.MAX_LINE == tablefile.MAX_LINE
    assert loadworker._DIGITS == tablefile._DIGITS and loadworker._LONG_RUN == tablefile._LONG_RUN
