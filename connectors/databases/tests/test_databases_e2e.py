"""End to end through `analytics-acp serve databases` and the host client (stdio): what a host really receives.

Covers the spec's session (16.7), head/spread sampling over a real query, file delivery past
inline_max_bytes, autocontext with and without resource, typed errors on the wire, insert_rows
through acp/read_table, and that no secret reaches any answer.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("analytics_acp.host")

from analytics_acp.host import AcpClient  # noqa: E402
from analytics_acp_databases.example_db import create_example_db  # noqa: E402

END = dt.date(2026, 9, 28)
SPEC_SQL = (
    "SELECT fecha, SUM(pedidos) AS pedidos, SUM(importe) AS importe FROM ventas "
    "WHERE fecha BETWEEN '2026-07-01' AND '2026-09-28' GROUP BY fecha ORDER BY fecha"
)


def _command() -> list[str]:
    exe = Path(sys.executable).with_name("analytics-acp")
    return [str(exe) if exe.exists() else shutil.which("analytics-acp") or "analytics-acp", "serve", "databases"]


@pytest.fixture
def db(tmp_path) -> str:
    return str(create_example_db(tmp_path / "ventas.sqlite", end=END))


def _run(fn):
    return anyio.run(fn)


def test_spec_session_through_the_server(db):
    async def main():
        async with AcpClient.stdio(_command()) as client:
            cap = client.server_capability
            assert cap and cap["version"] == "1.0"
            tools = {t["name"]: t for t in await client.list_tools()}
            assert {"execute_sql", "validate_sql", "insert_rows", "autocontext", "autocontext_data"} <= set(tools)
            sql_prop = tools["execute_sql"]["inputSchema"]["properties"]["sql"]
            assert sql_prop["x-acp-date"] == "template" and sql_prop["contentMediaType"] == "application/sql"
            assert tools["insert_rows"]["inputSchema"]["properties"]["table_ref"]["x-acp-input"] == "table_ref"
            meta = {"credentials": {"type": "sqlite", "path": db}, "row_limit": 25, "autocontext_delivered": True}
            res = await client.call_tool("execute_sql", {"sql": SPEC_SQL, "resource_id": "ventas"}, meta=meta)
            assert not res.is_error, res.text
            mr = res.model_response
            assert mr["notice"] == "Showing 25 of 90 extracted rows."
            assert mr["total_rows"] == 90 and mr["returned_rows"] == 25 and mr["truncated"] is True
            assert mr["dates"] == ["2026-07-01", "2026-09-28"]
            assert mr["description"].startswith("SQLite database ventas.sqlite (ventas). SQL: SELECT")
            assert res.system_info["title"] == "SQLite · ventas.sqlite"
            headers = {h["name"]: h["type"] for h in res.system_data["headers"]}
            assert headers == {"fecha": "date", "pedidos": "integer", "importe": "number"}
            table = res.tables()[0]
            assert len(table.rows) == 90

    _run(main)


def test_head_and_spread_sampling_over_a_real_query(db):
    async def main():
        async with AcpClient.stdio(_command()) as client:
            base = {"credentials": {"type": "sqlite", "path": db}, "row_limit": 5, "autocontext_delivered": True}
            head = await client.call_tool("execute_sql", {"sql": SPEC_SQL, "resource_id": "ventas"}, meta={**base, "sampling": "head"})
            spread = await client.call_tool("execute_sql", {"sql": SPEC_SQL, "resource_id": "ventas"}, meta={**base, "sampling": "spread"})
            head_days = [r["fecha"] for r in head.model_response["rows"]]
            spread_days = [r["fecha"] for r in spread.model_response["rows"]]
            assert head_days == ["2026-07-01", "2026-07-02", "2026-07-03", "2026-07-04", "2026-07-05"]
            assert len(spread_days) == 5 and spread_days != head_days and spread_days[-1] > "2026-09-01"
            assert len(spread.tables()[0].rows) == 90

    _run(main)


def test_file_delivery_past_inline_max_bytes(db):
    async def main():
        async with AcpClient.stdio(_command()) as client:
            meta = {"credentials": {"type": "sqlite", "path": db}, "row_limit": 3, "inline_max_bytes": 2048, "autocontext_delivered": True}
            res = await client.call_tool("execute_sql", {"sql": "SELECT * FROM ventas ORDER BY fecha, canal", "resource_id": "ventas"}, meta=meta)
            assert not res.is_error, res.text
            assert res.system_data["format"] == "file" and res.system_data["table_uri"].startswith("file://")
            rows = res.tables()[0].rows
            assert len(rows) == 360 and rows[0]["fecha"] == "2026-07-01"

    _run(main)


def test_autocontext_listing_blocks_and_typed_errors(db):
    async def main():
        async with AcpClient.stdio(_command()) as client:
            meta = {"credentials": {"type": "sqlite", "path": db}}
            listing = await client.call_tool("autocontext", {}, meta=meta)
            ids = [r["resource_id"] for r in listing.model_response["resources"]]
            assert ids[:2] == ["ventas", "ventas.ventas"]
            blocks = await client.call_tool("autocontext", {"resource_id": "ventas"}, meta=meta)
            by_id = {b["id"]: b for b in blocks.model_response}
            assert by_id["date_ranges"]["data"] == [{"table": "ventas", "column": "fecha", "min": "2026-07-01", "max": "2026-09-28"}]
            assert "tables" in by_id and "table_schemas" in by_id
            data = await client.call_tool("autocontext_data", {"resource_id": "ventas.ventas"})
            assert "schemas" not in {b["id"] for b in data.model_response}  # applies_to database only
            bad = await client.call_tool("execute_sql", {"sql": "COMMIT; DELETE FROM ventas", "resource_id": "ventas"}, meta=meta)
            assert bad.is_error and bad.error["code"] == -32019 and "Multiple" in bad.error["message"]
            missing = await client.call_tool("execute_sql", {"sql": "SELECT * FROM nope", "resource_id": "ventas"}, meta=meta)
            assert missing.error["name"] == "ACP_INVALID_ARGUMENTS" and "autocontext" in missing.error["message"]

    _run(main)


def test_insert_rows_reads_the_host_table(db):
    served = []

    async def resolver(ref, call_id):
        served.append(ref)
        return {
            "format": "inline", "row_count": 2,
            "headers": [{"name": "fecha", "type": "date"}, {"name": "canal", "type": "string"}, {"name": "pedidos", "type": "integer"}, {"name": "importe", "type": "number"}],
            "table": [{"fecha": "2026-09-29", "canal": "online", "pedidos": 1, "importe": 2.5}, {"fecha": "2026-09-30", "canal": "online", "pedidos": 2, "importe": 3.5}],
        }

    async def main():
        async with AcpClient.stdio(_command(), resolver=resolver) as client:
            meta = {"credentials": {"type": "sqlite", "path": db}}
            denied = await client.call_tool("insert_rows", {"table_ref": "ds_1", "table": "ventas", "resource_id": "ventas"}, meta=meta)
            assert denied.error["code"] == -32019 and served == []
            meta["config"] = {"access_mode": "readAndOnlyAdd"}
            ok = await client.call_tool("insert_rows", {"table_ref": "ds_1", "table": "ventas", "resource_id": "ventas"}, meta=meta)
            assert not ok.is_error, ok.text
            assert ok.model_response["rows_written"] == 2 and served == ["ds_1"]
            smuggled = await client.call_tool(
                "insert_rows", {"table_ref": "ds_1", "table": "ventas", "resource_id": "ventas", "rows": [{"fecha": "2026-10-01"}]}, meta=meta
            )
            assert smuggled.error["name"] == "ACP_INVALID_ARGUMENTS" and served == ["ds_1"]  # rows never come from arguments
            count = await client.call_tool("execute_sql", {"sql": "SELECT count(*) AS n FROM ventas", "resource_id": "ventas"}, meta=meta)
            assert count.model_response["rows"] == [{"n": 362}]

    _run(main)


@pytest.mark.services
def test_secrets_never_reach_the_host(need, tmp_path):
    need(5432, "PostgreSQL")
    secret = "Zz-very-secret-9"
    creds = {"type": "url", "url": f"postgresql://postgres:{secret}@127.0.0.1:5432/test"}

    async def main():
        async with AcpClient.stdio(_command()) as client:
            answers = []
            for args in ({"sql": "SELECT * FROM no_table_here", "resource_id": "test"}, {"sql": "SELECT 1 AS x", "resource_id": "test"}):
                res = await client.call_tool("execute_sql", args, meta={"credentials": creds})
                answers.append(json.dumps(res.raw if hasattr(res, "raw") else res.__dict__, default=str))
            bad = {"type": "url", "url": f"postgresql://postgres:{secret}@127.0.0.1:1/test"}
            res = await client.call_tool("execute_sql", {"sql": "SELECT 1", "resource_id": "test"}, meta={"credentials": bad})
            assert res.is_error
            answers.append(json.dumps(res.__dict__, default=str))
            listing = await client.call_tool("autocontext", {}, meta={"credentials": creds})
            answers.append(json.dumps(listing.__dict__, default=str))
            return answers

    for text in _run(main):
        assert secret not in text
    for root, _dirs, files in os.walk(os.environ["ACP_CACHE_DIR"]) if os.path.isdir(os.environ.get("ACP_CACHE_DIR", "")) else []:
        for name in files:
            assert secret not in Path(root, name).read_text(errors="ignore")
