"""The 15.3 flow behind the ACP Bridge: a real bridge process and MCP ClientSession, `bigquery` underneath on the fake.

The source carries cost_limit_usd 1 (sources.json), so the broad query is refused by the preflight,
the narrowed one runs and lands whole as a CSV dataset whose meta keeps the typed headers, and the
model can sum it with acp_query.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

pytest.importorskip("analytics_acp_bridge")

from bqworld import SQL_ALL, SQL_DELETE, SQL_WEEK  # noqa: E402
from fakebq import QuerySpec  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

SQL_TYPED = "SELECT day, sessions, revenue, last_seen FROM `mi-proyecto.analytics_123.daily`"


@asynccontextmanager
async def bridge(project: Path, env: dict[str, str]):
    params = StdioServerParameters(command=sys.executable, args=["-m", "analytics_acp_bridge", "--project", str(project)],
                                   env={**os.environ, **env}, cwd=str(project))
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, name: str, arguments: dict) -> tuple[bool, dict]:
    result = (await session.call_tool(name, arguments)).model_dump(by_alias=True, mode="json", exclude_none=True)
    texts = [c["text"] for c in result["content"] if c["type"] == "text"]
    return bool(result.get("isError")), json.loads(texts[0])


def datasets(project: Path, prefix: str) -> list[tuple[list[dict[str, str]], dict]]:
    out = []
    for path in sorted((project / "acp-data").glob(f"{prefix}*.csv")):
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        out.append((rows, json.loads(path.with_name(path.stem + ".meta.json").read_text(encoding="utf-8"))))
    return out


async def test_bridge_runs_the_15_3_flow(world, tmp_path):
    world.bq.on_query(SQL_TYPED, QuerySpec(
        location="EU", referenced_tables=["mi-proyecto.analytics_123.daily"], total_bytes_processed=2048,
        schema=[{"name": "day", "type": "DATE"}, {"name": "sessions", "type": "INTEGER"}, {"name": "revenue", "type": "NUMERIC"},
                {"name": "last_seen", "type": "TIMESTAMP"}],
        total_rows=3, wire_row=lambda i: [f"2026-09-0{i + 1}", str(2**53 + i), f"{i}.5", str(1788220800000000 + i * 86400000000)]))
    project = tmp_path / "proj"
    project.mkdir()
    (project / "sources.json").write_text(json.dumps({"sources": [{
        "id": "bq", "acp": "bigquery", "label": "BigQuery (GA4 export)", "default_resource_id": "mi-proyecto.analytics_123",
        "credentials": {"type": "service_account", "service_account": {"env": "BQ_TEST_KEY"}},
        "config": world.config, "cost_limit_usd": 1,
    }]}), encoding="utf-8")
    env = {"BQ_TEST_KEY": world.service_account()["service_account"], "ACP_CACHE_DIR": str(tmp_path / "cache")}
    async with bridge(project, env) as session:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {"bq__execute_query", "bq__validate_query", "bq__load_rows", "acp_query"} <= tools

        is_error, checked = await call(session, "bq__validate_query", {"query": SQL_ALL})
        assert not is_error and checked["within_cost_limit"] is False and checked["cost_limit_usd"] == 1

        is_error, refused = await call(session, "bq__execute_query", {"query": SQL_ALL})
        assert is_error and refused["error"]["name"] == "ACP_COST_LIMIT_EXCEEDED"
        assert refused["error"]["message"].startswith("The query would cost about $3.84 and the limit is $1.00.")
        assert world.bq.sent_jobs(dry_run=False) == []

        is_error, week = await call(session, "bq__execute_query", {"query": SQL_WEEK})
        assert not is_error, week
        assert week["total_rows"] == 181022 and week["extra"] == {"bytes_processed": 9663676416, "cache_hit": False}
        [(rows, meta)] = datasets(project, "bq_execute_query_")
        assert len(rows) == 181022 and rows[-1]["user_pseudo_id"] == f"{1000 + 181021}.{181021 % 1800}"
        assert [h["type"] for h in meta["headers"]] == ["string", "string", "string"]

        is_error, write = await call(session, "bq__execute_query", {"query": SQL_DELETE})
        assert is_error and write["error"]["name"] == "ACP_READ_ONLY_VIOLATION"

        is_error, typed = await call(session, "bq__execute_query", {"query": SQL_TYPED})
        assert not is_error, typed
        typed_sets = [d for d in datasets(project, "bq_execute_query_") if len(d[0]) == 3]
        [(rows, meta)] = typed_sets
        assert {h["name"]: h["type"] for h in meta["headers"]} == {
            "day": "date", "sessions": "integer", "revenue": "number", "last_seen": "datetime"}
        assert rows[0] == {"day": "2026-09-01", "sessions": str(2**53), "revenue": "0.5", "last_seen": "2026-09-01T00:00:00.000Z"}
        dataset_id = next(p.stem for p in (project / "acp-data").glob("bq_execute_query_*.csv")
                          if sum(1 for _ in open(p, encoding="utf-8")) == 4)
        is_error, summed = await call(session, "acp_query", {"sql": f"SELECT SUM(revenue) AS r, MAX(day) AS d FROM {dataset_id}"})
        assert not is_error and summed["rows"][0]["r"] == 4.5 and summed["rows"][0]["d"] == "2026-09-03"
