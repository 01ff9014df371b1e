"""What the databases connector keeps between calls, held by the server's ConnectorState (analytics_acp.state):
made on first use, released when the server stops (queries in flight cancelled at the database, then every
engine disposed). Engines are keyed by the core's identity_key of the credentials (10.1.3), never persisted."""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Protocol

from analytics_acp.identity_memo import IdentityMemo
from analytics_acp.state import ConnectorSlot, KeyedCache

log = logging.getLogger(__name__)

# Engines kept (LRU). Above the number of sources in use at once, every call would build and
# dispose an engine (and reconnect); 64 covers 50 concurrent HTTP sessions with their own files.
MAX_ENGINES = 64
COLUMN_CACHE_S = 300  # reflected columns of a table, reused by type inference
COLUMN_CACHE_SIZE = 4096
INFERRED_MEMO_SIZE = 512  # inferred projection types, per (query shape, dialect, count, schema)


class Session(Protocol):
    """What the state needs of a session (engines.Session, which imports this module: a Protocol here, not an
    import back, keeps the two out of an import circle): cancel its statement in flight, True if there was one."""

    def cancel(self) -> bool: ...


def _dispose(engine: Any) -> None:
    engine.dispose()


class DatabaseState:
    """Engines (LRU, disposed when pushed out), per-file locks, the sessions with a connection checked out
    (what a stop cancels), reflected columns and inferred types."""

    def __init__(self, max_engines: int = MAX_ENGINES) -> None:
        self.engines: KeyedCache[Any] = KeyedCache(max_engines, on_evict=_dispose)
        self.columns: KeyedCache[dict[str, str]] = KeyedCache(COLUMN_CACHE_SIZE, ttl_s=COLUMN_CACHE_S)
        self.inferred: KeyedCache[tuple[str | None, ...]] = KeyedCache(INFERRED_MEMO_SIZE)
        self.keys = IdentityMemo()  # identity_key of a session's credentials dict, hashed once (engines.Source)
        self._dialects: dict[str | None, Any] = {}  # sqlglot Dialect per name: at most one per dialect served
        self._readers = threading.local()  # per thread, its readonly.SqlReader per dialect name; gone with the thread
        self.active: weakref.WeakSet[Session] = weakref.WeakSet()
        self._file_locks: dict[str, threading.RLock] = {}
        self._lock = threading.Lock()

    def dialect(self, name: str | None) -> Any:
        """sqlglot's Dialect for ``name``, made once: an instance is never changed after it is made, and
        ``Dialect.get_or_raise(name)`` builds a new one on every call (a tenth of the guard's own work)."""
        found = self._dialects.get(name)
        if found is None:
            import sqlglot

            found = self._dialects.setdefault(name, sqlglot.Dialect.get_or_raise(name))
        return found

    def sql_reader(self, name: str | None) -> Any:
        """This thread's readonly.SqlReader for the dialect ``name`` (a tokenizer and a parser, reused by one thread)."""
        readers: dict[str | None, Any] | None = getattr(self._readers, "by_name", None)
        if readers is None:
            readers = self._readers.by_name = {}
        found = readers.get(name)
        if found is None:
            from .readonly import SqlReader

            found = readers[name] = SqlReader(self.dialect(name))
        return found

    def file_lock(self, path: str) -> threading.RLock:
        """Per-file lock: DuckDB cannot hold a read-only and a read-write handle of one file at once."""
        with self._lock:
            return self._file_locks.setdefault(path, threading.RLock())

    def track(self, session: Session) -> None:
        """A session has a connection checked out: a stop cancels its statement."""
        with self._lock:
            self.active.add(session)

    def untrack(self, session: Session) -> None:
        """The session gave its connection back."""
        with self._lock:
            self.active.discard(session)

    def cancel_running(self) -> int:
        """Stop every query in flight at the database (the server is stopping: Ctrl-C, SIGTERM): SQLite/DuckDB
        interrupt, PostgreSQL cancel request, MySQL/MariaDB KILL QUERY from a second connection.
        Returns how many were cancelled (logged at INFO)."""
        with self._lock:
            sessions = list(self.active)
        cancelled = 0
        for session in sessions:
            try:
                cancelled += session.cancel()
            except Exception:  # stopping anyway: one failed cancel must not keep the others
                log.debug("stopping: a cancel failed", exc_info=True)
        if cancelled:
            log.info("stopping: cancelled %d %s in flight", cancelled, "query" if cancelled == 1 else "queries")
        return cancelled

    def close(self) -> None:
        """The server stops: cancel the queries in flight, then dispose every engine and forget the rest."""
        self.cancel_running()
        self.engines.clear()
        self.columns.clear()
        self.inferred.clear()


DATABASES = ConnectorSlot("databases.state", DatabaseState, DatabaseState.close)
