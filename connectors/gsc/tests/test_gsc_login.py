"""A Search Console call with the credentials file of `analytics-acp login google` (issue 29), served gsc on the fakes.

Chromium (Playwright) clicks Allow on the fake consent page; the file is passed as the bridge would
pass it (its JSON as ``credentials``). The signed-in account sees only its own property.
"""

from __future__ import annotations

import json
import sys

import anyio
from analytics_acp.host import AcpClient
from googlefakes.authserver import OAuthFake
from googlefakes.signin import LoginRun, assert_no_secret, browser_decide, chromium, login_env
from gscfake import PREFIX, USER

SERVE = [sys.executable, "-m", "analytics_acp", "serve", "gsc"]


def test_login_file_answers_a_served_search_analytics(served_env, tmp_path):
    with OAuthFake(email=USER, api_tokens=served_env.server.tokens) as oauth:
        client_id, client_secret = oauth.add_client()
        secrets_file = tmp_path / "client_secret.json"
        secrets_file.write_text(json.dumps(oauth.client_secrets(client_id, client_secret)))
        run = LoginRun(["login", "google", "--no-browser", "--client-secrets", str(secrets_file), "--for", "gsc",
                        "--timeout", "120"], login_env(tmp_path / "cfg"))
        with chromium() as browser:
            browser_decide(browser, run.wait_for_url(oauth.url + "/o/auth"), "Allow")
        assert run.finish() == 0, run.stderr
        credentials = json.loads((tmp_path / "cfg" / "google" / f"{USER}.json").read_text())
        assert credentials["scopes"] == ["https://www.googleapis.com/auth/webmasters.readonly"]

        async def main():
            env = {"ACP_CACHE_DIR": str(tmp_path / "cache"), "ACP_TMP_DIR": str(tmp_path / "tmp"),
                   "ANALYTICS_ACP_GOOGLE_DEADLINE_S": "3", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "3"}
            async with AcpClient.stdio(SERVE, env=env) as client:
                meta = {"credentials": credentials, "config": served_env.config}
                sites = await client.call_tool("autocontext", {}, meta=meta)
                assert not sites.is_error, sites.text
                result = await client.call_tool("search_analytics", {"resource_id": PREFIX, "dimensions": ["query"]}, meta=meta)
                assert not result.is_error, result.text
                return sites, result

        sites, result = anyio.run(main)
        assert [r["resource_id"] for r in sites.model_response["resources"]] == [PREFIX, "https://shop.example.org/"]
        assert result.model_response["total_rows"] > 0
        assert {r.identity for r in served_env.queries(PREFIX)} == {USER}
        assert_no_secret(run.stdout + run.stderr + sites.text + result.text, oauth.secrets_seen())
