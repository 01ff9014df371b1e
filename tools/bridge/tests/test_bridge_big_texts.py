"""Huge strings through the bridge (issue 15.3): an acp_query's SQL is stored once in its .meta.json,
and acp_datasets gives the model a bounded entry per dataset."""

from __future__ import annotations

import json

from analytics_acp_bridge.serving import own_tools
from analytics_acp_bridge.store.datasets import SUMMARY_COLUMNS, SUMMARY_TEXT_CHARS, DatasetStore


def test_query_sql_stored_once_and_listing_bounded(tmp_path):
    store = DatasetStore(tmp_path)
    headers = [{"name": f"c{i}", "type": "integer"} for i in range(SUMMARY_COLUMNS + 20)]
    store.write_dataset("wide", headers, iter([{h["name"]: 1 for h in headers}]),
                        {"origin": "file", "description": "d" * 50_000, "title": "wide"})
    sql = f"SELECT c0 FROM wide WHERE c1 IN ({', '.join(['1'] * 40_000)})"  # a 120 KB statement
    own_tools.query(store, sql, "long_sql")
    meta_text = (tmp_path / "acp-data" / "long_sql.meta.json").read_text(encoding="utf-8")
    assert json.loads(meta_text)["sql"] == sql
    assert len(meta_text) < len(sql) + 10_000  # once, not three times

    listing = own_tools.datasets(store, None)
    assert len(json.dumps(listing)) < 30_000
    by_id = {d["id"]: d for d in listing["datasets"]}
    assert by_id["long_sql"]["sql"].endswith(f"[cut: {len(sql):,} characters in full]")
    assert len(by_id["wide"]["description"]) < SUMMARY_TEXT_CHARS + 100
    assert len(by_id["wide"]["columns"]) == SUMMARY_COLUMNS and by_id["wide"]["columns_total"] == SUMMARY_COLUMNS + 20


async def test_bridge_tools_refuse_arguments_over_the_maximum(tmp_path):
    # The servers' 1 MiB rule (analytics_acp.argument_limits) holds for the bridge's own tools:
    # nothing is stored or echoed, the model gets ACP_INVALID_ARGUMENTS naming the limit.
    from analytics_acp_bridge.factory import Factory
    from analytics_acp_bridge.paths import Paths

    (tmp_path / "sources.json").write_text(json.dumps({"sources": []}))
    bridge = Factory(Paths(project=tmp_path, sources=tmp_path / "sources.json", root=tmp_path / "root")).bridge()
    sql = "SELECT 1 AS x WHERE 'a' = '" + "a" * (2 * 1024 * 1024) + "'"
    blocks, is_error = await bridge.call("acp_query", {"sql": sql, "save_as": "huge"})
    error = json.loads(blocks[0]["text"])["error"]
    assert is_error and error["name"] == "ACP_INVALID_ARGUMENTS" and "maximum is 1,048,576 bytes" in error["message"]
    assert len(blocks[0]["text"]) < 2_000
    assert not (tmp_path / "acp-data" / "huge.meta.json").exists()
    blocks, is_error = await bridge.call("acp_query", {"sql": "SELECT 1 AS x"})  # under the limit: answered
    assert not is_error
