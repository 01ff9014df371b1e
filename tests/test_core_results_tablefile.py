"""Spec 8.5: inline up to inline_max_bytes, else a file:// JSON array written atomically; 8.6 over spills."""

import os
import stat
import tracemalloc
from pathlib import Path

import orjson
import pytest
from analytics_acp import tablefile
from analytics_acp.declarations import Extraction, Header
from analytics_acp.results import BuildSettings, build_extraction
from analytics_acp.tablefile import iter_table_uri, read_table_uri, uri_path, write_table_file


def rows_gen(total, start=0):
    for i in range(start, start + total):
        yield {"i": i, "s": f"row {i}", "f": i / 4, "d": "2026-09-01", "b": i % 2 == 0}


HEADERS = [Header("i", "integer"), Header("s"), Header("f", "number"), Header("d", "date"), Header("b", "boolean")]


def build(rows, **kw):
    headers = kw.pop("headers", HEADERS)
    return build_extraction(Extraction(rows=rows, description="d", headers=headers), BuildSettings(**kw))


def full_table(rows, headers=HEADERS):
    return build(rows, headers=headers, inline_max_bytes=1 << 40).system_data["table"]


def listing(folder: Path):
    return sorted(p.name for p in folder.iterdir())


def test_inline_threshold_is_exact_utf8_size(tmp_path):
    rows = [{"t": "ñandú ✓ €"}, {"t": "x" * 50}, {"t": None}]
    size = len(orjson.dumps(full_table(rows, None)))
    at = build(rows, headers=None, inline_max_bytes=size, tmp_dir=tmp_path)
    assert at.system_data["format"] == "inline" and at.files == []
    over = build(rows, headers=None, inline_max_bytes=size - 1, tmp_dir=tmp_path)
    assert over.system_data["format"] == "file"
    assert read_table_uri(over.system_data["table_uri"]) == at.system_data["table"]


def test_spill_file_holds_exactly_the_inline_objects(tmp_path):
    expected = full_table(rows_gen(20_000))
    built = build(rows_gen(20_000), inline_max_bytes=50_000, tmp_dir=tmp_path, file_prefix="bigquery")
    sd = built.system_data
    assert sd["format"] == "file" and "table" not in sd and sd["row_count"] == 20_000
    assert sd["headers"] == [h.to_json() for h in HEADERS]
    assert sd["table_uri"].startswith("file://")
    path = uri_path(sd["table_uri"])
    assert built.files == [path] and path.parent == tmp_path
    assert path.name.startswith("bigquery-") and path.suffix == ".json"
    assert listing(tmp_path) == [path.name]  # no .partial leftovers: written to a temp name, then replaced
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = path.read_bytes()
    assert orjson.loads(data) == expected  # one valid JSON array, same objects as `table`
    assert data.startswith(b"[\n") and data.rstrip().endswith(b"]")
    assert read_table_uri(sd["table_uri"]) == expected
    assert list(iter_table_uri(sd["table_uri"])) == expected
    assert built.total_rows == 20_000 and built.returned_rows == 25 and built.truncated


def test_read_table_uri_delete_and_foreign_layouts(tmp_path):
    rows = [{"a": 1, "b": [1, {"c": "x"}]}, {"a": 2, "b": None}]
    for text in (orjson.dumps(rows), orjson.dumps(rows, option=orjson.OPT_INDENT_2), b"[\n]\n", b"[]"):
        path = tmp_path / "other.json"
        path.write_bytes(text)
        want = rows if len(text) > 4 else []
        assert read_table_uri(path.as_uri()) == want
        assert list(iter_table_uri(path.as_uri())) == want
    assert read_table_uri(path.as_uri(), delete=True) == []
    assert not path.exists()
    with pytest.raises(ValueError):
        read_table_uri("https://example.com/t.json")


def test_write_table_file_round_trip_and_empty(tmp_path):
    rows = [{"n": i, "t": "a\nb\"c,},{"} for i in range(5000)]  # separators inside strings stay inside
    path = write_table_file(iter(rows), tmp_path, "x")
    assert read_table_uri(path.as_uri()) == rows
    assert list(iter_table_uri(path.as_uri())) == rows
    assert all(len(line) < 2048 * 200 for line in path.read_bytes().split(b"\n"))  # one chunk per line
    empty = write_table_file([], tmp_path, "x")
    assert orjson.loads(empty.read_bytes()) == [] and read_table_uri(empty.as_uri()) == []


def test_default_dir_is_acp_tmp_dir():
    built = build(rows_gen(3000), inline_max_bytes=1000)
    assert uri_path(built.system_data["table_uri"]).parent == Path(os.environ["ACP_TMP_DIR"])


def test_private_dir_when_no_acp_tmp_dir(monkeypatch):
    monkeypatch.delenv("ACP_TMP_DIR", raising=False)
    from analytics_acp import dirs

    monkeypatch.setattr(dirs, "_private_tmp", None)  # the one private folder (dirs.py)
    built = build(rows_gen(3000), inline_max_bytes=1000)
    folder = uri_path(built.system_data["table_uri"]).parent
    assert folder.name.startswith("analytics-acp-") and stat.S_IMODE(folder.stat().st_mode) == 0o700
    for f in built.files:
        f.unlink()
    folder.rmdir()


def test_failure_mid_stream_leaves_no_file(tmp_path):
    def broken():
        yield from rows_gen(5000)
        raise RuntimeError("cursor lost")

    with pytest.raises(RuntimeError, match="cursor lost"):
        build(broken(), inline_max_bytes=1000, tmp_dir=tmp_path)
    assert listing(tmp_path) == []


# --- 8.6 inference over a spilled table: the second pass ---------------------------------------
def test_a_spilled_table_streams_with_the_collector_paused_and_restores_it(tmp_path):
    # Bench case 2: the cyclic GC's passes over a million rows' allocations are skipped while a spilled
    # table streams; the collector comes back as it was, after an error too.
    import gc

    seen = []

    def watched(total, fail=False):
        for k, row in enumerate(rows_gen(total)):
            if k == total - 1:
                seen.append(gc.isenabled())
            yield row
        if fail:
            raise RuntimeError("source failed")

    assert build(watched(3000), inline_max_bytes=2000, tmp_dir=tmp_path).system_data["format"] == "file"
    assert seen == [False] and gc.isenabled()
    with pytest.raises(RuntimeError):
        build(watched(3000, fail=True), inline_max_bytes=2000, tmp_dir=tmp_path)
    assert gc.isenabled()
    build(watched(10), inline_max_bytes=1 << 20, tmp_dir=tmp_path)  # inline: never paused
    assert seen[-1] is True
    gc.disable()
    try:
        build(watched(3000), inline_max_bytes=2000, tmp_dir=tmp_path)
        assert not gc.isenabled()  # the app had turned it off: it stays off
    finally:
        gc.enable()


def test_undeclared_column_contradicted_after_spill_is_rewritten(tmp_path):
    def rows():
        for i in range(3000):
            yield {"v": i, "w": "2026-09-01" if i < 2999 else None}
        yield {"v": "late text", "x": dt_value}

    import datetime as dt

    dt_value = dt.datetime(2026, 9, 1, 10, 15)
    built = build(rows(), headers=None, inline_max_bytes=2000, tmp_dir=tmp_path)
    assert built.system_data["format"] == "file"
    types = {h["name"]: h["type"] for h in built.system_data["headers"]}
    assert types == {"v": "string", "w": "string", "x": "datetime"}
    table = read_table_uri(built.system_data["table_uri"])
    assert len(table) == 3001
    assert table[0] == {"v": "0", "w": "2026-09-01", "x": None}  # early rows: converted and padded
    assert table[-1] == {"v": "late text", "w": None, "x": "2026-09-01T10:15:00.000Z"}
    assert all(list(r) == ["v", "w", "x"] for r in table)
    assert built.model_response["rows"][0] == {"v": "0", "w": "2026-09-01", "x": None}
    assert listing(tmp_path) == [uri_path(built.system_data["table_uri"]).name]


def test_undeclared_mix_in_memory_that_grows_past_limit_spills_at_the_end(tmp_path):
    rows = [{"v": i} for i in range(200)] + [{"v": "x"}]
    numbers_size = len(orjson.dumps([{"v": i} for i in range(200)] + [{"v": "x"}]))
    built = build(rows, headers=None, inline_max_bytes=numbers_size + 10, tmp_dir=tmp_path)
    # As text every value gains two quote bytes: the final table no longer fits, so it goes to a file.
    assert built.system_data["format"] == "file"
    assert read_table_uri(built.system_data["table_uri"])[:2] == [{"v": "0"}, {"v": "1"}]


def test_integer_then_number_after_spill_needs_no_rewrite(tmp_path, monkeypatch):
    calls = []
    original = tablefile.TableFileWriter._rewrite
    monkeypatch.setattr(tablefile.TableFileWriter, "_rewrite", lambda self, f: calls.append(1) or original(self, f))
    rows = [{"v": i} for i in range(3000)] + [{"v": 0.5}]
    built = build(rows, headers=None, inline_max_bytes=1000, tmp_dir=tmp_path)
    assert {h["name"]: h["type"] for h in built.system_data["headers"]} == {"v": "number"}
    assert read_table_uri(built.system_data["table_uri"])[-2:] == [{"v": 2999}, {"v": 0.5}]
    assert calls == []  # integer+number is already valid: single pass


def test_fully_declared_table_is_single_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(tablefile.TableFileWriter, "_rewrite", lambda self, f: pytest.fail("second pass"))
    built = build(rows_gen(5000), inline_max_bytes=1000, tmp_dir=tmp_path)
    assert len(read_table_uri(built.system_data["table_uri"])) == 5000


def test_streaming_build_memory_is_bounded(tmp_path):
    total = 200_000
    consumed = 0

    def rows():
        nonlocal consumed
        for i in range(total):
            consumed += 1
            yield (i, f"row number {i}", i * 0.25, "2026-09-01", i % 3 == 0, i % 7)

    headers = [Header("i", "integer"), Header("s"), Header("f", "number"), Header("d", "date"), Header("b", "boolean"),
               Header("m", "integer")]
    tracemalloc.start()
    try:
        built = build_extraction(
            Extraction(rows=rows(), description="d", headers=headers),
            BuildSettings(row_limit=25, sampling="spread", inline_max_bytes=100_000, tmp_dir=tmp_path),
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    path = uri_path(built.system_data["table_uri"])
    file_size = path.stat().st_size
    assert consumed == total and built.total_rows == total
    # The whole table as Python dicts would take several times the file size; the build stays far below it.
    assert file_size > 15_000_000 and peak < file_size / 2
    table = read_table_uri(built.system_data["table_uri"])
    assert len(table) == total and table[12345] == {"i": 12345, "s": "row number 12345", "f": 12345 * 0.25,
                                                     "d": "2026-09-01", "b": True, "m": 12345 % 7}


def test_big_integers_survive_the_file_and_the_second_pass(tmp_path):
    big = 2**70 + 1
    declared = build([{"n": big}] + [{"n": i} for i in range(3000)], headers=[Header("n", "integer")],
                     inline_max_bytes=1000, tmp_dir=tmp_path)
    table = read_table_uri(declared.system_data["table_uri"])
    assert table[0]["n"] == big and type(table[0]["n"]) is int
    mixed = build([{"n": big}] + [{"n": i} for i in range(3000)] + [{"n": "x"}], headers=None,
                  inline_max_bytes=1000, tmp_dir=tmp_path)
    table = read_table_uri(mixed.system_data["table_uri"])  # the second pass kept the int exact
    assert table[0]["n"] == str(big) and table[-1]["n"] == "x"


def test_final_name_appears_only_when_complete(tmp_path):
    seen_during = []

    def rows():
        for i in range(6000):
            if i == 5000:  # well after the spill: only the hidden partial file exists
                seen_during.extend(p.name for p in tmp_path.iterdir())
            yield {"i": i, "s": "x" * 20}

    built = build(rows(), headers=None, inline_max_bytes=2000, tmp_dir=tmp_path)
    final = uri_path(built.system_data["table_uri"]).name
    assert len(seen_during) == 1 and seen_during[0].startswith(".") and seen_during[0].endswith(".partial")
    assert final not in seen_during and listing(tmp_path) == [final]
