"""acp_query (16.4, 16.6): read-only SQLite SQL over acp-data datasets.

Only the datasets the query names are visible, in a throw-away in-memory database with typed
columns from their meta. With a TableCache (the bridge has one), each dataset's loaded table is
kept between calls and attached to that database, until its CSV changes (query/cache.py); a plain
GROUP BY seen twice over a cached table gets a covering index there (groupshape.py). Read-only is
enforced twice, neither by pattern matching: sqlglot
parses the statement and must find a single SELECT (or WITH ... SELECT / set operation), and
SQLite's authorizer denies every action that is not reading while the statement is prepared
and run. The CSVs themselves are never opened for writing. Every query connection has the URL
functions of urlkeys.py (url_key, url_host, url_path, url_param) to join pages across sources.

Long work reports and stops (issue 28.3): with a ``Watch`` (the call's signals), loading the named
datasets reports rows loaded of the rows to load (the query itself is the last step), and a cancel
interrupts the SQLite connection at work (``interrupt()``) and stops the load between batches; a table
interrupted half-loaded is never cached (query/cache.py drops a load that raised).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import sqlglot
from analytics_acp.errors import InvalidArguments, ReadOnlyViolation
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from ..store import csvtypes
from ..store.datasets import Dataset, DatasetStore
from . import urlkeys
from .cache import TableCache
from .groupshape import group_shape
from .tableload import cell_sql as _cell_sql
from .tableload import quote as _quote

ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
READ_ONLY_MESSAGE = (
    "acp_query only runs a single SELECT (or WITH ... SELECT) over acp-data datasets; "
    "datasets are read-only. Rewrite the statement as a SELECT."
)
BATCH = 5000
log = logging.getLogger("analytics_acp_bridge")


class Watch(Protocol):
    """What acp_query needs of its call (analytics_acp.signals.CallSignals): progress out, cancellation in."""

    @property
    def cancelled(self) -> bool: ...
    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None: ...
    def on_cancel(self, callback: Callable[[], Any]) -> None: ...


class Stopper:
    """The SQLite connections one acp_query works with; a cancelled call interrupts every one of them."""

    def __init__(self, watch: Watch | None):
        self.watch = watch
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if watch is not None:
            watch.on_cancel(self.interrupt)

    @property
    def cancelled(self) -> bool:
        """True once the call was cancelled."""
        return self.watch is not None and self.watch.cancelled

    def check(self) -> None:
        """Raise SQLite's own "interrupted" error when the call was cancelled (between batches)."""
        if self.cancelled:
            raise sqlite3.OperationalError("interrupted")

    @contextlib.contextmanager
    def working(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """Interruptible while the block runs (a cache's loading connection is kept, but not interrupted later)."""
        with self._lock:
            self._conns.append(conn)
        try:
            self.check()  # a cancel that came before the connection was known
            yield conn
        finally:
            with self._lock:
                self._conns.remove(conn)

    def keep(self, conn: sqlite3.Connection) -> None:
        """Interruptible for as long as it is open (the query's own connection)."""
        with self._lock:
            self._conns.append(conn)

    def interrupt(self) -> None:
        """Stop the statement running on each connection now (from any thread, as SQLite allows)."""
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(sqlite3.ProgrammingError):  # closed meanwhile: nothing runs on it
                conn.interrupt()


class LoadProgress:
    """Rows loaded of the rows to load; the query is one more step, so the last notification is the total."""

    def __init__(self, watch: Watch | None, rows_to_load: int):
        self.watch = watch
        self.total = rows_to_load + 1
        self.done = 0

    def loaded(self, rows: int, table: str) -> None:
        """``rows`` more rows of ``table`` are in SQLite."""
        self.done += rows
        if self.watch is not None and rows:
            self.watch.progress(self.done, self.total, f"loading {table} into SQLite")

    def finish(self, result_rows: int) -> None:
        """The query ran and its result is saved: the final notification."""
        if self.watch is not None:
            plural = "" if result_rows == 1 else "s"
            self.watch.progress(self.total, self.total, f"query done: {result_rows} result row{plural}")


@dataclass
class QueryResult:
    """A running query: column names, a row iterator, and per-column types seen so far."""

    columns: list[str]
    rows: Iterator[tuple[Any, ...]]
    datasets: list[str]
    types: list[str | None] = field(default_factory=list)
    progress: LoadProgress | None = None

    def records(self) -> Iterator[dict[str, Any]]:
        """Rows as objects, updating the column types as they stream by."""
        self.types = [None] * len(self.columns)
        for row in self.rows:
            for i, value in enumerate(row):
                self.types[i] = csvtypes.merge_types(self.types[i], csvtypes.value_type(value))
            yield dict(zip(self.columns, row, strict=True))

    def headers(self) -> list[dict[str, str]]:
        """Typed headers from the values seen (call after consuming records)."""
        return [{"name": c, "type": t or "string"} for c, t in zip(self.columns, self.types, strict=True)]


WRITE_NODES = (exp.DML, exp.DDL, exp.Command, exp.Pragma)
# What sqlglot makes of text that is no statement at all (not a write: invalid SQL).
BARE_EXPRESSIONS = (exp.Column, exp.Alias, exp.Literal, exp.Identifier, exp.Binary, exp.Paren, exp.Func, exp.Neg,
                    exp.Not, exp.Star, exp.Null, exp.Boolean)


def check_read_only(sql: str) -> exp.Expression | None:
    """Raise ACP_READ_ONLY_VIOLATION unless sqlglot parses exactly one SELECT-type statement; returns it.

    None when sqlglot cannot parse the SQL or reads it as a bare expression, not a statement (SQLite decides
    then and reports its syntax error; the authorizer still blocks writes).
    """
    try:
        statements = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None]
    except (ParseError, TokenError):
        return None  # SQLite itself decides; the authorizer still blocks anything but reads
    if len(statements) != 1:
        raise ReadOnlyViolation(READ_ONLY_MESSAGE if statements else "The SQL is empty. Write a SELECT.")
    statement = statements[0]
    if not isinstance(statement, exp.Query):  # Select, Union/Intersect/Except; WITH hangs off them
        if isinstance(statement, BARE_EXPRESSIONS) and not any(isinstance(n, WRITE_NODES) for n in statement.walk()):
            return None  # a typo like `SELEC x` parses as an expression: SQLite's syntax error says what is wrong
        raise ReadOnlyViolation(READ_ONLY_MESSAGE)
    for node in statement.walk():
        if isinstance(node, WRITE_NODES):
            raise ReadOnlyViolation(READ_ONLY_MESSAGE)
    return statement  # type: ignore[return-value]


def named_identifiers(sql: str) -> set[str]:
    """Every bare or quoted identifier the SQL mentions, lowercased (to pick the datasets to load)."""
    try:
        tokens = sqlglot.tokenize(sql, read="sqlite")
    except TokenError:
        return set()
    kinds = {TokenType.VAR, TokenType.IDENTIFIER}
    return {t.text.lower() for t in tokens if t.token_type in kinds or t.text.isidentifier()}


def read_only(action: int, *_args: Any) -> int:
    """SQLite authorizer of every query connection: reading only (16.6)."""
    return sqlite3.SQLITE_OK if action in ALLOWED_ACTIONS else sqlite3.SQLITE_DENY


def load_table(conn: sqlite3.Connection, store: DatasetStore, dataset: Dataset) -> None:
    """Create the dataset's typed table in ``conn`` and fill it from its CSV (what acp_query loads)."""
    _load(conn, store, dataset)


def _load(conn: sqlite3.Connection, store: DatasetStore, dataset: Dataset, stopper: Stopper | None = None,
          progress: LoadProgress | None = None) -> None:
    """Create the dataset's typed table and stream its rows in (interruptible by ``stopper``)."""
    stopper = stopper or Stopper(None)
    log.debug("acp_query: loading «%s» (%d rows)", dataset.id, dataset.row_count)
    loaded = 0
    with stopper.working(conn):
        try:
            headers = dataset.headers
            columns = ", ".join(
                f"{_quote(h['name'])} {csvtypes.SQLITE_TYPES.get(h.get('type', 'string'), 'TEXT')}" for h in headers
            )
            conn.execute(f"CREATE TABLE {_quote(dataset.id)} ({columns})")
            width = len(headers)
            cells = ", ".join(_cell_sql(i + 1, h.get("type", "string")) for i, h in enumerate(headers))
            insert = f"INSERT INTO {_quote(dataset.id)} VALUES ({cells})"
            batch: list[list[str]] = []
            for row in store.iter_cells(dataset):
                if len(row) != width:
                    row = (row + [""] * width)[:width]
                batch.append(row)
                if len(batch) >= BATCH:
                    stopper.check()
                    conn.executemany(insert, batch)
                    loaded += len(batch)
                    if progress is not None:
                        progress.loaded(len(batch), dataset.id)
                    batch.clear()
            if batch:
                conn.executemany(insert, batch)
                if progress is not None:
                    progress.loaded(len(batch), dataset.id)
        except sqlite3.OperationalError:
            if stopper.cancelled:
                log.debug("acp_query interrupted (cancelled) while loading «%s» after %d of %d rows: not kept",
                          dataset.id, loaded, dataset.row_count)
            raise


def run_query(store: DatasetStore, sql: str, cache: TableCache | None = None,
              watch: Watch | None = None) -> tuple[sqlite3.Connection, QueryResult]:
    """Validate and start the query; the caller streams ``result.records()`` and closes the connection.

    Without ``cache`` every named dataset is loaded from its CSV for this query alone. ``watch`` gets
    the load's progress and stops the work when the call is cancelled (``result.progress.finish`` is
    the caller's, once the result is saved).
    """
    if not isinstance(sql, str) or not sql.strip():
        raise InvalidArguments("sql is required: a SQLite SELECT using dataset ids as table names.")
    statement = check_read_only(sql)
    mentioned = named_identifiers(sql)
    datasets = [d for d in store.list() if d.id.lower() in mentioned]
    stopper = Stopper(watch)
    pending = [d for d in datasets if cache is None or not cache.holds(d)]
    progress = LoadProgress(watch, sum(d.row_count for d in pending))
    conn = sqlite3.connect(":memory:", check_same_thread=False, uri=True)  # uri: ATTACH of memdb names
    try:
        urlkeys.register(conn)  # url_key & co. (issue 24): the query's SQL is the only SQL that calls them
        to_load = datasets
        if cache is not None:
            to_load = cache.attach(conn, datasets, lambda c, d: _load(c, store, d, stopper, progress))
        for dataset in to_load:
            _load(conn, store, dataset, stopper, progress)
        conn.set_authorizer(read_only)  # from here on, only reads (16.6)
        if cache is not None:
            _adapt_indexes(conn, cache, sql, statement, [d for d in datasets if d not in to_load])
        stopper.keep(conn)  # until the caller closes it
        log.debug("acp_query: running the statement")
        try:
            cursor = conn.execute(sql)
        except sqlite3.DatabaseError as exc:
            raise _stopped_or(exc, stopper, store, datasets) from None
        if cursor.description is None:
            raise ReadOnlyViolation(READ_ONLY_MESSAGE)
        columns = _unique([d[0] for d in cursor.description])

        def rows() -> Iterator[tuple[Any, ...]]:
            try:
                while chunk := cursor.fetchmany(BATCH):
                    yield from chunk
                    stopper.check()
            except sqlite3.DatabaseError as exc:
                raise _stopped_or(exc, stopper, store, datasets) from None

        return conn, QueryResult(columns=columns, rows=rows(), datasets=[d.id for d in datasets], progress=progress)
    except BaseException:
        conn.close()
        raise


def _adapt_indexes(
    conn: sqlite3.Connection, cache: TableCache, sql: str, statement: exp.Expression | None, cached: list[Dataset]
) -> None:
    """Tell the cache about a plain GROUP BY over one cached table that SQLite answers by sorting.

    The cache indexes it the second time (query/cache.py); this query then already uses the index.
    """
    shape = group_shape(statement, {d.id.lower(): [h["name"] for h in d.headers] for d in cached})
    if shape is None:
        return
    try:
        plan = conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
    except sqlite3.DatabaseError:
        return  # the query itself reports the error
    if any("TEMP B-TREE FOR GROUP BY" in str(row[-1]) for row in plan):
        dataset = next(d for d in cached if d.id.lower() == shape.table)
        cache.index_group_by(dataset, shape)


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if name in seen:
            seen[name] += 1
            name = f"{name}_{seen[name]}"
        seen.setdefault(name, 1)
        out.append(name)
    return out


def _stopped_or(exc: sqlite3.DatabaseError, stopper: Stopper, store: DatasetStore, loaded: list[Dataset]) -> Exception:
    if stopper.cancelled:
        log.debug("acp_query interrupted (cancelled): %s", exc)
        return exc  # nobody reads the answer of a cancelled call; the caller unwinds and saves nothing
    return _sqlite_error(exc, store, loaded)


def _sqlite_error(exc: sqlite3.DatabaseError, store: DatasetStore, loaded: list[Dataset]) -> Exception:
    message = str(exc)
    if "not authorized" in message or "prohibited" in message:
        return ReadOnlyViolation(READ_ONLY_MESSAGE)
    if "user-defined function raised exception" in message:  # only a bad option does (urlkeys.py)
        return InvalidArguments(f"SQLite error: {message}. url_host takes only 'strip-www' as its second argument.")
    if "no such table" in message:
        ids = [d.id for d in store.list()]
        shown = ", ".join(ids[:30]) or "none yet"
        return InvalidArguments(f"SQLite error: {message}. Table names are dataset ids of acp-data: {shown}.")
    return InvalidArguments(f"SQLite error: {message}.")
