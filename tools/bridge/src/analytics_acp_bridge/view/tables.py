"""A dataset's typed SQLite table for the dataset view: read-only, through the bridge's query cache.

The view reads the very tables acp_query reads (query/cache.py): a dataset loaded once (or preloaded
while its extraction was saved) is paged and charted without reading its CSV again. Every statement
runs on a throw-away connection with the query's read-only authorizer, so nothing the view asks can
write; dataset ids are looked up in the store's listing, never joined to a path (8.8.1).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from analytics_acp.errors import TableNotFound

from ..query.cache import TableCache
from ..query.tableload import quote
from ..store.datasets import Dataset, DatasetStore

TEXT_TYPES = {"string", "date", "datetime", "json"}
NUMERIC_TYPES = {"integer", "number"}


@dataclass
class Table:
    """One dataset's table attached to a connection: ``ref`` is its qualified SQL name."""

    conn: sqlite3.Connection
    ref: str
    dataset: Dataset

    @property
    def columns(self) -> list[dict[str, str]]:
        """Typed columns in order (name, type): 8.6's types, as the dataset's meta says."""
        return [{"name": str(h["name"]), "type": h.get("type") or "string"} for h in self.dataset.headers]

    def column(self, name: str) -> str:
        """The quoted SQL name of a column."""
        return quote(name)

    def typed(self, values: tuple[Any, ...]) -> list[Any]:
        """A row of SQLite values as the view shows them: booleans as true/false, the rest as stored."""
        return [_typed(v, c["type"]) for v, c in zip(values, self.columns, strict=False)]


def _typed(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "boolean" and isinstance(value, int):
        return bool(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def find_dataset(store: DatasetStore, dataset_id: Any) -> Dataset:
    """The dataset of that id (a bare id of acp_datasets, case-insensitive), else ACP_TABLE_NOT_FOUND."""
    if isinstance(dataset_id, str) and dataset_id.strip():
        found = store.get(dataset_id.strip())
        if found is not None:
            return found
    raise TableNotFound(f"No dataset {dataset_id!r} in acp-data. Pass the id of a dataset the bridge listed.")


@contextlib.contextmanager
def open_table(store: DatasetStore, cache: TableCache, dataset: Dataset) -> Iterator[Table]:
    """The dataset's table on a fresh read-only connection (loaded into the cache if needed)."""
    from ..query.sql import load_table, read_only  # sqlglot with it: not for bridge --check, which imports the bridge

    conn = sqlite3.connect(":memory:", uri=True, check_same_thread=False)  # uri: ATTACH of memdb names
    try:
        leftover = cache.attach(conn, [dataset], lambda c, d: load_table(c, store, d))
        if leftover:  # too big for the cache or past its budget: this connection's own copy
            load_table(conn, store, dataset)
        conn.set_authorizer(read_only)
        yield Table(conn, f"{'main' if leftover else 'd0'}.{quote(dataset.id)}", dataset)
    finally:
        conn.close()
