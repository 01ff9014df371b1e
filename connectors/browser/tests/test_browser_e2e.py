"""The browser connector end to end: `analytics-acp serve browser` over stdio, driven by the
ACP host client. Catalog selection precedence (8.7, 5.3), not_extracted and notices,
model_view limits (8.2.1), the multi_table=false fallback, resource_id normalization,
errors, and secrets never echoed."""

import asyncio
import sys
import uuid
from pathlib import Path

import pytest
import pytest_asyncio
from analytics_acp.host import AcpClient

# One event loop for the module, so the shared server's client (below) lives across its tests.
pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SERVE = [sys.executable, "-m", "analytics_acp", "serve", "browser"]
FAST = {"settle_ms": 300, "navigation_timeout_ms": 15000, "action_timeout_ms": 5000}
ALL = ["ga4_hits", "datalayer", "cookies", "storage", "network", "tags", "seo", "performance", "console"]
NOT_EXTRACTED_TAIL = "Ask for them with tables only if the analysis needs them."


def meta(**extra):
    return {"config": FAST, "conversation_id": "e2e-" + uuid.uuid4().hex[:8], **extra}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(tmp_path_factory):
    """One `serve browser` process (and so one Chromium) for the tests that only call tools, each in its
    own conversation: a server start plus a browser launch cost about 3 CPU-s. The tests that change the
    connection (acp/configure, another host capability) open their own."""
    base = tmp_path_factory.mktemp("e2e-server")
    # Its own cache and tmp folders: the per-test ones of the root conftest are not set up yet here.
    env = {"ACP_CACHE_DIR": str(base / "cache"), "ACP_TMP_DIR": str(base / "tmp")}
    ready: asyncio.Future[AcpClient] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def own() -> None:
        # The client's task group is entered and left in this one task, as anyio requires.
        try:
            async with AcpClient.stdio(SERVE, env=env) as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    owner = asyncio.create_task(own())
    yield await asyncio.wait_for(ready, 120)
    stop.set()
    await asyncio.wait_for(owner, 60)


async def test_capability_catalog_and_schemas(client):
    cap = client.server_capability
    assert cap["defaults"] == {"row_limit": 25, "cost_limit_usd": 0, "field_limit": 8, "tables": ["ga4_hits", "datalayer"]}
    catalog = cap["table_catalog"]
    assert [e["name"] for e in catalog] == ALL
    assert {e["name"]: e["group"] for e in catalog}["cookies"] == "Storage"
    assert not any(e.get("required") for e in catalog)  # no table is forced on the user
    tools = {t["name"]: t for t in await client.list_tools()}
    props = tools["capture"]["inputSchema"]["properties"]
    assert props["tables"]["items"]["enum"] == ALL and "resource_id" in props
    assert "resource_id" not in tools["screenshot"]["inputSchema"].get("properties", {})
    assert "tables" not in tools["screenshot"]["inputSchema"].get("properties", {})


async def test_default_selection_not_extracted_and_notice(site, client):
    res = await client.call_tool("capture", {"resource_id": site.origin, "url": "/"}, meta=meta())
    assert not res.is_error, res.text
    mr = res.model_response
    assert list(mr["tables"]) == ["ga4_hits", "datalayer"]
    assert mr["tables"]["ga4_hits"]["total_rows"] == 3 and mr["tables"]["datalayer"]["total_rows"] == 4
    ne = mr["not_extracted"]
    assert set(ne) == {"cookies", "storage", "network", "tags", "seo", "performance", "console"}
    assert ne["seo"] == 1 and ne["performance"] == 1 and ne["console"] == 2 and ne["cookies"] == 3
    assert mr["notice"].startswith("Extracted 2 table(s) with data: ga4_hits (3), datalayer (4).")
    listed = ", ".join(f"{k} ({v})" for k, v in ne.items())
    assert f"Not extracted because they were not requested: {listed}. {NOT_EXTRACTED_TAIL}" in mr["notice"]
    assert mr["manifest"]["pages"][0]["title"] == "Test Shop"
    info = res.system_info
    assert info["tables_selected"] == ["ga4_hits", "datalayer"] and info["arguments"]["tables"] == ["ga4_hits", "datalayer"]
    assert info["resource_id"] == site.origin and info["field_limit"] == 8
    sd = res.system_data
    assert sd["format"] == "tables" and [t["name"] for t in sd["tables"]] == ["ga4_hits", "datalayer"]
    full = {t.name: t for t in res.tables()}
    assert full["ga4_hits"].rows[1]["items"][0] == {"item_id": "SKU_1", "item_name": "T-shirt", "price": 9.99,
                                                    "quantity": 2, "color": "red"}
    # model_view (8.2.1): the first field_limit fields of the view, for the model and in system_data
    assert mr["tables"]["ga4_hits"]["fields"] == ["en", "page_index", "tid", "dl", "dt", "gcs", "ep.page_type", "epn.value"]
    assert mr["tables"]["datalayer"]["fields"] == ["page_index", "event", "kind", "keys", "payload", "initial",
                                                   "push_index", "page_url"]
    assert sd["tables"][0]["model_view"]["fields"][:3] == ["en", "page_index", "tid"]
    headers = {h["name"]: h["type"] for h in sd["tables"][0]["headers"]}
    assert headers["epn.value"] == "number" and headers["items"] == "json" and headers["sct"] == "integer"


async def test_selection_precedence(site):
    """8.7: arguments.tables > _meta.acp.tables > acp/configure > defaults.tables; [] is valid."""
    async with AcpClient.stdio(SERVE) as client:
        await client.configure(tables=["cookies"], config=FAST)
        args = {"resource_id": site.origin, "url": "/"}
        r1 = await client.call_tool("capture", args, meta={"conversation_id": "p1"})
        assert list(r1.model_response["tables"]) == ["cookies"]
        r2 = await client.call_tool("capture", args, meta={"conversation_id": "p2", "tables": ["seo", "tags"]})
        assert set(r2.model_response["tables"]) == {"seo", "tags"}
        r3 = await client.call_tool("capture", {**args, "tables": ["console"]}, meta={"conversation_id": "p3", "tables": ["seo"]})
        assert list(r3.model_response["tables"]) == ["console"]
        assert r3.system_info["tables_selected"] == ["console"]
        r4 = await client.call_tool("capture", {**args, "tables": []}, meta={"conversation_id": "p4"})
        mr = r4.model_response
        assert mr["tables"] == {} and mr["manifest"]["pages"][0]["status"] == 200  # manifest always delivered
        assert mr["notice"].startswith("No tables were requested, so no data was extracted. Not extracted because")
        assert {"ga4_hits", "datalayer", "cookies", "seo", "network"} <= set(mr["not_extracted"])
        assert r4.system_data["tables"] == []
        bad = await client.call_tool("capture", {**args, "tables": ["ga4_hits", "screens"]}, meta={"conversation_id": "p5"})
        assert bad.is_error and bad.error["name"] == "ACP_INVALID_ARGUMENTS"
        assert "ga4_hits" in bad.error["message"] and "console" in bad.error["message"]


async def test_model_view_limits(site, client):
    """8.2.1: field_limit fields from model_view, 50 rows for one table / 10 for several, values cut at 80 chars."""
    args = {"resource_id": site.origin, "url": "/many?n=60"}
    one = await client.call_tool("capture", {**args, "tables": ["datalayer"]}, meta=meta(field_limit=5))
    t = one.model_response["tables"]["datalayer"]
    assert t["total_rows"] == 60 and t["returned_rows"] == 50 and len(t["rows"]) == 50
    assert t["fields"] == ["page_index", "event", "kind", "keys", "payload"] and t["fields_total"] == 9
    assert t["notice"] == "datalayer: 50 of 60 rows, 5 of 9 fields."
    payload = t["rows"][0]["payload"]
    assert len(payload) == 80 and payload.endswith("…") and payload.startswith('{"event":"tick_0"')
    assert one.system_info["field_limit"] == 5
    assert len(one.tables()[0].rows) == 60  # the host still gets every row, uncut
    assert len(one.tables()[0].rows[0]["payload"]["long"]) == 200

    two = await client.call_tool("capture", {**args, "tables": ["datalayer", "network"]}, meta=meta())
    tables = two.model_response["tables"]
    assert tables["datalayer"]["returned_rows"] == 10 and len(tables["datalayer"]["fields"]) == 8
    assert tables["network"]["returned_rows"] == 1  # one request: the page itself
    seo = await client.call_tool("capture", {**args, "tables": ["seo"]}, meta=meta(row_limit=0))
    assert seo.model_response["tables"]["seo"]["rows"] == []  # no model view: row_limit applies


async def test_multi_table_false_gets_the_primary_table(site):
    capability = {"version": "1.0", "stores_system_data": True, "multi_table": False, "host_tables": False,
                  "autocontext_delivery": "on_first_call"}
    async with AcpClient.stdio(SERVE, capability=capability) as client:
        res = await client.call_tool("capture", {"resource_id": site.origin, "url": "/"}, meta=meta())
        mr = res.model_response
        assert "tables" not in mr and mr["total_rows"] == 3
        assert mr["notice"] == "Showing all 3 extracted rows."
        assert [row["en"] for row in mr["rows"]] == ["page_view", "view_item", "scroll"]
        assert mr["extra"]["manifest"]["pages"][0]["url"] == site.origin + "/"
        assert res.system_data["format"] == "inline" and res.system_data["row_count"] == 3


async def test_resource_normalization_errors_and_secrets(site, client):
    res = await client.call_tool("capture", {"resource_id": site.origin + "/product?x=1", "url": "/product"},
                                 meta=meta(credentials={"basic_username": "u", "basic_password": "pw-SECRET-9"}))
    assert not res.is_error, res.text
    assert res.system_info["resource_id"] == site.origin
    assert "pw-SECRET-9" not in str(res.raw)
    for bad in ("javascript:alert(1)", "file:///etc/passwd"):
        err = await client.call_tool("capture", {"resource_id": site.origin, "url": bad}, meta=meta())
        assert err.is_error and err.error["name"] == "ACP_INVALID_ARGUMENTS" and "http and https" in err.error["message"]
    err = await client.call_tool("capture", {"resource_id": "data:text/html,x"}, meta=meta())
    assert err.is_error and err.error["name"] == "ACP_INVALID_ARGUMENTS"


async def test_screenshot_and_session_through_the_host(site, tmp_path, client):
    m = meta()
    first = await client.call_tool("capture", {"resource_id": site.origin, "url": "/", "tables": ["cookies"]}, meta=m)
    assert first.model_response["manifest"]["session"] == "new"
    second = await client.call_tool("capture", {"resource_id": site.origin, "url": "/checkout", "tables": ["cookies"]}, meta=m)
    assert second.model_response["manifest"]["session"] == "continued"
    shot = await client.call_tool("screenshot", {}, meta=m)
    assert not shot.is_error, shot.text
    path = Path(shot.model_response["screenshot_path"])
    assert path.read_bytes()[:4] == b"\x89PNG" and shot.model_response["title"] == "Checkout"
    closed = await client.call_tool("close_session", {}, meta=m)
    assert closed.model_response["closed"] is True
    third = await client.call_tool("capture", {"resource_id": site.origin, "url": "/"}, meta=m)
    assert third.model_response["manifest"]["session"] == "new"


async def test_autocontext_blocks_through_the_host(site, client):
    res = await client.call_tool("autocontext", {"resource_id": site.origin}, meta={"config": FAST})
    assert not res.is_error, res.text
    text = res.text
    assert "G-TEST123" in text and "GTM-ABC123" in text and "sitemap" in text
