"""The frozen `databases` build: only its dependencies, the checklist on SQLite, `check` on the folder, drivers
reaching PostgreSQL and MariaDB (13, 14.1).

Split per connector so pytest-xdist (--dist loadfile) freezes the connectors on different workers;
the build itself is shared (root conftest.py ``frozen_build``). Slow: marked ``build``.
"""

import json
import sqlite3
from pathlib import Path

import anyio
import pytest
from analytics_acp.host import AcpClient
from analytics_acp_build.check import Target, failed, run_check
from build_support import internal_packages

pytestmark = [pytest.mark.build, pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def databases(frozen_build):
    result = frozen_build("databases")
    assert result.ok, result.error
    return result


def test_databases_build_carries_only_its_dependencies(databases):
    inside = internal_packages(databases.folder)
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
