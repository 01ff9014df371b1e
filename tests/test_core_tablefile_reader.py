"""file:// tables (8.5): the core's line layout read fast, any other valid JSON array streamed by ijson,
and file:// URIs <-> paths (spaces, %, Windows drive letters). One module: analytics_acp.tablefile."""

import json
from pathlib import Path, PurePosixPath, PureWindowsPath

import ijson
import pytest
from analytics_acp import tablefile
from analytics_acp.tablefile import (
    CHUNK_ROWS,
    file_uri,
    iter_file_rows,
    read_table_uri,
    uri_path,
    uri_to_path,
    write_table_file,
)

ROWS = [{"id": i, "name": f"n{i}", "x": i / 4, "j": {"k": [i]}, "ok": i % 2 == 0, "none": None} for i in range(2 * CHUNK_ROWS + 5)]


def _read(path):
    return list(iter_file_rows(path))


def test_tablefile_core_layout_in_chunks(tmp_path):
    path = write_table_file(ROWS, tmp_path)
    assert path.read_bytes().count(b"\n") == 5  # "[", three chunk lines, "]": the fast path is exercised
    assert _read(path) == ROWS


def test_tablefile_ints_beyond_64_bits_stay_exact(tmp_path):
    rows = [{"big": 12345678901234567890123, "neg": -(2**70), "small": 7, "s": "1234567890123456789012"}]
    path = write_table_file(rows * 3, tmp_path)
    assert _read(path) == rows * 3


def test_tablefile_nan_beside_a_big_int_is_written_null(tmp_path):
    # orjson writes NaN/Infinity as null; a chunk with an int beyond 64 bits goes through the stdlib
    # encoder, which would write the invalid JSON literal NaN: the same null either way (8.5 is JSON).
    rows = [{"big": 2**70, "x": float("nan"), "y": float("inf"), "z": [float("-inf")], "w": 1.5}]
    path = write_table_file(rows * 2, tmp_path)
    assert b"NaN" not in path.read_bytes() and b"Infinity" not in path.read_bytes()
    assert _read(path) == [{"big": 2**70, "x": None, "y": None, "z": [None], "w": 1.5}] * 2


@pytest.mark.parametrize("layout", ["one_line", "pretty", "bracket_on_last_line", "layout_then_pretty", "comma_first"])
def test_tablefile_other_layouts_give_every_row_once(tmp_path, layout):
    rows = ROWS[:50]
    path = tmp_path / "t.json"
    if layout == "one_line":
        text = json.dumps(rows)
    elif layout == "pretty":
        text = json.dumps(rows, indent=2)
    elif layout == "bracket_on_last_line":
        text = "[\n" + ",\n".join(json.dumps(r) for r in rows) + "]"
    elif layout == "layout_then_pretty":  # 20 rows fit the line layout, the rest does not
        text = "[\n" + ",\n".join(json.dumps(r) for r in rows[:20]) + ",\n" + json.dumps(rows[20:], indent=1)[1:]
    else:
        text = "[\n" + json.dumps(rows[0]) + "\n" + "".join(f",{json.dumps(r)}\n" for r in rows[1:]) + "]\n"
    path.write_text(text, encoding="utf-8")
    assert _read(path) == rows


def test_tablefile_long_lines_go_to_ijson(tmp_path, monkeypatch):
    path = write_table_file(ROWS, tmp_path)
    monkeypatch.setattr(tablefile, "MAX_LINE", 1000)
    assert _read(path) == ROWS


@pytest.mark.parametrize("text", ["[\n]\n", "[]", "  [ ]  "])
def test_tablefile_empty_arrays(tmp_path, text):
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    assert _read(path) == []


@pytest.mark.parametrize(
    "text",
    [
        '[\n{"a":1},\n]\n',  # trailing comma
        '[\n{"a":1}\n{"a":2}\n]\n',  # no comma between the lines
        '[\n{"a":1},\n{"a":2},\n',  # truncated: no closing bracket
        '[\n{"a":NaN}\n]\n',  # not JSON
        '[\n{"a":1}\n]\n[\n',  # something after the array
    ],
)
def test_tablefile_invalid_json_is_an_error(tmp_path, text):
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ijson.JSONError):
        _read(path)


def test_tablefile_path_with_spaces_and_percent_round_trips(tmp_path):
    folder = tmp_path / "a dir %41 #1"
    folder.mkdir()
    path = write_table_file([{"a": 1}], folder, "x")
    uri = file_uri(path)
    assert " " not in uri and "%2541" in uri  # percent-encoded once, so %41 stays %41
    assert uri_path(uri) == path and read_table_uri(uri) == [{"a": 1}]
    assert uri_path("file://localhost" + uri[len("file://"):]) == path


def test_tablefile_windows_uris():
    assert uri_to_path("file:///C:/Users/A%20B/t%25.json", windows=True) == PureWindowsPath(r"C:\Users\A B\t%.json")
    assert uri_to_path("file://server/share/t.json", windows=True) == PureWindowsPath(r"\\server\share\t.json")
    assert uri_to_path("file:///C:/Users/A%20B/t.json", windows=False) == PurePosixPath("/C:/Users/A B/t.json")
    win = PureWindowsPath(r"D:\data dir\100% rows.json")
    assert uri_to_path(win.as_uri(), windows=True) == win
    with pytest.raises(ValueError):
        uri_path("https://example.com/t.json")
    assert isinstance(uri_path(Path("/tmp/x y.json").as_uri()), Path)
