"""Frozen builds (PyInstaller --onedir): folder + zip layout (13, 14.1 step 14), verification, read-only
folder, environment variables (13.3), no half-written dist on failure, and the checklist on real connectors.

Slow (each freeze takes a minute or more): marked ``build``; CI runs this group.
"""

import json
import os
import shutil
import socket
import sqlite3
import stat
import zipfile
from pathlib import Path

import anyio
import httpx
import pytest
from analytics_acp.host import AcpClient
from analytics_acp_build.build import build_one, default_work_dir, human_size
from analytics_acp_build.check import Target, failed, run_check
from analytics_acp_build.cli import build_main
from analytics_acp_build.freeze import read_connector, venv_dir
from analytics_acp_build.launch import free_port
from analytics_acp_build.manifest import IDENTITY_FIELDS
from analytics_acp_build.package import folder_size
from analytics_acp_build.ziprules import extract_plan, read_plan
from build_support import TINYCONN

pytestmark = [pytest.mark.build, pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    result = build_one(str(TINYCONN), out)
    assert result.ok, result.error
    return result


def snapshot(folder: Path):
    return {str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in folder.rglob("*")}


def test_folder_layout_and_acp_json(tiny):
    folder = tiny.folder
    assert folder.name == "tinyconn" and tiny.zip.name == "tinyconn-0.3.1.zip"
    doc = json.loads((folder / "acp.json").read_text())
    assert set(doc) <= set(IDENTITY_FIELDS)  # 13.2: nothing of the capability
    assert doc == {
        "acp_version": "1.0", "id": "tinyconn", "name": "Tiny connector", "version": "0.3.1", "publisher": "analytics-acp",
        "description": "Counts from 1 to N (build tests only).", "icon": "icon.svg",
        "transport": {"type": "stdio", "command": "./tinyconn-server", "args": []},
        "http": {"args": ["--http", "--port", "7413"]},
    }
    exe = folder / "tinyconn-server"
    assert exe.is_file() and exe.stat().st_mode & stat.S_IXUSR
    assert (folder / "_internal").is_dir()
    assert (folder / "icon.svg").read_bytes() == (TINYCONN / "icon.svg").read_bytes()
    assert (folder / "skills" / "tiny-counting" / "SKILL.md").read_text() == (TINYCONN / "skills" / "tiny-counting" / "SKILL.md").read_text()
    readme = (folder / "README.md").read_text()
    assert readme.startswith("# Tiny connector") and "analytics-acp install tinyconn-0.3.1.zip" in readme
    assert not list(folder.parent.glob(".*"))  # no staging folder or temp zip left next to dist
    assert tiny.verification.startswith("ok: ACP 1.0") and tiny.folder_bytes > tiny.zip_bytes > 0


def test_zip_is_plain_deflate_with_the_folder_at_its_root(tiny):
    with zipfile.ZipFile(tiny.zip) as zf:
        infos = zf.infolist()
        assert all(i.filename.startswith("tinyconn/") for i in infos)
        assert {i.compress_type for i in infos if not i.is_dir()} == {zipfile.ZIP_DEFLATED}
        assert not any(stat.S_ISLNK(i.external_attr >> 16) for i in infos)
        names = {i.filename for i in infos}
    assert {"tinyconn/acp.json", "tinyconn/tinyconn-server", "tinyconn/skills/tiny-counting/SKILL.md"} <= names
    plan = read_plan(tiny.zip)  # the host rules of 13.1.1 accept it (no zip64, no escapes)
    assert plan.prefix == "tinyconn/" and not plan.ignored


async def _call_count(folder: Path, env: dict) -> list:
    async with AcpClient.stdio([str(folder / "tinyconn-server")], env=env, cwd=str(folder)) as client:
        assert client.server_capability["version"] == "1.0"
        res = await client.call_tool("count_rows", {"n": 4})
        assert not res.is_error, res.text
        return res.tables()[0].rows


def test_frozen_server_runs_from_a_read_only_folder_and_writes_nothing_there(tiny, tmp_path):
    plan = read_plan(tiny.zip)
    folder = tmp_path / "servers" / "tinyconn"
    folder.parent.mkdir()
    extract_plan(tiny.zip, plan, folder)
    for p in [folder, *folder.rglob("*")]:
        if not p.is_symlink():
            p.chmod(stat.S_IMODE(p.stat().st_mode) & ~0o222)
    before = snapshot(folder)
    cache, tmp = tmp_path / "cache", tmp_path / "tmp"
    # inline_max_bytes is not forced here; ACP_TMP_DIR/ACP_CACHE_DIR are where the server may write (13.3).
    rows = anyio.run(_call_count, folder, {"ACP_CACHE_DIR": str(cache), "ACP_TMP_DIR": str(tmp), "HOME": str(tmp_path / "home")})
    assert [r["square"] for r in rows] == [1, 4, 9, 16]
    assert snapshot(folder) == before  # 13.1: nothing written inside the server folder
    for p in [folder, *folder.rglob("*")]:
        p.chmod(stat.S_IMODE(p.stat().st_mode) | 0o200)


def test_frozen_server_honours_acp_port_and_acp_http_token(tiny, tmp_path):
    import subprocess
    import time

    port = free_port()
    env = {**os.environ, "ACP_PORT": str(port), "ACP_HTTP_TOKEN": "tok-123456", "ACP_CACHE_DIR": str(tmp_path / "c"),
           "ACP_TMP_DIR": str(tmp_path / "t")}
    proc = subprocess.Popen([str(tiny.folder / "tinyconn-server"), "--http"], cwd=tiny.folder, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # readiness wait (bounded, generous under load)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        denied = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers={"Accept": "application/json, text/event-stream"})
        assert denied.status_code == 401

        async def listed():
            async with AcpClient.http(url, token="tok-123456") as client:
                return [t["name"] for t in await client.list_tools()]

        assert "count_rows" in anyio.run(listed)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_check_passes_on_the_built_zip(tiny):
    items = run_check(Target(zip=tiny.zip), timeout=120)
    statuses = {i.item: i.status for i in items}
    assert statuses["package.zip"] == statuses["package.acp_json"] == statuses["package.starts"] == "pass"
    assert statuses["package.http_mode"] == statuses["package.read_only_folder"] == "pass"
    assert statuses["results.skills"] == statuses["handshake.capability"] == "pass"
    assert not failed(items), [(i.item, i.evidence) for i in failed(items)]


def test_failing_build_leaves_the_previous_dist_intact(tiny, tmp_path):
    # A copy of the connector whose frozen server crashes at start: the build fails at verification.
    src = tmp_path / "tinyconn"
    shutil.copytree(TINYCONN, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    plugin = src / "src" / "analytics_acp_tinyconn" / "plugin.py"
    plugin.write_text(plugin.read_text().replace(
        '    """The tiny connector\'s declaration."""',
        '    """The tiny connector\'s declaration."""\n    import sys\n    if getattr(sys, "frozen", False):\n'
        '        raise RuntimeError("broken on purpose when frozen")'))
    for f in (src / "pyproject.toml", plugin):
        f.write_text(f.read_text().replace("0.3.1", "0.3.2"))
    out = tiny.folder.parent
    before = snapshot(tiny.folder)
    try:
        assert build_main([str(src), "--out", str(out), "--timeout", "60"]) == 1
    finally:
        # The copy's build venv is keyed by its temp folder: drop it so runs do not pile venvs up in build/work.
        shutil.rmtree(venv_dir(read_connector(str(src)), default_work_dir()), ignore_errors=True)
    assert sorted(p.name for p in out.iterdir()) == ["tinyconn", "tinyconn-0.3.1.zip"]  # no 0.3.2, no temp files
    assert snapshot(tiny.folder) == before


def test_unknown_connector_is_a_clear_error(tmp_path, capsys):
    assert build_main(["no_such_connector", "--out", str(tmp_path / "dist")]) == 1
    captured = capsys.readouterr()
    assert "No connector 'no_such_connector'" in captured.out + captured.err
    assert not (tmp_path / "dist" / "no_such_connector").exists()


# --- the real connectors ---------------------------------------------------------------------------

def _internal_packages(folder: Path) -> set[str]:
    return {p.name.split(".")[0].split("-")[0] for p in (folder / "_internal").iterdir()}


@pytest.fixture(scope="module")
def databases(tmp_path_factory):
    result = build_one("databases", tmp_path_factory.mktemp("dist-db"))
    assert result.ok, result.error
    return result


def test_databases_build_carries_only_its_dependencies(databases):
    inside = _internal_packages(databases.folder)
    assert {"sqlalchemy", "sqlglot", "duckdb", "psycopg", "pymysql", "analytics_acp", "analytics_acp_databases"} <= inside
    assert not inside & {"googleapiclient", "google", "playwright", "matplotlib", "statsmodels", "analytics_acp_prediction",
                         "analytics_acp_browser", "tkinter", "pytest"}
    doc = json.loads((databases.folder / "acp.json").read_text())
    assert doc["id"] == "databases" and doc["transport"]["command"] == "./databases-server"
    assert (databases.folder / "skills").is_dir() or not (Path("connectors/databases/skills")).exists()


def test_databases_frozen_passes_the_checklist(databases, tmp_path):
    db = tmp_path / "ventas.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE ventas (fecha TEXT, pedidos INTEGER)")
    con.executemany("INSERT INTO ventas VALUES (?, ?)", [(f"2026-09-{d:02d}", d) for d in range(1, 29)])
    con.commit()
    con.close()
    items = run_check(Target(zip=databases.zip), credentials={"type": "sqlite", "path": str(db)}, resource_id="ventas",
                      sample_calls=[("execute_sql", {"sql": "SELECT fecha, SUM(pedidos) AS pedidos FROM ventas GROUP BY fecha"})],
                      timeout=120)
    assert not failed(items), [(i.item, i.evidence) for i in failed(items)]


def test_check_on_the_fresh_databases_build_without_credentials(databases, capsys, monkeypatch, tmp_path):
    # Issue 15.4 as the user ran it: `analytics-acp check <folder>` on what `make build` made, with no
    # credentials (items needing them are n/a, not failures), then with a relative --credentials
    # path, which is the caller's (cwd), not the server folder's.
    from analytics_acp_build.cli import check_main
    from analytics_acp_databases.example_db import create_example_db

    code = check_main([str(databases.folder), "--json"])
    items = {i["item"]: i for i in json.loads(capsys.readouterr().out)["items"]}
    assert code == 0, [i for i in items.values() if i["status"] == "fail"]
    assert items["resources.suggestions"]["status"] == "n/a" and "no credentials given" in items["resources.suggestions"]["evidence"]
    create_example_db(tmp_path / "shop.db", days=10)
    monkeypatch.chdir(tmp_path)
    code = check_main([str(databases.folder), "--credentials", '{"type": "sqlite", "path": "shop.db"}', "--resource-id", "shop",
                       "--json"])
    items = {i["item"]: i for i in json.loads(capsys.readouterr().out)["items"]}
    assert code == 0, [i for i in items.values() if i["status"] == "fail"]
    assert items["resources.suggestions"]["status"] == "pass" and items["autocontext.all_blocks"]["status"] == "pass"


@pytest.mark.services
@pytest.mark.parametrize("creds", [
    {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "port": 5432, "user": "postgres", "database": "test"},
    {"type": "server", "dialect": "mariadb", "host": "127.0.0.1", "port": 3306, "user": "root", "database": "test"},
], ids=["postgresql", "mariadb"])
def test_databases_frozen_drivers_reach_the_servers(databases, creds):
    async def run():
        async with AcpClient.stdio([str(databases.folder / "databases-server")], cwd=str(databases.folder)) as client:
            res = await client.call_tool("execute_sql", {"sql": "SELECT 1 AS one", "resource_id": "test"},
                                         meta={"credentials": creds})
            return res

    res = anyio.run(run)
    assert not res.is_error, res.text
    assert res.tables()[0].rows == [{"one": 1}]


@pytest.fixture(scope="module")
def prediction(tmp_path_factory):
    result = build_one("prediction", tmp_path_factory.mktemp("dist-pred"))
    assert result.ok, result.error
    return result


def test_prediction_build_carries_only_its_dependencies(prediction):
    inside = _internal_packages(prediction.folder)
    assert {"statsmodels", "matplotlib", "numpy", "pandas", "analytics_acp_prediction"} <= inside
    assert not inside & {"sqlalchemy", "googleapiclient", "playwright", "analytics_acp_databases", "tkinter", "pytest"}


def test_prediction_frozen_passes_the_checklist(prediction):
    items = run_check(Target(folder=prediction.folder), timeout=180)
    assert not failed(items), [(i.item, i.evidence) for i in failed(items)]


def test_prediction_frozen_forecasts_and_plots_host_tables(prediction, tmp_path):
    # statsmodels, scipy and matplotlib load on first use: only real calls prove the freeze carried them.
    headers = [{"name": "fecha", "type": "date"}, {"name": "pedidos", "type": "number"}]
    rows = [{"fecha": f"2026-{7 + d // 31:02d}-{d % 31 + 1:02d}", "pedidos": 100 + d + 10 * (d % 7)} for d in range(62)]

    async def resolver(ref, call_id):
        return {"format": "inline", "row_count": len(rows), "headers": headers, "table": rows}

    out = tmp_path / "artifacts"

    async def run():
        async with AcpClient.stdio([str(prediction.folder / "prediction-server")], resolver=resolver,
                                   env={"ACP_TMP_DIR": str(out), "ACP_CACHE_DIR": str(tmp_path / "c")},
                                   cwd=str(prediction.folder)) as client:
            forecast = await client.call_tool("forecast", {"table_ref": "ventas", "time_column": "fecha",
                                                           "value_column": "pedidos", "horizon": 7, "method": "holt_winters"})
            plot = await client.call_tool("plot", {"table_ref": "ventas", "x": "fecha", "y": "pedidos",
                                                   "width": 640, "height": 320})
            return forecast, plot

    forecast, plot = anyio.run(run)
    assert not forecast.is_error, forecast.text
    assert not plot.is_error, plot.text
    (table,) = forecast.tables()
    assert forecast.model_response["dates"] == ["2026-09-01", "2026-09-07"] and len(table.rows) == 7
    assert all(r["lower"] <= r["forecast"] <= r["upper"] and 140 < r["forecast"] < 260 for r in table.rows)
    png = Path(plot.model_response["screenshot_path"])
    assert png.parent == out.resolve() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- browser: Playwright's driver is frozen; Chromium is not bundled and is found at run time ------

PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Frozen Shop</title>
<meta name="description" content="A page for the frozen browser build"></head>
<body><script>window.dataLayer = window.dataLayer || [];
window.dataLayer.push({event: "frozen_view", page_type: "home"});</script><h1>Hello</h1></body></html>"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    result = build_one("browser", tmp_path_factory.mktemp("dist-browser"))
    assert result.ok, result.error
    return result


def test_browser_build_carries_the_driver_but_no_browser(browser):
    inside = _internal_packages(browser.folder)
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


@pytest.fixture(scope="module")
def gsc(tmp_path_factory):
    result = build_one("gsc", tmp_path_factory.mktemp("dist-gsc"))
    assert result.ok, result.error
    return result


def test_gsc_build_carries_one_discovery_document(gsc):
    inside = _internal_packages(gsc.folder)
    assert {"googleapiclient", "google", "httplib2", "analytics_acp_gsc", "analytics_acp_google"} <= inside
    assert not inside & {"sqlalchemy", "duckdb", "playwright", "matplotlib", "statsmodels", "analytics_acp_databases", "pytest"}
    docs = [p.name for p in gsc.folder.rglob("googleapiclient/discovery_cache/documents/*.json")]
    assert docs == ["searchconsole.v1.json"]  # not the 110 MB of every API
    print(f"gsc frozen: folder {human_size(folder_size(gsc.folder))}, zip {human_size(gsc.zip.stat().st_size)}")


def test_gsc_frozen_passes_the_checklist_on_the_fake(gsc):
    import sys

    here = Path(__file__).resolve().parents[1] / "connectors"
    sys.path[:0] = [str(here / "google" / "tests"), str(here / "gsc" / "tests")]
    import datetime as dt

    from analytics_acp_gsc.dates import today_pt
    from gscfake import DOMAIN, running_fakes

    with running_fakes(today_pt() - dt.timedelta(days=2)) as fakes:
        items = run_check(Target(zip=gsc.zip), credentials=fakes.service_account(), config=fakes.config, resource_id=DOMAIN,
                          sample_calls=[("search_analytics", {"dimensions": ["query", "date"]}),
                                        ("inspect_urls", {"urls": ["https://example.com/blog/p0"]}), ("sitemaps", {})],
                          env={"ANALYTICS_ACP_GOOGLE_DEADLINE_S": "5"}, timeout=120)
        assert fakes.queries(DOMAIN), "the frozen server reached the fake through googleapiclient"
    assert not failed(items), [(i.item, i.evidence) for i in failed(items)]
