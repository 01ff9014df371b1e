"""Connect a client (issue 35.6), Datasets (35.7) and the security refusals (35.8) in Chromium.

One page (in this process, HOME pointed at a temporary folder) and one browser for the module. The browser maps
``evil.test`` to 127.0.0.1, as a DNS-rebinding attacker's name would resolve.
"""

from __future__ import annotations

import csv
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import expect
from uiharness import environ, module_env, serve_page, shot

pytestmark = pytest.mark.browser
ROWS = 30_000
# A 1x1 PNG (a prediction plot stands in for it).
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tmp_path_factory.mktemp("uiclients")
    home, project = base / "home", base / "proj"
    data = project / "acp-data"
    (data / "files").mkdir(parents=True)
    with (data / "visits.csv").open("w", newline="") as handle:  # a hand-dropped dataset (16.6: types inferred)
        writer = csv.writer(handle)
        writer.writerow(["day", "channel", "visits"])
        writer.writerows([f"2026-01-{1 + i % 28:02d}", ("web", "app")[i % 2], i] for i in range(ROWS))
    (data / "files" / "forecast_plot.png").write_bytes(PNG)
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"mcpServers": {"other": {"command": "other-server", "args": ["--x"]}},
                                  "globalShortcut": "Ctrl+Space"}, indent=2))
    vscode = project / ".vscode" / "mcp.json"
    vscode.parent.mkdir(parents=True)
    vscode.write_text('{\n  // my servers\n  "servers": {\n    "mine": {"type": "stdio", "command": "mine"},\n  },\n'
                      '  "inputs": [],\n}\n')
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text('{"mcpServers": {"x": ')  # cut in the middle: never overwritten
    with environ({**module_env(base / "config"), "HOME": str(home)}), serve_page(project) as page:
        yield {"page": page, "project": project, "claude": claude, "vscode": vscode, "cursor": cursor}


@pytest.fixture(scope="module")
def browser():
    from googlefakes.signin import CHROMIUM, CHROMIUM_FLAGS
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, timeout=60_000,
                               args=[*CHROMIUM_FLAGS, "--host-resolver-rules=MAP evil.test 127.0.0.1"])
        yield b
        b.close()


def test_client_configuration_keeps_the_clients_other_servers_and_settings(tab, world):
    tab.get_by_role("link", name="Connect a client").click()
    shot(tab, "clients")
    claude = tab.get_by_role("region", name="Claude Desktop")
    claude.get_by_role("button", name="Write to Claude Desktop").click()
    tab.get_by_text("Claude Desktop: the acp-bridge entry is in").wait_for()
    written = json.loads(world["claude"].read_text())
    assert written["globalShortcut"] == "Ctrl+Space" and written["mcpServers"]["other"]["command"] == "other-server"
    entry = written["mcpServers"]["acp-bridge"]
    assert "bridge" in entry["args"] or entry["args"][:2] == ["-m", "analytics_acp_bridge"]
    assert entry["args"][entry["args"].index("--project") + 1] == str(world["project"])
    (backup,) = world["claude"].parent.glob("claude_desktop_config.json.bak-*")
    assert json.loads(backup.read_text()) == {"mcpServers": {"other": {"command": "other-server", "args": ["--x"]}},
                                              "globalShortcut": "Ctrl+Space"}
    assert "The file already starts this bridge." in tab.get_by_role("region", name="Claude Desktop").inner_text()
    # VS Code: JSON with comments and a trailing comma is read; its key is "servers" and entries name their type.
    tab.get_by_role("button", name="Write to VS Code").click()
    tab.get_by_text("VS Code: the acp-bridge entry is in").wait_for()
    assert "comments were not kept" in tab.locator(".messages").inner_text()
    vscode = json.loads(world["vscode"].read_text())
    assert vscode["servers"]["mine"] == {"type": "stdio", "command": "mine"} and vscode["inputs"] == []
    assert vscode["servers"]["acp-bridge"]["type"] == "stdio"
    # Cursor: a file that cannot be read is never overwritten; the snippet is offered instead.
    cursor = tab.get_by_role("region", name="Cursor")
    assert "cannot be read as JSON" in cursor.inner_text()
    assert cursor.get_by_role("button").count() == 0
    assert world["cursor"].read_text() == '{"mcpServers": {"x": '
    assert '"acp-bridge"' in cursor.locator("pre").inner_text()


def test_datasets_list_download_image_and_delete(tab, world):
    tab.get_by_role("link", name="Datasets").click()
    row = tab.locator("#dataset-visits")
    assert f"{ROWS:,}" in row.inner_text() and "3" in row.inner_text()
    image = tab.get_by_role("img", name="forecast_plot.png")
    tab.wait_for_load_state("load")  # the image is loaded by then
    assert image.evaluate("img => img.naturalWidth") == 1
    shot(tab, "datasets")
    with tab.expect_download() as download:
        row.get_by_role("link", name="CSV").click()
    assert Path(download.value.path()).read_bytes() == (world["project"] / "acp-data" / "visits.csv").read_bytes()
    row.get_by_role("link", name="visits").click()
    # The bridge's dataset view, hosted by the page: pages through the whole table, sorts (35.7, 36.4).
    view = tab.frame_locator("iframe.view")
    view.get_by_text(f"{ROWS:,} rows").wait_for()
    status = view.locator("#status")
    assert status.inner_text() == f"Rows 1–50 of {ROWS:,}"
    view.get_by_role("button", name="Last").click()
    try:
        view.get_by_text(f"Rows {ROWS - 49:,}–{ROWS:,} of {ROWS:,}").wait_for(timeout=45_000)
    except Exception:  # say what the view shows (its alert, its status) rather than only that it timed out
        raise AssertionError(f"view: {view.locator('#alert').inner_text()!r} {status.inner_text()!r}") from None
    assert view.locator("#rows tr").last.locator("td").last.inner_text().replace(",", "") == str(ROWS - 1)
    view.get_by_role("button", name="visits").click()  # sort by the column: ascending, then descending
    view.locator('th[data-col="visits"][aria-sort="ascending"]').wait_for()
    view.get_by_role("button", name="visits").click()
    view.locator('th[data-col="visits"][aria-sort="descending"]').wait_for()
    view.get_by_text(f"Rows 1–50 of {ROWS:,}").wait_for()
    assert view.locator("#rows tr").first.locator("td").last.inner_text().replace(",", "") == str(ROWS - 1)
    shot(tab, "dataset-view")
    assert tab.locator(".first-rows").first.is_hidden()  # the no-JavaScript table gives way to the view
    # ids are looked up, never joined to a path
    for bad in ("..%2F..%2Fetc%2Fpasswd", "%2E%2E", "visits%2F..%2F..%2Fsources"):
        answer = tab.request.get(f"{world['page'].base}/datasets/{bad}.csv")
        assert answer.status == 404
    assert tab.request.get(f"{world['page'].base}/datasets/files/..%2Fvisits.csv").status == 404
    tab.once("dialog", lambda d: d.accept())
    tab.get_by_role("button", name="Delete this dataset").click()
    tab.get_by_text("Deleted dataset «visits»").wait_for()
    assert not (world["project"] / "acp-data" / "visits.csv").exists()


def _write_dataset(project: Path, name: str, rows: int) -> None:
    with (project / "acp-data" / f"{name}.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["day", "channel", "visits"])
        writer.writerows([f"2026-02-{1 + i % 28:02d}", ("web", "app")[i % 2], i] for i in range(rows))


def _content_height(view) -> int:
    """The height of the view's content (its body: the document's root has no margin or padding of its own)."""
    return math.ceil(view.locator("body").evaluate("b => b.getBoundingClientRect().height"))


def test_the_dataset_views_frame_takes_the_views_height(tab, world):
    # MCP Apps ui/notifications/size-changed: the host sizes the iframe to the view's content, both ways. It was left
    # at its first height or more: blank space under the table, and the pager moving while the frame kept growing.
    _write_dataset(world["project"], "sized", 300)
    tab.goto(f"{world['page'].base}/datasets/sized")
    view = tab.frame_locator("iframe.view")
    view.get_by_text("Rows 1–50 of 300").wait_for()
    frame = tab.locator("iframe.view")
    tall = _content_height(view)
    assert tall > 400  # the first page of rows and the chart: more than the frame's first height would hide
    expect(frame).to_have_js_property("clientHeight", tall, timeout=30_000)  # the frame's inside: the content, no blank space
    view.get_by_label("Filter").fill("299")  # one row left: the content shrinks, and the frame with it
    view.get_by_role("button", name="Apply").click()
    view.get_by_text("Rows 1–1 of 1 matching (of 300)").wait_for()
    short = _content_height(view)
    assert short < tall
    expect(frame).to_have_js_property("clientHeight", short, timeout=30_000)
    view.get_by_label("Filter").fill("")  # Enter applies it too: every row again, and the frame grows back
    view.get_by_label("Filter").press("Enter")
    view.get_by_text("Rows 1–50 of 300").wait_for()
    expect(frame).to_have_js_property("clientHeight", tall, timeout=30_000)


class _Attacker(BaseHTTPRequestHandler):
    """Another site on this machine whose page posts to the set-up page (a cross-origin POST)."""

    target = ""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = (f'<form id=f method=post action="{self.target}/clients/claude-code/write"><input name=csrf value=x></form>'
                "<script>document.getElementById('f').submit()</script>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_security_refusals_in_chromium(browser, tab, world):
    page = world["page"]
    # no token: refused
    stranger = browser.new_context().new_page()
    stranger.goto(page.base + "/")
    assert "This page needs the token" in stranger.inner_text("body")
    stranger.context.close()
    # a foreign Host (DNS rebinding: evil.test resolves to 127.0.0.1), even with the token
    rebound = browser.new_context().new_page()
    rebound.goto(page.url.replace("127.0.0.1", "evil.test"))
    assert "Refused: this page answers only at" in rebound.inner_text("body")
    rebound.context.close()
    # a cross-origin POST from another site, in the browser that holds the cookie
    _Attacker.target = page.base
    attacker = ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        tab.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
        tab.wait_for_url(page.base + "/clients/claude-code/write")
        assert "cross-origin request" in tab.inner_text("body")
    finally:
        attacker.shutdown()
        attacker.server_close()
    # the page's own origin without the CSRF token
    tab.goto(page.base + "/clients")
    status = tab.evaluate("fetch('/clients/claude-code/write', {method: 'POST', body: new FormData()}).then(r => r.status)")
    assert status == 403
    assert not (world["project"] / ".mcp.json").exists()
