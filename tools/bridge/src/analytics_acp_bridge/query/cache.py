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

Adaptive indexes (bench case 5): a plain GROUP BY that SQLite answers by sorting ("USE TEMP
B-TREE FOR GROUP BY") and that comes back a second time for the same cached table gets a
covering index in that table's database (``index_group_by``), built with the cache's own
connection. At most MAX_INDEXES per table; their pages count in the budget; they die with the
table (a changed CSV is a new identity, a new database).

A preload's further indexes are built while nobody queries the table (indexbuild.IdleBuild): anything
that uses or drops an entry's database first stops such a build (``_quiet``), so a query never waits
for it.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .groupshape import GroupShape
from .indexbuild import IdleBuild, create_index, db_bytes

ENV_BUDGET = "ACP_BRIDGE_QUERY_CACHE_MB"
DEFAULT_BUDGET_MB = 512
MAX_INDEXES = 2  # per cached table: each costs memory and slows nothing else, but is rarely reused
MAX_SORT_INDEXES = 4  # per cached table: one per column the dataset view sorted by (view/pages.py)
MAX_SHAPES = 32  # GROUP BY shapes remembered per table, waiting for their second sighting
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


def memdb_uri() -> str:
    """A new name for a shared in-memory SQLite database of this process."""
    return f"file:/analytics-acp-query-{os.getpid()}-{next(_names)}?vfs=memdb"


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
    table: str = ""
    seen: dict[GroupShape, int] = field(default_factory=dict)  # shapes seen once, oldest first
    indexed: list[GroupShape] = field(default_factory=list)
    sorted: dict[str, str] = field(default_factory=dict)  # column -> its index, for the dataset view
    refused: set[GroupShape] = field(default_factory=set)  # shapes whose index could not be kept
    idle: IdleBuild | None = None  # a preload's indexes still being built (stopped by any other use)


class TableCache:
    """LRU cache of datasets loaded into shared in-memory SQLite databases."""

    def __init__(self, budget_bytes: int | None = None):
        self.budget = default_budget_bytes() if budget_bytes is None else max(0, budget_bytes)
        self._entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # tables loaded from CSV so far (the tests read it to prove reuse)
        self.preloaded = 0  # tables loaded while the bridge wrote their CSV (preload.py)
        self._expected: dict[tuple[Any, ...], Any] = {}  # identity -> Preload still loading

    @property
    def size(self) -> int:
        """Bytes of SQLite pages held by the cached tables."""
        return sum(e.size for e in self._entries.values())

    def cached_ids(self) -> list[str]:
        """Dataset ids currently cached, least recently used first."""
        return [key[4] for key in self._entries]

    def holds(self, dataset: Any) -> bool:
        """True when the dataset's current table is cached (a query attaches it without loading)."""
        key = identity(dataset)
        with self._lock:
            return key is not None and key in self._entries

    def attach(self, conn: sqlite3.Connection, datasets: list[Any], load: Loader) -> list[Any]:
        """ATTACH each dataset's table to ``conn`` (loading it if needed); returns those that did not fit.

        ``load(conn, dataset)`` creates and fills the table named by the dataset id. Datasets past
        SQLite's ATTACH limit, or too big for a memdb database, are returned so the caller loads
        them into the query's own database (no size limit there), uncached.
        """
        for dataset in datasets:  # a table still loading from its extraction: wait (outside the lock)
            key = identity(dataset)
            pending = self._expected.get(key) if key is not None else None
            if pending is not None:
                pending.wait()
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

    def expect(self, key: tuple[Any, ...], pending: Any) -> None:
        """A preload (preload.py) will deliver the table of this CSV identity; queries wait for it."""
        with self._lock:
            self._expected[key] = pending

    def forget(self, key: tuple[Any, ...], pending: Any) -> None:
        """A preload failed (over budget, an error): the first query loads the CSV as usual."""
        with self._lock:
            if self._expected.get(key) is pending:
                del self._expected[key]

    def adopt(self, key: tuple[Any, ...], uri: str, keeper: sqlite3.Connection, table: str, pending: Any,
              later: list[tuple[str, list[str]]] | None = None) -> IdleBuild | None:
        """Take a table loaded by a preload as the entry of ``key`` (in the budget, most recently used).

        ``later``: indexes (name, columns) to build while no query uses the table; returns that build.
        """
        with self._lock:
            if self._expected.get(key) is pending:
                del self._expected[key]
            if key in self._entries or not os.path.exists(key[0]):
                keeper.close()
                return None
            self._drop_deleted()
            entry = _Entry(uri=uri, keeper=keeper, size=db_bytes(keeper), table=table)
            self._entries[key] = entry
            self.preloaded += 1
            self._trim()
            if not later or self._entries.get(key) is not entry:
                return None
            entry.idle = IdleBuild(keeper, table, later, self.budget)
            entry.idle.start(lambda build: self._built(key, entry, build))
            return entry.idle

    def _built(self, key: tuple[Any, ...], entry: _Entry, build: IdleBuild) -> None:
        """An idle build ended: the entry's size now counts its indexes."""
        with self._lock:
            if entry.idle is build:
                entry.idle = None
            if build.size is not None and self._entries.get(key) is entry:
                entry.size = build.size
                self._trim()

    def _quiet(self, entry: _Entry) -> None:
        """Stop the entry's idle build (a query or a change of the cache comes first); under the lock."""
        if entry.idle is not None:
            entry.idle.stop()
            entry.idle = None

    def _close(self, entry: _Entry) -> None:
        """Drop an entry's database (a query that attached it keeps it until it ends)."""
        self._quiet(entry)
        entry.keeper.close()

    def drop_deleted(self) -> None:
        """Free the tables of datasets whose CSV is gone (a preload calls it before it builds another table)."""
        with self._lock:
            self._drop_deleted()

    def _drop_deleted(self) -> None:
        for stale in [k for k in self._entries if not os.path.exists(k[0])]:
            self._close(self._entries.pop(stale))

    def index_group_by(self, dataset: Any, shape: GroupShape) -> str | None:
        """Note that ``shape`` needed a sort over the cached ``dataset``; the second time, index it.

        Returns the name of the index built now, else None (first sighting, table not cached,
        cap reached, or the index did not fit). The index is built inside the table's own
        database with the cache's connection; queries attached to it see it from their next
        statement on (SQLite re-reads a schema that changed).
        """
        with self._lock:
            key = identity(dataset)
            entry = self._entries.get(key) if key is not None else None
            if entry is None or shape in entry.refused or shape in entry.indexed or len(entry.indexed) >= MAX_INDEXES:
                return None
            if shape not in entry.seen:
                entry.seen[shape] = 1
                while len(entry.seen) > MAX_SHAPES:
                    entry.seen.pop(next(iter(entry.seen)))
                return None
            del entry.seen[shape]
            name = self._build_index(entry, shape, f"acp_group_by_{len(entry.indexed) + 1}")
            if name is not None:
                    self._trim()
            return name

    def index_column(self, dataset: Any, column: str) -> str | None:
        """The index on ``column`` of the cached ``dataset``'s table, built on the first call for it.

        The dataset view (view/pages.py) pages a sorted dataset by seeking this index instead of sorting
        the table for every page. At most MAX_SORT_INDEXES per table, within the budget like the GROUP BY
        ones; None when the table is not cached or the index could not be kept (pages then sort).
        """
        with self._lock:
            key = identity(dataset)
            entry = self._entries.get(key) if key is not None else None
            if entry is None:
                return None
            if column in entry.sorted:
                return entry.sorted[column]
            shape = GroupShape(entry.table.lower(), (column,), ())
            if shape in entry.refused or len(entry.sorted) >= MAX_SORT_INDEXES:
                return None
            name = self._build_index(entry, shape, f"acp_sort_{len(entry.sorted) + 1}")
            if name is not None:
                entry.sorted[column] = name
            self._trim()
            return name

    def indexes(self, dataset: Any) -> list[tuple[str, str]]:
        """(name, CREATE INDEX sql) of the indexes on the cached ``dataset``'s table, from its sqlite_master."""
        with self._lock:
            key = identity(dataset)
            entry = self._entries.get(key) if key is not None else None
            if entry is None:
                return []
            self._quiet(entry)
            rows = entry.keeper.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name")
            return [(name, sql) for name, sql in rows]

    def clear(self) -> None:
        """Drop every cached table."""
        with self._lock:
            self._expected.clear()
            while self._entries:
                self._close(self._entries.popitem(last=False)[1])

    def _get_or_load(self, dataset: Any, load: Loader) -> tuple[_Entry, bool]:
        """The dataset's entry and whether it is cached (False: use it for this query only)."""
        key = identity(dataset)
        if key is not None and key in self._entries:
            self._entries.move_to_end(key)
            self._quiet(self._entries[key])  # a memdb database lets no reader in while it is written
            return self._entries[key], True
        uri = memdb_uri()
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
        entry = _Entry(uri=uri, keeper=keeper, size=pages * page_size, table=dataset.id)
        # Cached only if the CSV did not change while it was read; otherwise used once and dropped.
        if key is None or identity(dataset) != key:
            return entry, False
        self._entries[key] = entry
        return entry, True

    def _build_index(self, entry: _Entry, shape: GroupShape, name: str) -> str | None:
        """CREATE INDEX for ``shape`` in the entry's database; None (and never again if it does not fit) otherwise."""
        self._quiet(entry)
        built = create_index(entry.keeper, entry.table, name, shape.columns, self.budget)
        if built is None:
            return None  # a query is reading the database: we try again next time
        entry.size = db_bytes(entry.keeper)
        if not built:
            entry.refused.add(shape)
            return None
        entry.indexed.append(shape)
        return name

    def _drop_stale(self, datasets: list[Any]) -> None:
        """Forget tables whose CSV is gone or changed (same path, another identity)."""
        current = {str(d.path): identity(d) for d in datasets}
        for key in list(self._entries):
            path = key[0]
            if (path in current and current[path] != key) or not os.path.exists(path):
                self._close(self._entries.pop(key))

    def _trim(self) -> None:
        while self._entries and self.size > self.budget:
            self._close(self._entries.popitem(last=False)[1])

