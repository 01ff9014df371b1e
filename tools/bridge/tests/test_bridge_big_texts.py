"""Huge strings through the bridge (issue 15.3): an acp_query's SQL is stored once in its .meta.json,
and acp_datasets gives the model a bounded entry per dataset."""

from __future__ import annotations

import json

from analytics_acp_bridge import own_tools
from analytics_acp_bridge.store import SUMMARY_COLUMNS, SUMMARY_TEXT_CHARS, DatasetStore


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
