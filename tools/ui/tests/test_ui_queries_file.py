"""The saved-queries file (issue 37.2): a plain project file, written atomically, never overwritten when unreadable."""

from __future__ import annotations

import json

import pytest
from analytics_acp_ui import queries


def test_save_replace_and_delete_keep_a_plain_file(tmp_path):
    first = queries.save(tmp_path, source="ventas", tool="execute_sql", arguments={"sql": "SELECT 1"}, name="")
    assert first["name"] == "ventas · execute_sql" and first["id"].startswith("q_")
    again = queries.save(tmp_path, source="ventas", tool="execute_sql", arguments={"sql": "SELECT 2"}, name="Two",
                         query_id=first["id"])
    assert again["id"] == first["id"]
    on_disk = json.loads((tmp_path / queries.FILE).read_text(encoding="utf-8"))
    assert [(q["name"], q["arguments"]) for q in on_disk["queries"]] == [("Two", {"sql": "SELECT 2"})]
    assert queries.get(tmp_path, first["id"])["arguments"] == {"sql": "SELECT 2"}
    assert queries.get(tmp_path, "../../etc/passwd") is None
    assert queries.delete(tmp_path, first["id"]) and queries.load(tmp_path) == []
    assert [p.name for p in tmp_path.iterdir()] == [queries.FILE]  # no temp file left


@pytest.mark.parametrize("text", ['{"queries": [', '{"other": 1}'])
def test_a_file_that_is_not_the_pages_shape_is_reported_and_never_overwritten(tmp_path, text):
    (tmp_path / queries.FILE).write_text(text, encoding="utf-8")
    with pytest.raises(queries.QueriesFileError):
        queries.load(tmp_path)
    with pytest.raises(queries.QueriesFileError):
        queries.save(tmp_path, source="s", tool="t", arguments={}, name="x")
    assert (tmp_path / queries.FILE).read_text(encoding="utf-8") == text
