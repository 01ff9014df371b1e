"""Through the bridge, a source without default_resource_id uses the database its credentials name
(spec 6, issue 15.5): no ACP_RESOURCE_REQUIRED for a single SQLite file."""

from __future__ import annotations

import datetime as dt

import pytest

example_db = pytest.importorskip("analytics_acp_databases.example_db")


async def test_single_file_source_needs_no_resource_id(tmp_path, write_sources, bridge):
    project = tmp_path / "p"
    example_db.create_example_db(project / "data" / "ventas.sqlite", days=10, end=dt.date(2026, 9, 28))
    write_sources(project / "sources.json", {"sources": [
        {"id": "ventas", "acp": "databases", "credentials": {"type": "sqlite", "path": {"projectPath": "data/ventas.sqlite"}}},
    ]})
    async with bridge(project) as client:
        is_error, response, _ = await client.call_json("ventas__execute_sql", {"sql": "SELECT count(*) AS n FROM ventas"})
        assert not is_error, response
        assert response["rows"] == [{"n": 40}]  # 10 days x 4 channels
        is_error, listing, _ = await client.call_json("ventas__autocontext", {})
        assert not is_error and "The default resource is ventas." in listing["notice"]
