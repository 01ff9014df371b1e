"""The guard's deny list of functions (10.4, first layer): every entry, and the real databases behind it (issue 38.9).

The names are written out here, not read from readonly.py, so a name dropped from SIDE_EFFECT_FUNCTIONS
(or misspelt there) fails the test of that name. Against the servers: each PostgreSQL name is a function
the server really has (a misspelt entry would guard nothing); the reads of the server's files and the
session locks run inside the database's own READ ONLY fence, so the guard alone stops them (shown with
the guard switched off); every name is refused through execute_sql on the database it belongs to.
"""

from __future__ import annotations

import uuid

import pytest
from analytics_acp import ReadOnlyViolation
from analytics_acp_databases.arguments import ExecuteSql
from analytics_acp_databases.execute import run_execute_sql
from analytics_acp_databases.readonly import SIDE_EFFECT_FUNCTIONS, check_sql

POSTGRES = (
    # writes, sequences, large objects (files on the server), session settings
    "set_config", "nextval", "setval", "lo_import", "lo_export", "lo_unlink", "lo_create", "lo_creat", "lo_from_bytea",
    "lo_put", "lo_truncate",
    # the server's files, other sessions, the server itself
    "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_terminate_backend", "pg_cancel_backend",
    "pg_reload_conf", "pg_rotate_logfile", "pg_promote", "pg_switch_wal", "pg_create_restore_point",
    # locks and notifications that outlive the statement
    "pg_advisory_lock", "pg_advisory_xact_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock",
    "pg_try_advisory_xact_lock", "pg_notify", "pg_logical_emit_message",
    # SQL run from text, other connections
    "pg_create_logical_replication_slot", "pg_drop_replication_slot", "dblink", "dblink_exec", "dblink_connect",
    "dblink_send_query", "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "cursor_to_xml",
    "txid_current", "pg_current_xact_id", "pg_export_snapshot",
    # admin functions a superuser may run in a READ ONLY transaction, not undone by the rollback
    "pg_stat_reset", "pg_stat_reset_shared", "pg_stat_reset_single_table_counters",
    "pg_stat_reset_single_function_counters", "pg_stat_reset_slru", "pg_stat_reset_replication_slot",
    "pg_stat_reset_subscription_stats", "pg_stat_statements_reset", "pg_create_physical_replication_slot",
    "pg_copy_physical_replication_slot", "pg_copy_logical_replication_slot", "pg_replication_slot_advance",
    "pg_replication_origin_create", "pg_replication_origin_drop", "pg_replication_origin_advance",
    "pg_replication_origin_session_setup", "pg_replication_origin_session_reset", "pg_log_backend_memory_contexts",
    "pg_backup_start", "pg_backup_stop", "pg_start_backup", "pg_stop_backup", "pg_wal_replay_pause",
    "pg_wal_replay_resume", "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync",
    "pg_import_system_collations", "pg_sequence_last_value",
)
# Not in a bare server: extensions (dblink, pg_stat_statements, adminpack), or renamed in 15 (the *_backup pair).
POSTGRES_EXTENSIONS = frozenset({"dblink", "dblink_exec", "dblink_connect", "dblink_send_query", "pg_stat_statements_reset",
                                 "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync"})
POSTGRES_SINCE_15 = frozenset({"pg_backup_start", "pg_backup_stop"})
POSTGRES_BEFORE_15 = frozenset({"pg_start_backup", "pg_stop_backup"})
# load_extension and fts3_tokenizer are in Python's SQLite; readfile/writefile/edit in the sqlite3 shell and fileio.
SQLITE = ("load_extension", "writefile", "readfile", "edit", "fts3_tokenizer")
MYSQL = ("load_file", "get_lock", "release_lock", "release_all_locks", "master_pos_wait", "source_pos_wait")
DUCKDB = ("write_csv", "write_parquet")
DENIED = POSTGRES + SQLITE + MYSQL + DUCKDB

# Where a function call can sit in a query: every one is walked by the guard.
FORMS = (
    "SELECT {f}('a')",
    "SELECT {F}('a')",
    "SELECT * FROM {f}('a') AS x",
    "SELECT 1 WHERE {f}('a') IS NULL",
    "SELECT s.{f}('a')",
)


def test_the_deny_list_is_the_one_tested_here():
    assert len(set(DENIED)) == len(DENIED)
    assert sorted(SIDE_EFFECT_FUNCTIONS - set(DENIED)) == [], "a new entry needs its place in this file"
    assert sorted(set(DENIED) - SIDE_EFFECT_FUNCTIONS) == [], "an entry was dropped from the deny list"


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "sqlite", "duckdb"])
def test_guard_refuses_every_denied_function_wherever_it_sits(dialect):
    missed = []
    for name in DENIED:
        for form in FORMS:
            sql = form.format(f=name, F=name.upper())
            try:
                check_sql(sql, dialect)
            except ReadOnlyViolation as exc:
                if (exc.data or {}).get("function") != name or name not in exc.message:
                    missed.append((sql, exc.data))
            else:
                missed.append((sql, "accepted"))
    assert missed == []


def _refused_through_execute_sql(names, ctx) -> list[str]:
    """The names execute_sql did not refuse as a read-only violation naming the function."""
    missed = []
    for name in names:
        try:
            run_execute_sql(ExecuteSql.parse({"sql": f"SELECT {name}('a') AS v"}), ctx)
        except ReadOnlyViolation as exc:
            if (exc.data or {}).get("function") != name:
                missed.append(name)
        else:
            missed.append(name)
    return missed


# --- PostgreSQL


@pytest.mark.services
def test_pg_deny_list_names_functions_the_server_has(pg_schema):
    _, _, admin = pg_schema
    with admin.connect() as conn:
        major = conn.dialect.server_version_info[0]
        have = {row[0] for row in conn.exec_driver_sql("SELECT DISTINCT proname FROM pg_proc")}
    absent = POSTGRES_EXTENSIONS | (POSTGRES_BEFORE_15 if major >= 15 else POSTGRES_SINCE_15)
    assert sorted(set(POSTGRES) - absent - have) == []


@pytest.mark.services
def test_pg_every_denied_function_is_refused_by_execute_sql(pg_schema, make_ctx):
    creds, schema, _ = pg_schema
    assert _refused_through_execute_sql(POSTGRES + ("nextval", "pg_read_file"), make_ctx(creds, f"test.{schema}")) == []


@pytest.mark.services
def test_pg_reads_of_the_servers_files_pass_the_read_only_fence_so_the_guard_stops_them(pg_schema, make_ctx, consume, request):
    """A superuser's READ ONLY transaction reads the server's files: pg_read_file is refused by the guard only."""
    creds, schema, admin = pg_schema
    with admin.connect() as conn:
        major = str(conn.dialect.server_version_info[0])
    reads = {
        "pg_read_file": "SELECT split_part(pg_read_file('PG_VERSION'), chr(10), 1) AS v",
        "pg_read_binary_file": "SELECT split_part(convert_from(pg_read_binary_file('PG_VERSION'), 'UTF8'), chr(10), 1) AS v",
        "pg_stat_file": "SELECT (pg_stat_file('PG_VERSION')).size::text AS v",
        "pg_ls_dir": "SELECT v FROM pg_ls_dir('.') AS v WHERE v = 'PG_VERSION'",
    }
    ctx = make_ctx(creds, f"test.{schema}")
    for name, sql in reads.items():
        with pytest.raises(ReadOnlyViolation) as info:
            run_execute_sql(ExecuteSql.parse({"sql": sql}), ctx)
        assert info.value.data["function"] == name
    request.getfixturevalue("no_guard")
    got = {name: consume(run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx(creds, f"test.{schema}"))) for name, sql in reads.items()}
    assert got["pg_read_file"] == got["pg_read_binary_file"] == [{"v": major}]
    assert got["pg_ls_dir"] == [{"v": "PG_VERSION"}] and int(got["pg_stat_file"][0]["v"]) > 0


# --- MariaDB


@pytest.mark.services
def test_maria_every_denied_function_is_refused_by_execute_sql(maria_db, make_ctx):
    creds, name, _ = maria_db
    assert _refused_through_execute_sql(MYSQL, make_ctx(creds, name)) == []


@pytest.mark.services
def test_maria_session_lock_passes_the_read_only_fence_so_the_guard_stops_it(maria_db, make_ctx, consume, request):
    """GET_LOCK in a READ ONLY transaction holds a lock past the call (the pooled connection keeps it)."""
    creds, name, admin = maria_db
    lock = f"acp_t_{uuid.uuid4().hex[:8]}"

    def holder():
        with admin.connect() as conn:
            return conn.exec_driver_sql("SELECT IS_USED_LOCK(%s)", (lock,)).scalar()

    with pytest.raises(ReadOnlyViolation):
        run_execute_sql(ExecuteSql.parse({"sql": f"SELECT GET_LOCK('{lock}', 0) AS v"}), make_ctx(creds, name))
    assert holder() is None
    request.getfixturevalue("no_guard")
    assert consume(run_execute_sql(ExecuteSql.parse({"sql": f"SELECT GET_LOCK('{lock}', 0) AS v"}), make_ctx(creds, name))) == [{"v": 1}]
    assert holder() is not None  # released when the engines are disposed (conftest)


# --- SQLite and DuckDB (files)


def test_sqlite_every_denied_function_is_refused_by_execute_sql(sales_db, make_ctx):
    import sqlite3

    with sqlite3.connect(sales_db) as con:
        have = {row[0] for row in con.execute("SELECT name FROM pragma_function_list")}
    assert {"load_extension", "fts3_tokenizer"} <= have
    assert _refused_through_execute_sql(SQLITE, make_ctx({"type": "sqlite", "path": sales_db}, "ventas")) == []


def test_duckdb_every_denied_function_is_refused_by_execute_sql(duck_db, make_ctx):
    import duckdb

    con = duckdb.connect(duck_db, read_only=True)
    try:
        have = {row[0] for row in con.execute("SELECT DISTINCT function_name FROM duckdb_functions()").fetchall()}
    finally:
        con.close()
    shared = {"nextval", "setval", "txid_current"}  # PostgreSQL names DuckDB has too
    assert shared <= have
    assert _refused_through_execute_sql(DUCKDB + tuple(sorted(shared)), make_ctx({"type": "duckdb", "path": duck_db}, "tienda")) == []


# --- the false refusals (issue 38.9): a comment after the last semicolon is not a second statement


@pytest.mark.services
def test_pg_runs_a_query_with_a_comment_after_its_semicolon(pg_schema, make_ctx, consume):
    creds, schema, _ = pg_schema
    assert consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1 AS x; -- the end"}), make_ctx(creds, f"test.{schema}"))) == [{"x": 1}]


def test_duckdb_runs_a_query_with_empty_statements_after_it(duck_db, make_ctx, consume):
    ctx = make_ctx({"type": "duckdb", "path": duck_db}, "tienda")
    assert consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT 1 AS x;/**/;"}), ctx)) == [{"x": 1}]
