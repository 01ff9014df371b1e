"""file:// tables (8.5): the core's line layout read fast, any other valid JSON array streamed by ijson."""

import json

import ijson
import pytest
from analytics_acp.results.tablefile import CHUNK_ROWS, write_table_file
from analytics_acp_bridge import filetable
from analytics_acp_bridge.filetable import iter_file_rows

ROWS = [{"id": i, "name": f"n{i}", "x": i / 4, "j": {"k": [i]}, "ok": i % 2 == 0, "none": None} for i in range(2 * CHUNK_ROWS + 5)]


def _read(path):
    return list(iter_file_rows(path))


def test_bridge_filetable_core_layout_in_chunks(tmp_path):
    path = write_table_file(ROWS, tmp_path)
    assert path.read_bytes().count(b"\n") == 5  # "[", three chunk lines, "]": the fast path is exercised
    assert _read(path) == ROWS


def test_bridge_filetable_ints_beyond_64_bits_stay_exact(tmp_path):
    rows = [{"big": 12345678901234567890123, "neg": -(2**70), "small": 7, "s": "1234567890123456789012"}]
    path = write_table_file(rows * 3, tmp_path)
    assert _read(path) == rows * 3


@pytest.mark.parametrize("layout", ["one_line", "pretty", "bracket_on_last_line", "layout_then_pretty", "comma_first"])
def test_bridge_filetable_other_layouts_give_every_row_once(tmp_path, layout):
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


def test_bridge_filetable_long_lines_go_to_ijson(tmp_path, monkeypatch):
    path = write_table_file(ROWS, tmp_path)
    monkeypatch.setattr(filetable, "MAX_LINE", 1000)
    assert _read(path) == ROWS


@pytest.mark.parametrize("text", ["[\n]\n", "[]", "  [ ]  "])
def test_bridge_filetable_empty_arrays(tmp_path, text):
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
def test_bridge_filetable_invalid_json_is_an_error(tmp_path, text):
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ijson.JSONError):
        _read(path)
