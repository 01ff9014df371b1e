"""Fixtures of the databases connector tests: real SQLite/DuckDB files, PostgreSQL/MariaDB on 127.0.0.1.

Server tests skip with a reason when the server is unreachable, except in CI (env CI set), where
they fail: CI must have the services (DESIGN.md).
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from analytics_acp import CallContext, HostTable
from analytics_acp.kit import make_ctx as kit_make_ctx
from analytics_acp.state import ConnectorState

sys.path.insert(0, str(Path(__file__).parent))  # helper modules beside the tests (dbactivity.py)

END = dt.date(2026, 9, 28)
PG = {"type": "server", "dialect": "postgresql", "host": "127.0.0.1", "port": 5432, "user": "postgres", "database": "test"}
MARIA = {"type": "server", "dialect": "mariadb", "host": "127.0.0.1", "port": 3306, "user": "root", "database": "test"}


def _reachable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def need_server(port: int, name: str) -> None:
    """Skip (or fail in CI) when a database server is not listening."""
    if not _reachable(port):
        if os.environ.get("CI"):
            pytest.fail(f"{name} on 127.0.0.1:{port} is required in CI")
        pytest.skip(f"{name} is not running on 127.0.0.1:{port}")


def _make_ctx(credentials: dict[str, Any] | None, resource_id: str | None = None, config: dict[str, Any] | None = None,
             tool: str = "execute_sql", tables: dict[str, HostTable] | None = None,
             connector_state: ConnectorState | None = None) -> CallContext:
    """The kit's CallContext; ``tables`` answer ctx.read_table like a host (8.8)."""
    return kit_make_ctx("databases", tool, tables=tables, credentials=credentials, config=config, resource_id=resource_id,
                        connector_state=connector_state or ConnectorState("databases"))


@pytest.fixture
def sales_db(tmp_path) -> str:
    """The spec's example database (ventas.sqlite, 90 days ending 2026-09-28)."""
    from analytics_acp_databases.example_db import create_example_db

    return str(create_example_db(tmp_path / "ventas.sqlite", days=90, end=END))


@pytest.fixture
def duck_db(tmp_path) -> str:
    """A DuckDB file with one row of every interesting type, plus the sales table."""
    import duckdb
    from analytics_acp_databases.example_db import example_rows

    path = tmp_path / "tienda.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE tipos (d DATE, ts TIMESTAMPTZ, n DECIMAL(18,2), big BIGINT, huge HUGEINT, b BOOLEAN, j JSON, s VARCHAR)"
    )
    con.execute(
        "INSERT INTO tipos VALUES ('2026-09-01', '2026-09-01 10:15:00+02', 1234.56, 9007199254740993, 12345678901234567890, true, '{\"k\": [1, 2]}', 'x')"
    )
    con.execute("CREATE TABLE ventas (fecha DATE, canal VARCHAR, pedidos INTEGER, importe DOUBLE)")
    con.executemany("INSERT INTO ventas VALUES (?, ?, ?, ?)", example_rows(90, END))
    con.close()
    return str(path)


@pytest.fixture
def pg_schema() -> Any:
    """A unique schema in PostgreSQL's test database, dropped afterwards; yields (credentials, schema, admin engine)."""
    need_server(5432, "PostgreSQL")
    import sqlalchemy as sa

    schema = f"acp_t_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        yield dict(PG), schema, admin
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        admin.dispose()


@pytest.fixture
def maria_db() -> Any:
    """A unique MariaDB database, dropped afterwards; yields (credentials, database, admin engine)."""
    need_server(3306, "MariaDB")
    import sqlalchemy as sa

    name = f"acp_t_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine("mysql+pymysql://root@127.0.0.1:3306/test")
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE `{name}`")
    try:
        yield {**MARIA, "database": name}, name, admin
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP DATABASE `{name}`")
        admin.dispose()


@pytest.fixture
def connector_state() -> Any:
    """What the connector keeps between calls (engines, reflected columns), shared by a test's contexts as a
    server's are; closed at the end as the server's stop would (engines disposed)."""
    state = ConnectorState("databases")
    yield state
    state.close()


@pytest.fixture
def no_guard(monkeypatch) -> None:
    """execute_sql without the first layer (the sqlglot guard): any text reaches the fenced connection as written."""
    from analytics_acp_databases import execute as execute_module
    from analytics_acp_databases.readonly import CheckedQuery

    def accept_anything(sql: str, dialect: str | None) -> CheckedQuery:
        text = sql.strip()
        return CheckedQuery(sql=text, statement_type="SELECT", tree=None, explain=text.upper().startswith("EXPLAIN"))

    monkeypatch.setattr(execute_module, "check_sql", accept_anything)


@pytest.fixture
def make_ctx(connector_state) -> Callable[..., CallContext]:
    """Factory: make_ctx(credentials, resource_id=None, config=None, tool=..., tables=None), sharing the test's state."""

    def make(*args: Any, **kwargs: Any) -> CallContext:
        kwargs.setdefault("connector_state", connector_state)
        return _make_ctx(*args, **kwargs)

    return make


@pytest.fixture
def need() -> Callable[[int, str], None]:
    """need(port, name): skip (fail in CI) when the server is absent."""
    return need_server


def rows_of(extraction: Any) -> list[dict[str, Any]]:
    """All rows of an Extraction as dicts (the generator is consumed once, as the core does)."""
    return [dict(zip(extraction.columns, row, strict=True)) for row in extraction.rows]


@pytest.fixture
def consume() -> Callable[[Any], list[dict[str, Any]]]:
    """consume(extraction) -> list of row dicts."""
    return rows_of
