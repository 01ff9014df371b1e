"""The frozen build of `bigquery` (PyInstaller --onedir, 13): folder + zip, only its dependencies, and the
checklist (`analytics-acp check`) passing on the zip against the fake API. Slow: marked ``build``."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from analytics_acp.host import AcpClient
from analytics_acp_build.check import Target, failed, run_check
from bqworld import SQL_WEEK

pytestmark = [pytest.mark.build, pytest.mark.slow, pytest.mark.timeout(1800)]
SQL_SMALL = "SELECT event_name, COUNT(*) n FROM `mi-proyecto.analytics_123.events_20260901` GROUP BY 1"
SAMPLES = [("execute_query", {"query": SQL_SMALL}, {"cost_limit_usd": 1}),
           ("validate_query", {"query": SQL_WEEK}, {"cost_limit_usd": 1})]


def small_query(world) -> None:
    """A small paid query for the checklist's extraction sample (9.2: refused at cost_limit_usd 0, runs at 1)."""
    from fakebq import QuerySpec

    world.bq.on_query(SQL_SMALL, QuerySpec(
        total_bytes_processed=3 << 30, location="EU", referenced_tables=["mi-proyecto.analytics_123.events_20260901"],
        schema=[{"name": "event_name", "type": "STRING"}, {"name": "n", "type": "INTEGER"}],
        total_rows=2, row=lambda i: [["page_view", "scroll"][i], [30, 20][i]]))


@pytest.fixture(scope="module")
def frozen(frozen_build):
    result = frozen_build("bigquery")  # built once per content hash of its inputs (root conftest.py)
    assert result.ok, result.error
    return result


def test_bigquery_build_carries_only_its_dependencies(frozen):
    inside = {p.name.split(".")[0].split("-")[0] for p in (frozen.folder / "_internal").iterdir()}
    assert {"google", "analytics_acp", "analytics_acp_google", "analytics_acp_bigquery"} <= inside
    assert not inside & {"sqlalchemy", "duckdb", "playwright", "matplotlib", "statsmodels", "analytics_acp_databases", "pytest"}
    doc = json.loads((frozen.folder / "acp.json").read_text())
    assert doc["id"] == "bigquery" and doc["transport"]["command"] == "./bigquery-server"
    assert (frozen.folder / "skills" / "ga4-export-queries" / "SKILL.md").is_file()
    assert frozen.zip.name == "bigquery-0.1.0.zip"


def test_bigquery_frozen_passes_the_checklist_and_runs_the_narrowed_query(frozen, world, tmp_path):
    small_query(world)
    items = run_check(Target(zip=frozen.zip), credentials=world.service_account(), config=world.config,
                      resource_id="mi-proyecto.analytics_123",
                      sample_calls=SAMPLES, timeout=300)
    assert not failed(items), [(i.item, i.evidence) for i in failed(items)]

    async def run():
        async with AcpClient.stdio([str(frozen.folder / "bigquery-server")], cwd=str(frozen.folder),
                                   env={"ACP_TMP_DIR": str(tmp_path)}) as client:
            return await client.call_tool("execute_query", {"query": SQL_WEEK, "resource_id": "mi-proyecto.analytics_123"},
                                          meta={"credentials": world.service_account(), "config": world.config, "cost_limit_usd": 1})

    res = anyio.run(run)
    assert not res.is_error, res.text
    assert res.system_data["row_count"] == 181022 and res.system_info["cost_actual_usd"] == 0.054932
    assert Path(frozen.folder).is_dir()
