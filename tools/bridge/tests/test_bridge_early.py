"""The CSV of a big extraction is written while the server still writes its table file (early.py, issue 19.2).

The early CSV is used only when it is provably the CSV of the answer's file: the same file
(inode), read to its closing bracket in the core's layout, with the answer's column names. It is
then byte for byte the CSV that reading the finished file gives; anything else falls back.
"""

import io
import os
import threading
import time
from pathlib import Path

import pytest
from analytics_acp.tablefile import TableFileWriter, file_uri, iter_file_rows
from analytics_acp_bridge.calls import early
from analytics_acp_bridge.calls.results import store_extraction
from analytics_acp_bridge.store import csvwrite
from analytics_acp_bridge.store.datasets import DatasetStore

pytestmark = pytest.mark.skipif(not early.supported(), reason="no early CSV on Windows")
NAMES = ["id", "channel", "amount", "note"]


def _rows(start: int, stop: int) -> list[dict]:
    return [{"id": i, "channel": ("web", "a,b", "")[i % 3], "amount": i / 4 if i % 5 else None, "note": f"n{i}"}
            for i in range(start, stop)]


def _csv_of(path: Path) -> str:
    out = io.StringIO(newline="")
    csvwrite.write_rows(out, NAMES, iter_file_rows(path))
    return out.getvalue()


def _wait(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _reading(tmp_path: Path) -> tuple[early.EarlyCsv, Path, DatasetStore, Path]:
    folder, store = tmp_path / "server", DatasetStore(tmp_path / "p")
    folder.mkdir()
    reader = early.EarlyCsv(folder, store.dir, store.writing)
    reader.start()
    return reader, folder, store, store.dir


def _partly_written(folder: Path, store: DatasetStore) -> TableFileWriter:
    writer = TableFileWriter(folder, "databases")
    writer.write(_rows(0, 5000))
    writer._file.flush()
    _wait(lambda: bool(store.unfinished()))  # the reader has turned rows into CSV while the file is unfinished
    return writer


def test_bridge_early_csv_is_the_csv_of_the_finished_file(tmp_path):
    reader, folder, store, csv_dir = _reading(tmp_path)
    writer = _partly_written(folder, store)
    writer.write(_rows(5000, 9000))
    path = writer.close()
    claimed = reader.claim(path, NAMES)
    assert claimed is not None
    assert claimed.rows == 9000 and store.unfinished() == [claimed.path]  # held until the claimer lets go
    assert Path(claimed.path).read_bytes() == _csv_of(path).encode("utf-8")
    claimed.held.close()
    assert not store.unfinished() and Path(claimed.path).exists()  # released; renaming it is the claimer's job


def test_bridge_early_csv_is_dropped_for_another_file(tmp_path):
    # The answer names a file other than the one read (another call's, or an 8.6 rewrite): other inode.
    reader, folder, store, csv_dir = _reading(tmp_path)
    _partly_written(folder, store).close()
    other = TableFileWriter(tmp_path / "elsewhere", "databases")
    other.write(_rows(100, 200))
    assert reader.claim(other.close(), NAMES) is None
    assert not store.unfinished() and not list(csv_dir.iterdir())


def test_bridge_early_csv_after_a_rewrite_is_never_the_draft(tmp_path):
    # 8.6 second pass: the draft read so far is deleted and the rows are written again to a new file;
    # the reader may or may not catch the new file before its rename, but never answers with the draft.
    reader, folder, store, csv_dir = _reading(tmp_path)
    writer = _partly_written(folder, store)
    path = writer.close(lambda row: {**row, "amount": str(row["amount"])})
    claimed = reader.claim(path, NAMES)
    if claimed is None:
        assert not store.unfinished() and not list(csv_dir.iterdir())
    else:
        assert Path(claimed.path).read_bytes() == _csv_of(path).encode("utf-8")


def test_bridge_early_csv_is_dropped_when_the_answer_names_other_columns(tmp_path):
    reader, folder, store, csv_dir = _reading(tmp_path)
    path = _partly_written(folder, store).close()
    assert reader.claim(path, ["id", "channel", "note", "amount"]) is None
    assert not store.unfinished() and not list(csv_dir.iterdir())


def test_bridge_early_csv_gives_up_on_another_layout(tmp_path):
    # A third-party server's one-line array: the usual path (ijson) reads it, not the early reader.
    reader, folder, store, csv_dir = _reading(tmp_path)
    partial = folder / ".other.partial"
    partial.write_text('[{"id": 1, "channel": "web", "amount": 1.5, "note": "x"}]\n')
    _wait(lambda: partial.name in reader._tried)
    path = folder / "other.json"
    os.replace(partial, path)
    assert reader.claim(path, NAMES) is None
    assert not store.unfinished() and not (csv_dir.exists() and list(csv_dir.iterdir()))


def test_bridge_early_csv_cancelled_leaves_nothing(tmp_path):
    reader, folder, store, csv_dir = _reading(tmp_path)
    _partly_written(folder, store)
    reader.cancel()
    reader._thread.join(60)
    assert not reader._thread.is_alive()
    assert not store.unfinished() and not list(csv_dir.iterdir())


def test_bridge_early_csv_becomes_the_dataset(tmp_path):
    store = DatasetStore(tmp_path / "p")
    folder = tmp_path / "server"
    folder.mkdir()
    reader = early.EarlyCsv(folder, store.dir, store.writing)
    reader.start()
    writer = _partly_written(folder, store)
    path = writer.close()
    expected = _csv_of(path)
    system_data = {"format": "file", "headers": [{"name": n} for n in NAMES], "table_uri": file_uri(path)}
    stored, _ = store_extraction(store, source="s", acp_id="databases", tool="execute_sql", model_response={},
                                 system_info={}, system_data=system_data, owned_dir=folder, early=reader)
    dataset = store.get(stored[0].dataset_id)
    assert dataset is not None and dataset.row_count == 5000
    assert dataset.path.read_bytes() == expected.encode("utf-8")
    assert not path.exists()  # 8.5: the table file was deleted once read, as before
    assert not store.unfinished() and sorted(p.name for p in store.dir.iterdir()) == sorted(
        [dataset.path.name, f"{dataset.id}.meta.json"])


def test_bridge_early_csv_skips_what_is_not_a_regular_file(tmp_path):
    # Opening a FIFO for reading would block the reader (and the answer's claim) forever.
    reader, folder, store, csv_dir = _reading(tmp_path)
    fifo = folder / ".a-fifo.partial"
    os.mkfifo(fifo)
    _wait(lambda: fifo.name in reader._tried)
    writer = _partly_written(folder, store)
    path = writer.close()
    result: list = []
    claiming = threading.Thread(target=lambda: result.append(reader.claim(path, NAMES)), daemon=True)
    claiming.start()
    claiming.join(60)
    assert result and result[0] is not None and result[0].rows == 5000


@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 20])
def test_bridge_early_csv_of_a_file_read_in_pieces(tmp_path, piece):
    # Reads end anywhere: inside a row, right after a newline, inside the closing bracket; a line
    # split over several reads (the 1-byte pieces: every line) is joined before it is parsed.
    folder, store = tmp_path / "server", DatasetStore(tmp_path / "p")
    folder.mkdir()
    writer = TableFileWriter(folder, "databases")
    for start in range(0, 3000 if piece > 1 else 600, 300):
        writer.write(_rows(start, start + 300))
    path = writer.close()
    owner = early.EarlyCsv(folder, store.dir, store.writing)
    data = path.read_bytes()
    fd = os.open(path, os.O_RDONLY)
    try:
        tail = early._Tail(owner, fd)
        assert all(tail._feed(data[i : i + piece]) for i in range(0, len(data), piece))
        owner._wanted = (tail.ident, NAMES)
        assert tail._finish()
    finally:
        os.close(fd)
    assert owner._result is not None
    assert Path(owner._result.path).read_bytes() == _csv_of(path).encode("utf-8")
    owner._result.held.close()
