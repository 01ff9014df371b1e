"""`analytics-acp serve ga4` end to end with the host client: the 15.1 flow, caches per credential identity (7.4)."""

from __future__ import annotations

import json
import sys

import anyio
from analytics_acp.host import AcpClient
from ga4support import OTHER_EMAIL, SA_EMAIL
from googlefakes import keys

ENV = {"ANALYTICS_ACP_GOOGLE_DEADLINE_S": "3", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "3"}


def _command():
    return [sys.executable, "-m", "analytics_acp", "serve", "ga4"]


def test_spec_15_1_flow_through_the_server(fake, server, sa_credentials, tmp_path):
    async def main():
        async with AcpClient.stdio(_command(), env={**ENV, "ACP_CACHE_DIR": str(tmp_path / "cache")}) as client:
            assert client.server_info["name"] == "ga4" and client.server_info.get("title") == "Google Analytics 4"
            cap = client.server_capability
            assert cap["extraction_tools"][:3] == ["run_report", "run_report_by_regex_cluster", "compare_conversion_models"]
            meta = {"credentials": sa_credentials, "config": {"api_endpoint": server.url}}
            # 2. resources for the setup
            res = await client.call_tool("autocontext", {}, meta=meta)
            mr = res.model_response
            assert mr["notice"] == "3 resources available. Pass resource_id to get its autocontext."
            assert [(r["resource_id"], r["name"], r["group"]) for r in mr["resources"]] == [
                ("123456789", "ikaue.com", "IKAUE"), ("222333444", "Blog", "IKAUE"), ("987654321", "Store", "Client X")]
            # 3. blocks
            res = await client.call_tool("autocontext_data", {}, meta=meta)
            assert [b["id"] for b in res.model_response][:2] == ["property_settings", "key_events"]
            # 4-5. configure, inject two blocks
            await client.configure(default_resource_id="123456789", credentials=sa_credentials, config={"api_endpoint": server.url})
            res = await client.call_tool("autocontext", {"resource_id": "123456789", "request_data": ["key_events", "custom_dimensions"]})
            blocks = {b["id"]: b["data"] for b in res.model_response}
            assert blocks["key_events"][0] == {"event_name": "purchase", "counting_method": "ONCE_PER_EVENT", "metric": "keyEvents:purchase"}
            assert blocks["custom_dimensions"][1] == {"api_name": "customUser:plan", "display_name": "Plan", "scope": "USER"}
            # 6. extraction
            res = await client.call_tool("run_report", {"metrics": ["sessions", "keyEvents:purchase"],
                                                        "dimensions": ["date", "sessionDefaultChannelGroup"]},
                                         meta={"autocontext_delivered": True})
            assert not res.is_error, res.text
            mr, info, sd = res.model_response, res.system_info, res.system_data
            assert mr["notice"] == "Showing 25 of 112 extracted rows." and mr["total_rows"] == 112
            assert mr["totals"]["sessions"] == sum(r["sessions"] for r in res.tables()[0].rows)
            assert [(h["name"], h["type"], h.get("role")) for h in sd["headers"]] == [
                ("date", "date", "dimension"), ("sessionDefaultChannelGroup", "string", "dimension"),
                ("sessions", "integer", "metric"), ("keyEvents:purchase", "number", "metric")]
            assert info["title"] == "GA4 123456789 · 28daysAgo→yesterday" and info["resource_id"] == "123456789"
            assert info["arguments"]["start_date"] == "28daysAgo" and info["arguments"]["end_date"] == "yesterday"
            assert info["source"]["property"] == "properties/123456789" and "property_quota" in info["source"]
            assert mr["extra"]["quota"]["tokensPerDay"]["remaining"] > 0
            assert len(res.tables()[0].rows) == 112
            # A property URL from the GA4 UI is normalized (6.1).
            res = await client.call_tool("run_report", {"metrics": ["sessions"], "resource_id": "properties/222333444"})
            assert res.system_info["resource_id"] == "222333444"

    anyio.run(main)


def test_two_accounts_in_one_server_have_separate_caches(fake, server, sa_credentials, tmp_path):
    fake.properties["987654321"].allowed = {OTHER_EMAIL}
    fake.properties["123456789"].allowed = fake.properties["222333444"].allowed = {SA_EMAIL}
    other = keys.service_account_credentials(server.oauth.token_uri, OTHER_EMAIL, slot=1)
    cfg = {"api_endpoint": server.url}

    async def main():
        async with AcpClient.stdio(_command(), env={**ENV, "ACP_CACHE_DIR": str(tmp_path / "cache")}) as client:
            a = (await client.call_tool("autocontext", {}, meta={"credentials": sa_credentials, "config": cfg})).model_response
            b = (await client.call_tool("autocontext", {}, meta={"credentials": other, "config": cfg})).model_response
            a2 = (await client.call_tool("autocontext", {}, meta={"credentials": sa_credentials, "config": cfg})).model_response
            assert a["total_available"] == 2 and b["total_available"] == 1 and a2 == a  # Store is Client X's only
            blocks = {"request_data": ["key_events"]}
            for creds, rid in ((sa_credentials, "123456789"), (other, "987654321"), (sa_credentials, "123456789")):
                res = await client.call_tool("autocontext", {"resource_id": rid, **blocks}, meta={"credentials": creds, "config": cfg})
                assert not res.is_error, res.text
            # Each identity asked the fake once per listing and block: the repeat calls were served from its own cache.
            summaries = [r.identity for r in server.requests_to("/v1beta/accountSummaries$")]
            assert summaries == [SA_EMAIL, OTHER_EMAIL]
            key_events = [(r.identity, r.path) for r in server.requests_to("/keyEvents$")]
            assert key_events == [(SA_EMAIL, "/v1beta/properties/123456789/keyEvents"),
                                  (OTHER_EMAIL, "/v1beta/properties/987654321/keyEvents")]
            # The second account cannot read the first account's property, even with the first's blocks cached.
            res = await client.call_tool("run_report", {"metrics": ["sessions"], "resource_id": "123456789"},
                                         meta={"credentials": other, "config": cfg})
            assert res.is_error and res.error["name"] == "ACP_RESOURCE_NOT_FOUND"
            assert "Store (987654321, account Client X)" in res.error["message"]

    anyio.run(main)


def test_a_page_failing_mid_stream_fails_the_served_call_and_leaves_no_table(server, sa_credentials, tmp_path):
    from ga4support import build_fake
    from googlefakes.server import google_error

    build_fake(server, page_size=20)
    route = next(r for r in server.routes if r.pattern.pattern == r"/v1beta/properties/(\d+):runReport")
    original, seen = route.handler, []

    def flaky(req):
        seen.append(int(req.body.get("offset", 0)))
        if seen[-1] == 40:  # the third page keeps failing
            return 500, google_error(500, "Internal error encountered.")
        return original(req)

    route.handler = flaky
    tmp = tmp_path / "tmp"

    async def main():
        async with AcpClient.stdio(_command(), env={**ENV, "ANALYTICS_ACP_GOOGLE_DEADLINE_S": "0.5", "ACP_TMP_DIR": str(tmp)}) as client:
            res = await client.call_tool("run_report", {"metrics": ["sessions"], "dimensions": ["date", "sessionDefaultChannelGroup"],
                                                        "resource_id": "123456789"},
                                         meta={"credentials": sa_credentials, "config": {"api_endpoint": server.url},
                                               "inline_max_bytes": 1000})
            assert res.is_error and res.error["name"] == "ACP_UPSTREAM_ERROR", res.text
            assert res.system_data is None

    anyio.run(main)
    assert seen[:3] == [0, 20, 40] and seen[3:] and set(seen[3:]) == {40}  # page 3 retried within the deadline, then failed
    assert not [p for p in tmp.rglob("*") if p.is_file()]  # the partial table file was removed


def test_a_failing_block_fails_alone(fake, server, sa_credentials, tmp_path):
    from googlefakes.server import google_error

    server.fail("GET", r"/v1alpha/properties/(\d+)/calculatedMetrics", *[(403, google_error(403, "The caller does not have permission"))] * 3)

    async def main():
        async with AcpClient.stdio(_command(), env={**ENV, "ACP_CACHE_DIR": str(tmp_path / "cache")}) as client:
            res = await client.call_tool("autocontext", {"resource_id": "123456789",
                                                         "request_data": ["key_events", "calculated_metrics", "sessions_by_device"]},
                                         meta={"credentials": sa_credentials, "config": {"api_endpoint": server.url}})
            assert not res.is_error, res.text
            blocks = {b["id"]: b for b in res.model_response}
            assert blocks["key_events"]["data"][0]["event_name"] == "purchase"
            assert len(blocks["sessions_by_device"]["data"]) == 3
            failed = blocks["calculated_metrics"]
            assert "data" not in failed or not failed["data"]
            assert "ACP_RESOURCE_NOT_FOUND" in json.dumps(failed), failed

    anyio.run(main)
