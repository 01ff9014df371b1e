"""Issue 23.3: tools/list is read in every conversation, so every published tool stays small.

Each tool of every installed connector, as the connector publishes it and as the bridge republishes it
(16.4: label prefix, acp-data wording, added date window), and the bridge's own tools, is at most 2 KB of
JSON (the compact UTF-8 form the MCP SDK writes). The five-source set of the issue (databases, ga4, gsc,
bigquery, prediction) stays within 28 KB as one tools/list; `make bench` measures the same set through a
running bridge (tools/bench case 10).
"""

import json

import pytest
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.plugins import available_connectors, load_connector
from analytics_acp.runtime_tools import tool_list
from analytics_acp_bridge.calls.exposure import rewrite_tool
from analytics_acp_bridge.serving import own_tools
from analytics_acp_bridge.view import apps

MAX_TOOL_BYTES = 2048
MAX_FIVE_SOURCES_BYTES = 28_000
MAX_FIVE_SOURCES_APPS_BYTES = 30_000  # issue 36.3: the same list for a client that negotiates MCP Apps
LONG_LABEL = "Google Analytics 4 (ikaue.com)"  # the longest label of tools/bridge/sources.example.json
# The bench's five-source set (tools/bench toolslist.py): source id and label per ACP.
FIVE = {"databases": ("db", "Shop"), "ga4": ("ga", "GA4"), "gsc": ("sc", "GSC"), "bigquery": ("bq", "BQ"),
        "prediction": ("fc", "Forecast")}


def size(tool):
    return len(json.dumps(tool, ensure_ascii=False, separators=(",", ":")).encode())


def published(connector_id):
    runtime = ConnectorRuntime(load_connector(connector_id))
    return runtime, tool_list(runtime.state)


def bridged(connector_id, source_id, label, routes=None):
    runtime, tools = published(connector_id)
    extraction = set(runtime.loaded.extraction_tools)
    out = [rewrite_tool(t, source_id, label, runtime.info.name, t["name"] in extraction) for t in tools]
    if routes is not None:
        routes.extend(route for _, route in out)
    return [wire for wire, _ in out]


CONNECTORS = sorted(available_connectors())


def test_every_connector_is_measured():
    assert set(FIVE) <= set(CONNECTORS), CONNECTORS


@pytest.mark.parametrize("connector_id", CONNECTORS)
def test_each_published_tool_is_at_most_2kb(connector_id):
    _, tools = published(connector_id)
    big = {t["name"]: size(t) for t in tools if size(t) > MAX_TOOL_BYTES}
    assert not big, big
    wide = {t["name"]: size(t) for t in bridged(connector_id, "source_id", LONG_LABEL) if size(t) > MAX_TOOL_BYTES}
    assert not wide, f"as the bridge publishes them: {wide}"


def test_bridge_own_tools_are_at_most_2kb():
    assert {t["name"]: size(t) for t in own_tools.TOOLS if size(t) > MAX_TOOL_BYTES} == {}


def test_five_source_tool_list_within_28kb():
    tools = [dict(t) for t in own_tools.TOOLS]
    for connector_id, (source_id, label) in FIVE.items():
        tools += bridged(connector_id, source_id, label)
    line = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}}, ensure_ascii=False, separators=(",", ":"))
    assert len(tools) == 32
    assert len(line.encode()) <= MAX_FIVE_SOURCES_BYTES, len(line.encode())



def test_five_source_tool_list_with_mcp_apps_within_30kb():
    """An MCP Apps client also gets _meta.ui on the dataset tools and the two app-only tools (issue 36.3)."""
    tools, routes = [dict(t) for t in own_tools.TOOLS], []
    for connector_id, (source_id, label) in FIVE.items():
        tools += bridged(connector_id, source_id, label, routes)
    viewed = {"acp_query", *(r.public for r in routes if r.datasets_shown)}
    listed = apps.tools_for_apps(tools, viewed)
    line = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": listed}}, ensure_ascii=False, separators=(",", ":"))
    assert len(listed) == 34 and {"db__execute_sql", "fc__forecast", "fc__plot", "acp_query"} <= viewed
    assert not {"db__validate_sql", "acp_sources", "acp_datasets"} & viewed
    assert len(line.encode()) <= MAX_FIVE_SOURCES_APPS_BYTES, len(line.encode())
    assert max(size(t) for t in apps.APP_TOOLS) <= MAX_TOOL_BYTES
