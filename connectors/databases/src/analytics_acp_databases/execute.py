"""execute_sql: guard, run on the fenced connection, stream typed rows to the core (8.2, 8.6, 9.3, 10.4).

Rows leave a server-side cursor in batches (``fetchmany`` on the DB-API cursor) as tuples in
column order, so a million-row result never exists as a million Python objects: the core writes
them to the file as they come. The generator owns the connection and closes it (rolling back) when done.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
import weakref
from collections.abc import Generator, Iterator
from functools import partial
from itertools import chain
from typing import Any, cast

from analytics_acp import CallContext, Extraction, Header, InvalidArguments
from sqlalchemy.exc import DBAPIError
from sqlglot import exp

from . import catalog, types_map
from .arguments import ExecuteSql
from .credentials import describe_source
from .engines import USER_SQL, Session, open_read
from .readonly import CheckedQuery, check_sql
from .resource_ids import Target, credential_database, parse_call_target, sqlglot_dialect
from .sqlerrors import map_error

log = logging.getLogger(__name__)

BATCH_ROWS = 2000
SQL_IN_DESCRIPTION = 500


def call_target(ctx: CallContext) -> Target:
    """The call's Target: the effective resource_id, else the credentials' own database."""
    credentials = ctx.require_credentials()
    if ctx.resource_id:
        return parse_call_target(ctx.resource_id, credentials, ctx)
    database = credential_database(credentials)
    if not database:
        from analytics_acp import ResourceRequired

        raise ResourceRequired("Pass resource_id (<database>[.<schema>[.<table>]]); call autocontext without it to list the databases.")
    return Target(database=database)


def effective_schema(target: Target, ctx: CallContext) -> str | None:
    """Schema for unqualified names: the resource's schema, else config.default_schema."""
    return target.schema or (ctx.config or {}).get("default_schema") or None


def run_execute_sql(arguments: ExecuteSql, ctx: CallContext) -> Extraction:
    """Run one read-only query and return its rows as a streaming Extraction."""
    sql, limit = arguments.sql, arguments.limit
    target = call_target(ctx)
    source = catalog.source_for(ctx, target)
    checked = check_sql(sql, source.state.sql_reader(sqlglot_dialect(source.backend)))
    session = _open(source, effective_schema(target, ctx), ctx)
    ctx.on_cancel(partial(_cancel_quietly, session))  # the client cancelled: stop the statement at the database
    warnings: list[str] = []
    try:
        if ctx.cancelled:  # cancelled while connecting: a cancel request now would reach no statement
            raise InvalidArguments("The call was cancelled before its SQL ran.")
        log.debug("running the model's SQL on %s", session.backend)  # never the SQL text (it may quote data)
        result = _execute(session, checked)
        if not result.returns_rows:
            raise InvalidArguments("The statement returned no result set. Send a SELECT query.")
        description = result.cursor.description
        columns = unique_names([d[0] for d in description])
        kinds = column_types(session, checked, description, effective_schema(target, ctx))
    except BaseException as exc:
        session.close()
        if isinstance(exc, DBAPIError | sqlite3.Error):  # sqlite3's own: the SQLite cursor runs without SQLAlchemy
            raise map_error(exc, source.credentials, ctx.resource_id or target.database, source.timeout_s) from None
        raise
    roles = column_roles(checked.tree, len(columns), kinds)
    headers = result_headers(session.backend, columns, kinds, roles)
    if session.backend == "sqlite":
        kinds = [None] * len(kinds)  # the core types them over the whole result (BLOBs as hex, result_headers)
    converters = [types_map.converter(k) for k in kinds]
    batches = stream_batches(session, result, kinds, converters, limit, warnings, ctx)
    # A generator that is never started never runs its finally: release the connection when it is collected.
    weakref.finalize(batches, session.abandon if session.backend in ("mysql", "mariadb") else session.close)
    rows = cast(Rows, Rows.from_iterable(batches))  # chain's classmethod builds the subclass
    rows.batches = batches
    engine, subject = describe_source(source.credentials, target.database)
    resource = target.id(session.backend)
    return Extraction(
        rows=rows,
        columns=columns,
        headers=headers,
        description=f"{engine} database {subject} ({resource}). SQL: {compact_sql(checked.sql)}",
        title=f"{engine} · {subject}",
        dates=sql_dates(checked),
        warnings=warnings,
        source={"engine": session.backend, "database": target.database, "statement_type": checked.statement_type, "tables": checked.tables},
        arguments=arguments.given(),
    )


def _execute(session: Session, checked: CheckedQuery) -> Any:
    """Run the guarded SQL on the session's fenced connection: a result with ``returns_rows``, ``cursor``,
    ``fetchmany`` and ``close``.

    SQLite runs it on the DB-API cursor itself (``RawResult``): the connection is the same fenced one (query_only,
    the authorizer, the progress handler), and SQLAlchemy's execution context added nothing for one parameterless
    statement but time (about a third of a small call's database work, bench case 4b). Other engines keep
    SQLAlchemy's execution: PostgreSQL's one-statement hook and server-side cursors, MySQL's streaming.
    """
    if session.backend == "sqlite":
        cursor = session.conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(checked.sql)
        except BaseException:
            cursor.close()
            raise
        return RawResult(cursor)
    stream = not (checked.explain and session.backend == "postgresql")  # DECLARE CURSOR cannot hold EXPLAIN
    conn = session.conn.execution_options(no_parameters=True, stream_results=stream, max_row_buffer=BATCH_ROWS, **{USER_SQL: True})
    return conn.exec_driver_sql(checked.sql)


class RawResult:
    """A DB-API cursor seen through the few ``CursorResult`` members execute_sql reads."""

    def __init__(self, cursor: Any) -> None:
        self.cursor = cursor

    @property
    def returns_rows(self) -> bool:
        """Whether the statement gave a result set."""
        return self.cursor.description is not None

    def fetchmany(self, size: int) -> list[tuple]:
        """The next rows, at most ``size``."""
        rows = self.cursor.fetchmany(size)
        return rows if rows.__class__ is list else list(rows)

    def close(self) -> None:
        """Close the cursor (the connection stays the session's)."""
        self.cursor.close()


def result_headers(backend: str, columns: list[str], kinds: list[str | None], roles: list[str | None]) -> list[Any]:
    """8.6 headers: the driver's (or the schema's) types; SQLite's columns are typed from their values.

    A SQLite column's declared type is an affinity, not a type: any value can sit in any column,
    and dates are text. Its columns are marked ``infer`` for the core, which types each one over
    the whole result with the 8.6 rules, reads text as 16.6 does ('2026-01-01' is a date) and
    keeps the declared type as a hint that wins when every value fits it (a BOOLEAN of 0/1).
    BLOBs become hex text there too (``binary``), so SQLite's rows reach the core as pysqlite
    gave them. Engines with real result types keep them; a column they leave untyped is inferred too.
    """
    if backend == "sqlite":
        out: list[Any] = []
        for c, k, r in zip(columns, kinds, roles, strict=True):  # keys set in place: no dicts unpacked per column
            header = {"name": c, "type": "infer", "binary": "hex"}
            if k:
                header["hint"] = k
            if r:
                header["role"] = r
            out.append(header)
        return out
    return [Header(name=c, type=k, role=r) for c, k, r in zip(columns, kinds, roles, strict=True) if k is not None]  # type: ignore[arg-type]


def _open(source: Any, schema: str | None, ctx: CallContext) -> Session:
    try:
        return open_read(source, schema)
    except DBAPIError as exc:
        raise map_error(exc, source.credentials, ctx.resource_id, source.timeout_s) from None


class Rows(chain):
    """The rows of ``stream_batches``, one by one, flattened in C by ``itertools.chain``: no generator
    resume per row (issue 39, bench case 2). ``close()`` stops early as a generator's would."""

    __slots__ = ("batches",)
    batches: Generator[list[tuple], None, None]

    def close(self) -> None:
        """Close the batch generator (releasing the connection), then drop the rows still buffered."""
        self.batches.close()
        for _ in self:
            pass


def stream_batches(
    session: Session, result: Any, kinds: list, converters: list, limit: int | None, warnings: list[str], ctx: CallContext
) -> Generator[list[tuple], None, None]:
    """Yield the cursor's rows converted, a batch (list of tuples) at a time; always releases the connection."""
    credentials = session.source.credentials
    count = 0
    finished = False
    # pysqlite gives str, int, float, None or bytes, and the core turns bytes into hex text (the
    # headers' "binary"): SQLite's batches go on as they came (issue 39: a pass over each batch saved).
    plain = session.backend == "sqlite" and not any(kinds)
    try:
        for batch in fetch_batches(result, limit):
            rows = batch if plain else types_map.convert_batch(batch, kinds, converters)
            if limit is not None and count + len(rows) > limit:
                yield rows[: limit - count]
                note = f"Extraction stopped at limit={limit} rows; the query returns more. Aggregate in SQL or raise limit if you need every row."
                warnings.append(note)
                ctx_warnings = getattr(ctx, "warnings", None)
                if isinstance(ctx_warnings, list) and note not in ctx_warnings:
                    ctx_warnings.append(note)
                return
            count += len(rows)
            yield rows
            ctx.progress(count, None, f"{count} rows")  # the total is known only at the end
        finished = True
    except DBAPIError as exc:
        raise map_error(exc, credentials, ctx.resource_id, session.source.timeout_s) from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] in ("psycopg", "pymysql", "sqlite3", "duckdb", "_duckdb"):
            raise map_error(exc, credentials, ctx.resource_id, session.source.timeout_s) from None
        raise
    finally:
        if not finished and session.backend in ("mysql", "mariadb"):
            # An unbuffered MySQL result is drained row by row on close; drop the connection instead.
            session.abandon()
        else:
            try:
                result.close()
            except Exception as exc:  # a cursor broken by the failure: closing the session releases it
                log.debug("result close failed: %s", type(exc).__name__)
            session.close()


def _cancel_quietly(session: Session) -> None:
    # Runs on the event loop thread while the statement runs in the tool's thread; a KILL QUERY opens a
    # connection, so it gets a thread of its own rather than holding the loop.
    def cancel() -> None:
        try:
            session.cancel()
        except Exception as exc:  # a statement that just finished has nothing to cancel
            log.debug("cancel not sent: %s", type(exc).__name__)

    threading.Thread(target=cancel, name="analytics-acp-cancel", daemon=True).start()


def fetch_batches(result: Any, limit: int | None) -> Iterator[list[tuple]]:
    """The result's rows as lists of plain tuples, at most BATCH_ROWS (or limit + 1) at a time.

    The first batch goes through SQLAlchemy, which hands over the row a server-side cursor
    prefetched; the rest come straight from the DB-API cursor (``fetchmany`` on a server-side
    cursor is one FETCH / one unbuffered read), skipping SQLAlchemy's Row objects: for a
    million-row result that is most of the connector's own time. DB-API drivers return a full
    batch until the rows run out, so a short batch is the last one.
    """
    size = BATCH_ROWS if limit is None else min(BATCH_ROWS, limit + 1)  # one extra row tells whether the limit cut
    first = [tuple(row) for row in result.fetchmany(size)]
    if first:
        yield first
    if len(first) < size:
        return  # exhausted (SQLAlchemy has closed the cursor)
    cursor = result.cursor
    while batch := cursor.fetchmany(size):
        yield batch if batch.__class__ is list else list(batch)


def column_types(session: Session, checked: CheckedQuery, description: Any, schema: str | None) -> list[str | None]:
    """Driver types, filled in from sqlglot's inference over the reflected tables where unknown.

    Reflection runs on a second fenced connection: the query's cursor may be unbuffered
    (MySQL streaming), and another statement on its connection would discard its rows.
    """
    backend = session.backend
    driver = types_map.driver_types(description, backend)
    tree = checked.query_tree
    if all(k is not None for k in driver) or tree is None:
        return driver
    # Every referenced table already reflected (the column cache): no second connection.
    mapping = catalog.cached_schema_for_inference(session.source, checked.tables, schema)
    if mapping is None:
        try:
            with open_read(session.source, schema, timeout_s=10) as side:
                default = schema or catalog.default_schema(side)
                mapping = catalog.schema_for_inference(side, checked.tables, default)
        except Exception:
            mapping = {}
    inferred = types_map.inferred_types_memo(session.source.state.inferred, checked.sql, tree, mapping, sqlglot_dialect(backend), len(driver))
    return types_map.merge(driver, inferred)


def column_roles(tree: exp.Expression | None, count: int, kinds: list[str | None]) -> list[str | None]:
    """8.6 roles for an aggregate query: GROUP BY columns are dimensions, numeric aggregates metrics."""
    roles: list[str | None] = [None] * count
    if not isinstance(tree, exp.Select) or not tree.args.get("group"):
        return roles
    selects = tree.selects
    if len(selects) != count:
        return roles
    group = tree.args["group"].expressions
    group_sql = {g.sql() for g in group}
    positions = {int(g.name) for g in group if isinstance(g, exp.Literal) and g.is_int}
    aliases = {g.name for g in group if isinstance(g, exp.Column) and not g.table}
    for i, projection in enumerate(selects):
        inner = projection.unalias()
        if inner.find(exp.AggFunc) is not None:
            roles[i] = "metric" if kinds[i] in ("integer", "number") else None
        elif inner.sql() in group_sql or (i + 1) in positions or projection.alias_or_name in aliases:
            roles[i] = "dimension"
    return roles


def unique_names(names: list[Any]) -> list[str]:
    """Column names made unique (a.id, b.id -> id, id_2): headers need unique names (8.6)."""
    plain = [n for n in names if n.__class__ is str and n]
    if len(plain) == len(names) and len(set(plain)) == len(plain):  # distinct non-empty texts (the usual case) stay
        return plain
    seen: dict[str, int] = {}
    out = []
    for raw in names:
        name = str(raw) if raw not in (None, "") else "column"
        base, n = name, seen.get(name, 0)
        while name in seen:
            n += 1
            name = f"{base}_{n + 1}"
        seen[name] = 0
        seen[base] = n
        out.append(name)
    return out


def compact_sql(sql: str) -> str:
    """The SQL on one line for the description, elided past SQL_IN_DESCRIPTION characters."""
    one = " ".join(sql.split())
    return one if len(one) <= SQL_IN_DESCRIPTION else one[: SQL_IN_DESCRIPTION - 1].rstrip() + "…"


def sql_dates(checked: CheckedQuery) -> list[str] | None:
    """Key dates (8.2): every YYYY-MM-DD date in the SQL's string literals, sorted; None = today's date."""
    if checked.query_tree is None:
        return None
    found: set[str] = set()
    for text in checked.literals:  # collected by the guard's one walk of the tree (readonly._scan)
        day = literal_date(text)
        if day:
            found.add(day)
    return sorted(found) or None


def literal_date(text: str) -> str | None:
    """'2026-07-01' or '2026-07-01 10:00:00' -> '2026-07-01'; anything else -> None."""
    text = text.strip()
    if len(text) < 10 or text[4] != "-" or text[7] != "-":
        return None
    try:
        return dt.date.fromisoformat(text[:10]).isoformat() if len(text) == 10 else dt.datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        return None
