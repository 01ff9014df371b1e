"""The core's conformance kit (spec 14.2) against `analytics-acp serve ga4` and the fake, with both credential variants.

The service account run is the whole checklist over stdio (a server process per session); the OAuth run
goes over Streamable HTTP to one `serve ga4 --http` process (every session on it, its log and folders
scanned for the credentials too): the variant changes what the credentials do, not the transport.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from googlefakes import keys

kit = pytest.importorskip("analytics_acp.kit")

PACKAGE_DIR = Path(__file__).resolve().parents[1]
SAMPLES = [
    ("run_report", {"metrics": ["sessions", "totalUsers"], "dimensions": ["date", "sessionDefaultChannelGroup"]}),
    ("run_report_by_regex_cluster", {"dimension": "pagePath", "clusters": [{"name": "Blog", "regex": "^/blog/"}], "metrics": ["sessions"]}),
    ("compare_conversion_models", {}),
    ("run_realtime_report", {"metrics": ["activeUsers"], "dimensions": ["country"]}),
    ("run_funnel_report", {"steps": [{"name": "Visit", "event_name": "session_start"}, {"name": "Buy", "event_name": "purchase"}]}),
    ("check_compatibility", {"metrics": ["sessions"], "dimensions": ["country"]}),
    ("get_metadata", {"query": "sessions"}),
]


def _run(server, credentials, *, http: bool = False):
    env = {"ANALYTICS_ACP_GOOGLE_DEADLINE_S": "3", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "3",
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    options = dict(credentials=credentials, config={"api_endpoint": server.url}, resource_id="123456789",
                   sample_calls=SAMPLES, package_dir=PACKAGE_DIR)
    if http:
        with kit.serve_http([*kit.serve_command("ga4"), "--http"], env=env) as served:
            results = kit.run_checklist(url=served.url, server_files=served.files, **options)
    else:
        results = kit.run_checklist(kit.serve_command("ga4"), env=env, **options)
    print(kit.format_table(results))
    failed = [r for r in results if r.status == "fail"]
    assert not failed, "ACP conformance failures (14.2):\n" + "\n".join(str(r) for r in failed)


def test_conformance_ga4_service_account(fake, server, sa_credentials):
    _run(server, sa_credentials)


def test_conformance_ga4_oauth_refresh_token(fake, server):
    server.oauth.register_refresh_token("1//kit-refresh-SECRET", "kit-client", "kit-client-SECRET", subject="person@example.com")
    _run(server, keys.oauth(access_token=None, refresh_token="1//kit-refresh-SECRET", client_id="kit-client",
                            client_secret="kit-client-SECRET", token_uri=server.oauth.token_uri), http=True)
