"""The dataset view in a real MCP Apps host (issue 36 "Done means"): ``@modelcontextprotocol/ext-apps``'s AppBridge
in Chromium hosts ``ui://analytics-acp/dataset``; the bridge is a stdio server, so this test relays between them.

One bridge (databases + prediction) for an MCP Apps client (the ClientSession declares the extension), one
Chromium, one loopback server for the host page and the AppBridge's ESM from tests/external/node_modules. The
host page puts the view's HTML in a sandboxed iframe under the extension's default CSP (no network) and passes
the tool input and result in; the view's tool calls come back through ``window.relayTool`` to the bridge.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import pytest_asyncio

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "external"))
import acp_external  # noqa: E402

example_db = pytest.importorskip("analytics_acp_databases.example_db")
pytestmark = pytest.mark.external

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]  # DESIGN.md
HOST_PAGE = Path(__file__).resolve().parent / "apps_host.html"
APPS = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
DAYS, CHANNELS = 90, 4
SQL = "SELECT fecha, canal, pedidos, importe FROM ventas ORDER BY fecha, canal"
WAIT_MS = 60_000


class _Files(SimpleHTTPRequestHandler):
    """The host page at /host.html and tests/external/node_modules at /node_modules/ (nothing else)."""

    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0]
        if path == "/host.html":
            return str(HOST_PAGE)
        if path.startswith("/node_modules/") and ".." not in path:
            return str(acp_external.NODE_MODULES / path[len("/node_modules/"):])
        return str(HOST_PAGE.parent / "no-such-file")

    def guess_type(self, path):  # ES modules need a JavaScript MIME type
        return "text/javascript" if str(path).endswith((".js", ".mjs")) else super().guess_type(path)

    def log_message(self, *args):
        pass


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env(tmp_path_factory, shared_bridge, write_sources):
    acp_external.require_npm_clients()
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian's /usr/bin/chromium is required in CI")
        pytest.skip("Debian's /usr/bin/chromium is not installed")
    from playwright.async_api import async_playwright

    base = tmp_path_factory.mktemp("apps-e2e")
    project = base / "proyecto"
    db = example_db.create_example_db(project / "data" / "ventas.sqlite", days=DAYS, end=dt.date(2026, 9, 28))
    ventas = {"id": "ventas", "acp": "databases", "label": "Ventas", "default_resource_id": "ventas",
              "credentials": {"type": "sqlite", "path": str(db)}}
    write_sources(project / "sources.json", {"defaults": {"row_limit": 25}, "sources": [
        ventas, {"id": "prevision", "acp": "prediction", "label": "Previsión"}]})
    write_sources(project / "plain-sources.json", {"defaults": {"row_limit": 25}, "sources": [ventas]})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    pw = await async_playwright().start()
    browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS, timeout=60_000)
    try:
        async with shared_bridge.open(project, extensions=APPS) as client:
            page = await browser.new_page()
            page.set_default_timeout(WAIT_MS)
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            relayed: list[dict] = []

            async def relay(params_json: str) -> str:
                params = json.loads(params_json)
                relayed.append(params)
                result = await client.session.call_tool(params["name"], params.get("arguments") or {})
                return json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True))

            await page.expose_function("relayTool", relay)
            await page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/host.html")
            await page.wait_for_function("window.hostReady === true")
            yield {"client": client, "page": page, "db": db, "relayed": relayed, "requests": requests,
                   "origin": f"http://127.0.0.1:{httpd.server_address[1]}/", "project": project}
    finally:
        await browser.close()
        await pw.stop()
        httpd.shutdown()


async def show(env, view_id: str, tool: str, arguments: dict, theme: str = "light") -> dict:
    """What a host does: call the tool, read ``_meta.ui.resourceUri``, load it, pass the input and result in."""
    client = env["client"]
    listed = {t.name: t for t in (await client.session.list_tools()).tools}
    uri = (listed[tool].meta or {})["ui"]["resourceUri"]
    result = await client.session.call_tool(tool, arguments)
    raw = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert not raw.get("isError"), raw
    read = await client.session.read_resource(uri)
    content = read.contents[0]
    assert (str(content.uri), content.mime_type) == (uri, "text/html;profile=mcp-app")
    await env["page"].evaluate("args => window.showView(args)", {
        "id": view_id, "html": content.text, "toolInput": arguments, "toolResult": raw, "theme": theme, "maxHeight": 2000})
    frame = env["page"].frame_locator(f"#{view_id}")
    await frame.locator("#status").wait_for()
    return {"raw": raw, "frame": frame, "uri": uri}


def expected_rows(db):
    with sqlite3.connect(db) as conn:
        return conn.execute(SQL).fetchall()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_view_pages_sorts_and_charts_the_whole_dataset(env):
    rows = expected_rows(env["db"])
    assert len(rows) == DAYS * CHANNELS
    shown = await show(env, "sales", "ventas__execute_sql", {"sql": SQL})
    frame = shown["frame"]
    assert shown["uri"] == "ui://analytics-acp/dataset"
    model = json.loads(shown["raw"]["content"][0]["text"])
    assert model["returned_rows"] == 25 < len(rows)  # the model saw a sample; the view shows every row

    status = frame.locator("#status")
    await frame.get_by_text(f"{len(rows):,} rows", exact=False).first.wait_for()
    assert await status.inner_text() == f"Rows 1–50 of {len(rows)}"
    # to the last row, through acp_dataset_page
    await frame.get_by_role("button", name="Last").click()
    await frame.locator("#status", has_text=f"Rows {len(rows) - 49}–{len(rows)} of {len(rows)}").wait_for()
    last = frame.locator("#rows tr").last
    assert await last.locator("td").all_inner_texts() == [rows[-1][0], rows[-1][1], str(rows[-1][2]), _js(rows[-1][3])]
    # sort by pedidos, descending on the second click
    header = frame.locator('th[data-col="pedidos"]')
    await header.get_by_role("button").click()
    await frame.locator('th[data-col="pedidos"][aria-sort="ascending"]').wait_for()
    first = await frame.locator("#rows tr").first.locator("td").nth(2).inner_text()
    assert int(first) == min(r[2] for r in rows)
    await header.get_by_role("button").click()
    await frame.locator('th[data-col="pedidos"][aria-sort="descending"]').wait_for()
    assert int(await frame.locator("#rows tr").first.locator("td").nth(2).inner_text()) == max(r[2] for r in rows)
    await frame.get_by_role("button", name="Next").click()  # a keyset page of the sorted order
    await frame.locator("#status", has_text="Rows 51–100").wait_for()
    by_desc = sorted(range(len(rows)), key=lambda i: (rows[i][2], i), reverse=True)
    assert int(await frame.locator("#rows tr").first.locator("td").nth(2).inner_text()) == rows[by_desc[50]][2]
    # the chart: one point per day, the sum of pedidos over every row
    chart = frame.locator('svg[data-kind="line"]')
    assert await chart.locator("circle.pt").count() == DAYS
    # every row came through the app-only tools; the view made no request of its own
    names = {c["name"] for c in env["relayed"]}
    assert names == {"acp_dataset_summary", "acp_dataset_page"}
    assert all(url.startswith(env["origin"]) for url in env["requests"]), env["requests"]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_forecast_view_shows_its_band_and_history(env):
    sales = await env["client"].session.call_tool("ventas__execute_sql", {"sql": SQL})
    dataset = sales.meta["analytics-acp/view"]["datasets"][0]["id"]
    shown = await show(env, "forecast", "prevision__forecast",
                       {"table_ref": dataset, "time_column": "fecha", "value_column": "pedidos", "horizon": 14}, theme="dark")
    frame = shown["frame"]
    chart = frame.locator('svg[data-kind="forecast"]')
    await chart.wait_for()
    assert await chart.locator("polygon.band").count() == 1
    assert await chart.locator("circle.pt.fc").count() == 14
    assert await chart.locator("circle.pt.hist").count() == DAYS  # the history: the dataset the forecast read
    assert await frame.locator("html").get_attribute("data-theme") == "dark"
    await env["page"].evaluate("() => window.setContext('forecast', {theme: 'light'})")
    await frame.locator('html[data-theme="light"]').wait_for()
    # a small frame: the plain table, no chart
    await env["page"].evaluate("() => window.setContext('forecast', {containerDimensions: {width: 380, maxHeight: 240}})")
    await frame.locator("body.small").wait_for()
    assert not await chart.is_visible() and await frame.locator("#rows tr").count() == 14


@pytest.mark.asyncio(loop_scope="module")
async def test_the_plot_view_shows_the_image_and_the_table_it_drew(env):
    sales = await env["client"].session.call_tool("ventas__execute_sql", {"sql": SQL})
    dataset = sales.meta["analytics-acp/view"]["datasets"][0]["id"]
    shown = await show(env, "plot", "prevision__plot", {"table_ref": dataset, "x": "fecha", "y": "pedidos"})
    frame = shown["frame"]
    assert [c["mimeType"] for c in shown["raw"]["content"] if c["type"] == "image"] == ["image/png"]
    assert await frame.locator("img.plot").count() == 1
    assert await frame.locator("img.plot").evaluate("img => img.complete && img.naturalWidth > 0")
    assert await frame.locator("#status").inner_text() == f"Rows 1–50 of {DAYS * CHANNELS}"


@pytest.mark.asyncio(loop_scope="module")
async def test_several_datasets_get_one_tab_each(env):
    """A multitable result lists one dataset per table (test_bridge_apps.py); the view gives each a tab."""
    client = env["client"]
    sales = (await client.session.call_tool("ventas__execute_sql", {"sql": SQL})).meta["analytics-acp/view"]["datasets"]
    monthly = await client.session.call_tool("acp_query", {"sql": f"SELECT substr(fecha, 1, 7) AS mes, SUM(pedidos) AS "
                                                                    f"pedidos FROM {sales[0]['id']} GROUP BY mes"})
    tables = sales + monthly.meta["analytics-acp/view"]["datasets"]
    html = (await client.session.read_resource("ui://analytics-acp/dataset")).contents[0].text
    result = {"content": [{"type": "text", "text": "{}"}], "_meta": {"analytics-acp/view": {"datasets": tables}}}
    await env["page"].evaluate("args => window.showView(args)", {
        "id": "tabs", "html": html, "toolInput": {}, "toolResult": result, "theme": "light", "maxHeight": 2000})
    frame = env["page"].frame_locator("#tabs")
    tabs = frame.get_by_role("tab")
    await frame.locator("#status").wait_for()
    assert await tabs.count() == 2 and await tabs.first.get_attribute("aria-selected") == "true"
    await tabs.nth(1).click()
    await frame.locator("#status", has_text="Rows 1–3 of 3").wait_for()  # July, August, September
    assert await frame.locator('svg[data-kind="line"] circle.pt').count() == 0  # a month is text: bars
    assert await frame.locator('svg[data-kind="bars"] rect.bar').count() == 3


@pytest.mark.asyncio(loop_scope="module")
async def test_the_model_facing_text_is_the_same_without_apps(env, bridge):
    """The same call from a client without MCP Apps: the same texts; no _meta, no view, no app-only tool."""
    with_apps = await env["client"].session.call_tool("ventas__execute_sql", {"sql": SQL})
    async with bridge(env["project"], sources=env["project"] / "plain-sources.json") as plain:  # no forecast server
        await plain.session.call_tool("ventas__execute_sql", {"sql": SQL})  # the first call brings the autocontext (7.5)
        without = await plain.session.call_tool("ventas__execute_sql", {"sql": SQL})
        tools = (await plain.session.list_tools()).tools
        resources = (await plain.session.list_resources()).resources
        caps = plain.session.initialize_result.capabilities
    texts = [[c.text for c in r.content if c.type == "text"] for r in (with_apps, without)]
    mine = with_apps.meta["analytics-acp/view"]["datasets"][0]["id"]
    assert texts[0][0] == texts[1][0]  # model_response, byte for byte
    other = texts[1][1].split("«")[1].split("»")[0]
    assert texts[0][1].replace(mine, other) == texts[1][1]  # the note, but for its own dataset id
    assert without.meta is None and set(with_apps.meta) == {"analytics-acp/view"}
    assert not any((t.meta or {}).get("ui") for t in tools) and "acp_dataset_page" not in {t.name for t in tools}
    assert not any(str(r.uri).startswith("ui://") for r in resources) and not caps.extensions


def _js(value: float) -> str:
    """A number as the view writes it (JavaScript's shortest form: 1234.0 is 1234)."""
    return str(int(value)) if float(value).is_integer() else repr(value)
