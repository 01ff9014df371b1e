"""Tool exposure (16.4, 11.5, 8.9): names, description prefix, table_ref wording, template dates."""

import datetime as dt

import pytest
from analytics_acp.errors import InvalidArguments
from analytics_acp_bridge.calls.exposure import EXTRACTION_NOTE, TABLE_REF_DESCRIPTION, forward_arguments, rewrite_tool

SQL_TOOL = {
    "name": "execute_sql",
    "description": "Run a read-only SQL query.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "sql": {"type": "string", "x-acp-date": "template", "description": "SELECT only."},
            "resource_id": {"type": "string"},
        },
        "required": ["sql"],
    },
}
FORECAST = {
    "name": "forecast",
    "description": "Forecast a series.",
    "inputSchema": {"type": "object", "properties": {
        "table_ref": {"type": "string", "x-acp-input": "table_ref"},
        "forecast_ref": {"type": "string", "x-acp-input": "table_ref", "description": "A forecast's output."},
    }},
}


def test_bridge_exposure_names_and_descriptions():
    wire, route = rewrite_tool(SQL_TOOL, "ventas", "Ventas (SQLite)", "SQL databases", extraction=True)
    assert wire["name"] == "ventas__execute_sql" and route.tool == "execute_sql" and route.source == "ventas"
    assert wire["description"].startswith("[Ventas (SQLite) · SQL databases] Run a read-only SQL query.")
    assert wire["description"].endswith(f"\n\n{EXTRACTION_NOTE}") and "Full table saved in acp-data" in EXTRACTION_NOTE
    props = wire["inputSchema"]["properties"]
    assert set(props) == {"sql", "resource_id", "start_date", "end_date"}
    # The bridge fills the markers itself: said once, on the templated argument; dates described once.
    assert props["sql"]["description"] == "SELECT only. start_date/end_date fill {{start_date}}/{{end_date}}."
    assert props["start_date"]["description"].startswith("First day: YYYY-MM-DD")
    # x-acp-* keywords are for ACP hosts (the bridge used them); its MCP clients do not get them (issue 23.3).
    assert "x-acp-date" not in props["sql"] and SQL_TOOL["inputSchema"]["properties"]["sql"]["x-acp-date"] == "template"
    assert "start_date" not in wire["inputSchema"]["required"]
    assert SQL_TOOL["inputSchema"]["properties"].keys() == {"sql", "resource_id"}  # the ACP's schema is not mutated
    fwire, froute = rewrite_tool(FORECAST, "prevision", "Previsión local", "Prediction", extraction=False)
    fprops = fwire["inputSchema"]["properties"]
    assert fprops["table_ref"]["description"] == TABLE_REF_DESCRIPTION
    assert "acp-data" in TABLE_REF_DESCRIPTION and "not rows or a query" in TABLE_REF_DESCRIPTION
    assert fprops["forecast_ref"]["description"] == "acp-data dataset id: A forecast's output."  # its role is kept
    assert "x-acp-input" not in fprops["table_ref"]
    assert EXTRACTION_NOTE not in fwire["description"]
    assert not froute.window_added


def test_bridge_exposure_template_dates_substituted_not_forwarded():
    _, route = rewrite_tool(SQL_TOOL, "ventas", "V", "D", extraction=True)
    sql = "SELECT * FROM ventas WHERE fecha BETWEEN '{{start_date}}' AND '{{end_date}}'"
    args = forward_arguments(route, {"sql": sql, "start_date": "7daysAgo", "end_date": "yesterday"}, today=dt.date(2026, 10, 12))
    assert args == {"sql": "SELECT * FROM ventas WHERE fecha BETWEEN '2026-10-05' AND '2026-10-11'"}
    plain = forward_arguments(route, {"sql": "SELECT 1", "start_date": "2026-01-01", "end_date": "2026-01-02"})
    assert plain == {"sql": "SELECT 1"}
    with pytest.raises(InvalidArguments, match="pass start_date and end_date"):
        forward_arguments(route, {"sql": sql})
    with pytest.raises(InvalidArguments):
        forward_arguments(route, {"sql": sql, "start_date": "2026-02-01", "end_date": "2026-01-01"})
    with pytest.raises(InvalidArguments):
        forward_arguments(route, {"sql": sql, "start_date": "soon", "end_date": "today"})


def test_bridge_exposure_info_tool_may_keep_markers():
    _, route = rewrite_tool(SQL_TOOL, "ventas", "V", "D", extraction=False)
    sql = "SELECT 1 WHERE '{{start_date}}' < '{{end_date}}'"
    assert forward_arguments(route, {"sql": sql}) == {"sql": sql}
    with pytest.raises(InvalidArguments):
        forward_arguments(route, {"sql": sql, "start_date": "today"})
