"""Connection problems on the first call (issue 15.1): a typed error on every engine and every path
that connects (resource listing 6.3, autocontext blocks 7.3, execute_sql, validate_sql), through
`analytics-acp serve databases` exactly as a host sees them.

wrong login -> ACP_CREDENTIALS_INVALID, unknown database -> ACP_RESOURCE_NOT_FOUND,
unreachable -> ACP_UPSTREAM_ERROR naming host:port (12.1).

One `serve databases --http` process answers every case but the first, each on its own session with
credentials no other case uses (so every connection is still that server's first to that target);
the first case goes over stdio, a process of its own.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio
import pytest
from analytics_acp.host import AcpClient
from analytics_acp.kit import serve_http

PG = {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "port": 5432, "user": "postgres", "database": "test"}
MARIA = {"type": "server", "dialect": "mariadb", "host": "127.0.0.1", "port": 3306, "user": "root", "database": "test"}
INVALID, NOT_FOUND, UPSTREAM = "ACP_CREDENTIALS_INVALID", "ACP_RESOURCE_NOT_FOUND", "ACP_UPSTREAM_ERROR"


def _command() -> list[str]:
    exe = Path(sys.executable).with_name("analytics-acp")
    return [str(exe) if exe.exists() else shutil.which("analytics-acp") or "analytics-acp", "serve", "databases"]


async def _paths(client: AcpClient, credentials: dict, resource: str, sql: str) -> dict[str, tuple[str | None, str]]:
    """(error name, message) of each path; a block's error is 'NAME: message' inside the answer (7.3)."""
    meta = {"credentials": credentials}
    out = {}
    listing = await client.call_tool("autocontext", {}, meta=meta)
    out["listing"] = (listing.error or {}).get("name"), (listing.error or {}).get("message", listing.text)
    blocks = await client.call_tool("autocontext", {"resource_id": resource}, meta=meta)
    assert not blocks.is_error, blocks.text  # 7.3: failing blocks never fail the call
    tables = next(b for b in blocks.model_response if b["id"] == "tables")
    name, _, message = tables.get("error", "").partition(": ")
    out["blocks"] = name or None, message
    assert blocks.system_info["warnings"]
    for tool in ("execute_sql", "validate_sql"):
        res = await client.call_tool(tool, {"sql": sql, "resource_id": resource}, meta=meta)
        out[tool] = (res.error or {}).get("name"), (res.error or {}).get("message", res.text)
    return out


@pytest.fixture(scope="module")
def served():
    """The one HTTP server process of this module (a host session per test)."""
    with serve_http([*_command(), "--http"]) as server:
        yield server


def _check(credentials: dict, resource: str, expected: str, *needles: str, sql: str = "SELECT 1",
           served=None) -> None:
    async def main():
        connect = AcpClient.http(served.url) if served is not None else AcpClient.stdio(_command())
        async with connect as client:
            seen = await _paths(client, credentials, resource, sql)
        for path, (name, message) in seen.items():
            assert name == expected, (path, name, message)
            assert "TypeError" not in message and "NoneType" not in message, (path, message)
            for needle in needles:
                assert needle in message, (path, needle, message)
            assert "s3cret-PW" not in message

    anyio.run(main)


def test_sqlite_file_that_is_not_a_database(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_text("not a database " * 100)
    _check({"type": "sqlite", "path": str(junk)}, "junk", INVALID, "cannot be opened", sql="SELECT count(*) FROM sqlite_master")


def test_duckdb_file_that_is_not_a_database(tmp_path, served):
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database " * 100)
    _check({"type": "duckdb", "path": str(junk)}, "junk", INVALID, "cannot be opened", served=served)


def test_sqlite_file_that_does_not_exist(tmp_path, served):
    _check({"type": "sqlite", "path": str(tmp_path / "gone.db")}, "gone", INVALID, f"{tmp_path / 'gone.db'} does not exist",
           served=served)


@pytest.mark.services
def test_postgresql_unknown_role(need, served):
    need(5432, "PostgreSQL")
    _check({**PG, "user": "acp_no_such_role"}, "test", INVALID, "acp_no_such_role", served=served)


@pytest.mark.services
def test_postgresql_unknown_database(need, served):
    need(5432, "PostgreSQL")
    _check({**PG, "database": "acp_no_such_db"}, "acp_no_such_db", NOT_FOUND, "acp_no_such_db", served=served)


@pytest.mark.services
def test_mariadb_wrong_password(need, served):
    need(3306, "MariaDB")
    _check({**MARIA, "password": "s3cret-PW"}, "test", INVALID, "Access denied", served=served)


@pytest.mark.services
def test_mariadb_unknown_database(need, served):
    need(3306, "MariaDB")
    _check({**MARIA, "database": "acp_no_such_db"}, "acp_no_such_db", NOT_FOUND, "acp_no_such_db", served=served)


@pytest.mark.parametrize("credentials", [
    {**PG, "port": 1},
    {**MARIA, "port": 1},
    {"type": "url", "url": "postgresql://postgres:s3cret-PW@127.0.0.1:1/test"},
], ids=["postgresql", "mariadb", "url"])
def test_unreachable_server_names_host_and_port(credentials, served):
    _check(credentials, "test", UPSTREAM, "Could not connect to the", "server at 127.0.0.1:1", served=served)
