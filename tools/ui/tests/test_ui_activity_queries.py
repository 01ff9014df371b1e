"""Activity and saved queries (issue 37) in Chromium.

One MCP client session on a real bridge process makes the calls first (a SQLite source whose credential is a
literal value in sources.json, and the bridge's test connector with its paid tool, 9.2); then one page and one
browser serve the module. The page runs its queries through its own bridge (the bridge's call path).
"""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest
from uiharness import FIXTURE_ACP, environ, make_sqlite, module_env, serve_page, shot

pytestmark = pytest.mark.browser
SECRET_DIR = "sk-DISTINCTIVE-ui-activity-93c1"  # in the SQLite URL, a literal (writeOnly) credential
SQL_LABEL = re.compile(r"^sql", re.IGNORECASE)  # the field's label is its schema title
GROUPED = "SELECT canal, SUM(pedidos) AS pedidos, COUNT(*) AS dias FROM ventas GROUP BY canal ORDER BY canal"


async def _client_calls(project, root, calls):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "analytics_acp_bridge", "--project", str(project),
                                                                 "--root", str(root)], cwd=str(project))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [bool((await session.call_tool(name, args)).is_error) for name, args in calls]


def _in_thread(work):
    """Run ``work`` in a thread of its own (this thread may already run pytest-asyncio's loop); bounded."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result(timeout=300)


def _entries(project):
    record = project / "acp-data" / "activity.jsonl"
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()] if record.exists() else []


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    import anyio

    base = tmp_path_factory.mktemp("uiactivity")
    project, root = base / "proj", base / "root"
    project.mkdir()
    shutil.copytree(FIXTURE_ACP, root / "acps" / "fixture", ignore=shutil.ignore_patterns("__pycache__"))
    url = f"sqlite:///{make_sqlite(base / SECRET_DIR / 'ventas.sqlite')}"
    (root / "sources.json").write_text(json.dumps({"sources": [
        {"id": "ventas", "acp": "databases", "credentials": {"type": "url", "url": url}, "default_resource_id": "ventas"},
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": "tok-ui-activity-literal"}},
    ]}), encoding="utf-8")
    with environ(module_env(base / "config")):
        failed = _in_thread(lambda: anyio.run(_client_calls, project, root, [
            ("ventas__execute_sql", {"sql": f"SELECT fecha, canal, pedidos FROM ventas WHERE canal <> '{url}'"}),
            ("ventas__execute_sql", {"sql": "SELECT * FROM no_such_table"}),
            ("ventas__execute_sql", {"sql": GROUPED}),
        ]))
        assert failed == [False, True, False]
        # The bridge's writer thread has written every entry by the time the bridge process ended (close flushes).
        entries = _entries(project)
        assert [e["outcome"] for e in entries] == ["ok", "error", "ok"]
        with serve_page(project, root) as page:
            yield {"page": page, "project": project, "root": root, "url": url, "entries": entries}


@pytest.fixture(scope="module")
def browser():
    from googlefakes.signin import CHROMIUM, CHROMIUM_FLAGS
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, timeout=60_000, args=[*CHROMIUM_FLAGS])
        yield b
        b.close()


def _no_secret(world, html):
    for literal in (world["url"], SECRET_DIR, "tok-ui-activity-literal"):
        assert literal not in html
        for path in (world["project"] / "acp-data").glob("activity*.jsonl"):
            assert literal not in path.read_text(encoding="utf-8")


def _csv(world, dataset_id):
    return (world["project"] / "acp-data" / f"{dataset_id}.csv").read_bytes()


def test_a_clients_call_appears_with_its_rows_and_dataset_and_no_secret(tab, world):
    first = world["entries"][0]
    tab.get_by_role("link", name="Activity").click()
    entry = tab.locator(f"#call-{first['id']}")
    entry.wait_for()
    shot(tab, "activity")
    assert "ventas__execute_sql" in entry.inner_text() and "90 rows" in entry.inner_text()
    assert "from the client" in entry.inner_text() and "[redacted]" in entry.inner_text()
    _no_secret(world, tab.content())
    [dataset] = first["datasets"]
    entry.get_by_role("link", name=dataset["id"]).click()
    tab.get_by_role("heading", name=dataset["id"]).wait_for()
    _no_secret(world, tab.content())


def test_a_failing_call_shows_its_typed_error_in_plain_words(tab, world):
    from analytics_acp_ui.views.activity import ERROR_WORDS

    failed = world["entries"][1]
    tab.goto(f"{world['page'].base}/activity")
    tab.get_by_label("Outcome").select_option("error")
    tab.get_by_role("button", name="Filter").click()
    tab.wait_for_url("**outcome=error**")
    entries = tab.locator("ol.activity > li")
    assert entries.count() >= 1 and all("failed" in t for t in entries.all_inner_texts())
    text = tab.locator(f"#call-{failed['id']}").inner_text()
    assert ERROR_WORDS[failed["error"]["name"]] in text and failed["error"]["name"] in text
    assert failed["error"]["message"] in text
    _no_secret(world, tab.content())


def test_a_saved_query_run_from_the_page_gives_the_clients_dataset(tab, world):
    client = world["entries"][2]
    tab.get_by_role("link", name="Queries").click()
    tab.get_by_role("link", name="New query").click()
    tab.get_by_label("Source", exact=True).select_option("ventas")
    tab.get_by_role("button", name="Open").click()
    # 14.3: the default tool is the ACP's extraction_tools[0]; the form is the tool's inputSchema's.
    assert tab.get_by_label("Tool", exact=True).input_value() == "ventas__execute_sql"
    tab.get_by_label(SQL_LABEL).fill(GROUPED)
    shot(tab, "query-editor")
    tab.get_by_role("button", name="Run").click()
    tab.wait_for_url("**/datasets/ventas_execute_sql_*")
    page_dataset = tab.url.rsplit("/", 1)[1]
    assert page_dataset != client["datasets"][0]["id"]
    assert _csv(world, page_dataset) == _csv(world, client["datasets"][0]["id"])
    # Save it, then run it again from the list.
    tab.go_back()
    tab.get_by_label(SQL_LABEL).fill(GROUPED)
    tab.get_by_label("Name", exact=True).fill("Pedidos por canal")
    tab.get_by_role("button", name="Save").click()
    tab.get_by_text("Saved query «Pedidos por canal».").wait_for()
    saved = json.loads((world["project"] / "acp-data" / "queries.json").read_text())["queries"]
    mine = next(q for q in saved if q["name"] == "Pedidos por canal")
    assert mine["source"] == "ventas" and mine["tool"] == "execute_sql" and mine["arguments"]["sql"] == GROUPED
    tab.get_by_role("link", name="Queries").click()
    tab.get_by_role("button", name="Run Pedidos por canal").click()
    tab.wait_for_url("**/datasets/ventas_execute_sql_*")
    again = tab.url.rsplit("/", 1)[1]
    assert again not in (page_dataset, client["datasets"][0]["id"])
    assert _csv(world, again) == _csv(world, client["datasets"][0]["id"])
    page_entries = [e for e in _entries(world["project"]) if e.get("via") == "page"]
    assert {d["id"] for e in page_entries for d in e["datasets"]} >= {page_dataset, again}


def test_the_form_follows_the_tools_input_schema_defaults_and_types(tab, world):
    tab.goto(f"{world['page'].base}/queries/new?source=fx&tool=fx__numbers")
    count = tab.get_by_label(re.compile(r"^count$", re.IGNORECASE))
    assert count.input_value() == "10" and count.get_attribute("type") == "number"  # the schema's default, an integer
    count.fill("2.5")
    tab.get_by_role("button", name="Run").click()
    tab.get_by_role("alert").filter(has_text="must be a whole number").wait_for()  # checked before anything runs
    tab.get_by_label(re.compile(r"^count$", re.IGNORECASE)).fill("3")
    tab.get_by_role("button", name="Run").click()
    tab.wait_for_url("**/datasets/fx_numbers_*")
    assert _csv(world, tab.url.rsplit("/", 1)[1]).count(b"\r\n") == 4  # the header and three rows


def test_an_activity_entry_is_saved_as_a_query_in_one_click(tab, world):
    client = world["entries"][2]
    tab.goto(f"{world['page'].base}/activity")
    tab.locator(f"#call-{client['id']}").get_by_role("button", name=re.compile("as a query")).click()
    tab.get_by_text("Saved as query").wait_for()
    assert tab.get_by_label(SQL_LABEL).input_value() == GROUPED
    saved = json.loads((world["project"] / "acp-data" / "queries.json").read_text())["queries"]
    assert any(q["arguments"] == {"sql": GROUPED} and q["tool"] == "execute_sql" for q in saved)


def test_a_paid_query_over_the_cost_limit_runs_nothing_until_a_higher_limit_is_confirmed(tab, world):
    sources_before = (world["root"] / "sources.json").read_bytes()

    def priced():
        return [e for e in _entries(world["project"]) if e["tool"] == "fx__priced"]

    def datasets():
        return sorted(p.name for p in (world["project"] / "acp-data").glob("fx_priced_*.csv"))

    tab.goto(f"{world['page'].base}/queries/new?source=fx&tool=fx__priced")
    tab.get_by_role("button", name="Run").click()
    tab.get_by_text("would cost more than this source's cost limit").wait_for()
    shot(tab, "query-cost-limit")
    # The ACP's message tells the model to ask the user; on the page the person is the user (the form is the way).
    assert "ask the user" not in tab.content().lower()
    assert datasets() == [] and [e["outcome"] for e in priced()] == ["error"] and priced()[0]["cost_usd"] == 5.0
    assert tab.get_by_label("Cost limit for this run (USD)").input_value() == "5.00"
    # Without the tick nothing runs (the browser asks for it; the server refuses it too).
    raise_url = tab.locator("form[action$='/raise']").get_attribute("action")
    csrf = tab.locator("form[action$='/raise'] input[name=csrf]").get_attribute("value")
    answer = tab.request.post(f"{world['page'].base}{raise_url}", form={"csrf": csrf, "cost_limit_usd": "5"},
                              headers={"origin": world["page"].base})
    assert answer.ok and "Nothing ran" in answer.text()
    assert datasets() == [] and len(priced()) == 1
    tab.reload()
    tab.get_by_label("I confirm: run this query once").check()
    tab.get_by_role("button", name="Run with this limit").click()
    tab.wait_for_url("**/datasets/fx_priced_*")
    assert len(datasets()) == 1
    last = priced()[-1]
    assert last["outcome"] == "ok" and last["limits"] == {"cost_limit_usd": 5.0} and last["via"] == "page"
    assert (world["root"] / "sources.json").read_bytes() == sources_before  # for that run only
    tab.goto(f"{world['page'].base}/activity?source=fx")
    assert "Limits for this call only: cost_limit_usd = 5.0" in tab.locator(f"#call-{last['id']}").inner_text()


def test_a_running_query_shows_that_it_runs_and_cancel_stops_it_with_no_dataset(tab, world):
    endless = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e15) "
               "SELECT count(*) AS n FROM c")  # SQLite is interrupted at the cancel (the connector's stop)

    def kept():
        return sorted(p.name for p in (world["project"] / "acp-data").glob("ventas_execute_sql_*.csv"))

    before = kept()
    tab.goto(f"{world['page'].base}/queries/new?source=ventas")
    tab.get_by_label(SQL_LABEL).fill(endless)
    tab.get_by_role("button", name="Run").click()
    tab.get_by_text("this page follows it").wait_for()
    tab.get_by_role("button", name="Cancel").click()
    tab.get_by_text("Cancelled: the call was stopped").wait_for()
    _until(lambda: any(e["arguments"].get("sql") == endless for e in _entries(world["project"])), "the cancelled run recorded")
    [entry] = [e for e in _entries(world["project"]) if e["arguments"].get("sql") == endless]
    assert entry["outcome"] == "cancelled" and entry["via"] == "page" and "datasets" not in entry
    assert kept() == before


def _until(check, what, tries=1200):
    """A bounded wait for an observable condition (the record's writer thread)."""
    import threading

    for _ in range(tries):
        if check():
            return
        threading.Event().wait(0.05)
    raise AssertionError(f"never happened: {what}")


def test_the_new_pages_keep_the_pages_safety(world):
    import httpx

    base = world["page"].base
    assert httpx.get(f"{base}/activity").status_code == 401  # no token, no cookie
    assert httpx.get(f"{base}/queries", headers={"host": "evil.test"}).status_code == 403
    cookies = {"analytics_acp_ui": world["page"].state.security.session}
    refused = httpx.post(f"{base}/queries/submit", cookies=cookies, headers={"origin": base},
                         data={"source": "ventas", "tool": "ventas__execute_sql", "action": "run", "args.0.sql": GROUPED})
    assert refused.status_code == 403  # no CSRF token
    cross = httpx.post(f"{base}/activity/x/save", cookies=cookies, headers={"origin": "http://evil.test"},
                       data={"csrf": world["page"].state.security.csrf})
    assert cross.status_code == 403
