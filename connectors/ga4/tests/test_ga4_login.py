"""A GA4 source signed in with `analytics-acp login google` (issue 29), served through the ACP Bridge on the fakes.

The user's browser is Debian's Chromium (Playwright) on the fake consent page; the command updates the
source in sources.json; the bridge reads the credentials file and ga4 answers a real run_report. An
hour later (the stored access token expired) the next session refreshes it in memory from the
refresh token at the file's token_uri, and the file stays as written.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from googlefakes.authserver import OAuthFake
from googlefakes.signin import LoginRun, assert_no_secret, browser_decide, chromium, login_env

pytest.importorskip("analytics_acp_bridge")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

EMAIL = "analyst@example.com"


async def _run_report(project: Path, env: dict[str, str]) -> dict:
    params = StdioServerParameters(command=sys.executable, args=["-m", "analytics_acp_bridge", "--project", str(project)],
                                   env={**os.environ, **env}, cwd=str(project))
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("analytics__run_report", {"metrics": ["sessions"], "dimensions": ["date"]})
    body = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert not body.get("isError"), body
    return json.loads(next(c["text"] for c in body["content"] if c["type"] == "text"))


def test_login_then_bridge_run_report_and_an_expired_token_is_refreshed_in_memory(fake, server, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    sources = project / "sources.json"
    sources.write_text(json.dumps({"sources": [{"id": "analytics", "acp": "ga4", "default_resource_id": "123456789",
                                                "config": {"api_endpoint": server.url}}]}))
    fake.properties["123456789"].allowed = {EMAIL}  # only the signed-in account may read it
    with OAuthFake(email=EMAIL, api_tokens=server.tokens) as oauth:
        client_id, client_secret = oauth.add_client()
        secrets_file = tmp_path / "client_secret.json"
        secrets_file.write_text(json.dumps(oauth.client_secrets(client_id, client_secret)))
        run = LoginRun(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--for", "ga4",
                        "--sources", str(sources), "--source", "analytics", "--timeout", "120"], login_env(tmp_path / "cfg"))
        with chromium() as browser:
            browser_decide(browser, run.wait_for_url(oauth.url + "/o/auth"), "Allow")
        assert run.finish() == 0, run.stderr
        assert oauth.authorizations[0]["scope"].split()[0] == "https://www.googleapis.com/auth/analytics.readonly"
        path = Path(json.loads(sources.read_text())["sources"][0]["credentials"]["file"])
        env = {"ACP_CACHE_DIR": str(tmp_path / "cache"), "ANALYTICS_ACP_GOOGLE_DEADLINE_S": "3", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "3"}

        first = anyio.run(_run_report, project, env)
        assert first["total_rows"] == 28
        # The stored access token was still valid: used as is, no refresh.
        assert [r["grant_type"] for r in oauth.token_requests] == ["authorization_code"]
        assert {r.identity for r in server.requests_to("runReport")} == {EMAIL}

        # An hour later: the stored access token has expired.
        stale = {**json.loads(path.read_text()), "expiry_date": "2020-01-01T00:00:00Z"}
        path.write_text(json.dumps(stale))
        before = path.read_bytes()
        calls = len(server.requests_to("runReport"))
        second = anyio.run(_run_report, project, {**env, "ACP_CACHE_DIR": str(tmp_path / "cache2")})
        assert second["total_rows"] == 28
        grants = [r["grant_type"] for r in oauth.token_requests]  # one refresh per credentials object the session built
        assert grants[0] == "authorization_code" and len(grants) >= 2 and set(grants[1:]) == {"refresh_token"}
        assert {r.identity for r in server.requests_to("runReport")[calls:]} == {EMAIL}
        assert path.read_bytes() == before  # refreshed in memory only
        assert_no_secret(run.stdout + run.stderr + json.dumps([first, second]), oauth.secrets_seen())
