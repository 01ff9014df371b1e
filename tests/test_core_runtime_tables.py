"""Multitable (8.2.1, 8.7), host tables (8.8), file delivery (8.5), secrets (10)."""

import json

import pytest
from analytics_acp.errors import TableNotFound, TableTruncated
from core_helpers import CREDS, mini_client

pytestmark = pytest.mark.asyncio
M = {"credentials": CREDS, "autocontext_delivered": True}


async def test_multitable_selection_and_views():
    async with mini_client() as c:
        res = await c.call_tool("multi", {"resource_id": "acc1"}, meta=M)
        mr = res.model_response
        # defaults.tables = ["events"], "pages" is required, "notes" is outside the catalog (always delivered)
        assert set(mr["tables"]) == {"events", "pages", "notes"}
        assert mr["not_extracted"] == {"extra": 1}
        assert mr["manifest"] == {"pages": [{"page_index": 0, "url": "/a"}]}
        ev = mr["tables"]["events"]
        assert ev["fields"] == ["en", "payload", "empty"] and ev["fields_total"] == 5  # field_limit 3
        assert len(ev["rows"]) == 10  # 8.2.1: 10 rows per table when several are delivered
        assert ev["rows"][0]["payload"] == "x" * 79 + "…"
        assert "empty" not in ev["rows"][0]  # "" cells omitted
        sd = res.system_data
        assert sd["format"] == "tables" and {t["name"] for t in sd["tables"]} == {"events", "pages", "notes"}
        assert sd["row_count"] == 63
        assert res.system_info["tables_selected"] == ["events", "pages"]
        assert res.system_info["arguments"]["tables"] == ["events", "pages"]
        full = {t.name: t for t in res.tables()}
        assert len(full["events"].rows) == 60 and full["events"].rows[0]["payload"] == "x" * 200
        res = await c.call_tool("multi", {"resource_id": "acc1", "tables": []}, meta=M)
        assert set(res.model_response["tables"]) == {"pages", "notes"}
        bad = await c.call_tool("multi", {"resource_id": "acc1", "tables": ["nope"]}, meta=M)
        assert bad.error["name"] == "ACP_INVALID_ARGUMENTS" and "events" in bad.error["message"]
        meta_sel = await c.call_tool("multi", {"resource_id": "acc1"}, meta={**M, "tables": ["extra"]})
        assert set(meta_sel.system_info["tables_selected"]) == {"extra", "pages"}  # _meta over defaults


async def test_multitable_fallback_without_multi_table_8_2_1():
    cap = {"version": "1.0", "stores_system_data": True, "multi_table": False}
    async with mini_client(capability=cap) as c:
        res = await c.call_tool("multi", {"resource_id": "acc1"}, meta=M)
        assert "tables" not in res.model_response and res.model_response["total_rows"] == 60
        assert res.system_data["format"] in ("inline", "file")


async def test_read_table_inline_file_and_errors_8_8(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"v": i} for i in range(100)]))
    calls = []

    async def resolver(ref, call_id):
        calls.append((ref, call_id))
        if ref == "inline":
            return {"format": "inline", "row_count": 2, "headers": [{"name": "v", "type": "integer"}],
                    "table": [{"v": 1}, {"v": 2.5}]}
        if ref == "file":
            return {"format": "file", "row_count": 100, "headers": [], "table_uri": path.as_uri()}
        if ref == "report":
            raise TableTruncated("Report r1 keeps only a sample; pass its source dataset ds_1.")
        raise TableNotFound(f"No dataset {ref}.")

    async with mini_client(resolver=resolver) as c:
        r = await c.call_tool("sum_table", {"table_ref": "inline", "column": "v"}, meta={"call_id": "c-1"})
        assert r.model_response == {"rows": 2, "sum": 3.5, "columns": ["v"]}
        assert calls[-1] == ("inline", "c-1")
        r = await c.call_tool("sum_table", {"table_ref": "file", "column": "v"}, meta={})
        assert r.model_response["sum"] == sum(range(100))
        r = await c.call_tool("sum_table", {"table_ref": "report", "column": "v"}, meta={})
        assert r.error["code"] == -32022 and "ds_1" in r.error["message"]
        r = await c.call_tool("sum_table", {"table_ref": "zzz", "column": "v"}, meta={})
        assert r.error == {"code": -32021, "name": "ACP_TABLE_NOT_FOUND", "message": "No dataset zzz."}
    async with mini_client(capability={"version": "1.0", "stores_system_data": True}) as c:
        r = await c.call_tool("sum_table", {"table_ref": "inline", "column": "v"}, meta={})
        assert r.error["code"] == -32020  # no host_tables: the server never sends acp/read_table


async def test_file_delivery_past_inline_max_bytes_8_5(tmp_path, monkeypatch):
    monkeypatch.setenv("ACP_TMP_DIR", str(tmp_path / "t"))
    async with mini_client() as c:
        res = await c.call_tool("extract", {"n": 500, "resource_id": "acc1"}, meta={**M, "inline_max_bytes": 1000})
        sd = res.system_data
        assert sd["format"] == "file" and sd["table_uri"].startswith("file://" + str(tmp_path / "t"))
        rows = res.tables()[0].rows
        assert len(rows) == 500 and rows[499]["n"] == 499
        assert not list((tmp_path / "t").glob("*.json"))  # the host read and deleted it


async def test_secrets_never_echoed_10():
    async with mini_client() as c:
        await c.configure(credentials=CREDS)
        outputs = []
        for name, args in (("extract", {"n": 3, "resource_id": "acc1"}), ("boom", {"resource_id": "acc1"}),
                           ("autocontext", {}), ("autocontext", {"resource_id": "acc1"}), ("paid", {"n": 999, "resource_id": "a"})):
            outputs.append(json.dumps((await c.call_tool(name, args, meta={"session_id": "x"})).raw))
        outputs.append(json.dumps(await c.configure(row_limit=3)))
        assert all(CREDS["api_key"] not in o for o in outputs)
