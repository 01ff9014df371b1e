"""Discovery (13.1, 13.2): acps/ folders, dot-folders ignored, folder name = id, precedence over installed."""

import json
import sys

from analytics_acp_bridge.fleet.discovery import discover


def make(folder, data, raw=None):
    folder.mkdir(parents=True)
    (folder / "acp.json").write_text(raw if raw is not None else json.dumps(data), encoding="utf-8-sig")


def test_bridge_discovery_folders_and_precedence(tmp_path):
    acps = tmp_path / "acps"
    make(acps / "databases", {"id": "databases", "name": "My DB", "transport": {"type": "stdio", "command": "python", "args": ["server.py", "--flag"]}})
    (acps / "databases" / "server.py").write_text("", encoding="utf-8")
    make(acps / ".hidden", {"id": "hidden", "name": "H", "transport": {"type": "stdio", "command": "x"}})
    make(acps / "renamed", {"id": "other", "name": "R", "transport": {"type": "stdio", "command": "node", "args": ["s.mjs"]}})
    make(acps / "broken", {}, raw="{not json")
    make(acps / "remote", {"id": "remote", "name": "Remote", "transport": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer tok"}}})
    (acps / "nojson").mkdir()
    found = discover(tmp_path)
    assert "hidden" not in found and ".hidden" not in found and "nojson" not in found and "other" not in found
    db = found["databases"]
    assert db.origin == "folder" and db.name == "My DB"  # acps/ wins over the installed connector
    assert db.command == [sys.executable, str((acps / "databases" / "server.py").resolve()), "--flag"]
    assert db.cwd == acps / "databases"
    assert found["renamed"].warnings and found["renamed"].command == ["node", "s.mjs"]
    assert "not valid JSON" in found["broken"].error
    assert found["remote"].transport == "http" and found["remote"].token == "tok"
    assert "tok" not in json.dumps(found["remote"].public())
    assert found["prediction"].origin == "installed"
    assert found["prediction"].command[-2:] == ["serve", "prediction"]


def test_bridge_discovery_folder_acp_gets_its_own_cache(tmp_path, monkeypatch):
    from analytics_acp_bridge.factory import acp_cache_dir
    from analytics_acp_bridge.fleet.discovery import AcpLaunch

    monkeypatch.setenv("ACP_CACHE_DIR", str(tmp_path / "cache"))
    folder = AcpLaunch(id="databases", name="databases", origin="folder", folder=tmp_path / "acps" / "databases")
    installed = AcpLaunch(id="databases", name="databases", origin="installed")
    # 13.1: a folder ACP's cache differs from the installed connector's with the same id (which inherits ACP_CACHE_DIR)
    assert acp_cache_dir(folder) == tmp_path / "cache" / "bridge-acps" / "databases"
    assert acp_cache_dir(installed) is None
