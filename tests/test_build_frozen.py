"""Frozen builds (PyInstaller --onedir): folder + zip layout (13, 14.1 step 14), verification, read-only
folder, environment variables (13.3), no half-written dist on failure, and the checklist on real connectors.

Slow (each freeze takes a minute or more): marked ``build``; CI runs this group.
"""

import json
import os
import shutil
import socket
import stat
import sysconfig
import venv
import zipfile
from pathlib import Path

import analytics_acp_build.build as build_module
import anyio
import httpx
import pytest
from analytics_acp.host import AcpClient
from analytics_acp_build.check import Target, failed, run_check
from analytics_acp_build.cli import build_main
from analytics_acp_build.freeze import executable_name
from analytics_acp_build.launch import free_port
from analytics_acp_build.manifest import IDENTITY_FIELDS
from analytics_acp_build.ziprules import extract_plan, read_plan
from build_support import TINYCONN

pytestmark = [pytest.mark.build, pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def tiny(frozen_build):
    # Built once per content hash of its inputs and shared (root conftest.py, tests/frozen_cache.py).
    result = frozen_build(str(TINYCONN))
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


def _light_build_venv(folder: Path, connector_src: Path) -> Path:
    """A real venv (no pip, made in milliseconds) that sees this test run's packages plus ``connector_src``:
    the build's declaration stage runs in it as in a build venv, without uv installing PyInstaller again."""
    env = folder / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    site_dir = next(env.glob("lib/python*/site-packages"))
    # addsitedir (not a bare path) so the test venv's own .pth files (editable core) are honoured too.
    (site_dir / "acp_test_build.pth").write_text(
        f"{connector_src}\nimport site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    return env


def test_failing_build_leaves_the_previous_dist_intact(tiny, tmp_path, monkeypatch, capsys):
    # A copy of the connector at 0.3.2 whose frozen server crashes at start: the build fails at verification,
    # after it has staged the folder and written the temp zip next to dist. Every stage from the declaration
    # on is the real build_main/build_one; only the two costly stages before it are fed from what exists:
    # the build venv is a light venv over this run's packages, and the freeze stage hands over the shared
    # tinyconn build's frozen executable with only the Python library in _internal/ (no base_library.zip,
    # no packages), so the frozen interpreter cannot start (broken on purpose) and the folder is small to
    # stage, zip and extract (the whole _internal/ would cost its ~75 MB copied, deflated and extracted).
    src = tmp_path / "tinyconn"
    shutil.copytree(TINYCONN, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    plugin = src / "src" / "analytics_acp_tinyconn" / "plugin.py"
    for f in (src / "pyproject.toml", plugin):
        f.write_text(f.read_text().replace("0.3.1", "0.3.2"))
    light_venv = _light_build_venv(tmp_path, src / "src")

    def cached_freeze(source, settings, declaration, venv_path, work, log):
        assert declaration["version"] == "0.3.2" and venv_path == light_venv  # the copy's real declaration
        frozen = work / "freeze" / source.id / "dist" / tiny.folder.name
        frozen.mkdir(parents=True)
        shutil.copy2(tiny.folder / executable_name(source.id), frozen)
        (frozen / "_internal").mkdir()
        for lib in (tiny.folder / "_internal").glob("libpython*"):  # the interpreter, without its stdlib
            shutil.copy2(lib, frozen / "_internal", follow_symlinks=False)
        return frozen

    monkeypatch.setattr(build_module, "ensure_venv", lambda *args: (light_venv, True))
    monkeypatch.setattr(build_module, "freeze", cached_freeze)
    # The previous dist is a copy of the shared build (the cached one stays untouched for other tests).
    out = tmp_path / "dist"
    shutil.copytree(tiny.folder, out / "tinyconn", symlinks=True)
    shutil.copy2(tiny.zip, out / tiny.zip.name)
    before = snapshot(out)
    # Its own work folder: the shared build's log and freeze stage (build/work) are not touched.
    assert build_main([str(src), "--out", str(out), "--work", str(tmp_path / "work"), "--timeout", "60", "--json"]) == 1
    [row] = json.loads(capsys.readouterr().out)  # --json: stdout holds only the result rows
    assert not row["ok"] and row["version"] == "0.3.2" and row["verification"] == "failed", row  # failed at verification
    assert sorted(p.name for p in out.iterdir()) == ["tinyconn", "tinyconn-0.3.1.zip"]  # no 0.3.2, no temp files
    assert snapshot(out) == before  # the previous folder and zip untouched


def test_unknown_connector_is_a_clear_error(tmp_path, capsys):
    assert build_main(["no_such_connector", "--out", str(tmp_path / "dist")]) == 1
    captured = capsys.readouterr()
    assert "No connector 'no_such_connector'" in captured.out + captured.err
    assert not (tmp_path / "dist" / "no_such_connector").exists()
