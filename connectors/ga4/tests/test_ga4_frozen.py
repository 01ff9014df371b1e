"""The frozen `ga4` build (PyInstaller --onedir): it carries analytics-acp-google (a workspace package, not on
PyPI), passes `analytics-acp check`, and answers run_report against the fake with the real clients frozen inside.

Slow (one freeze): marked ``build``.
"""

from __future__ import annotations

import json

import anyio
import pytest
from analytics_acp.host import AcpClient

pytestmark = [pytest.mark.build, pytest.mark.slow, pytest.mark.timeout(1800)]

SAMPLES = [("run_report", {"metrics": ["sessions", "totalUsers"], "dimensions": ["date"]}),
           ("get_metadata", {"query": "channel"})]


@pytest.fixture(scope="module")
def frozen(frozen_build):
    result = frozen_build("ga4")  # built once per content hash of its inputs (root conftest.py)
    assert result.ok, result.error
    return result


def test_ga4_build_carries_its_dependencies_only(frozen):
    inside = {p.name.split(".")[0].split("-")[0] for p in (frozen.folder / "_internal").iterdir()}
    assert {"analytics_acp", "analytics_acp_ga4", "analytics_acp_google", "google"} <= inside
    assert not inside & {"sqlalchemy", "playwright", "statsmodels", "analytics_acp_databases", "analytics_acp_gsc",
                         "analytics_acp_bigquery", "tkinter", "pytest"}
    doc = json.loads((frozen.folder / "acp.json").read_text())
    assert doc["id"] == "ga4" and doc["name"] == "Google Analytics 4" and doc["transport"]["command"] == "./ga4-server"
    assert (frozen.folder / "skills" / "ga4-reports" / "SKILL.md").is_file() and (frozen.folder / "icon.svg").is_file()


def test_ga4_frozen_passes_check_and_answers_run_report(frozen, fake, server, sa_credentials):
    from analytics_acp_build.check import Target, failed, run_check

    env = {"ANALYTICS_ACP_GOOGLE_DEADLINE_S": "5", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "5"}
    items = run_check(Target(zip=frozen.zip), credentials=sa_credentials, config={"api_endpoint": server.url},
                      resource_id="123456789", sample_calls=SAMPLES, env=env, timeout=240)
    assert not failed(items), [(i.item, i.evidence) for i in failed(items)]

    async def run():
        async with AcpClient.stdio([str(frozen.folder / "ga4-server")], cwd=str(frozen.folder), env=env) as client:
            return await client.call_tool("run_report", {"metrics": ["sessions"], "dimensions": ["date"], "resource_id": "123456789"},
                                          meta={"credentials": sa_credentials, "config": {"api_endpoint": server.url}})

    res = anyio.run(run)
    assert not res.is_error, res.text
    assert res.model_response["total_rows"] == 28 and len(res.tables()[0].rows) == 28
    assert [h["type"] for h in res.system_data["headers"]] == ["date", "integer"]
