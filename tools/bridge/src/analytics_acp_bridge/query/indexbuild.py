"""Building an index in a cached table's database: at once, or while nobody queries it (bench case 5).

``create_index`` is the one way the cache (adaptive and sort indexes) and the preload (indexes
ahead of the first query) build an index: inside the table's memdb database, within the cache
budget, and undone cleanly when it does not fit.

``IdleBuild`` builds a preload's further indexes after the table is handed to queries. A memdb
database lets no reader in while a connection writes to it (its RESERVED lock excludes new SHARED
locks), so an index built in the background would hold the next query for the rest of the build.
Instead the query stops it: ``stop`` interrupts the statement (SQLite rolls the index back) and
the query runs on what is there. A stopped index is not retried; a GROUP BY that needs it gets
one the usual way (the cache indexes a shape it sees twice).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

STOP_BOUND_S = 5.0  # every wait is bounded: past this a query goes on (SQLite's own lock then decides)
_POLL_S = 0.01  # an interrupt sent between two statements is lost (SQLite resets it): send it again


def quote(name: str) -> str:
    """An SQL identifier in double quotes."""
    return '"' + name.replace('"', '""') + '"'


def db_bytes(conn: sqlite3.Connection) -> int:
    """Bytes of SQLite pages of a connection's main database."""
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    return pages * page_size


def create_index(conn: sqlite3.Connection, table: str, name: str, columns: list[str] | tuple[str, ...],
                 budget: int) -> bool | None:
    """CREATE INDEX ``name`` on ``table`` (``columns``) in ``conn``'s database, kept only within ``budget`` bytes.

    True: built. False: it does not fit (the memdb is full, or the database would pass the budget;
    its pages are given back): not worth trying again. None: the database was busy, or the build
    was interrupted; it may be tried later.
    """
    try:
        # A rollback journal (in memory: new pages are not journaled, so it stays small) so a memdb
        # that fills up mid-build rolls back instead of leaving a broken table; and no waiting on a
        # query that is reading the database meanwhile.
        conn.execute("PRAGMA journal_mode=MEMORY")
        conn.execute("PRAGMA busy_timeout=0")
        conn.execute(f"CREATE INDEX {quote(name)} ON {quote(table)} ({', '.join(map(quote, columns))})")
        conn.commit()
    except sqlite3.OperationalError as exc:
        if conn.in_transaction:
            conn.rollback()
        text = str(exc)
        return None if ("locked" in text or "busy" in text or "interrupt" in text) else False
    if db_bytes(conn) > budget:
        # The index alone would push this table out of the cache: keeping the table is worth more.
        conn.execute(f"DROP INDEX {quote(name)}")
        conn.commit()
        try:
            conn.execute("VACUUM")  # give the freed pages back (page_count is the budget's measure)
        except sqlite3.OperationalError:
            pass  # a reader holds it; the caller measures the size again
        return False
    return True


@dataclass
class IdleBuild:
    """Indexes built one after another on a background thread until done or stopped."""

    conn: sqlite3.Connection
    table: str
    indexes: list[tuple[str, list[str]]]
    budget: int
    built: list[str] = field(default_factory=list)
    stopped: bool = False
    size: int | None = None  # the database's bytes when the build ended (None: not measured)
    finished: threading.Event = field(default_factory=threading.Event)

    def start(self, then: Callable[[IdleBuild], None]) -> None:
        """Build on a daemon thread; ``then(self)`` runs after ``finished`` is set (the cache's bookkeeping)."""
        threading.Thread(target=self._run, args=(then,), daemon=True, name=f"index-{self.table}").start()

    def _run(self, then: Callable[[IdleBuild], None]) -> None:
        try:
            for name, columns in self.indexes:
                if self.stopped or create_index(self.conn, self.table, name, columns, self.budget) is not True:
                    break
                self.built.append(name)
            self.size = db_bytes(self.conn)
        except sqlite3.Error:
            self.size = None  # the connection was closed under it (a stop past its bound): the cache measures
        finally:
            self.finished.set()  # before then(): a stop() waiting under the cache's lock returns first
        then(self)

    def stop(self) -> bool:
        """Interrupt the build and wait for it to end (bounded); True when it has ended."""
        self.stopped = True
        deadline = time.monotonic() + STOP_BOUND_S
        while not self.finished.is_set():
            self.conn.interrupt()
            if self.finished.wait(_POLL_S) or time.monotonic() > deadline:
                break
        return self.finished.is_set()
