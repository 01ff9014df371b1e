"""Passwords never leave in an error (10.1.4), also when the driver itself echoes them; missing drivers are typed."""

from __future__ import annotations

import importlib.util
import uuid

import pytest
from analytics_acp import CredentialsInvalid, InvalidArguments
from analytics_acp_databases.arguments import ExecuteSql
from analytics_acp_databases.execute import run_execute_sql
from analytics_acp_databases.resources import list_resources


@pytest.mark.parametrize("url", ["mssql+pyodbc://sa:Drv-Secret-55@127.0.0.1:1/shop", "nosuchdb+nodriver://u:Drv-Secret-55@127.0.0.1/x"])
def test_a_driver_that_is_not_installed_is_credentials_invalid(url, make_ctx):
    if url.startswith("mssql") and importlib.util.find_spec("pyodbc") is not None:
        pytest.skip("pyodbc is installed here")
    creds = {"type": "url", "url": url}
    for call in (lambda: run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1"}), make_ctx(creds, "shop")), lambda: list_resources(make_ctx(creds))):
        with pytest.raises(CredentialsInvalid) as info:
            call()
        assert url.split("://")[0] in info.value.message and "install" in info.value.message
        assert "Drv-Secret-55" not in info.value.message and "127.0.0.1" not in info.value.message


@pytest.mark.services
def test_pg_password_echoed_in_a_driver_error_is_scrubbed(make_ctx, need):
    """Trust auth accepts any password; the query puts it in PostgreSQL's own error text."""
    need(5432, "PostgreSQL")
    secret = "p@ss:Echo/42"
    server = {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "port": 5432, "user": "postgres", "password": secret, "database": "test"}
    url = {"type": "url", "url": "postgresql://postgres:p%40ss%3AEcho%2F42@127.0.0.1:5432/test"}
    for creds in (server, url):
        with pytest.raises(InvalidArguments) as info:
            run_execute_sql(ExecuteSql.parse({"sql": f"SELECT '{secret}'::int"}), make_ctx(creds, "test"))
        assert "invalid input syntax for type integer" in info.value.message
        assert "Echo" not in info.value.message and "***" in info.value.message


@pytest.mark.services
def test_maria_password_echoed_in_a_driver_error_is_scrubbed(maria_db, make_ctx):
    creds, name, admin = maria_db
    user, secret = f"acp_{uuid.uuid4().hex[:8]}", "Maria-Echo-77"
    with admin.begin() as conn:
        for host in ("%%", "localhost"):
            conn.exec_driver_sql(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{secret}'")
            conn.exec_driver_sql(f"GRANT SELECT ON `{name}`.* TO '{user}'@'{host}'")
    try:
        server = {**creds, "user": user, "password": secret}
        url = {"type": "url", "url": f"mysql+pymysql://{user}:{secret}@127.0.0.1:3306/{name}"}
        for c in (server, url):
            with pytest.raises(InvalidArguments) as info:
                run_execute_sql(ExecuteSql.parse({"sql": f"SELECT * FROM `{secret}`"}), make_ctx(c, name))
            assert "doesn't exist" in info.value.message and secret not in info.value.message and "***" in info.value.message
    finally:
        with admin.begin() as conn:
            for host in ("%%", "localhost"):
                conn.exec_driver_sql(f"DROP USER '{user}'@'{host}'")
