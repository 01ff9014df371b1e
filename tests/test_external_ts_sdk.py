"""The TypeScript MCP SDK (@modelcontextprotocol/sdk, pinned in tests/external/package-lock.json) as an
ACP host of `analytics-acp serve example` over stdio (issue 2 "Done when"): the experimental capability,
`_meta` both ways, `acp/configure` as a custom request and `acp/read_table` answered by the TS client."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "external"))
import acp_external  # noqa: E402

pytestmark = pytest.mark.external
SECRET = "ex_ts_SECRET_0123456789"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    acp_external.require_npm_clients()
    stderr = tmp_path_factory.mktemp("ts") / "ts_client.stderr"
    env = acp_external.node_env()
    env["ACP_SERVER_COMMAND"] = json.dumps(acp_external.SERVE_EXAMPLE)
    env["ACP_TEST_SECRET"] = SECRET
    with open(stderr, "w") as err:
        proc = subprocess.run([str(acp_external.NODE), "ts_client.mjs"], cwd=acp_external.HERE, env=env,
                              stdout=subprocess.PIPE, stderr=err, text=True, timeout=180)
    assert proc.returncode == 0, stderr.read_text()[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["ok"], data.get("failure")
    data["_stdout"] = proc.stdout
    data["_stderr"] = stderr.read_text()
    return data


def test_capability_reaches_the_ts_client(report):
    cap = report["serverCapability"]
    assert report["serverVersion"]["name"] == "example"
    assert cap["version"] == "1.0"
    assert cap["defaults"]["cost_limit_usd"] == 0
    assert cap["extraction_tools"][0] == "query_orders"
    assert [e["name"] for e in cap["table_catalog"]] == ["events", "pages", "cookies"]
    tools = {t["name"]: t["properties"] for t in report["tools"]}
    assert {"autocontext", "autocontext_data"} <= set(tools)
    assert "resource_id" in tools["query_orders"] and "resource_id" not in tools["table_stats"]


def test_configure_as_a_custom_request(report):
    assert report["configure"]["ok"] is True
    effective = report["configure"]["effective"]
    assert effective["row_limit"] == 4 and effective["has_credentials"] is True
    assert effective["default_resource_id"] == "acct02"
    assert report["invalidConfigure"]["error"]["code"] == -32016
    assert SECRET not in report["_stdout"] and SECRET not in report["_stderr"]


def test_meta_both_ways(report):
    session = report["sessionCall"]
    assert not session["isError"], session
    info = session["acp"]["system_info"]
    # acp/configure from the TS client applied: row_limit 4 and default resource acct02.
    assert info["row_limit"] == 4 and info["resource_id"] == "acct02"
    assert session["modelResponse"]["returned_rows"] == 4
    meta = report["metaCall"]
    info = meta["acp"]["system_info"]
    assert meta["acp"]["kind"] == "extraction" and meta["acp"]["version"] == "1.0"
    assert info["row_limit"] == 2 and info["resource_id"] == "acct05"  # _meta.acp beat acp/configure (5.3)
    rows = meta["modelResponse"]["rows"]
    table = meta["acp"]["system_data"]["table"]
    assert len(rows) == 2 and rows[0] == table[0] and rows[-1] == table[-1]  # spread keeps first and last
    assert meta["modelResponse"]["notice"] == f"Showing 2 of {len(table)} extracted rows."


def test_read_table_answered_by_the_ts_client(report):
    assert report["readTableRequests"][0] == {"ref": "ts_dataset", "call_id": "ts-call-1"}
    stats = report["tableStats"]
    assert not stats["isError"], stats
    assert stats["modelResponse"]["stats"]["sessions"] == {"count": 3, "min": 10, "max": 20, "mean": 14.0, "sum": 42}
    assert stats["acp"]["kind"] == "info"
    missing = report["tableMissing"]
    assert missing["isError"]
    assert missing["acp"]["error"]["name"] == "ACP_TABLE_NOT_FOUND"
    assert report["readTableRequests"][1] == {"ref": "no_such_table", "call_id": "ts-call-2"}
