"""One scenario through the TypeScript MCP SDK (issue 6 "Tests"): the bridge as any desktop client sees it.

The pinned SDK lives in tests/external (``make npm-deps``); the script runs with that folder as its
working directory so its bare imports resolve there.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "external"))
import acp_external  # noqa: E402

pytestmark = pytest.mark.external
SCRIPT = Path(__file__).resolve().parent / "ts_bridge_client.mjs"
TOKEN = "ts-bridge-tok-0123456789"


def test_bridge_ts_sdk_session(tmp_path, fixture_root, write_sources):
    acp_external.require_npm_clients()
    project = tmp_path / "proj"
    project.mkdir()
    write_sources(fixture_root / "sources.json", {"defaults": {"row_limit": 4}, "sources": [
        {"id": "fx", "acp": "fixture", "label": "Fixture", "credentials": {"account": "acct-ts", "token": {"env": "BRIDGE_TS_TOKEN"}}},
    ]})
    env = acp_external.node_env()
    env["BRIDGE_TS_TOKEN"] = TOKEN
    env["BRIDGE_COMMAND"] = json.dumps([sys.executable, "-m", "analytics_acp_bridge", "--project", str(project),
                                        "--root", str(fixture_root)])
    with open(tmp_path / "ts.stderr", "w", encoding="utf-8") as err:
        proc = subprocess.run([str(acp_external.NODE), "--input-type=module"], input=SCRIPT.read_text(encoding="utf-8"),
                              cwd=acp_external.HERE, env=env, stdout=subprocess.PIPE, stderr=err, text=True, timeout=300)
    stderr = (tmp_path / "ts.stderr").read_text(encoding="utf-8")
    assert proc.returncode == 0, stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["ok"], report.get("failure")
    assert report["serverName"] == "analytics-acp-bridge"
    tools = {t["name"]: t["description"] for t in report["tools"]}
    assert {"acp_sources", "acp_datasets", "acp_query", "fx__numbers", "fx__table_sum"} <= set(tools)
    assert tools["fx__numbers"].startswith("[Fixture · Bridge fixture] ")
    numbers = report["calls"]["numbers"]
    assert not numbers["isError"] and json.loads(numbers["texts"][0])["returned_rows"] == 4
    dataset_id = numbers["texts"][1].split("«")[1].split("»")[0]
    assert numbers["texts"][1].startswith(
        f"The full extraction was saved as dataset «{dataset_id}» in acp-data/{dataset_id}.csv. You saw 4 of 40 rows.")
    query = report["calls"]["query"]
    assert json.loads(query["texts"][0])["rows"] == [{"n": 40, "s": sum(i * i for i in range(40))}]
    assert json.loads(report["calls"]["tableSum"]["texts"][0])["sum"] == sum(range(40))
    assert json.loads(report["calls"]["leak"]["texts"][0])["debug"] == "called with token [redacted]"
    assert TOKEN not in proc.stdout and TOKEN not in stderr
    assert (project / "acp-data" / f"{dataset_id}.csv").is_file()
