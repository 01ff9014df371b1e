"""Where people look (issue 15.7): start-up problems go to stderr as one line per source, a source that
cannot work is not ok in acp_sources, and calling its tools says which source and why."""

from __future__ import annotations

import datetime as dt

import pytest

example_db = pytest.importorskip("analytics_acp_databases.example_db")


def _stderr_lines(path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("acp-bridge: ")]


async def test_source_problems_on_stderr_in_acp_sources_and_in_calls(tmp_path, write_sources, bridge):
    project = tmp_path / "p"
    example_db.create_example_db(project / "data" / "ventas.sqlite", days=5, end=dt.date(2026, 9, 28))
    write_sources(project / "sources.json", {"sources": [
        {"id": "ok", "acp": "databases", "credentials": {"type": "sqlite", "path": {"projectPath": "data/ventas.sqlite"}}},
        {"id": "gone", "acp": "databases", "credentials": {"type": "sqlite", "path": {"projectPath": "data/missing.sqlite"}}},
        {"id": "neg", "acp": "databases", "row_limit": -1,
         "credentials": {"type": "sqlite", "path": {"projectPath": "data/ventas.sqlite"}}},
    ]})
    log_path = tmp_path / "bridge.stderr"
    with open(log_path, "w", encoding="utf-8") as errlog:
        async with bridge(project, errlog=errlog) as client:
            report = await client.sources_settled()  # acp_sources answers at once; the probe runs in the background
            by_id = {s["id"]: s for s in report["sources"]}
            assert by_id["ok"]["status"] == "ok"
            assert by_id["gone"]["status"] == "error"
            assert by_id["gone"]["error"]["name"] == "ACP_CREDENTIALS_INVALID" and "missing.sqlite" in by_id["gone"]["error"]["message"]
            assert by_id["neg"]["status"] == "error" and "row_limit" in by_id["neg"]["error"]["message"]

            is_error, answer, _ = await client.call_json("neg__execute_sql", {"sql": "SELECT 1"})
            message = answer["error"]["message"]
            assert is_error and "Unknown tool" not in message
            assert "«neg»" in message and "row_limit must be an integer from 0 to" in message and "sources.json" in message
            is_error, answer, notes = await client.call_json("gone__execute_sql", {"sql": "SELECT 1"})
            assert is_error and answer["error"]["name"] == "ACP_CREDENTIALS_INVALID" and "«gone»" in notes[0]
    lines = _stderr_lines(log_path)
    neg = [line for line in lines if "source 'neg' (databases):" in line]
    gone = [line for line in lines if "source 'gone' (databases):" in line]
    assert len(neg) == 1 and "row_limit" in neg[0]
    assert len(gone) == 1 and "ACP_CREDENTIALS_INVALID" in gone[0]
    assert not [line for line in lines if "source 'ok'" in line]


async def test_sources_json_syntax_error_on_stderr_and_in_calls(tmp_path, write_sources, bridge):
    project = tmp_path / "p"
    project.mkdir()
    write_sources(project / "sources.json", '{"sources": [ {"id": "neg",, ')
    log_path = tmp_path / "bridge.stderr"
    with open(log_path, "w", encoding="utf-8") as errlog:
        async with bridge(project, errlog=errlog) as client:
            is_error, answer, _ = await client.call_json("neg__execute_sql", {"sql": "SELECT 1"})
            assert is_error and "not valid JSON" in answer["error"]["message"] and "Unknown tool" not in answer["error"]["message"]
            is_error, answer, _ = await client.call_json("nothing_like_a_source")
            assert is_error and "Unknown tool" in answer["error"]["message"]
    lines = _stderr_lines(log_path)
    assert len([line for line in lines if line.startswith("acp-bridge: sources.json:")]) == 1
    assert "not valid JSON" in lines[0] and "line 1" in lines[0]
