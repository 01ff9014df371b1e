"""Storing results (11.3, 16.5, 16.6): file:// tables streamed and cleaned, notes, error notes."""

import json
from pathlib import Path

from analytics_acp_bridge.calls.results import error_note, extraction_note, iter_rows, store_extraction
from analytics_acp_bridge.store.datasets import DatasetStore


def test_bridge_results_file_table_streamed_and_deleted_only_in_owned_dir(tmp_path):
    owned = tmp_path / "acp-tmp"
    owned.mkdir()
    rows = [{"a": i, "b": {"x": [i]}} for i in range(1000)]
    inside = owned / "t.json"
    inside.write_text(json.dumps(rows), encoding="utf-8")
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(rows[:2]), encoding="utf-8")
    assert list(iter_rows({"format": "file", "table_uri": inside.as_uri()}, owned)) == rows
    assert not inside.exists()  # 8.5: read, then deleted
    assert list(iter_rows({"format": "file", "table_uri": outside.as_uri()}, owned)) == rows[:2]
    assert outside.exists()  # never delete a file the bridge did not hand out


def test_bridge_results_single_extraction_meta_and_note(tmp_path):
    store = DatasetStore(tmp_path)
    model_response = {"description": "Squares.", "dates": ["2026-10-12"], "returned_rows": 2, "total_rows": 3}
    system_info = {"resource_id": "r1", "arguments": {"count": 3}, "title": "Squares"}
    system_data = {"format": "inline", "row_count": 3, "headers": [{"name": "i", "type": "integer", "role": "dimension"}],
                   "table": [{"i": 0}, {"i": 1}, {"i": 2}]}
    stored, empty = store_extraction(store, source="fx", acp_id="fixture", tool="numbers", model_response=model_response,
                                     system_info=system_info, system_data=system_data, owned_dir=None)
    assert empty == [] and len(stored) == 1
    [table] = stored
    meta = json.loads((tmp_path / "acp-data" / f"{table.dataset_id}.meta.json").read_text(encoding="utf-8"))
    assert {k: meta[k] for k in ("origin", "source", "acp", "tool", "resource_id", "arguments", "title", "description", "dates", "row_count")} == {
        "origin": "acp", "source": "fx", "acp": "fixture", "tool": "numbers", "resource_id": "r1", "arguments": {"count": 3},
        "title": "Squares", "description": "Squares.", "dates": ["2026-10-12"], "row_count": 3}
    assert meta["headers"] == [{"name": "i", "type": "integer"}]
    note = extraction_note(stored, empty, multi=False)
    assert note.splitlines()[0] == (
        f"The full extraction was saved as dataset «{table.dataset_id}» in acp-data/{table.dataset_id}.csv. You saw 2 of 3 rows."
    )


def test_bridge_results_empty_extraction_stores_nothing(tmp_path):
    store = DatasetStore(tmp_path)
    stored, empty = store_extraction(store, source="fx", acp_id="fixture", tool="numbers", model_response={},
                                     system_info={}, system_data={"format": "inline", "row_count": 0, "headers": [], "table": []},
                                     owned_dir=None)
    assert stored == [] and not list(Path(tmp_path).glob("acp-data/*.csv"))
    assert "no dataset was saved" in extraction_note(stored, empty, multi=False)


def test_bridge_results_error_notes_point_to_sources_json(tmp_path):
    path = tmp_path / "sources.json"
    for name in ("ACP_CREDENTIALS_MISSING", "ACP_CREDENTIALS_INVALID"):
        note = error_note({"name": name}, "ventas", path)
        assert str(path) in note and "«ventas»" in note and "credentials" in note
    cost = error_note({"name": "ACP_COST_LIMIT_EXCEEDED"}, "bq", path)
    assert "cost_limit_usd" in cost and str(path) in cost
    assert error_note({"name": "ACP_INVALID_ARGUMENTS"}, "ventas", path) is None


def test_bridge_results_screenshot_over_4_mib_is_not_attached(tmp_path):
    from analytics_acp_bridge.calls.results import MAX_IMAGE_BYTES, handle_artifacts

    store = DatasetStore(tmp_path / "proj")
    small, big = tmp_path / "small.png", tmp_path / "big.png"
    small.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    big.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * MAX_IMAGE_BYTES)
    small_response = {"screenshot_path": str(small)}
    done = handle_artifacts(small_response, store)
    assert [b["mimeType"] for b in done.blocks] == ["image/png"]
    assert not done.changed and small_response == {"screenshot_path": str(small)}  # 8.10: the JSON keeps the path
    done = handle_artifacts({"screenshot_path": str(big)}, store)
    assert done.blocks == [] and "larger than 4 MiB" in done.notes[0]
    assert sorted(p.name for p in (tmp_path / "proj" / "acp-data" / "files").iterdir()) == ["big.png", "small.png"]
