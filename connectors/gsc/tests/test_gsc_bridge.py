"""The 15.2 flow behind the ACP Bridge: a real bridge process and MCP ClientSession, `gsc` underneath on the fake.

The bridge sends a session per source and no autocontext_delivered (7.5 on_first_call): the first
search_analytics call carries the autocontext (position_clusters among it), the second does not,
and every extraction is saved whole as a CSV dataset the model can query with acp_query.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

pytest.importorskip("analytics_acp_bridge")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

ARGS_15_2 = {"resource_id": "sc-domain:example.com", "dimensions": ["query"],
             "filters": [{"dimension": "page", "operator": "contains", "expression": "/blog/"}]}


@asynccontextmanager
async def bridge(project: Path, env: dict[str, str]):
    params = StdioServerParameters(command=sys.executable, args=["-m", "analytics_acp_bridge", "--project", str(project)],
                                   env={**os.environ, **env}, cwd=str(project))
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, name: str, arguments: dict) -> tuple[bool, dict, list[str]]:
    result = (await session.call_tool(name, arguments)).model_dump(by_alias=True, mode="json", exclude_none=True)
    texts = [c["text"] for c in result["content"] if c["type"] == "text"]
    return bool(result.get("isError")), json.loads(texts[0]), texts[1:]


def csv_rows(project: Path, stem_prefix: str) -> list[list[dict[str, str]]]:
    out = []
    for path in sorted((project / "acp-data").glob(f"{stem_prefix}*.csv")):
        with open(path, encoding="utf-8", newline="") as handle:
            out.append(list(csv.DictReader(handle)))
    return out


async def test_bridge_runs_the_15_2_flow(served_env, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    key = served_env.service_account()["service_account"]
    (project / "sources.json").write_text(json.dumps({"sources": [{
        "id": "search", "acp": "gsc", "label": "Search Console", "default_resource_id": "sc-domain:example.com",
        "credentials": {"type": "service_account", "service_account": {"env": "GSC_TEST_KEY"}},
        "config": served_env.config,
    }]}), encoding="utf-8")
    env = {"GSC_TEST_KEY": key, "ACP_CACHE_DIR": str(tmp_path / "cache")}
    async with bridge(project, env) as session:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {"search__search_analytics", "search__compare_periods", "search__inspect_urls", "acp_query"} <= tools
        is_error, first, notes = await call(session, "search__search_analytics", ARGS_15_2)
        assert not is_error, first
        ids = [b["id"] for b in first["autocontext"]]
        assert "available_date_range" in ids and "position_clusters" in ids  # 7.5: the first call carries them
        clusters = next(b for b in first["autocontext"] if b["id"] == "position_clusters")["data"]
        assert [c["clusterPosition"] for c in clusters] == ["Top-3", "Top-10", "Top-30", "Top-100", "Out"]
        assert first["columns"] == ["query", "clicks", "impressions", "ctr", "position"] and first["total_rows"] == 20
        [saved] = csv_rows(project, "search_search_analytics_")
        assert len(saved) == 20 and {r["query"] for r in saved} == {f"query {i}" for i in range(0, 40, 2)}

        is_error, second, notes = await call(session, "search__search_analytics",
                                             {**ARGS_15_2, "dimensions": ["query", "date"]})
        assert not is_error and "autocontext" not in second  # same session and property: not again
        start, end = (dt.date.fromisoformat(d) for d in second["dates"])
        total = 20 * ((end - start).days + 1)  # 20 queries x the days of the default window
        assert second["returned_rows"] == 25 and second["total_rows"] == total
        datasets = csv_rows(project, "search_search_analytics_")
        assert sorted(len(d) for d in datasets) == [20, total]  # the CSV has every row, not the sample
        dataset_id = next(p.stem for p in (project / "acp-data").glob("search_search_analytics_*.csv")
                          if sum(1 for _ in open(p, encoding="utf-8")) == total + 1)
        is_error, summed, _ = await call(session, "acp_query", {"sql": f"SELECT SUM(clicks) AS clicks FROM {dataset_id}"})
        assert not is_error and summed["rows"][0]["clicks"] == second["totals"]["clicks"]  # Google's totals = all rows
