"""The core's conformance kit (spec 14.2 checklist) against `analytics-acp serve bigquery` and the fake API,
with both credential variants (service account key; OAuth refresh token).

The service account run is the whole checklist over stdio (a server process per session); the OAuth run
goes over Streamable HTTP to one `serve bigquery --http` process (every session on it, its log and
folders scanned for the credentials too): the variant changes what the credentials do, not the transport.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

kit = pytest.importorskip("analytics_acp.kit")

from bqworld import SQL_WEEK  # noqa: E402

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def _samples(config):
    return [
        ("execute_query", {"query": "SELECT event_name, COUNT(*) n FROM `mi-proyecto.analytics_123.events_*` "
                                    "WHERE _TABLE_SUFFIX BETWEEN '20260901' AND '20260907' GROUP BY 1"}, {"cost_limit_usd": 1}),
        ("validate_query", {"query": SQL_WEEK}, {"cost_limit_usd": 1}),
        ("load_rows", {"table_ref": "kit_numbers", "table": "sandbox.kit_numbers", "create_if_missing": True},
         {"config": {**config, "access_mode": "readAndOnlyAdd"}}),
    ]


@pytest.mark.parametrize("variant", ["service_account", "oauth"])
def test_conformance_bigquery(world, variant):
    from fakebq import QuerySpec

    world.bq.on_query("WHERE _TABLE_SUFFIX BETWEEN '20260901' AND '20260907' GROUP BY 1", QuerySpec(
        total_bytes_processed=3 << 30, location="EU", referenced_tables=["mi-proyecto.analytics_123.events_20260901"],
        schema=[{"name": "event_name", "type": "STRING"}, {"name": "n", "type": "INTEGER"}],
        total_rows=3, row=lambda i: [["page_view", "scroll", "click"][i], [30, 20, 10][i]]))
    credentials = world.service_account() if variant == "service_account" else world.oauth_credentials()
    with ExitStack() as stack:
        if variant == "service_account":
            target = {"command": kit.serve_command("bigquery")}
        else:
            served = stack.enter_context(kit.serve_http([*kit.serve_command("bigquery"), "--http"]))
            target = {"url": served.url, "server_files": served.files}
        results = kit.run_checklist(
            **target,
            credentials=credentials,
            config=world.config,
            resource_id="mi-proyecto.analytics_123",
            sample_calls=_samples(world.config),
            package_dir=PACKAGE_DIR,
        )
    print(kit.format_table(results))
    failed = [r for r in results if r.status == "fail"]
    assert not failed, "ACP conformance failures (14.2):\n" + "\n".join(str(r) for r in failed)
