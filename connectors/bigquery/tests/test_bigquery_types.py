"""The types table of issue 17 / spec 8.6: BigQuery result schema -> ACP headers and values, through the real
client's getQueryResults pages and the core's result builder (inline and file)."""

from __future__ import annotations

import datetime as dt
import json

from analytics_acp.results.extraction import build_extraction
from analytics_acp.results.settings import BuildSettings
from analytics_acp_bigquery.arguments import QueryArguments
from analytics_acp_bigquery.execute import run_execute_query
from fakebq import QuerySpec

BIG = 2**53 + 1
TS = dt.datetime(2026, 9, 1, 10, 15, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
SCHEMA = [
    {"name": "i", "type": "INTEGER"},
    {"name": "f", "type": "FLOAT"},
    {"name": "n", "type": "NUMERIC"},
    {"name": "bn", "type": "BIGNUMERIC"},
    {"name": "b", "type": "BOOLEAN"},
    {"name": "d", "type": "DATE"},
    {"name": "dtm", "type": "DATETIME"},
    {"name": "ts", "type": "TIMESTAMP"},
    {"name": "t", "type": "TIME"},
    {"name": "g", "type": "GEOGRAPHY"},
    {"name": "by", "type": "BYTES"},
    {"name": "s", "type": "STRING"},
    {"name": "j", "type": "JSON"},
    {"name": "r", "type": "RECORD", "fields": [{"name": "a", "type": "INTEGER"}, {"name": "b", "type": "STRING"}]},
    {"name": "rep", "type": "INTEGER", "mode": "REPEATED"},
    {"name": "reprec", "type": "RECORD", "mode": "REPEATED", "fields": [{"name": "k", "type": "STRING"}, {"name": "v", "type": "FLOAT"}]},
]
EXPECTED_TYPES = {
    "i": "integer", "f": "number", "n": "number", "bn": "number", "b": "boolean", "d": "date", "dtm": "datetime",
    "ts": "datetime", "t": "string", "g": "string", "by": "string", "s": "string", "j": "json", "r": "json",
    "rep": "json", "reprec": "json",
}
ROWS = [
    [BIG, 1.5, "123.45", "12345678901234567890", True, "2026-09-01", "2026-09-01T10:15:00.123456", TS, "10:15:00",
     "POINT(1 2)", b"\x00\x01\x02", "héllo", {"a": [1, 2]}, {"a": 7, "b": "x"}, [1, 2], [{"k": "p", "v": 0.5}]],
    [-5, float("nan"), "10", "0.5", False, None, None, None, None, None, None, "", None, None, [], []],
]


def test_every_bigquery_type_maps_to_its_acp_type(world, ctx_for, tmp_path):
    sql = "SELECT * FROM `mi-proyecto.analytics_123.every_type`"
    world.bq.on_query(sql, QuerySpec(schema=SCHEMA, total_rows=len(ROWS), row=lambda i: ROWS[i], location="EU",
                                     referenced_tables=["mi-proyecto.analytics_123.every_type"]))
    ex = run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1))
    assert {h.name: h.type for h in ex.headers} == EXPECTED_TYPES  # type: ignore[union-attr]
    built = build_extraction(ex, BuildSettings(row_limit=5, inline_max_bytes=1 << 20, tmp_dir=tmp_path))
    sd = built.system_data
    assert [h["type"] for h in sd["headers"]] == list(EXPECTED_TYPES.values())
    first, second = sd["table"]
    assert first == {
        "i": BIG, "f": 1.5, "n": 123.45, "bn": 12345678901234567890, "b": True, "d": "2026-09-01",
        "dtm": "2026-09-01T10:15:00.123Z", "ts": "2026-09-01T08:15:00.123Z", "t": "10:15:00", "g": "POINT(1 2)",
        "by": "AAEC", "s": "héllo", "j": {"a": [1, 2]}, "r": {"a": 7, "b": "x"}, "rep": [1, 2],
        "reprec": [{"k": "p", "v": 0.5}],
    }
    assert second["i"] == -5 and second["f"] is None and second["n"] == 10 and second["bn"] == 0.5 and second["b"] is False
    assert second["d"] is None and second["s"] == "" and second["rep"] == [] and second["reprec"] == []
    assert not built.warnings


def test_int64_beyond_2_53_is_exact_in_the_table_file(world, ctx_for, tmp_path):
    sql = "SELECT id FROM `mi-proyecto.analytics_123.big_ids`"
    ids = [BIG + k for k in range(3000)]
    world.bq.on_query(sql, QuerySpec(schema=[{"name": "id", "type": "INTEGER"}], total_rows=len(ids), row=lambda i: [ids[i]],
                                     location="EU", referenced_tables=["mi-proyecto.analytics_123.big_ids"]))
    ex = run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1))
    built = build_extraction(ex, BuildSettings(row_limit=5, inline_max_bytes=1024, tmp_dir=tmp_path))
    assert built.system_data["format"] == "file"
    text = built.files[0].read_text()
    assert f'"id":{BIG}' in text and f'"id":{BIG + 2999}' in text
    assert [r["id"] for r in json.loads(text, parse_float=str)][:2] == [BIG, BIG + 1]
