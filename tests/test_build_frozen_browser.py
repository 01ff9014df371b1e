"""The frozen `browser` build: Playwright's driver is frozen, no browser binary is bundled, and the frozen server
captures a page with the system Chromium.

Split per connector so pytest-xdist (--dist loadfile) freezes the connectors on different workers;
the build itself is shared (root conftest.py ``frozen_build``). Slow: marked ``build``.
"""

import os
import shutil
from pathlib import Path

import anyio
import pytest
from analytics_acp.host import AcpClient
from build_support import internal_packages

pytestmark = [pytest.mark.build, pytest.mark.slow, pytest.mark.timeout(1800)]


# --- browser: Playwright's driver is frozen; Chromium is not bundled and is found at run time ------

PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Frozen Shop</title>
<meta name="description" content="A page for the frozen browser build"></head>
<body><script>window.dataLayer = window.dataLayer || [];
window.dataLayer.push({event: "frozen_view", page_type: "home"});</script><h1>Hello</h1></body></html>"""


@pytest.fixture(scope="module")
def browser(frozen_build):
    result = frozen_build("browser")
    assert result.ok, result.error
    return result


def test_browser_build_carries_the_driver_but_no_browser(browser):
    inside = internal_packages(browser.folder)
    assert {"playwright", "analytics_acp_browser"} <= inside
    assert not inside & {"sqlalchemy", "googleapiclient", "matplotlib", "statsmodels", "analytics_acp_databases"}
    driver = browser.folder / "_internal" / "playwright" / "driver"
    assert (driver / "node").is_file() and (driver / "package" / "cli.js").is_file()
    # No browser binary (Playwright's own downloads live in chromium-*/ folders; the driver's JS has a server/chromium/).
    assert not [p for p in browser.folder.rglob("*") if p.name in ("chrome", "headless_shell", ".local-browsers")
                or p.name.startswith(("chromium-", "chromium_headless_shell-"))]


@pytest.mark.browser
def test_browser_frozen_captures_a_page_with_the_system_chromium(browser, tmp_path):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    if not (shutil.which("chromium") or Path("/usr/bin/chromium").exists()) and not os.environ.get("CI"):
        pytest.skip("Chromium is not installed (apt-get install chromium, or make system-deps)")

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    env = {"ACP_CACHE_DIR": str(tmp_path / "cache"), "ACP_TMP_DIR": str(tmp_path / "tmp"), "HOME": str(tmp_path / "home")}

    async def run():
        async with AcpClient.stdio([str(browser.folder / "browser-server")], env=env, cwd=str(browser.folder)) as client:
            return await client.call_tool("capture", {"resource_id": origin, "url": "/", "tables": ["datalayer", "seo"]},
                                          meta={"config": {"settle_ms": 300, "navigation_timeout_ms": 15000}})

    try:
        res = anyio.run(run)
    finally:
        httpd.shutdown()
    assert not res.is_error, res.text
    tables = {t.name: t for t in res.tables()}
    assert tables["seo"].rows[0]["title"] == "Frozen Shop"
    assert "frozen_view" in [r["event"] for r in tables["datalayer"].rows]
