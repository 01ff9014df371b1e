"""The typed SQLite table of a dataset, and the preload worker (``python -m analytics_acp_bridge.query.tableload``).

acp_query loads a dataset's CSV cells with ``cell_sql`` (empty is NULL, boolean words 0/1, column
affinity for numbers). The preload worker (preload.py) builds the same table from the rows of the
extraction's table file: cells go in as the CSV holds them unless a batch's column is plainly
typed for its SQLite column (ints for INTEGER, finite numbers for REAL, bools for boolean,
non-empty text for TEXT), which SQLite stores identically and faster. This module stays light
(no sqlglot): the worker imports it on every extraction.
"""

from __future__ import annotations

import math
import sqlite3
import sys
from itertools import repeat
from pathlib import Path
from typing import Any

import orjson
from analytics_acp.results.inference import FALSE_WORDS, TRUE_WORDS

from ..store import csvtypes

OVER_BUDGET = 3  # the worker's exit code when the table would not fit the cache budget
_NONE = type(None)
_INT_OK = frozenset({int, _NONE})
_REAL_OK = frozenset({int, float, _NONE})
_BOOL_OK = frozenset({bool, _NONE})
_TEXT_OK = frozenset({str, _NONE})
_INT64 = (-(2**63), 2**63 - 1)


def quote(name: str) -> str:
    """An SQL identifier in double quotes."""
    return '"' + name.replace('"', '""') + '"'


_TRUE_SQL = ", ".join(f"'{w}'" for w in sorted(TRUE_WORDS | {"1"}))
_FALSE_SQL = ", ".join(f"'{w}'" for w in sorted(FALSE_WORDS | {"0"}))


def cell_sql(index: int, kind: str) -> str:
    """SQL for one inserted CSV cell: empty is NULL, booleans become 0/1 (the core's boolean words);
    SQLite's column affinity turns numeric text into INTEGER/REAL values, so rows go in without
    per-cell Python work."""
    if kind == "boolean":
        return (
            f"CASE WHEN lower(?{index}) IN ({_TRUE_SQL}) THEN 1 WHEN lower(?{index}) IN ({_FALSE_SQL}) THEN 0 "
            f"ELSE NULLIF(?{index}, '') END"
        )
    return f"NULLIF(?{index}, '')"


def _plain(column: list[Any], kind: str) -> bool:
    """True when SQLite stores these values exactly as it stores their CSV text in a ``kind`` column."""
    kinds = set(map(type, column))
    if kind == "integer" or (kind == "number" and kinds <= _INT_OK):
        if not kinds <= _INT_OK:
            return False
        values = [v for v in column if v is not None] if _NONE in kinds else column
        return _in_int64(values)
    if kind == "number":
        if not kinds <= _REAL_OK:
            return False
        values = [v for v in column if v is not None] if _NONE in kinds else column
        if int in kinds and not _in_int64([v for v in values if v.__class__ is int]):
            return False  # pysqlite cannot bind an int past 64 bits; the CSV text goes in as REAL
        try:  # NaN/inf are written as text in the CSV; an overflowing sum only sends the batch the slow way
            return math.isfinite(sum(values))
        except OverflowError:
            return False
    if kind == "boolean":
        return kinds <= _BOOL_OK
    return kinds <= _TEXT_OK and "" not in column  # "" is written as an empty cell: NULL


def _in_int64(values: list[Any]) -> bool:
    return not values or (_INT64[0] <= min(values) and max(values) <= _INT64[1])


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if type(value) in csvtypes.SPECIAL_TYPES:
        return csvtypes.cell(value)
    return str(value)  # what the CSV writer writes for str/int/float (str(float) is repr)


class TableLoader:
    """Creates the dataset's typed table in ``conn`` and inserts batches of row objects."""

    def __init__(self, conn: sqlite3.Connection, table: str, names: list[str], kinds: list[str]):
        self.conn, self.names, self.kinds = conn, names, kinds
        columns = ", ".join(f"{quote(n)} {csvtypes.SQLITE_TYPES.get(k, 'TEXT')}" for n, k in zip(names, kinds, strict=True))
        conn.execute(f"CREATE TABLE {quote(table)} ({columns})")
        self.typed_sql = f"INSERT INTO {quote(table)} VALUES ({', '.join('?' for _ in names)})"
        self.cells_sql = f"INSERT INTO {quote(table)} VALUES ({', '.join(cell_sql(i + 1, k) for i, k in enumerate(kinds))})"

    def insert(self, batch: list[Any]) -> None:
        n = len(batch)
        columns = []
        for name in self.names:
            try:
                columns.append(list(map(dict.get, batch, repeat(name, n))))
            except TypeError:  # a Mapping that is not a dict
                columns.append([row.get(name) for row in batch])
        if all(_plain(column, kind) for column, kind in zip(columns, self.kinds, strict=True)):
            self.conn.executemany(self.typed_sql, zip(*columns, strict=True))
        else:
            texts = [list(map(_cell_text, column)) for column in columns]
            self.conn.executemany(self.cells_sql, zip(*texts, strict=True))


def worker() -> int:
    """``python -m analytics_acp_bridge.query.tableload``: spec on stdin; the table goes to the SQLite file ``out``."""
    from analytics_acp.tablefile import iter_file_chunks

    spec = orjson.loads(sys.stdin.buffer.read())
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA journal_mode=OFF")
    loader = TableLoader(conn, spec["table"], spec["names"], spec["kinds"])
    for batch in iter_file_chunks(Path(f"/dev/fd/{spec['fd']}")):  # a line of the file (~2,000 rows) each
        loader.insert(batch)
        if _db_bytes(conn) > spec["budget"]:
            return OVER_BUDGET
    conn.commit()
    disk = sqlite3.connect(spec["out"])  # a file, not a pipe: the bridge copies pages, never a whole image
    try:
        conn.backup(disk)
    finally:
        disk.close()
    return 0


def _db_bytes(conn: sqlite3.Connection) -> int:
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    return pages * page_size


if __name__ == "__main__":
    sys.exit(worker())
