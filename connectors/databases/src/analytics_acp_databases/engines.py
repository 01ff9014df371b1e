"""Engines per credential identity, and the database's own read-only fence (10.4, second layer).

Queries never run on a plain connection. ``open_read`` gives one where the database itself refuses writes:

- SQLite: URI ``mode=ro``, ``PRAGMA query_only`` and an authorizer that denies every write, ATTACH
  and unknown PRAGMA; the statement timeout is a progress handler.
- DuckDB: ``read_only`` with external access (files, ATTACH, extensions) disabled and the
  configuration locked; the timeout interrupts the connection.
- PostgreSQL: ``default_transaction_read_only`` for the session and ``BEGIN READ ONLY`` for each
  query, ``SET LOCAL statement_timeout``; the query runs in a server-side cursor (DECLARE takes one
  SELECT/VALUES only) and the transaction is always rolled back, so even ``set_config`` is undone.
  On 14+ the server also ends a statement whose client is gone (``client_connection_check_interval``).
- MySQL/MariaDB: ``SET SESSION TRANSACTION READ ONLY`` + ``START TRANSACTION READ ONLY``, max
  statement time; pymysql does not enable multi-statements.

Engines are kept in the connector's state (state.py, per hash of the credentials, 10.1.3) and never persisted;
a ``Source`` carries that state.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from analytics_acp import CredentialsInvalid
from analytics_acp.state import identity_key
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import NoSuchModuleError

from . import credentials as creds
from .resource_ids import backend_of, canonical, credential_database
from .state import DatabaseState

log = logging.getLogger(__name__)

# Explicit, so a frozen build (no entry-point metadata) still finds the DuckDB dialect.
sa.dialects.registry.register("duckdb", "duckdb_engine", "Dialect")

DEFAULT_TIMEOUT_S = 60.0

# SQLite authorizer (second fence): reads, functions, recursive CTEs and read-only PRAGMAs only.
_SQLITE_TABLE_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list", "table_list"}
_SQLITE_PLAIN_PRAGMAS = {"database_list", "collation_list", "function_list", "table_list"}
_SQLITE_DENIED_FUNCTIONS = {"load_extension", "writefile", "readfile", "edit", "fts3_tokenizer"}
_SQLITE_ALLOWED = {
    sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE,
    sqlite3.SQLITE_TRANSACTION,
}


def _sqlite_authorizer(action: int, arg1: Any, arg2: Any, dbname: Any, source: Any) -> int:
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        ok = name in _SQLITE_TABLE_PRAGMAS or (name in _SQLITE_PLAIN_PRAGMAS and arg2 is None)
        return sqlite3.SQLITE_OK if ok else sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in _SQLITE_DENIED_FUNCTIONS else sqlite3.SQLITE_OK
    return sqlite3.SQLITE_OK if action in _SQLITE_ALLOWED else sqlite3.SQLITE_DENY


@dataclass
class Source:
    """One configured source as seen by a call: credentials, backend and effective database; ``state`` is the
    connector's (``ctx.state(DATABASES)``: its engines), a private one when built outside a call."""

    credentials: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    database: str | None = None
    state: DatabaseState = field(default_factory=DatabaseState, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.credentials = canonical(self.credentials) or {}

    @property
    def credentials_key(self) -> str:
        """The core's identity_key of the credentials (the engines' and the column cache's key, 10.1.3): a session's
        credentials dict is hashed once, and only the same unchanged dict is served from the memo (identity_memo.py)."""
        return self.state.keys.identity(self.credentials, identity_key)

    @property
    def backend(self) -> str:
        """SQLAlchemy backend name from the credentials (mariadb is refined after connecting)."""
        return backend_of(self.credentials)

    @property
    def timeout_s(self) -> float:
        """config.statement_timeout_s (default 60 s)."""
        try:
            return max(0.1, float(self.config.get("statement_timeout_s") or DEFAULT_TIMEOUT_S))
        except (TypeError, ValueError):
            return DEFAULT_TIMEOUT_S

    def url(self, read_only: bool) -> URL | str:
        """The SQLAlchemy URL for queries (read_only) or inserts."""
        kind = self.credentials.get("type")
        if kind == "sqlite":
            return creds.sqlite_url(creds.file_path(self.credentials), read_only)
        if kind == "duckdb":
            return f"duckdb:///{creds.file_path(self.credentials)}"
        database = self.database if self.database != credential_database(self.credentials) else None
        if kind == "server":
            return creds.server_url(self.credentials, database)
        if kind == "url":
            return creds.generic_url(self.credentials, database)
        raise CredentialsInvalid("Unknown credentials type: use sqlite, duckdb, server or url.")

    def engine(self, read_only: bool = True) -> Engine:
        """The kept engine (per credentials hash, database and mode), made on first use."""

        def make() -> Engine:
            try:
                return _create_engine(self, read_only)
            except (ImportError, NoSuchModuleError) as exc:
                raise _missing_driver(self, exc) from None

        return self.state.engines.get_or_make((self.credentials_key, self.database, read_only), make)

    def file_lock(self) -> threading.RLock:
        """Per-file lock: DuckDB cannot hold a read-only and a read-write handle of one file at once."""
        return self.state.file_lock(str(self.credentials.get("path") or ""))

    def dispose_file_engines(self) -> None:
        """Close every kept engine of this credential's file (before DuckDB switches modes)."""
        ident = self.credentials_key
        self.state.engines.drop_where(lambda key: isinstance(key, tuple) and key[0] == ident)


def _missing_driver(source: Source, exc: BaseException) -> CredentialsInvalid:
    """The URL names a dialect or DBAPI driver that is not installed: tell the user which (never the URL)."""
    url = source.url(read_only=True)
    driver = url.drivername if isinstance(url, URL) else str(source.credentials.get("type"))
    missing = getattr(exc, "name", None) or ""
    detail = f" (Python module {missing!r} is missing)" if missing else ""
    return CredentialsInvalid(
        f"The SQLAlchemy driver {driver!r} of this source is not installed{detail}. Ask the user to install it "
        "in the connector's environment or to use another URL (postgresql+psycopg, mysql+pymysql, ...)."
    )


def _create_engine(source: Source, read_only: bool) -> Engine:
    kind = source.credentials.get("type")
    url = source.url(read_only)
    if kind == "sqlite":
        if read_only:
            engine = sa.create_engine(url, connect_args={"timeout": 10})
            event.listen(engine, "connect", _fence_sqlite)
        else:
            # pysqlite's own transaction handling commits DDL at once; emit BEGIN ourselves so
            # CREATE TABLE + INSERT of insert_rows is one transaction (SQLAlchemy's documented recipe).
            engine = sa.create_engine(url, connect_args={"timeout": 10, "isolation_level": None})
            event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN"))
        return engine
    if kind == "duckdb":
        config = {"enable_external_access": False, "autoinstall_known_extensions": False, "autoload_known_extensions": False}
        engine = sa.create_engine(url, connect_args={"read_only": read_only, "config": config}, poolclass=sa.pool.NullPool)
        event.listen(engine, "connect", _fence_duckdb if read_only else _quiet_duckdb)
        return engine
    backend = url.get_backend_name() if isinstance(url, URL) else ""
    connect_args: dict[str, Any] = {}
    if backend == "postgresql":
        connect_args["connect_timeout"] = 10
        connect_args["application_name"] = "analytics-acp-databases"
        if read_only:
            extra = url.query.get("options") if isinstance(url, URL) else None
            connect_args["options"] = " ".join(p for p in (extra, "-c default_transaction_read_only=on") if p)  # type: ignore[misc]
            engine = sa.create_engine(url, connect_args=connect_args, pool_size=2, max_overflow=6, pool_pre_ping=True, pool_recycle=1800)
            event.listen(engine, "do_execute_no_params", _pg_one_statement)
            return engine
    elif backend in ("mysql", "mariadb"):
        connect_args["connect_timeout"] = 10
    return sa.create_engine(url, connect_args=connect_args, pool_size=2, max_overflow=6, pool_pre_ping=True, pool_recycle=1800)


USER_SQL = "acp_user_sql"  # execution option marking the model's SQL (see _pg_one_statement)


def _pg_one_statement(cursor: Any, statement: str, context: Any) -> bool | None:
    """Send the model's SQL on a client-side PostgreSQL cursor through the extended protocol.

    psycopg uses the simple protocol for a statement without parameters, and the simple protocol
    runs several statements: ``COMMIT; BEGIN READ WRITE; INSERT ...`` would end the read-only
    transaction. ``binary=True`` forces the extended protocol, which takes exactly one statement.
    Server-side cursors are left alone: DECLARE already takes one SELECT/VALUES only.
    """
    if context is None or not context.execution_options.get(USER_SQL):
        return None
    try:
        import psycopg
    except ImportError:  # another PostgreSQL driver (psycopg2, pg8000): the guard alone decides
        return None
    if not isinstance(cursor, psycopg.Cursor) or isinstance(cursor, psycopg.ServerCursor):
        return None
    cursor.execute(statement, binary=True)
    return True


def _quiet_duckdb(dbapi_conn: Any, _record: Any) -> None:
    # No progress bar: DuckDB prints it to stdout, which is the protocol channel of a stdio server.
    dbapi_conn.execute("SET enable_progress_bar = false")


def _fence_duckdb(dbapi_conn: Any, _record: Any) -> None:
    _quiet_duckdb(dbapi_conn, _record)
    dbapi_conn.execute("SET lock_configuration = true")  # the query cannot re-enable file access


def _fence_sqlite(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
    dbapi_conn.execute("PRAGMA query_only = ON")
    dbapi_conn.set_authorizer(_sqlite_authorizer)


class StopFlag:
    """Set when a session is cancelled, read by SQLite's progress handler: threading.Event's ``set``/``is_set``
    without its Condition and lock (nothing waits on it; making one was a seventh of opening a session)."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        """Mark the session cancelled."""
        self._set = True

    def is_set(self) -> bool:
        """Whether the session was cancelled."""
        return self._set


class Session:
    """An open, fenced connection for one query (or one block); ``close()`` always rolls back."""

    def __init__(self, source: Source, conn: Connection, timer: threading.Timer | None = None,
                 stop: StopFlag | None = None):
        self.source = source
        self.conn = conn
        self._timer = timer
        self._stop = stop if stop is not None else StopFlag()  # read by SQLite's progress handler
        self._closed = False
        source.state.track(self)  # a stop cancels its statement (DatabaseState.cancel_running)

    @property
    def backend(self) -> str:
        """Actual backend name of the connection (mariadb detected from the server)."""
        dialect = self.conn.dialect
        if dialect.name == "mysql" and getattr(dialect, "is_mariadb", False):
            return "mariadb"
        return dialect.name

    def close(self) -> None:
        """Cancel the timeout, roll back (undoing any session change) and return the connection."""
        if self._closed:
            return
        self._closed = True
        self.source.state.untrack(self)
        if self._timer is not None:
            self._timer.cancel()
        raw = self.conn.connection.dbapi_connection if not self.conn.closed else None
        if isinstance(raw, sqlite3.Connection):
            raw.set_progress_handler(None, 0)
        try:
            self.conn.rollback()
        except Exception as exc:  # a dead connection: the pool discards it on close
            log.debug("rollback failed: %s", type(exc).__name__)
        finally:
            self.conn.close()

    def abandon(self) -> None:
        """Drop the connection without finishing its result (the pool opens a fresh one next time)."""
        if self._closed:
            return
        self._closed = True
        self.source.state.untrack(self)
        if self._timer is not None:
            self._timer.cancel()
        try:
            raw = self.conn.connection.dbapi_connection
            pending = getattr(raw, "_result", None)
            if pending is not None and getattr(pending, "unbuffered_active", False):
                pending.unbuffered_active = False  # pymysql: do not read the remaining rows on close
        except Exception as exc:  # abandoning must go on to invalidate and close
            log.debug("unbuffered result not dropped: %s", type(exc).__name__)
        try:
            self.conn.invalidate()
        except Exception as exc:  # abandoning must go on to close
            log.debug("invalidate failed: %s", type(exc).__name__)
        try:
            self.conn.close()
        except Exception as exc:  # the connection is abandoned either way
            log.debug("close of an abandoned connection failed: %s", type(exc).__name__)

    def cancel(self) -> bool:
        """Stop this session's statement at the database: SQLite/DuckDB interrupt, PostgreSQL cancel
        request, MySQL/MariaDB KILL QUERY from a second connection. False when there is nothing to stop."""
        if self._closed:
            return False
        raw: Any = self.conn.connection.dbapi_connection
        name = self.conn.dialect.name
        if name == "sqlite":
            self._stop.set()  # the fence's progress handler also stops a statement that starts after this
            raw.interrupt()
        elif name == "duckdb":
            raw.interrupt()
        elif name == "postgresql":
            raw.cancel()
        elif name == "mysql":
            with self.source.engine(read_only=False).connect() as killer:
                killer.exec_driver_sql(f"KILL QUERY {int(raw.thread_id())}")
        else:
            return False
        return True

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_read(source: Source, schema: str | None = None, timeout_s: float | None = None) -> Session:
    """A connection inside the database's read-only fence, with statement timeout and default schema."""
    timeout = timeout_s or source.timeout_s
    engine = source.engine(read_only=True)
    conn = engine.connect()
    try:
        stop = StopFlag()
        timer = _apply_read_fence(conn, timeout, schema, stop)
    except BaseException:
        conn.close()
        raise
    return Session(source, conn, timer, stop)


def _apply_read_fence(conn: Connection, timeout: float, schema: str | None, stop: StopFlag) -> threading.Timer | None:
    name = conn.dialect.name
    raw = conn.connection.dbapi_connection
    if name == "sqlite":
        deadline = time.monotonic() + timeout
        # Aborts past the statement timeout, or once the session is cancelled (set before or while it runs).
        raw.set_progress_handler(lambda: 1 if stop.is_set() or time.monotonic() > deadline else 0, 10_000)  # type: ignore[union-attr]
        return None
    if name == "duckdb":
        if schema:
            conn.exec_driver_sql(f"SET schema = {_literal(schema)}")
        timer = threading.Timer(timeout, _interrupt, args=(raw,))
        timer.daemon = True
        timer.start()
        return timer
    if name == "postgresql":
        conn = conn.execution_options(postgresql_readonly=True)
        conn.exec_driver_sql(_pg_limits(conn, local=True), {"ms": str(int(timeout * 1000)), "check": CLIENT_CHECK_MS})
        if schema:  # public stays on the path: extensions (and their functions) usually live there
            path = _pg_ident(schema) + ("" if schema == "public" else ", public")
            conn.exec_driver_sql("SELECT set_config('search_path', %(p)s, true)", {"p": path})
        return None
    if name == "mysql":
        conn.exec_driver_sql("SET SESSION TRANSACTION READ ONLY")
        _mysql_timeout(conn, timeout)
        conn.exec_driver_sql("START TRANSACTION READ ONLY")
        if schema:
            conn.exec_driver_sql(f"USE {conn.dialect.identifier_preparer.quote(schema)}")
        return None
    return None


def open_write(source: Source, timeout_s: float | None = None) -> Connection:
    """A read-write connection for insert_rows (the caller begins/commits); statement timeout applied."""
    timeout = timeout_s or source.timeout_s
    conn = source.engine(read_only=False).connect()
    name = conn.dialect.name
    try:
        if name == "postgresql":
            conn.exec_driver_sql(_pg_limits(conn, local=False), {"ms": str(int(timeout * 1000)), "check": CLIENT_CHECK_MS})
            conn.commit()
        elif name == "mysql":
            _mysql_timeout(conn, timeout)
            conn.commit()
    except BaseException:
        conn.close()
        raise
    return conn


# PostgreSQL 14+ checks this often (ms) whether the client of a running statement is still connected, and
# ends the statement when it is not. A server that stops (Ctrl-C, SIGTERM: cancel_running) cancels its
# queries itself, but that cancel can lose a race: it may land between two statements of a streamed result
# (after the DECLARE, before the long FETCH), or the process may be killed first (the host's bound, the
# OOM killer). Without the check such a query runs on at the database until its statement timeout.
CLIENT_CHECK_MS = "1000"


def _pg_limits(conn: Connection, local: bool) -> str:
    """One statement setting the statement timeout and, where the server has it, the client check."""
    scope = "true" if local else "false"
    sql = f"SELECT set_config('statement_timeout', %(ms)s, {scope})"
    if (conn.dialect.server_version_info or (0,)) >= (14,):
        sql += f", set_config('client_connection_check_interval', %(check)s, {scope})"
    return sql


def _mysql_timeout(conn: Connection, timeout: float) -> None:
    if getattr(conn.dialect, "is_mariadb", False):
        conn.exec_driver_sql(f"SET SESSION max_statement_time = {float(timeout):.3f}")
    else:
        conn.exec_driver_sql(f"SET SESSION max_execution_time = {int(timeout * 1000)}")


def _interrupt(raw: Any) -> None:
    try:
        raw.interrupt()
    except Exception as exc:  # the connection closed meanwhile: nothing left to interrupt
        log.debug("interrupt failed: %s", type(exc).__name__)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _pg_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'

