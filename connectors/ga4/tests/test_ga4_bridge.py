"""The 15.1 flow behind the ACP Bridge: a real bridge process and MCP ClientSession, `ga4` underneath on the fake.

The source's credentials are gcloud's authorized_user file referenced whole (`{"file": ...}`, as in
sources.example.json); the refresh token is exchanged at the fake's token endpoint.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from ga4support import SA_EMAIL
from googlefakes import keys

pytest.importorskip("analytics_acp_bridge")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


@asynccontextmanager
async def bridge(project: Path, env: dict[str, str]):
    params = StdioServerParameters(command=sys.executable, args=["-m", "analytics_acp_bridge", "--project", str(project)],
                                   env={**os.environ, **env}, cwd=str(project))
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, name: str, arguments: dict) -> tuple[bool, object]:
    result = (await session.call_tool(name, arguments)).model_dump(by_alias=True, mode="json", exclude_none=True)
    texts = [c["text"] for c in result["content"] if c["type"] == "text"]
    try:
        return bool(result.get("isError")), json.loads(texts[0])
    except ValueError:
        return bool(result.get("isError")), texts[0]


async def test_bridge_runs_the_15_1_flow(fake, server, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    server.oauth.register_refresh_token("1//adc-refresh-SECRET", "adc.apps.googleusercontent.com", "adc-client-SECRET",
                                        subject=SA_EMAIL)
    adc = tmp_path / "application_default_credentials.json"
    adc.write_text(json.dumps(keys.authorized_user(server.oauth.token_uri, refresh_token="1//adc-refresh-SECRET",
                                                   client_id="adc.apps.googleusercontent.com", client_secret="adc-client-SECRET")))
    (project / "sources.json").write_text(json.dumps({"sources": [{
        "id": "analytics", "acp": "ga4", "label": "GA4", "default_resource_id": "123456789",
        "credentials": {"file": str(adc)}, "config": {"api_endpoint": server.url},
    }]}), encoding="utf-8")
    env = {"ACP_CACHE_DIR": str(tmp_path / "cache"), "ANALYTICS_ACP_GOOGLE_DEADLINE_S": "3", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "3"}
    async with bridge(project, env) as session:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {"analytics__run_report", "analytics__run_report_by_regex_cluster", "analytics__compare_conversion_models",
                "acp_query"} <= tools
        # 15.1 step 3: the blocks available; step 5: two blocks injected.
        is_error, available = await call(session, "analytics__autocontext_data", {})
        assert not is_error and [b["id"] for b in available][:2] == ["property_settings", "key_events"]
        is_error, injected = await call(session, "analytics__autocontext", {"resource_id": "123456789",
                                                                            "request_data": ["key_events", "custom_dimensions"]})
        assert not is_error, injected
        blocks = {b["id"]: b["data"] for b in injected}
        assert blocks["key_events"][0] == {"event_name": "purchase", "counting_method": "ONCE_PER_EVENT", "metric": "keyEvents:purchase"}
        assert blocks["custom_dimensions"][0]["api_name"] == "customEvent:form_name"
        # 15.1 step 6: the extraction (autocontext already delivered in this session: not attached again, 7.5).
        is_error, first = await call(session, "analytics__run_report", {
            "metrics": ["sessions", "keyEvents:purchase"], "dimensions": ["date", "sessionDefaultChannelGroup"]})
        assert not is_error, first
        assert first["notice"] == "Showing 25 of 112 extracted rows." and first["truncated"] is True
        assert "autocontext" not in first
        # The whole report is a typed CSV dataset.
        [meta_path] = list((project / "acp-data").glob("analytics_run_report_*.meta.json"))
        meta = json.loads(meta_path.read_text())
        assert [(h["name"], h["type"]) for h in meta["headers"]] == [
            ("date", "date"), ("sessionDefaultChannelGroup", "string"), ("sessions", "integer"), ("keyEvents:purchase", "number")]
        assert meta["row_count"] == 112
        dataset = meta_path.name.removesuffix(".meta.json")
        is_error, summed = await call(session, "acp_query", {
            "sql": f'SELECT SUM(sessions) AS sessions, COUNT(DISTINCT date) AS days FROM {dataset}'})
        assert not is_error, summed
        assert summed["rows"][0] == {"sessions": first["totals"]["sessions"], "days": 28}
    # Every API call carried the token the fake issued for gcloud's refresh token (authorized_user from the file).
    assert server.oauth.issued[0]["grant_type"] == "refresh_token"
    assert {r.identity for r in server.requests if r.path != "/token"} == {SA_EMAIL}
    text = "\n".join(p.read_text(errors="replace") for p in (project / "acp-data").rglob("*") if p.is_file())
    assert "SECRET" not in text
