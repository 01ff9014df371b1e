"""Limits the tools no longer re-check (issue 27.6): the published schema refuses them, in the core, with the typed
error ACP_INVALID_ARGUMENTS (12.1), before any credential check or request."""

from __future__ import annotations

import anyio
import pytest
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.context import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.plugins import load_connector

FULL = ClientInfo(acp=True, version="1.0", stores_system_data=True, multi_table=True, host_tables=True)
METRICS = [f"m{i}" for i in range(11)]
CLUSTER = {"dimension": "pagePath", "metrics": ["sessions"]}


@pytest.fixture(scope="module")
def runtime() -> ConnectorRuntime:
    return ConnectorRuntime(load_connector("ga4", extensions=False))


def _error(runtime: ConnectorRuntime, tool: str, arguments: dict) -> tuple[str, str]:
    result = anyio.run(lambda: runtime.call(tool, {"resource_id": "123456789", **arguments},
                                            {"autocontext_delivered": True}, SessionConfig(), FULL))
    assert result["isError"], result
    error = result["_meta"]["acp"]["error"]
    return error["name"], error["message"]


@pytest.mark.parametrize("tool, arguments, says", [
    ("run_report", {"metrics": METRICS}, "Invalid metrics: must respect maxItems 10"),  # report.py checked it too
    ("run_report", {"metrics": ["sessions"], "dimensions": [f"d{i}" for i in range(10)]},
     "Invalid dimensions: must respect maxItems 9"),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": []}, "Invalid clusters: must respect minItems 1"),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": [{"name": "Blog"}]},
     "Invalid clusters.0: missing required argument(s) regex"),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": [{"name": "Blog", "regex": 3}]},
     "Invalid clusters.0.regex: must be of type string"),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": "^/blog"}, "Invalid clusters: must be of type array"),
    ("run_funnel_report", {"steps": []}, "Invalid steps: must respect minItems 1"),
    ("run_funnel_report", {"steps": ["purchase"]}, "Invalid steps.0: must be of type object"),
    ("get_metadata", {"kind": "events"}, "Invalid kind: must be one of all, dimensions, metrics"),
])
def test_the_schema_refuses_what_the_tool_no_longer_checks(runtime, tool, arguments, says):
    name, message = _error(runtime, tool, arguments)
    assert name == "ACP_INVALID_ARGUMENTS"
    assert message.startswith(says), message
