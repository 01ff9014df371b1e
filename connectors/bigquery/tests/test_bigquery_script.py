"""Spec 15.3, the whole script, through `analytics-acp serve bigquery` (stdio) and the host client,
with google-cloud-bigquery talking to the fake REST API: what a host receives and what the client sent."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio
from analytics_acp.host import AcpClient
from bqworld import DATASET, PROJECT, SQL_ALL, SQL_DELETE, SQL_WEEK

RESOURCE = f"{PROJECT}.{DATASET}"
TABLES_DESCRIPTION = ("Dataset tables and views. Date-sharded tables (name_YYYYMMDD) are grouped as name_* with the shard "
                      "count and the latest shard.")
SCHEMAS_DESCRIPTION = ("Schema (columns, type, mode and description) of the table or of the first 15 tables in the dataset. "
                       "For sharded tables, the latest shard is used.")


def _command() -> list[str]:
    exe = Path(sys.executable).with_name("analytics-acp")
    return [str(exe) if exe.exists() else shutil.which("analytics-acp") or "analytics-acp", "serve", "bigquery"]


def test_the_15_3_script(world, tmp_path):
    creds = world.service_account()

    async def main():
        async with AcpClient.stdio(_command(), env={"ACP_TMP_DIR": str(tmp_path)}) as client:
            tools = {t["name"]: t for t in await client.list_tools()}
            query_prop = tools["execute_query"]["inputSchema"]["properties"]["query"]
            assert query_prop["contentMediaType"] == "application/sql" and query_prop["x-acp-date"] == "template"
            assert client.server_capability["extraction_tools"][0] == "execute_query"
            assert client.server_capability["cost"]["model"] == "per_byte"
            base = {"credentials": creds, "config": world.config, "cost_limit_usd": 1}

            # 1. validate (info): exactly the fields of 15.3 step 1
            res = await client.call_tool("validate_query", {"resource_id": RESOURCE, "query": SQL_ALL}, meta=base)
            assert not res.is_error, res.text
            assert res.model_response == {
                "valid": True, "statement_type": "SELECT", "read_only": True,
                "total_bytes_processed": 674810580992, "human_bytes": "628.5 GB", "estimated_cost_usd": 3.835854,
                "cost_limit_usd": 1, "within_cost_limit": False,
                "referenced_tables": ["mi-proyecto.analytics_123.events_*"],
                "result_schema": [{"name": "event_name", "type": "STRING"}, {"name": "n", "type": "INTEGER"}],
            }
            assert res.acp["kind"] == "info" and res.system_info["cost_estimate_usd"] == 0

            # 2. execute anyway: the preflight stops it, nothing runs
            meta = {**base, "default_resource_id": RESOURCE}
            res = await client.call_tool("execute_query", {"query": SQL_ALL}, meta=meta)
            assert res.is_error and res.error["name"] == "ACP_COST_LIMIT_EXCEEDED" and res.error["code"] == -32010
            assert res.error["message"] == (
                "The query would cost about $3.84 and the limit is $1.00. Narrow the query (fewer columns, shorter date "
                "range, filter by partition) or ask the user to raise the limit.")
            assert res.model_response["error"]["data"] == {
                "estimate_usd": 3.835854, "limit_usd": 1, "total_bytes_processed": 674810580992,
                "estimated_bytes_billed": 674810580992, "price_per_tib_usd": 6.25, "statement_type": "SELECT"}
            assert res.system_info["acp"] == "bigquery" and res.system_info["cost_estimate_usd"] == 3.835854
            assert world.bq.sent_jobs(dry_run=False) == []

            # 3. narrowed with _TABLE_SUFFIX: runs under the byte cap, 181022 rows as a file
            res = await client.call_tool("execute_query", {"query": SQL_WEEK},
                                         meta={**meta, "autocontext_delivered": True, "sampling": "spread"})
            assert not res.is_error, res.text
            mr = res.model_response
            assert mr["notice"] == "Showing 25 of 181022 extracted rows."
            assert (mr["total_rows"], mr["returned_rows"], mr["truncated"]) == (181022, 25, True)
            assert mr["columns"] == ["event_date", "event_name", "user_pseudo_id"]
            assert mr["extra"] == {"bytes_processed": 9663676416, "cache_hit": False}
            assert mr["dates"] == ["2026-09-01", "2026-09-07"]
            info = res.system_info
            assert info["cost_estimate_usd"] == 0.054932 and info["cost_actual_usd"] == 0.054932
            source = info["source"]
            assert source["location"] == "EU" and source["total_bytes_billed"] == 9663676416 and source["job_id"]
            sd = res.system_data
            assert sd["format"] == "file" and sd["row_count"] == 181022
            assert sd["headers"] == [{"name": n, "type": "string"} for n in ("event_date", "event_name", "user_pseudo_id")]
            table = res.tables()[0]
            assert len(table.rows) == 181022 and table.rows[0]["event_date"] == "20260901"

            # what the real client sent: a dry run, then one job with the cap, labels and the dry run's location
            (job,) = world.bq.sent_jobs(dry_run=False)
            q = job["configuration"]["query"]
            assert q["maximumBytesBilled"] == str(int(1 / 6.25 * (1 << 40)))
            assert job["configuration"]["labels"] == {"acp_connector": "bigquery", "acp_tool": "execute_query"}
            assert job["jobReference"]["location"] == "EU" and job["jobReference"]["jobId"] == source["job_id"]
            assert q["defaultDataset"] == {"projectId": PROJECT, "datasetId": DATASET} and q["useLegacySql"] is False
            dry = [j for j in world.bq.sent_jobs(dry_run=True) if j["configuration"]["query"]["query"] == SQL_WEEK]
            assert len(dry) == 1, "the preflight's dry run is reused by the run"
            assert dry[0]["configuration"]["dryRun"] is True and "maximumBytesBilled" not in dry[0]["configuration"]["query"]

            # 4. a write: refused by the dry run's statementType, before any job
            res = await client.call_tool("execute_query", {"query": SQL_DELETE}, meta=meta)
            assert res.is_error and res.error["name"] == "ACP_READ_ONLY_VIOLATION" and res.error["code"] == -32019
            assert res.error["message"] == "This ACP is read-only: only SELECT statements are executed (the query is DELETE)."
            assert len(world.bq.sent_jobs(dry_run=False)) == 1

            # 5. autocontext of the dataset
            res = await client.call_tool("autocontext", {"resource_id": RESOURCE, "request_data": ["tables", "table_schemas"]},
                                         meta=base)
            assert not res.is_error, res.text
            blocks = {b["id"]: b for b in res.model_response}
            assert blocks["tables"]["description"] == TABLES_DESCRIPTION
            assert blocks["table_schemas"]["description"] == SCHEMAS_DESCRIPTION
            events = blocks["tables"]["data"][0]
            assert {k: events[k] for k in ("table", "type", "shards", "latest_shard", "query_hint", "partitioning")} == {
                "table": "mi-proyecto.analytics_123.events_*", "type": "TABLE", "shards": 412, "latest_shard": "events_20260923",
                "query_hint": "FROM `mi-proyecto.analytics_123.events_*` WHERE _TABLE_SUFFIX BETWEEN 'YYYYMMDD' AND 'YYYYMMDD'",
                "partitioning": None}
            assert events["ga4_export"].startswith("GA4 export")
            by_name = {t["table"].rsplit(".", 1)[1]: t for t in blocks["tables"]["data"]}
            assert by_name["daily"]["partitioning"] == {"type": "DAY", "field": "day"} and by_name["daily"]["rows"] == 90
            assert by_name["daily"]["clustering"] == ["day"]
            assert "shards" not in by_name["events_intraday_20260924"]  # one shard is not a group
            first = blocks["table_schemas"]["data"][0]
            assert first["table"] == "events_*"
            assert first["columns"][:3] == [
                {"name": "event_date", "type": "STRING"}, {"name": "event_name", "type": "STRING"},
                {"name": "event_params", "type": "RECORD", "mode": "REPEATED"}]
            assert {"name": "event_params.key", "type": "STRING"} in first["columns"]
            assert {"name": "event_params.value.int_value", "type": "INTEGER"} in first["columns"]
            latest = world.server.requests_to(r"/tables/events_20260923$", "GET")
            assert latest, "the schema of a sharded table is read from its latest shard"

            # the datasets block, at project level
            res = await client.call_tool("autocontext", {"resource_id": PROJECT}, meta=base)
            assert not res.is_error, res.text
            (datasets,) = [b for b in res.model_response if b["id"] == "datasets"]
            assert datasets["description"] == "Project datasets with their location."  # 7.2's example, word for word
            assert {"dataset": RESOURCE, "location": "EU"} in datasets["data"]

    anyio.run(main)
    leaked = [p for p in tmp_path.iterdir() if p.suffix == ".json"]
    assert not leaked, "the host read and removed the table file"
