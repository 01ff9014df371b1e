"""The database the credentials name is the default resource when none is configured (spec 6,
issue 15.5): a single SQLite/DuckDB file, a `server` credential with `database`, a URL with one."""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from analytics_acp.host import AcpClient
from analytics_acp_databases.example_db import create_example_db

END = dt.date(2026, 9, 28)
PG = {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "port": 5432, "user": "postgres", "database": "test"}


def _command() -> list[str]:
    exe = Path(sys.executable).with_name("analytics-acp")
    return [str(exe) if exe.exists() else shutil.which("analytics-acp") or "analytics-acp", "serve", "databases"]


def _no_resource_id(credentials: dict, sql: str, expected: str, **extra_meta) -> None:
    async def main():
        async with AcpClient.stdio(_command()) as client:
            meta = {"credentials": credentials, "autocontext_delivered": True, **extra_meta}
            res = await client.call_tool("execute_sql", {"sql": sql}, meta=meta)
            assert not res.is_error, res.text
            assert res.system_info["resource_id"] == expected
            listing = await client.call_tool("autocontext", {}, meta=meta)
            assert f"The default resource is {expected}." in listing.model_response["notice"]
            blocks = await client.call_tool("autocontext_data", {}, meta=meta)
            assert not blocks.is_error

    anyio.run(main)


def test_sqlite_file_is_the_default(tmp_path):
    db = create_example_db(tmp_path / "ventas.sqlite", days=10, end=END)
    _no_resource_id({"type": "sqlite", "path": str(db)}, "SELECT count(*) AS n FROM ventas", "ventas")


def test_duckdb_file_is_the_default(tmp_path):
    import duckdb

    path = tmp_path / "tienda.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    con.close()
    _no_resource_id({"type": "duckdb", "path": str(path)}, "SELECT x FROM t", "tienda")


def test_configured_default_still_wins(tmp_path):
    db = create_example_db(tmp_path / "ventas.sqlite", days=10, end=END)
    other = create_example_db(tmp_path / "otra.sqlite", days=10, end=END)

    async def main():
        async with AcpClient.stdio(_command()) as client:
            meta = {"credentials": {"type": "sqlite", "path": str(db)}, "default_resource_id": "otra", "autocontext_delivered": True}
            res = await client.call_tool("execute_sql", {"sql": "SELECT 1"}, meta=meta)
            assert res.error["name"] == "ACP_RESOURCE_NOT_FOUND"  # the configured one is used (and is not this file)
    assert other.exists()
    anyio.run(main)


@pytest.mark.services
def test_postgresql_server_database_is_the_default(need):
    need(5432, "PostgreSQL")
    _no_resource_id(PG, "SELECT current_database() AS db", "test")


@pytest.mark.services
def test_mariadb_url_database_is_the_default(need):
    need(3306, "MariaDB")
    _no_resource_id({"type": "url", "url": "mysql://root@127.0.0.1:3306/test"}, "SELECT DATABASE() AS db", "test")


@pytest.mark.services
def test_server_without_database_still_requires_a_resource(need):
    need(5432, "PostgreSQL")

    async def main():
        async with AcpClient.stdio(_command()) as client:
            creds = {k: v for k, v in PG.items() if k != "database"}
            res = await client.call_tool("execute_sql", {"sql": "SELECT 1"}, meta={"credentials": creds})
            assert res.error["name"] == "ACP_RESOURCE_REQUIRED"

    anyio.run(main)
