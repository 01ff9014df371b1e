"""Loaded datasets kept between acp_query calls, keyed by the CSV's identity (bench case 5).

Loading a 1M-row CSV into SQLite takes seconds; the GROUP BY over it a fraction of that. So each
dataset a query names is loaded once into its own in-memory SQLite database (the ``memdb`` VFS,
shared within this process) and the query's throw-away connection ATTACHes it. SQLite semantics
are unchanged: the query still runs in SQLite, over typed columns, and sees only the datasets it
names, read-only (the query connection's authorizer denies writes to attached databases too).

The key is the CSV's path, size, mtime_ns and inode plus the dataset id and typed headers, so a
rewritten or replaced CSV (``save_as`` renames a new file into place: new inode) is loaded again,
never served stale. Memory is bounded: past the budget the least recently used tables are
dropped. A dropped table that a running query has attached stays alive until that query closes
(SQLite frees a memdb database with its last connection), so eviction never breaks a query.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ENV_BUDGET = "ACP_BRIDGE_QUERY_CACHE_MB"
DEFAULT_BUDGET_MB = 512
_names = itertools.count(1)

Loader = Callable[[sqlite3.Connection, Any], None]


def default_budget_bytes() -> int:
    """The cache budget: ``$ACP_BRIDGE_QUERY_CACHE_MB`` MiB (0 disables keeping tables), else 512 MiB."""
    raw = os.environ.get(ENV_BUDGET, "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_BUDGET_MB
    except ValueError:
        mb = DEFAULT_BUDGET_MB
    return max(0, int(mb * 1024 * 1024))


def identity(dataset: Any) -> tuple[Any, ...] | None:
    """What makes a loaded table current: CSV path, size, mtime_ns, inode, dataset id and typed headers."""
    try:
        st = os.stat(dataset.path)
    except OSError:
        return None
    headers = json.dumps(dataset.headers, sort_keys=True)
    return (str(dataset.path), st.st_size, st.st_mtime_ns, st.st_ino, dataset.id, headers)


@dataclass
class _Entry:
    uri: str
    keeper: sqlite3.Connection  # holds the memdb database alive while it is cached
    size: int


class TableCache:
    """LRU cache of datasets loaded into shared in-memory SQLite databases."""

    def __init__(self, budget_bytes: int | None = None):
        self.budget = default_budget_bytes() if budget_bytes is None else max(0, budget_bytes)
        self._entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # tables loaded from CSV so far (the tests read it to prove reuse)

    @property
    def size(self) -> int:
        """Bytes of SQLite pages held by the cached tables."""
        return sum(e.size for e in self._entries.values())

    def cached_ids(self) -> list[str]:
        """Dataset ids currently cached, least recently used first."""
        return [key[4] for key in self._entries]

    def attach(self, conn: sqlite3.Connection, datasets: list[Any], load: Loader) -> list[Any]:
        """ATTACH each dataset's table to ``conn`` (loading it if needed); returns those that did not fit.

        ``load(conn, dataset)`` creates and fills the table named by the dataset id. Datasets past
        SQLite's ATTACH limit, or too big for a memdb database, are returned so the caller loads
        them into the query's own database (no size limit there), uncached.
        """
        limit = conn.getlimit(sqlite3.SQLITE_LIMIT_ATTACHED)
        leftover: list[Any] = []
        attached = 0
        with self._lock:
            self._drop_stale(datasets)
            for dataset in datasets:
                if attached >= limit:
                    leftover.append(dataset)  # past SQLite's ATTACH limit
                    continue
                try:
                    entry, keep = self._get_or_load(dataset, load)
                except sqlite3.OperationalError as exc:
                    if "full" not in str(exc):
                        raise
                    leftover.append(dataset)  # larger than a memdb database may grow (1 GiB by default)
                    continue
                conn.execute(f"ATTACH DATABASE ? AS d{attached}", (entry.uri,))
                attached += 1
                if not keep:
                    entry.keeper.close()  # conn now holds the only reference: freed with the query
            # After the ATTACHes: an entry dropped here lives on in conn until the query ends.
            self._trim()
        return leftover

    def clear(self) -> None:
        """Drop every cached table."""
        with self._lock:
            while self._entries:
                self._entries.popitem(last=False)[1].keeper.close()

    def _get_or_load(self, dataset: Any, load: Loader) -> tuple[_Entry, bool]:
        """The dataset's entry and whether it is cached (False: use it for this query only)."""
        key = identity(dataset)
        if key is not None and key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key], True
        uri = f"file:/analytics-acp-query-{os.getpid()}-{next(_names)}?vfs=memdb"
        keeper = sqlite3.connect(uri, uri=True, check_same_thread=False)
        try:
            keeper.execute("PRAGMA journal_mode=OFF")  # a fresh private table: nothing to roll back to
            load(keeper, dataset)
            keeper.commit()
            (pages,) = keeper.execute("PRAGMA page_count").fetchone()
            (page_size,) = keeper.execute("PRAGMA page_size").fetchone()
        except BaseException:
            keeper.close()
            raise
        self.loads += 1
        entry = _Entry(uri=uri, keeper=keeper, size=pages * page_size)
        # Cached only if the CSV did not change while it was read; otherwise used once and dropped.
        if key is None or identity(dataset) != key:
            return entry, False
        self._entries[key] = entry
        return entry, True

    def _drop_stale(self, datasets: list[Any]) -> None:
        """Forget tables whose CSV is gone or changed (same path, another identity)."""
        current = {str(d.path): identity(d) for d in datasets}
        for key in list(self._entries):
            path = key[0]
            if (path in current and current[path] != key) or not os.path.exists(path):
                self._entries.pop(key).keeper.close()

    def _trim(self) -> None:
        while self._entries and self.size > self.budget:
            self._entries.popitem(last=False)[1].keeper.close()
