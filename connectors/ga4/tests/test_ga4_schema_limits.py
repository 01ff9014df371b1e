"""Limits the tools no longer re-check (issues 27.6, 38.1): the tool's argument model refuses them, in the core, with
the typed error ACP_INVALID_ARGUMENTS (12.1), before any credential check or request."""

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
    ("run_report", {"metrics": METRICS}, "Invalid metrics: must have at most 10 item(s)."),  # report.py checked it too
    ("run_report", {"metrics": ["sessions"], "dimensions": [f"d{i}" for i in range(10)]},
     "Invalid dimensions: must have at most 9 item(s)."),
    ("run_report", {"metrics": ["sessions"], "compare_start_date": "7daysAgo"},
     "Give both compare_start_date and compare_end_date"),
    ("run_report", {"metrics": ["sessions"], "dimension_filters": [{"field": "country", "match_type": "IN_LIST"}]},
     "Invalid dimension_filters.0: IN_LIST needs 'values'"),
    ("run_report", {"metrics": ["sessions"], "dimension_filters": [{"field": "pagePath", "match_type": "full_regexp",
                                                                   "value": "(["}]},
     "Invalid dimension_filters.0: invalid regular expression"),
    ("run_report", {"metrics": ["sessions"], "dimension_filters": [{"field": "country", "match_type": "LIKE", "value": "x"}]},
     "Invalid dimension_filters.0.match_type: must be one of EXACT, BEGINS_WITH"),
    ("run_report", {"metrics": ["sessions"], "metric_filters": [{"field": "sessions", "operation": "BETWEEN", "values": [1]}]},
     "Invalid metric_filters.0: BETWEEN needs 'values': [from, to]."),
    ("run_report", {"metrics": ["sessions"], "order_bys": [{"desc": True}]},
     "Invalid order_bys.0: missing required argument(s) field."),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": []}, "Invalid clusters: must have at least 1 item(s)."),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": [{"name": "Blog"}]},
     "Invalid clusters.0: missing required argument(s) regex"),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": [{"name": "Blog", "regex": 3}]},
     "Invalid clusters.0.regex: must be of type string"),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": "^/blog"}, "Invalid clusters: must be of type array"),
    ("run_report_by_regex_cluster", {**CLUSTER, "clusters": [{"name": "A", "regex": "a"}, {"name": "A", "regex": "b"}]},
     "Invalid clusters: the cluster name 'A' is repeated."),
    ("run_funnel_report", {"steps": []}, "Invalid steps: must have at least 1 item(s)."),
    ("run_funnel_report", {"steps": ["purchase"]}, "Invalid steps.0: must be of type object"),
    ("run_funnel_report", {"steps": [{"name": "a", "event_name": "x", "page_path": "/"}]},
     "Invalid steps.0: needs exactly one of 'event_name' or 'page_path'."),
    ("run_realtime_report", {"metrics": ["activeUsers"], "start_minutes_ago": 60}, "Invalid start_minutes_ago: must be at most 59."),
    ("run_realtime_report", {"metrics": ["activeUsers"], "start_minutes_ago": 5, "end_minutes_ago": 10},
     "start_minutes_ago must be >= end_minutes_ago"),
    ("compare_conversion_models", {"key_events": ["keyEvents:purchase"]}, "Invalid key_events: takes event names"),
    ("check_compatibility", {}, "Give 'metrics' and/or 'dimensions' to check."),
    ("get_metadata", {"kind": "events"}, "Invalid kind: must be one of all, dimensions, metrics"),
])
def test_the_schema_refuses_what_the_tool_no_longer_checks(runtime, tool, arguments, says):
    name, message = _error(runtime, tool, arguments)
    assert name == "ACP_INVALID_ARGUMENTS"
    assert message.startswith(says), message
