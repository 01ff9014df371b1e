"""The conformance kit (14.2) against `analytics-acp serve browser`, capturing the test shop."""

from pathlib import Path

import pytest
from analytics_acp.kit import arun_checklist, format_table, serve_command

pytestmark = pytest.mark.browser

FAST = {"settle_ms": 300, "navigation_timeout_ms": 15000, "action_timeout_ms": 5000}
NOT_APPLICABLE = {"security.transport"}  # a stdio server has no remote transport to secure


async def test_conformance_browser(site):
    results = await arun_checklist(
        serve_command("browser"),
        config=FAST,
        credentials={"basic_username": "kit-user", "basic_password": "kit-pw-0123456789"},
        resource_id=site.origin,
        sample_calls=[
            ("capture", {"url": "/", "actions": [{"action": "click", "selector": "#to-product"}]}),
            ("capture", {"url": "/product", "tables": ["cookies", "network", "seo"]}),
            ("screenshot", {"url": site.origin + "/"}),
            ("close_session", {}),
        ],
        package_dir=Path(__file__).resolve().parents[1],
    )
    table = format_table(results)
    print(table)
    failed = [r for r in results if r.status == "fail"]
    assert not failed, table
