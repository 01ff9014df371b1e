"""`analytics-acp serve gsc` through the core's host client: 15.2's on_first_call flow, both property forms, suggestions."""

from __future__ import annotations

import datetime as dt
import sys

import pytest
from analytics_acp.host import AcpClient
from analytics_acp_gsc.dates import add_months
from gscfake import DOMAIN, PREFIX, SHOP

SERVE = [sys.executable, "-m", "analytics_acp", "serve", "gsc"]
HEADERS_15_2 = [
    {"name": "query", "type": "string", "role": "dimension", "description": "Search query"},
    {"name": "clicks", "type": "integer", "role": "metric"},
    {"name": "impressions", "type": "integer", "role": "metric"},
    {"name": "ctr", "type": "number", "role": "metric", "description": "Fraction 0-1"},
    {"name": "position", "type": "number", "role": "metric", "description": "Average position weighted by impressions"},
]


@pytest.fixture
def server_env(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("ACP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ACP_TMP_DIR", str(tmp_path / "tmp"))
    return dict(os.environ)


async def test_15_2_autocontext_on_the_first_call_only(served_env, server_env):
    meta = {"credentials": served_env.service_account(), "config": served_env.config, "session_id": "conv-8f2c",
            "autocontext_blocks": ["available_date_range", "position_clusters"]}
    args = {"resource_id": "sc-domain:example.com", "dimensions": ["query"],
            "filters": [{"dimension": "page", "operator": "contains", "expression": "/blog/"}]}
    async with AcpClient.stdio(SERVE, env=server_env) as client:
        first = await client.call_tool("search_analytics", args, meta=meta)
        assert not first.is_error, first.text
        mr, info = first.model_response, first.system_info
        final = served_env.final_through
        start = add_months(final, -1)
        assert info["arguments"]["start_date"] == start.isoformat() and info["arguments"]["end_date"] == final.isoformat()
        assert info["arguments"]["search_type"] == "web" and info["resource_id"] == DOMAIN
        assert info["autocontext_attached"] is True
        assert mr["columns"] == ["query", "clicks", "impressions", "ctr", "position"]
        assert mr["total_rows"] == 20 and mr["dates"] == [start.isoformat(), final.isoformat()]
        assert set(mr["totals"]) == {"clicks", "impressions", "ctr", "position"}
        assert first.system_data["headers"] == HEADERS_15_2 and first.system_data["row_count"] == 20
        blocks = {b["id"]: b for b in mr["autocontext"]}
        assert list(blocks) == ["available_date_range", "position_clusters"]
        assert blocks["available_date_range"]["description"] == "Queryable date range (16 months) and the latest day with reliable data."
        assert blocks["available_date_range"]["data"] == {
            "first_date": add_months(final + dt.timedelta(days=2), -16).isoformat(), "last_reliable_date": final.isoformat(),
            "note": "Search Console keeps 16 months of data and publishes it with a 2-3 day delay."}
        assert blocks["position_clusters"]["description"] == (
            "Queries grouped by position cluster (Top-3, Top-10, Top-30, Top-100, Out) over the last 3 months.")
        clusters = blocks["position_clusters"]["data"]
        assert [c["clusterPosition"] for c in clusters] == ["Top-3", "Top-10", "Top-30", "Top-100", "Out"]
        assert sum(c["queries"] for c in clusters) == 40
        second = await client.call_tool("search_analytics", args, meta=meta)
        assert "autocontext" not in second.model_response and second.system_info["autocontext_attached"] is False
        other = await client.call_tool("sitemaps", {"resource_id": SHOP}, meta=meta)  # another resource: first time again
        assert other.system_info["autocontext_attached"] is True


async def test_both_property_forms_and_bare_hosts(served_env, server_env):
    sa = {"credentials": served_env.service_account(), "config": served_env.config}
    user = {"credentials": served_env.oauth_user(), "config": served_env.config}
    args = {"dimensions": ["query"], "start_date": "10daysAgo", "end_date": "5daysAgo", "row_cap": 3}
    async with AcpClient.stdio(SERVE, env=server_env) as client:
        r = await client.call_tool("search_analytics", {**args, "resource_id": "Example.com"}, meta=sa)
        assert r.system_info["resource_id"] == DOMAIN and r.model_response["total_rows"] == 3
        r = await client.call_tool("search_analytics", {**args, "resource_id": "example.com"}, meta=user)
        assert r.system_info["resource_id"] == PREFIX, r.text  # this account sees the URL-prefix form only
        r = await client.call_tool("search_analytics", {**args, "resource_id": "https://WWW.example.com"}, meta=user)
        assert r.system_info["resource_id"] == PREFIX and not r.is_error
        r = await client.call_tool("search_analytics", {**args, "resource_id": "sc-domain:example.com"}, meta=user)
        assert r.error["name"] == "ACP_RESOURCE_NOT_FOUND"
        assert f"{PREFIX} (URL-prefix property): use that resource_id" in r.error["message"]
        r = await client.call_tool("search_analytics", {**args, "resource_id": "ftp://nope"}, meta=user)
        assert r.error["name"] == "ACP_INVALID_ARGUMENTS"
        suggestions = await client.call_tool("autocontext", {}, meta=user)
        assert [(s["resource_id"], s["group"]) for s in suggestions.model_response["resources"]][:2] in (
            [(PREFIX, "Owner"), (SHOP, "Restricted user")], [(SHOP, "Restricted user"), (PREFIX, "Owner")])
