"""The core's conformance kit (spec 14.2 checklist) against `analytics-acp serve databases` on the example database."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

kit = pytest.importorskip("analytics_acp.kit")

from analytics_acp_databases.example_db import create_example_db  # noqa: E402

PACKAGE_DIR = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def served():
    """One `serve databases --http` process for the PostgreSQL and MariaDB runs (a session per probe).

    The SQLite run keeps the whole checklist over stdio; the other engines only change what the
    credentials reach, so their runs share one process, whose log and folders the kit still scans.
    """
    with kit.serve_http([*kit.serve_command("databases"), "--http"]) as server:
        yield server


def test_conformance_databases(tmp_path):
    db = create_example_db(tmp_path / "ventas.sqlite", end=dt.date(2026, 9, 28))
    results = kit.run_checklist(
        kit.serve_command("databases"),
        credentials={"type": "sqlite", "path": str(db)},
        resource_id="ventas",
        sample_calls=[
            ("execute_sql", {"sql": "SELECT fecha, SUM(pedidos) AS pedidos FROM ventas WHERE fecha BETWEEN '2026-09-01' AND '2026-09-28' GROUP BY fecha"}),
            ("validate_sql", {"sql": "SELECT * FROM ventas WHERE fecha >= '{{start_date}}'"}),
            ("insert_rows", {"table_ref": "kit_numbers", "table": "kit_numbers", "create_if_missing": True}),
        ],
        package_dir=PACKAGE_DIR,
    )
    print(kit.format_table(results))
    failed = [r for r in results if r.status == "fail"]
    assert not failed, "ACP conformance failures (14.2):\n" + "\n".join(str(r) for r in failed)


@pytest.mark.services
def test_conformance_databases_postgresql(pg_schema, served):
    """The same checklist on PostgreSQL, with a password in a URL credential (the kit hunts for it everywhere)."""
    _creds, schema, admin = pg_schema
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE TABLE "{schema}".daily (day date, channel text, orders int)')
        conn.exec_driver_sql(f"INSERT INTO \"{schema}\".daily SELECT DATE '2026-09-01' + g, 'web', g FROM generate_series(0, 29) g")
    results = kit.run_checklist(
        url=served.url, server_files=served.files,
        credentials={"type": "url", "url": "postgresql://postgres:Kit-Secret-Pw-77@127.0.0.1:5432/test"},
        resource_id=f"test.{schema}",
        sample_calls=[
            ("execute_sql", {"sql": "SELECT day, SUM(orders) AS orders FROM daily WHERE day BETWEEN '2026-09-01' AND '2026-09-30' GROUP BY day"}),
            ("insert_rows", {"table_ref": "kit_numbers", "table": "kit_numbers", "create_if_missing": True}),
        ],
        package_dir=PACKAGE_DIR,
    )
    print(kit.format_table(results))
    failed = [r for r in results if r.status == "fail"]
    assert not failed, "ACP conformance failures (14.2):\n" + "\n".join(str(r) for r in failed)


@pytest.mark.services
def test_conformance_databases_mariadb(maria_db, served):
    """The checklist on MariaDB, as a user with a password in a `url` credential.

    (A `server` credential fails the kit's secrets item: the kit treats every credential string as
    secret, and the database name is part of every resource_id while host and database are in titles.)
    """
    import uuid

    creds, name, admin = maria_db
    user, secret = f"kit_{uuid.uuid4().hex[:8]}", "Kit-Maria-Pw-31"
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE `{name}`.daily (day DATE, channel VARCHAR(10), orders INT)")
        conn.exec_driver_sql(f"INSERT INTO `{name}`.daily SELECT DATE '2026-09-01' + INTERVAL seq DAY, 'web', seq FROM seq_0_to_29")
        for host in ("%%", "localhost"):
            conn.exec_driver_sql(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{secret}'")
            conn.exec_driver_sql(f"GRANT SELECT, INSERT, CREATE, DROP ON `{name}`.* TO '{user}'@'{host}'")
    try:
        results = kit.run_checklist(
            url=served.url, server_files=served.files,
            credentials={"type": "url", "url": f"mysql+pymysql://{user}:{secret}@127.0.0.1:3306/{name}"},
            resource_id=name,
            sample_calls=[
                ("execute_sql", {"sql": "SELECT day, SUM(orders) AS orders FROM daily WHERE day BETWEEN '2026-09-01' AND '2026-09-30' GROUP BY day"}),
                ("insert_rows", {"table_ref": "kit_numbers", "table": "kit_numbers", "create_if_missing": True}),
            ],
            package_dir=PACKAGE_DIR,
        )
    finally:
        with admin.begin() as conn:
            for host in ("%%", "localhost"):
                conn.exec_driver_sql(f"DROP USER '{user}'@'{host}'")
    print(kit.format_table(results))
    failed = [r for r in results if r.status == "fail"]
    assert not failed, "ACP conformance failures (14.2):\n" + "\n".join(str(r) for r in failed)
