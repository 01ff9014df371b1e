"""Issue 34.3: `analytics-acp serve databases` refuses a set-up offline through validate-only acp/configure
(the host client's ``validate_setup``): a database file that does not exist (the full path tried), a URL that
does not parse, limits (ACP_INVALID_LIMIT, 5.1), missing credentials; it connects to nothing, leaves the session
as it was, and no message holds a secret. Issue 34.2: the file paths of its setup schema are marked
``"format": "path"``.

One HTTP server process for the module; each test is a session of its own.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from pathlib import Path

import anyio
import pytest
from analytics_acp.host import AcpClient
from analytics_acp.kit import serve_http

SECRET = "pw-DISTINCT-SECRET-5c1e"


def _command() -> list[str]:
    exe = Path(sys.executable).with_name("analytics-acp")
    return [str(exe) if exe.exists() else shutil.which("analytics-acp") or "analytics-acp", "serve", "databases"]


@pytest.fixture(scope="module")
def served():
    with serve_http([*_command(), "--http"]) as server:
        yield server


def _validate(served, setup: dict):
    async def main():
        async with AcpClient.http(served.url) as client:
            assert client.supports_validate_only
            return await client.validate_setup(setup)

    return anyio.run(main)


def test_a_sqlite_file_that_does_not_exist_is_refused_with_the_full_path(served, tmp_path):
    gone = tmp_path / "data" / "gone.sqlite"
    error = _validate(served, {"credentials": {"type": "sqlite", "path": str(gone)}})
    assert error is not None and error.name == "ACP_CREDENTIALS_INVALID"
    assert error.message == f"The database file {gone} does not exist: check path in the source's credentials."
    folder = _validate(served, {"credentials": {"type": "duckdb", "path": str(tmp_path)}})
    assert folder is not None and f"The database file {tmp_path} is a folder, not a file" in folder.message


def test_a_relative_path_names_the_folder_it_was_taken_from(served):
    error = _validate(served, {"credentials": {"type": "sqlite", "path": "data/ventas.sqlite"}})
    here = os.getcwd()  # serve_http's process starts in this one
    assert error is not None and error.name == "ACP_CREDENTIALS_INVALID"
    assert (f"The database file {here}/data/ventas.sqlite does not exist (the relative path 'data/ventas.sqlite' "
            f"taken from the folder {here})") in error.message


def test_urls_parse_without_connecting_and_name_a_missing_file(served, tmp_path):
    with socket.socket() as listener:  # a PostgreSQL "server" that counts who connects
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        url = f"postgresql+psycopg://reader:{SECRET}@127.0.0.1:{port}/shop"
        assert _validate(served, {"credentials": {"type": "url", "url": url}}) is None
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected: the check is offline
    bad = _validate(served, {"credentials": {"type": "url", "url": f"not a url {SECRET}"}})
    assert bad is not None and bad.name == "ACP_CREDENTIALS_INVALID" and "does not parse" in bad.message
    assert SECRET not in bad.message
    missing = _validate(served, {"credentials": {"type": "url", "url": f"sqlite:///{tmp_path}/none.db"}})
    assert missing is not None and f"The URL's database file {tmp_path}/none.db does not exist" in missing.message


def test_limits_missing_credentials_and_config_are_typed(served, sales_db):
    good = {"type": "sqlite", "path": sales_db}
    assert _validate(served, {"credentials": good, "row_limit": 100, "config": {"access_mode": "full"}}) is None
    cases = [({"credentials": good, "row_limit": -1}, "ACP_INVALID_LIMIT"),
             ({"credentials": good, "cost_limit_usd": -2}, "ACP_INVALID_LIMIT"),
             ({}, "ACP_CREDENTIALS_MISSING"),
             ({"credentials": good, "config": {"access_mode": "everything"}}, "ACP_INVALID_ARGUMENTS"),
             ({"credentials": good, "config": {"table_rules": '[{"pattern": "(", "mode": "full"}]'}}, "ACP_INVALID_ARGUMENTS"),
             ({"credentials": {"type": "server", "dialect": "oracle", "host": "h", "user": "u", "password": SECRET}},
              "ACP_CREDENTIALS_INVALID")]
    for setup, name in cases:
        error = _validate(served, setup)
        assert error is not None and error.name == name, (setup, error)
        assert SECRET not in error.message and "Ask the user" not in error.message


def test_validate_only_leaves_the_session_as_it_was(served, sales_db):
    async def main():
        async with AcpClient.http(served.url) as client:
            assert await client.validate_setup({"credentials": {"type": "sqlite", "path": sales_db}, "row_limit": 3}) is None
            effective = (await client.configure())["effective"]
            assert effective["has_credentials"] is False and effective["row_limit"] == 25
            res = await client.call_tool("execute_sql", {"sql": "SELECT 1 AS x", "resource_id": "ventas"}, meta={})
            assert res.error["name"] == "ACP_CREDENTIALS_MISSING"

    anyio.run(main)


def test_file_paths_are_marked_as_paths():
    from analytics_acp.plugins import load_connector
    from analytics_acp.schemas import path_fields

    schema = load_connector("databases").info.credentials_schema
    assert path_fields(schema, {"type": "sqlite", "path": "x.db"}) == ["path"]
    assert path_fields(schema, {"type": "duckdb", "path": "x.duckdb"}) == ["path"]
    assert path_fields(schema, {"type": "url", "url": "sqlite:///x.db"}) == []
    assert path_fields(schema, {"type": "server", "host": "h", "user": "u"}) == []
