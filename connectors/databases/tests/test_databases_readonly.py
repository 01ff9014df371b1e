"""Read-only is enforced twice (10.4): the sqlglot guard, and the database's own fence behind it.

Every bypass of the corpus must fail with ACP_READ_ONLY_VIOLATION and leave the data unchanged
(the tests read the tables and the directory afterwards).
"""

from __future__ import annotations

import os
import sqlite3

import duckdb
import pytest
import sqlglot
from analytics_acp import InvalidArguments, ReadOnlyViolation
from analytics_acp_databases import readonly
from analytics_acp_databases.arguments import ExecuteSql, ValidateSql
from analytics_acp_databases.engines import Source, open_read
from analytics_acp_databases.execute import run_execute_sql
from analytics_acp_databases.readonly import check_sql
from sqlalchemy import exc as sa_exc

ACCEPTED = [
    ("sqlite", "SELECT 1"),
    ("sqlite", "SELECT 1;"),
    ("sqlite", "select fecha from ventas -- trailing comment"),
    ("postgres", "WITH a AS (SELECT 1 AS x) SELECT x FROM a"),
    ("postgres", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r"),
    ("postgres", "VALUES (1, 'a'), (2, 'b')"),
    ("postgres", "(SELECT 1) UNION ALL (SELECT 2)"),
    ("postgres", "SELECT '; DELETE FROM t'"),
    ("postgres", "SELECT $$; DELETE FROM t$$"),
    ("postgres", "SELECT 1 /* ; DELETE FROM t */"),
    ("postgres", "EXPLAIN SELECT 1"),
    ("postgres", "EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1"),
    ("sqlite", "EXPLAIN QUERY PLAN SELECT * FROM ventas"),
    ("mysql", "SELECT `a` FROM `t` WHERE x = 'it''s; DROP TABLE t'"),
    ("mysql", "EXPLAIN FORMAT=JSON SELECT 1"),
    # Issue 38.9 (mutation run): every option word EXPLAIN may carry unparenthesized, in the dialect that has it.
    ("postgres", "EXPLAIN ANALYZE VERBOSE SELECT 1"),
    ("postgres", "EXPLAIN ANALYSE SELECT 1"),
    ("postgres", "EXPLAIN (FORMAT YAML, COSTS OFF, BUFFERS ON) SELECT 1"),
    ("mysql", "EXPLAIN FORMAT=TREE SELECT 1"),
    ("mysql", "EXPLAIN FORMAT=TRADITIONAL SELECT 1"),
    ("mysql", "EXPLAIN ANALYZE FORMAT=TREE SELECT 1"),
    ("mysql", "EXPLAIN EXTENDED SELECT 1"),
    ("mysql", "EXPLAIN PARTITIONS SELECT 1"),
    ("duckdb", "EXPLAIN ANALYZE SELECT 1"),
    ("mysql", "SELECT 1 /* ! not executable: a space first */ FROM DUAL"),
    ("mysql", "SELECT 1 --1 AS x"),  # MySQL reads 1 - -1 here, and so does the guard
    ("postgres", "SELECT 1 /*! a plain comment in PostgreSQL */"),
    ("duckdb", "FROM ventas"),
]

# Issue 38.9: a comment after the last semicolon is no second statement; the text sent is the one statement.
EMPTY_AROUND = [
    ("postgres", "SELECT 1; -- x"),
    ("duckdb", "SELECT 1;/**/;"),
    ("postgres", "SELECT 1 /* a */ ; /* b */"),
    ("sqlite", "-- x\n;;SELECT 1;--y\n;/*z*/"),
    ("postgres", "/* a */ ; SELECT 1"),
    ("mysql", "SELECT 1 -- x\n;"),
]


@pytest.mark.parametrize(("dialect", "sql"), EMPTY_AROUND)
def test_guard_accepts_empty_statements_and_comments_around_the_query(dialect, sql):
    assert check_sql(sql, dialect).sql == "SELECT 1"

# (dialect, sql, statement type named in the error)
REJECTED = [
    ("postgres", "SELECT 1; DELETE FROM t", "Multiple"),
    ("postgres", "COMMIT; DELETE FROM t", "Multiple"),
    ("postgres", "SELECT 1 -- x\n; DROP TABLE t", "Multiple"),
    ("postgres", "SELECT 1 /* a */; /* b */ UPDATE t SET a = 1", "Multiple"),
    ("postgres", "SELECT 1; -- x\nDELETE FROM t", "Multiple"),
    ("duckdb", "SELECT 1;/**/; DELETE FROM t", "Multiple"),
    ("postgres", "WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", "DELETE"),
    ("postgres", "WITH x AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM x", "INSERT"),
    ("postgres", "SELECT * FROM (UPDATE t SET a = 1 RETURNING *) x", "UPDATE"),
    ("postgres", "SELECT * INTO newt FROM t", "SELECT ... INTO"),
    ("postgres", "COPY t TO '/tmp/x'", "COPY"),
    ("postgres", "CALL p()", "CALL"),
    ("postgres", "DO $$ BEGIN DELETE FROM t; END $$", "DO"),
    ("postgres", "SET default_transaction_read_only = off", "SET"),
    ("postgres", "SELECT set_config('default_transaction_read_only', 'off', false)", "set_config"),
    ("postgres", "SELECT nextval('s')", "nextval"),
    ("postgres", "SELECT pg_catalog.set_config('a', 'b', false)", "set_config"),
    ("postgres", "SELECT \"set_config\"('a', 'b', false)", "set_config"),
    ("postgres", "SELECT * FROM dblink('x', 'DELETE FROM t') AS t(a int)", "dblink"),
    ("postgres", "SELECT 1 UNION SELECT nextval('s')", "nextval"),
    ("postgres", "SELECT * FROM t WHERE a IN (WITH d AS (DELETE FROM t RETURNING a) SELECT a FROM d)", "DELETE"),
    ("postgres", "SELECT x.* FROM t, LATERAL (SELECT lo_import('/etc/passwd')) x", "lo_import"),
    ("postgres", "SELECT pg_stat_reset()", "pg_stat_reset"),
    ("postgres", "SELECT pg_create_physical_replication_slot('s')", "pg_create_physical_replication_slot"),
    ("postgres", "SELECT pg_catalog.pg_replication_origin_create('o')", "pg_replication_origin_create"),
    ("mysql", "SELECT 1 INTO DUMPFILE '/tmp/x'", "SELECT ... INTO"),
    ("postgres", "SELECT * FROM t FOR UPDATE", "FOR UPDATE"),
    ("postgres", "EXPLAIN ANALYZE DELETE FROM t", "DELETE"),
    ("mysql", "EXPLAIN PARTITIONS DELETE FROM t", "DELETE"),  # EXPLAIN's own path guards what follows the options
    ("postgres", "TRUNCATE t", "TRUNCATE"),
    ("postgres", "PREPARE p AS DELETE FROM t", "PREPARE"),
    ("postgres", "BEGIN", "BEGIN"),
    ("postgres", "DISCARD ALL", "DISCARD"),
    ("postgres", "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE", "MERGE"),
    ("sqlite", "ATTACH DATABASE 'x.db' AS x", "ATTACH"),
    ("sqlite", "PRAGMA query_only = OFF", "PRAGMA"),
    ("sqlite", "VACUUM INTO '/tmp/x.db'", "VACUUM"),
    ("sqlite", "REPLACE INTO ventas VALUES ('2026-01-01', 'x', 1, 1)", "REPLACE"),
    ("sqlite", "SELECT load_extension('x')", "load_extension"),
    ("duckdb", "ATTACH 'x.db'", "ATTACH"),
    ("duckdb", "LOAD httpfs", "LOAD"),
    ("duckdb", "INSTALL httpfs", "INSTALL"),
    ("duckdb", "COPY (SELECT 1) TO 'x.csv'", "COPY"),
    ("duckdb", "SET enable_external_access = true", "SET"),
    ("duckdb", "EXPORT DATABASE 'x'", "EXPORT"),
    ("duckdb", "CREATE TABLE x AS SELECT 1", "CREATE"),
    ("mysql", "SELECT * FROM t INTO OUTFILE '/tmp/x'", "SELECT ... INTO"),
    ("mysql", "SELECT 1 INTO @a", "SELECT ... INTO"),
    ("mysql", "LOAD DATA INFILE 'x' INTO TABLE t", "LOAD"),
    ("mysql", "DO SLEEP(1)", "DO"),
    ("mysql", "HANDLER t OPEN", "HANDLER"),
    ("mysql", "SELECT GET_LOCK('a', 1)", "get_lock"),
    ("mysql", "SELECT * FROM t LOCK IN SHARE MODE", "FOR UPDATE/SHARE"),
    ("mysql", "SELECT 1 AS a /*! INTO OUTFILE '/tmp/x' */ FROM DUAL", "Executable comment"),
    ("mysql", "SELECT 1 /*!50000 , GET_LOCK('a', 1) */ FROM DUAL", "Executable comment"),
    ("mysql", "SELECT 1 /*M!100000 , GET_LOCK('a', 1) */ FROM DUAL", "Executable comment"),
    ("mysql", "/*! DELETE FROM t; */ SELECT 1", "Executable comment"),
]


@pytest.mark.parametrize(("dialect", "sql"), ACCEPTED)
def test_guard_accepts_read_only_queries(dialect, sql):
    checked = check_sql(sql, dialect)
    assert checked.statement_type in {"SELECT", "UNION", "VALUES", "EXPLAIN"}
    assert not checked.sql.rstrip().endswith(";")


@pytest.mark.parametrize(("dialect", "sql", "kind"), REJECTED)
def test_guard_rejects_writes_naming_the_statement(dialect, sql, kind):
    with pytest.raises(ReadOnlyViolation) as info:
        check_sql(sql, dialect)
    assert kind in info.value.message
    assert info.value.code == -32019
    assert "(SELECT, WITH ... SELECT, VALUES or EXPLAIN of those)" in info.value.message  # what to send instead


# Issue 38.9: the first words that begin a statement that is no query, written out here (not read from
# readonly.py): sqlglot reads several as identifiers ("DISCARD ALL" is a column alias), so dropping one from
# STATEMENT_WORDS would turn a refused statement into a typo report.
STATEMENT_WORDS = (
    "ABORT", "ALTER", "ANALYSE", "ANALYZE", "ATTACH", "BEGIN", "BINLOG", "CACHE", "CALL", "CHANGE", "CHECK",
    "CHECKPOINT", "CHECKSUM", "CLOSE", "CLUSTER", "COMMENT", "COMMIT", "COPY", "CREATE", "DEALLOCATE", "DECLARE",
    "DELETE", "DESC", "DESCRIBE", "DETACH", "DISCARD", "DO", "DROP", "END", "EXEC", "EXECUTE", "EXPORT", "FETCH",
    "FLUSH", "FORCE", "GET", "GRANT", "HANDLER", "HELP", "IMPORT", "INSERT", "INSTALL", "KILL", "LISTEN", "LOAD",
    "LOCK", "MERGE", "MOVE", "NOTIFY", "OPTIMIZE", "PIVOT", "PRAGMA", "PREPARE", "PURGE", "REASSIGN", "REFRESH",
    "REINDEX", "RELEASE", "RENAME", "REPAIR", "REPLACE", "RESET", "RESIGNAL", "RESTART", "REVOKE", "ROLLBACK",
    "SAVEPOINT", "SECURITY", "SET", "SHOW", "SHUTDOWN", "SIGNAL", "START", "STOP", "SUMMARIZE", "TRUNCATE",
    "UNINSTALL", "UNLISTEN", "UNLOCK", "UNPIVOT", "UPDATE", "UPSERT", "USE", "VACUUM", "XA",
)


@pytest.mark.parametrize("dialect", ["postgres", "mysql", "sqlite", "duckdb"])
def test_guard_refuses_every_statement_word_as_a_write(dialect):
    from analytics_acp_databases.readonly import STATEMENT_WORDS as guarded

    assert sorted(guarded) == sorted(STATEMENT_WORDS)
    missed = []
    for word in STATEMENT_WORDS:
        for sql in (f"{word} x", f"{word.lower()} x y"):
            try:
                check_sql(sql, dialect)
            except ReadOnlyViolation:
                continue
            except InvalidArguments as exc:
                missed.append((sql, exc.message[:80]))
            else:
                missed.append((sql, "accepted"))
    assert missed == []


def test_guard_reports_typos_as_invalid_arguments_not_violations():
    with pytest.raises(InvalidArguments):
        check_sql("SELECT FROM WHERE (", "postgres")
    with pytest.raises(InvalidArguments):
        check_sql("  -- only a comment\n;", "postgres")


# Issue 14.4: SQL that does not parse is not a write. (dialect, sql, line, column, words the message must hold)
UNPARSABLE = [
    ("sqlite", "SELEC nonsense", 1, 1, ("'SELEC' does not start a SQL statement", "Did you mean SELECT?")),
    ("postgres", "selct fecha from ventas", 1, 1, ("'selct'", "SELECT")),
    ("sqlite", "SELECT * FROM orders WHERE", 1, 22, ("ends right after 'WHERE'",)),
    ("postgres", "SELECT FROM", 1, 8, ("expected table name after 'FROM'", "the query ended")),
    ("mysql", "SELECT 1\nFROM t\nWHERE x IN (1, 2", 3, 16, ("parenthesis is not closed",)),
    ("duckdb", "SELECT a b c FROM t", 1, 12, ("unexpected 'c'",)),
    ("postgres", "WITH a AS SELECT 1", 1, 11, ("expected '('",)),
    ("postgres", "SELECT 'it is open", 1, 8, ("not closed", "'it is open")),
    ("sqlite", "FOO", 1, 1, ("'FOO' does not start a SQL statement",)),
    ("postgres", "EXPLAIN SELEC 1", None, None, ("'SELEC'",)),
]


@pytest.mark.parametrize(("dialect", "sql", "line", "column", "words"), UNPARSABLE)
def test_guard_reports_unparsable_sql_with_its_position(dialect, sql, line, column, words):
    with pytest.raises(InvalidArguments) as info:
        check_sql(sql, dialect)
    message = info.value.message
    for word in words:
        assert word in message, message
    assert "<class" not in message and "Token" not in message and "sqlglot" not in message
    if line is not None:
        assert f"line {line}, column {column}" in message
        assert (info.value.data or {}).get("line") == line and info.value.data.get("column") == column


def test_unparsable_write_keeps_its_violation_and_unparsable_select_reaches_the_model(sales_db, make_ctx):
    # A statement whose first word writes is refused as a write whatever follows; a broken SELECT is a typo.
    with pytest.raises(ReadOnlyViolation) as info:
        check_sql("UPDATE ventas SET pedidos = 0 WHERE", "sqlite")
    assert "UPDATE" in info.value.message
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas")
    with pytest.raises(InvalidArguments) as typo:
        run_execute_sql(ExecuteSql.parse({"sql": "SELEC nonsense"}), ctx)
    assert typo.value.code == -32017 and "line 1, column 1" in typo.value.message
    from analytics_acp_databases.validate import run_validate_sql

    report = run_validate_sql(ValidateSql.parse({"sql": "SELECT * FROM ventas WHERE"}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas", tool="validate_sql")).data
    assert report["valid"] is False and report["read_only"] is None and "line 1, column 22" in report["error"]


def test_referenced_tables_leave_out_ctes():
    checked = check_sql("WITH a AS (SELECT * FROM s.orders) SELECT * FROM a JOIN customers c ON true", "postgres")
    assert sorted(checked.tables) == ["customers", "s.orders"]


@pytest.mark.parametrize(("dialect", "sql"), ACCEPTED + [(d, q) for d, q, _ in REJECTED])
def test_guard_shortcuts_match_what_they_replace(dialect, sql):
    """Issue 39 (bench 4b): the guard's own walk visits sqlglot's walk's nodes in its order; a text without
    semicolons is sent as _statement_text would cut it; a Dialect instance is checked as its name is."""
    engine = sqlglot.Dialect.get_or_raise(dialect)
    tokens = engine.tokenize(sql)
    try:
        trees = [t for t in engine.parser().parse(tokens, sql) if t is not None]
    except sqlglot.errors.ParseError:
        trees = []
    for tree in trees:
        assert [id(n) for n in readonly._nodes(tree)] == [id(n) for n in tree.walk()]
    try:
        by_name = check_sql(sql, dialect)
    except (ReadOnlyViolation, InvalidArguments) as exc:
        with pytest.raises(type(exc)) as info:
            check_sql(sql, engine)
        assert (info.value.message, info.value.data) == (exc.message, exc.data)
        return
    by_instance = check_sql(sql, engine)
    assert (by_instance.sql, by_instance.statement_type, by_instance.tables) == (by_name.sql, by_name.statement_type, by_name.tables)
    if ";" not in sql and not by_name.explain:
        assert by_name.sql == readonly._statement_text(sql, tokens)


# --- the corpus against real files: typed error and the data unchanged afterwards

SQLITE_BYPASSES = [
    "DELETE FROM ventas",
    "SELECT 1; DELETE FROM ventas",
    "COMMIT; DELETE FROM ventas",
    "WITH x AS (DELETE FROM ventas RETURNING *) SELECT * FROM x",
    "SELECT 1 /* hide */; DROP TABLE ventas",
    "SELECT 1 -- c\n; UPDATE ventas SET pedidos = 0",
    "ATTACH DATABASE '{dir}/evil.db' AS evil",
    "PRAGMA query_only = OFF",
    "PRAGMA writable_schema = ON",
    "VACUUM INTO '{dir}/copy.db'",
    "CREATE TABLE t2 AS SELECT * FROM ventas",
    "INSERT INTO ventas SELECT * FROM ventas",
    "SELECT load_extension('/tmp/x')",
]


def _sqlite_snapshot(path):
    with sqlite3.connect(path) as con:
        return con.execute("SELECT count(*), sum(pedidos), group_concat(name) FROM ventas, (SELECT group_concat(name) name FROM sqlite_master)").fetchone()


@pytest.mark.parametrize("sql", SQLITE_BYPASSES)
def test_sqlite_bypass_corpus_fails_and_data_unchanged(sql, sales_db, make_ctx, tmp_path):
    before = _sqlite_snapshot(sales_db)
    files_before = sorted(os.listdir(tmp_path))
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, "ventas")
    with pytest.raises(ReadOnlyViolation):
        run_execute_sql(ExecuteSql.parse({"sql": sql.format(dir=tmp_path)}), ctx)
    assert _sqlite_snapshot(sales_db) == before
    assert sorted(os.listdir(tmp_path)) == files_before


DUCK_BYPASSES = [
    "DELETE FROM ventas",
    "SELECT 1; DELETE FROM ventas",
    "COMMIT; DELETE FROM ventas",
    "COPY ventas TO '{dir}/out.csv'",
    "ATTACH '{dir}/evil.duckdb'",
    "SET enable_external_access = true",
    "INSTALL httpfs",
    "LOAD httpfs",
    "CREATE TABLE t2 AS SELECT 1",
    "EXPORT DATABASE '{dir}/exp'",
    "SELECT 1 /* x */; DROP TABLE ventas",
]


def _duck_snapshot(path):
    con = duckdb.connect(path, read_only=True)
    try:
        return con.execute("SELECT count(*), sum(pedidos), (SELECT string_agg(table_name, ',') FROM duckdb_tables()) FROM ventas").fetchone()
    finally:
        con.close()


@pytest.mark.parametrize("sql", DUCK_BYPASSES)
def test_duckdb_bypass_corpus_fails_and_data_unchanged(sql, duck_db, make_ctx, tmp_path):
    before = _duck_snapshot(duck_db)
    files_before = sorted(os.listdir(tmp_path))
    ctx = make_ctx({"type": "duckdb", "path": duck_db}, "tienda")
    with pytest.raises(ReadOnlyViolation):
        run_execute_sql(ExecuteSql.parse({"sql": sql.format(dir=tmp_path)}), ctx)
    assert _duck_snapshot(duck_db) == before
    assert [f for f in sorted(os.listdir(tmp_path)) if not f.endswith(".wal")] == [f for f in files_before if not f.endswith(".wal")]


# --- second layer alone: statements sent straight to a fenced session (the guard skipped) still fail


@pytest.mark.parametrize(
    "sql",
    ["DELETE FROM ventas", "CREATE TABLE x (a INT)", "PRAGMA query_only = OFF", "ATTACH DATABASE '{dir}/e.db' AS e", "INSERT INTO ventas VALUES ('2026-01-01','x',1,1)"],
)
def test_sqlite_session_fence_without_guard(sql, sales_db, tmp_path):
    before = _sqlite_snapshot(sales_db)
    with open_read(Source({"type": "sqlite", "path": sales_db})) as session:
        with pytest.raises(Exception) as info:
            session.conn.exec_driver_sql(sql.format(dir=tmp_path))
        assert "not authorized" in str(info.value) or "readonly" in str(info.value)
    assert _sqlite_snapshot(sales_db) == before
    assert not (tmp_path / "e.db").exists()


@pytest.mark.parametrize(
    "sql",
    ["DELETE FROM ventas", "COPY ventas TO '{dir}/o.csv'", "SET enable_external_access = true", "ATTACH '{dir}/e.duckdb'", "SELECT * FROM read_csv('{dir}/x.csv')"],
)
def test_duckdb_session_fence_without_guard(sql, duck_db, tmp_path):
    (tmp_path / "x.csv").write_text("a\n1\n")
    before = _duck_snapshot(duck_db)
    with open_read(Source({"type": "duckdb", "path": duck_db})) as session:
        with pytest.raises(sa_exc.DBAPIError):
            session.conn.exec_driver_sql(sql.format(dir=tmp_path))
    assert _duck_snapshot(duck_db) == before
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "e.duckdb").exists()


def test_sqlite_and_duckdb_urls_get_the_file_fences(sales_db, duck_db, make_ctx, consume):
    """A `url` credential naming a file (sqlite:///..., duckdb:///...) is fenced like the file variants."""
    sqlite_url = {"type": "url", "url": f"sqlite:///{sales_db}"}
    assert consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT count(*) AS n FROM ventas"}), make_ctx(sqlite_url, "ventas"))) == [{"n": 360}]
    before = _sqlite_snapshot(sales_db)
    with open_read(Source(sqlite_url)) as session:
        with pytest.raises(sa_exc.DBAPIError):
            session.conn.exec_driver_sql("DELETE FROM ventas")
    assert _sqlite_snapshot(sales_db) == before
    duck_url = {"type": "url", "url": f"duckdb:///{duck_db}"}
    with open_read(Source(duck_url)) as session:
        with pytest.raises(sa_exc.DBAPIError):
            session.conn.exec_driver_sql("DELETE FROM ventas")
    assert consume(run_execute_sql(ExecuteSql.parse({"sql": "SELECT count(*) AS n FROM ventas"}), make_ctx(duck_url, "tienda"))) == [{"n": 360}]


def test_a_word_valid_only_inside_explains_parentheses_is_not_skipped_outside_them():
    # PostgreSQL takes COSTS, BUFFERS, FORMAT YAML... only in EXPLAIN (...); outside, the word is the query's start.
    with pytest.raises(InvalidArguments, match="'COSTS' does not start a SQL statement"):
        check_sql("EXPLAIN COSTS SELECT 1", "postgres")


def test_a_reused_sql_reader_answers_as_a_fresh_check_and_belongs_to_one_thread():
    """Issue 39 (bench 4b): a thread's SqlReader (tokenizer and parser kept) is reused call after call, failures
    included (an unclosed quote, a typo, a write), and answers exactly as a check that builds its own."""
    import threading

    from analytics_acp_databases.state import DatabaseState

    state = DatabaseState()
    corpus = ACCEPTED + [(d, q) for d, q, _ in REJECTED] + [(d, q) for d, q, *_ in UNPARSABLE] + EMPTY_AROUND
    for _ in range(2):
        for dialect, sql in corpus:
            try:
                fresh = check_sql(sql, dialect)
            except (ReadOnlyViolation, InvalidArguments) as exc:
                with pytest.raises(type(exc)) as info:
                    check_sql(sql, state.sql_reader(dialect))
                assert (info.value.message, info.value.data) == (exc.message, exc.data)
                continue
            reused = check_sql(sql, state.sql_reader(dialect))
            assert (reused.sql, reused.statement_type, reused.tables, reused.literals) == (fresh.sql, fresh.statement_type, fresh.tables, fresh.literals)
    mine = state.sql_reader("sqlite")
    assert state.sql_reader("sqlite") is mine and state.sql_reader("postgres") is not mine
    other: list = []
    thread = threading.Thread(target=lambda: other.append(state.sql_reader("sqlite")))
    thread.start()
    thread.join()
    assert other[0] is not mine and other[0].dialect is mine.dialect


@pytest.mark.parametrize("given", ["name", "instance", "reader"])
def test_the_shortcuts_keep_the_dialect_and_the_statement_text(given):
    """Mutants the fence's mutation run left (issue 39's guard shortcuts): an EXPLAIN's inner query is checked in the
    session's dialect whichever form the dialect came in (MySQL backticks are a syntax error in sqlglot's default
    dialect), and a text without semicolons ends at its last token (a trailing comment is not sent)."""
    from analytics_acp_databases.state import DatabaseState

    def form(name: str):
        return {"name": name, "instance": sqlglot.Dialect.get_or_raise(name),
                "reader": DatabaseState().sql_reader(name)}[given]

    explained = check_sql("EXPLAIN SELECT `id` FROM `items`", form("mysql"))
    assert explained.explain and explained.tables == ["items"]
    assert check_sql("SELECT 1-- trailing note", form("sqlite")).sql == "SELECT 1"
    assert check_sql("SELECT id FROM items/* why */  ", form("sqlite")).sql == "SELECT id FROM items"


def test_a_sql_reader_is_what_checks_the_text():
    """The SqlReader a caller passes is the one that tokenizes and parses (its point: nothing rebuilt per check)."""
    from analytics_acp_databases.state import DatabaseState

    reader = DatabaseState().sql_reader("sqlite")
    used: list[str] = []

    class Spy:  # a wrapper, not a patched method: sqlglotc's compiled classes have read-only methods
        def __init__(self, inner, name):
            self.inner, self.name = inner, name

        def __getattr__(self, attr):
            if attr == self.name:
                used.append(attr)
            return getattr(self.inner, attr)

    reader.tokenizer, reader.parser = Spy(reader.tokenizer, "tokenize"), Spy(reader.parser, "parse")
    assert check_sql("SELECT id FROM items WHERE id > 3", reader).tables == ["items"]
    assert used == ["tokenize", "parse"]
