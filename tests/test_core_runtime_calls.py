"""Tool calls end to end: resources (6), autocontext (7), results (8), cost (9), errors (12)."""

import datetime as dt
import re

import pytest
from core_helpers import CREDS, mini_in_process

pytestmark = pytest.mark.asyncio
M = {"credentials": CREDS}
SYSTEM_INFO_KEYS = {"acp", "acp_version", "tool", "kind", "resource_id", "arguments", "row_limit", "cost_limit_usd",
                    "cost_estimate_usd", "cost_actual_usd", "duration_ms", "fetched_at", "autocontext_attached",
                    "messages", "warnings"}


async def test_extraction_three_parts_8():
    async with mini_in_process() as c:
        res = await c.call_tool("extract", {"n": 12, "resource_id": "accounts/acc1"}, meta={**M, "autocontext_delivered": True})
        mr = res.model_response
        assert mr["notice"] == "Showing 5 of 12 extracted rows."
        assert (mr["total_rows"], mr["returned_rows"], mr["truncated"]) == (12, 5, True)
        assert mr["columns"] == ["day", "n", "ratio"] and len(mr["rows"]) == 5
        assert mr["dates"] == [dt.date.today().isoformat()]  # 8.2: no window -> today's local date
        assert mr["totals"] == {"n": 66}
        acp = res.acp
        assert acp["version"] == "1.0" and acp["kind"] == "extraction"
        si = res.system_info
        assert SYSTEM_INFO_KEYS <= set(si)
        assert si["resource_id"] == "acc1"  # normalized by the hook (6.1)
        assert si["messages"] == ["Showing 5 of 12 extracted rows."]
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", si["fetched_at"])
        assert si["title"] == "Mini · acc1"
        sd = res.system_data
        assert sd["format"] == "inline" and sd["row_count"] == 12
        assert sd["headers"][0] == {"name": "day", "type": "date", "role": "dimension"}
        assert {h["name"]: h["type"] for h in sd["headers"]}["ratio"] == "number"  # 8.6 integer+number
        assert len(res.tables()[0].rows) == 12


async def test_window_dates_and_spread_sampling():
    async with mini_in_process() as c:
        res = await c.call_tool("extract", {"n": 12, "resource_id": "acc1", "start_date": "20260101", "end_date": "2026-01-31"},
                                meta={**M, "sampling": "spread", "row_limit": 3, "autocontext_delivered": True})
        mr = res.model_response
        assert mr["dates"] == ["2026-01-01", "2026-01-31"]
        assert [r["n"] for r in mr["rows"]][0] == 0 and mr["rows"][-1]["n"] == 11  # spread keeps first and last
        res = await c.call_tool("extract", {"n": 3, "resource_id": "acc1"}, meta={**M, "row_limit": 0})
        assert res.model_response["rows"] == [] and res.model_response["notice"] == "Showing 0 of 3 extracted rows."


async def test_notices_no_rows_and_all_rows():
    async with mini_in_process() as c:
        res = await c.call_tool("extract", {"n": 0, "resource_id": "acc1"}, meta=M)
        assert res.model_response["notice"] == "The query returned no rows."
        res = await c.call_tool("extract", {"n": 4, "resource_id": "acc1"}, meta=M)
        assert res.model_response["notice"] == "Showing all 4 extracted rows."


async def test_resource_required_and_default_6():
    async with mini_in_process() as c:
        res = await c.call_tool("extract", {"n": 1}, meta=M)
        assert res.is_error and res.error["code"] == -32013
        assert res.error["message"].startswith("Missing resource_id (<account>[.<table>]).")
        assert res.model_response == {"error": res.error}  # 12.1 content shape
        assert res.acp["kind"] == "error" and res.system_info["kind"] == "error"
        res = await c.call_tool("extract", {"n": 1}, meta={**M, "default_resource_id": "acc9"})
        assert res.system_info["resource_id"] == "acc9"


async def test_null_for_any_argument_means_left_out_the_core_s_own_too():
    # Clients that send every optional parameter, null when unset, must pass on their first call (autocontext).
    async with mini_in_process() as c:
        meta = {**M, "default_resource_id": "acc9"}
        res = await c.call_tool("extract", {"n": 2, "resource_id": None, "start_date": None}, meta=meta)
        assert not res.is_error, res.error
        assert res.system_info["resource_id"] == "acc9" and "resource_id" not in res.system_info["arguments"]
        res = await c.call_tool("multi", {"resource_id": "acc1", "tables": None}, meta=M)
        assert not res.is_error and res.system_info["tables_selected"] == ["events", "pages"]  # the defaults
        res = await c.call_tool("autocontext", {"resource_id": None, "query": None, "request_data": None}, meta=M)
        assert not res.is_error and res.model_response["resources"]
        res = await c.call_tool("extract", {"n": 1, "row_limit": None, "resource_id": "acc1"}, meta=M)
        assert not res.is_error  # null sets nothing: not a limit passed as an argument (5.4)


async def test_unknown_tool_and_bad_arguments_are_typed():
    async with mini_in_process() as c:
        res = await c.call_tool("nope", {}, meta=M)
        assert res.error["name"] == "ACP_INVALID_ARGUMENTS" and "extract" in res.error["message"]
        res = await c.call_tool("extract", {"n": "many", "resource_id": "acc1"}, meta=M)
        assert res.error["name"] == "ACP_INVALID_ARGUMENTS" and "n" in res.error["message"]
        res = await c.call_tool("extract", {"bogus": 1, "resource_id": "acc1"}, meta=M)
        assert res.error["name"] == "ACP_INVALID_ARGUMENTS" and "bogus" in res.error["message"]
        res = await c.call_tool("extract", {"n": 1, "start_date": "soon", "resource_id": "acc1"}, meta=M)
        assert res.error["name"] == "ACP_INVALID_ARGUMENTS" and "YYYY-MM-DD" in res.error["message"]


async def test_untyped_exception_is_upstream_error_without_secret_12_1():
    async with mini_in_process() as c:
        res = await c.call_tool("boom", {"resource_id": "acc1"}, meta=M)
        assert res.error["name"] == "ACP_UPSTREAM_ERROR" and res.error["code"] == -32018
        assert CREDS["api_key"] not in res.text and CREDS["api_key"] not in str(res.raw)
        assert "***" in res.error["message"]  # the connector's message quoted the key; the core masked it (10.1)


async def test_cost_preflight_9_2():
    async with mini_in_process() as c:
        res = await c.call_tool("paid", {"n": 150, "resource_id": "acc1"}, meta=M)
        assert res.error["name"] == "ACP_COST_LIMIT_EXCEEDED" and res.error["code"] == -32010
        assert res.error["message"] == (
            "The query would cost about $1.50 and the limit is $1.00. Narrow the query (fewer rows) "
            "or ask the user to raise the limit.")
        assert res.error["data"] == {"estimate_usd": 1.5, "limit_usd": 1.0, "rows": 150}
        assert res.system_info["cost_estimate_usd"] == 1.5
        ok = await c.call_tool("paid", {"n": 50, "resource_id": "acc1"}, meta=M)
        assert not ok.is_error and ok.system_info["cost_estimate_usd"] == 0.5
        assert ok.system_info["cost_actual_usd"] == 0.5
        zero = await c.call_tool("paid", {"n": 1, "resource_id": "acc1"}, meta={**M, "cost_limit_usd": 0})
        assert zero.error["name"] == "ACP_COST_LIMIT_EXCEEDED"  # 9.2: limit 0 refuses any positive estimate
        assert zero.error["message"].startswith("The query would cost about $0.01 and the limit is $0.00.")
        close = await c.call_tool("paid", {"n": 1, "resource_id": "acc1"}, meta={**M, "cost_limit_usd": 0.009})
        # Cents alone would print "$0.01 and the limit is $0.01": the amounts keep the decimals that tell them apart.
        assert close.error["message"].startswith("The query would cost about $0.010 and the limit is $0.009.")


async def test_autocontext_resources_6_3():
    async with mini_in_process() as c:
        res = await c.call_tool("autocontext", {}, meta={**M, "default_resource_id": "acc7"})
        mr = res.model_response
        assert res.acp["kind"] == "autocontext" and res.system_info["resource_id"] is None
        assert mr["total_available"] == 40 and len(mr["resources"]) == 25
        assert mr["resources"][0]["resource_id"] == "acc7"
        assert mr["notice"].startswith("Showing 25 of 40 available resources")
        q = await c.call_tool("autocontext", {"query": "Account 3"}, meta=M)
        ids = [r["resource_id"] for r in q.model_response["resources"]]
        assert "acc3" in ids and "acc39" in ids and "acc1" not in ids
        missing = await c.call_tool("autocontext", {}, meta={})
        assert missing.error["name"] == "ACP_CREDENTIALS_MISSING"


async def test_autocontext_blocks_7_3():
    async with mini_in_process() as c:
        res = await c.call_tool("autocontext", {"resource_id": "acc1"}, meta=M)
        blocks = {b["id"]: b for b in res.model_response}
        assert set(blocks) == {"fields", "broken"}  # table_stats applies to tables only
        assert blocks["fields"]["data"][0]["name"] == "day"
        assert "error" in blocks["broken"] and "data" not in blocks["broken"]
        assert res.system_info["warnings"]  # 7.3: the warning counts failed blocks
        res = await c.call_tool("autocontext", {"resource_id": "acc1", "request_data": ["table_stats", "fields"]}, meta=M)
        assert [b["id"] for b in res.model_response] == ["table_stats", "fields"]
        assert "table" in res.model_response[0]["error"]
        bad = await c.call_tool("autocontext", {"resource_id": "acc1", "request_data": ["zzz"]}, meta=M)
        assert bad.error["name"] == "ACP_UNKNOWN_BLOCK" and bad.error["code"] == -32015
        assert "fields" in bad.error["message"] and "table_stats" in bad.error["message"]
        data = await c.call_tool("autocontext_data", {"resource_id": "acc1.sales"})
        assert [d["id"] for d in data.model_response] == ["fields", "broken", "table_stats"]
        assert data.acp["kind"] == "autocontext_data"


async def test_on_first_call_table_7_5():
    async with mini_in_process() as c:
        async def attached(meta):
            r = await c.call_tool("extract", {"n": 2, "resource_id": "acc1"}, meta={**M, **meta})
            assert r.system_info["autocontext_attached"] == ("autocontext" in r.model_response)
            return r.system_info["autocontext_attached"]

        assert await attached({"autocontext_delivered": True, "session_id": "s"}) is False
        assert await attached({"autocontext_delivered": False}) is True
        assert await attached({"autocontext_delivered": False}) is True  # every call without session
        assert await attached({}) is False  # no session: cannot know
        assert await attached({"session_id": "s1"}) is True
        assert await attached({"session_id": "s1"}) is False
        assert await attached({"session_id": "s1", "autocontext_delivered": False}) is False
        assert await attached({"session_id": "s2", "autocontext_blocks": ["fields"]}) is True
        await c.call_tool("autocontext", {"resource_id": "acc2"}, meta={**M, "session_id": "s3"})
        r = await c.call_tool("extract", {"n": 1, "resource_id": "acc2"}, meta={**M, "session_id": "s3"})
        assert r.system_info["autocontext_attached"] is False  # suggest: the model already fetched it
