"""The browser connector behind the bridge (16.5, 11.3): a multitable capture becomes one dataset per
table with data, the manifest is not stored, and a screenshot arrives as an image block (8.10)."""

from __future__ import annotations

import json
import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytestmark = pytest.mark.browser
if not (os.path.exists("/usr/bin/chromium") or shutil.which("chromium") or os.environ.get("CI")):
    pytest.skip("Chromium is not installed (make system-deps)", allow_module_level=True)
pytest.importorskip("analytics_acp_browser")

PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bridge shop</title>
<script>
window.dataLayer = window.dataLayer || [];
dataLayer.push({event: "page_ready", page_type: "home"});
dataLayer.push({event: "promo_view", promo: "summer"});
document.cookie = "bridge_pref=dark; path=/";
</script></head><body><h1>Bridge shop</h1></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server API)
        body, kind = (PAGE, "text/html") if self.path in ("/", "/index.html") else (b"", "text/plain")
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


async def test_bridge_browser_capture_one_dataset_per_table(tmp_path, site, bridge, write_sources):
    project = tmp_path / "proj"
    project.mkdir()
    config = {"settle_ms": 300, "navigation_timeout_ms": 20000, "action_timeout_ms": 5000}
    write_sources(project / "sources.json", {"sources": [
        {"id": "web", "acp": "browser", "label": "Shop audit", "default_resource_id": site, "config": config},
    ]})
    async with bridge(project) as client:
        tools = await client.tools()
        assert tools["web__capture"]["description"].startswith("[Shop audit · ")
        is_error, response, notes = await client.call_json("web__capture", {"url": "/", "tables": ["datalayer", "cookies", "console"]})
        assert not is_error, response
        assert "manifest" in response
        is_error, texts, raw = await client.call("web__screenshot", {})
    data = project / "acp-data"
    stored = {p.stem.split("_")[2]: p for p in data.glob("web_capture_*.csv")}
    assert set(stored) == {"datalayer", "cookies"}  # console had no rows: no dataset; manifest never stored
    note = notes[0]
    for name, path in stored.items():
        meta = json.loads(path.with_suffix("").with_suffix(".meta.json").read_text(encoding="utf-8"))
        assert meta["tool"] == "capture" and meta["source"] == "web" and meta["row_count"] >= 1
        assert f"Table «{name}»: the full table was saved as dataset «{path.stem}» in acp-data/{path.stem}.csv." in note
    assert "No data: console." in note
    assert "promo_view" in stored["datalayer"].read_text(encoding="utf-8")
    assert "bridge_pref" in stored["cookies"].read_text(encoding="utf-8")
    assert not is_error and any(c["type"] == "image" and c["mimeType"] == "image/png" for c in raw["content"])
