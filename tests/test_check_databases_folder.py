"""`analytics-acp check <servers>/databases` on a healthy server folder (issue 15.4): items that need
credentials are n/a without them, and relative paths in --credentials are the caller's (cwd), not
the server folder's."""

import json
import shutil
from pathlib import Path

import pytest
from analytics_acp_build.cli import check_main

example_db = pytest.importorskip("analytics_acp_databases.example_db")
DATABASES = Path(__file__).resolve().parents[1] / "connectors" / "databases"
SERVER_PY = """import sys
import analytics_acp_databases.plugin as plugin
from analytics_acp.cli import serve_module_main
sys.exit(serve_module_main(plugin, sys.argv[1:]))
"""


def databases_folder(parent: Path) -> Path:
    """A server folder (13.1) that serves the databases connector of this venv (no freezing)."""
    folder = parent / "servers" / "databases"
    folder.mkdir(parents=True)
    (folder / "acp.json").write_text(json.dumps({
        "acp_version": "1.0", "id": "databases", "name": "Databases", "version": "0.1.0", "publisher": "tests",
        "description": "Read-only SQL.", "icon": "icon.svg",
        "transport": {"type": "stdio", "command": "python", "args": ["server.py"]},
        "http": {"args": ["server.py", "--http", "--port", "7413"]},
    }))
    (folder / "server.py").write_text(SERVER_PY)
    shutil.copytree(DATABASES / "skills", folder / "skills")
    shutil.copy(DATABASES / "icon.svg", folder / "icon.svg")
    return folder


def _items(capsys) -> dict:
    return {i["item"]: i for i in json.loads(capsys.readouterr().out)["items"]}


def test_check_without_credentials_passes_with_na_items(tmp_path, capsys):
    code = check_main([str(databases_folder(tmp_path)), "--json"])
    items = _items(capsys)
    assert code == 0, [i for i in items.values() if i["status"] == "fail"]
    assert items["resources.suggestions"]["status"] == "n/a"
    assert "no credentials given" in items["resources.suggestions"]["evidence"]


def test_relative_credentials_path_is_the_callers(tmp_path, capsys, monkeypatch):
    folder = databases_folder(tmp_path)
    work = tmp_path / "work"
    example_db.create_example_db(work / "shop.db", days=10)
    monkeypatch.chdir(work)
    code = check_main([str(folder), "--credentials", '{"type": "sqlite", "path": "shop.db"}', "--resource-id", "shop",
                       "--sample", 'execute_sql={"sql": "SELECT fecha, SUM(pedidos) AS pedidos FROM ventas GROUP BY fecha"}',
                       "--json"])
    items = _items(capsys)
    assert code == 0, [i for i in items.values() if i["status"] == "fail"]
    assert items["resources.suggestions"]["status"] == "pass" and items["autocontext.all_blocks"]["status"] == "pass"
    assert not (folder / "shop.db").exists()
