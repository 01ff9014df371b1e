"""The core's conformance kit (spec 14.2) against `analytics-acp serve gsc` on the fake Search Console,
with both credential variants: a service account key and an OAuth refresh token.

The service account run is the whole checklist over stdio (a server process per session); the OAuth run
goes over Streamable HTTP to one `serve gsc --http` process (every session on it, its log and folders
scanned for the credentials too): the variant changes what the credentials do, not the transport.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from gscfake import DOMAIN, PREFIX

kit = pytest.importorskip("analytics_acp.kit")

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def _base(site: str) -> str:
    return "https://example.com" if site == DOMAIN else "https://www.example.com"


def _host_tables(site: str) -> dict:
    """A host dataset of pages (as search_analytics stores them) for inspect_urls' table_ref (8.8)."""
    rows = [{"page": f"{_base(site)}/blog/p{i}", "clicks": 10 - i} for i in range(4)]
    return {"kit_urls": {"format": "inline", "row_count": len(rows), "table": rows,
                         "headers": [{"name": "page", "type": "string"}, {"name": "clicks", "type": "integer"}]}}


def _samples(site: str) -> list:
    return [
        ("search_analytics", {"dimensions": ["query"], "filters": [{"dimension": "page", "operator": "contains", "expression": "/blog/"}]}),
        ("search_analytics", {"dimensions": ["date"], "data_state": "all", "start_date": "7daysAgo", "end_date": "today"}),
        ("compare_periods", {"dimensions": ["page"], "start_date": "14daysAgo", "end_date": "8daysAgo"}),
        ("inspect_urls", {"urls": [f"{_base(site)}/blog/p0"]}),
        ("inspect_urls", {"table_ref": "kit_urls"}),
        ("sitemaps", {}),
    ]


@pytest.mark.parametrize("variant", ["service_account", "oauth"])
def test_conformance_gsc(served_env, variant):
    credentials = served_env.service_account() if variant == "service_account" else served_env.oauth_user()
    site = DOMAIN if variant == "service_account" else PREFIX
    with ExitStack() as stack:
        if variant == "service_account":
            target = {"command": kit.serve_command("gsc")}
        else:
            served = stack.enter_context(kit.serve_http([*kit.serve_command("gsc"), "--http"]))
            target = {"url": served.url, "server_files": served.files}
        results = kit.run_checklist(
            **target,
            credentials=credentials,
            config=served_env.config,
            resource_id=site,
            sample_calls=_samples(site),
            host_tables=_host_tables(site),
            package_dir=PACKAGE_DIR,
        )
    print(kit.format_table(results))
    failed = [r for r in results if r.status == "fail"]
    assert not failed, "ACP conformance failures (14.2):\n" + "\n".join(str(r) for r in failed)
