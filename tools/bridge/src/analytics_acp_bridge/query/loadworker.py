"""The preload worker (``python -m analytics_acp_bridge.query.loadworker``): rows of a table file into SQLite.

preload.py starts one or two of these once a dataset's CSV is saved. Each reads a byte range of the
extraction's table file (8.5, handed over as an open descriptor), inserts its rows into the
dataset's typed table in a private in-memory database, writes that database to the file ``out``
and prints what the bridge needs to choose indexes (the distinct values of the columns it asked
about, while there are few). Two workers each take half of the file's lines so the load uses both
cores, which the bridge and the connector leave idle once the extraction has answered (issue 39.3);
the bridge appends the second half to the first, so rows keep the file's order.

Cells go in as the CSV holds them (the bridge's ``cells_sql``, tableload.cell_sql) unless a batch's
column is plainly typed for its SQLite column (ints for INTEGER, finite numbers for REAL, bools for
boolean, non-empty text for TEXT), which SQLite stores identically and faster.

Light on purpose: stdlib and orjson only (importing the core package costs the worker about 0.2 s
on every extraction); the core's reader (analytics_acp.tablefile) is imported only for a file
that is not laid out one chunk of rows per line, which it reads whole (such a file is never split).
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from collections.abc import Iterator
from itertools import repeat
from typing import Any, BinaryIO

import orjson

OVER_BUDGET = 3  # exit code: the table would not fit the cache budget
LAYOUT = 4  # exit code of a part: the file is not laid out a chunk per line (the bridge loads it whole)
MAX_LINE = 16 * 1024 * 1024  # analytics_acp.tablefile.MAX_LINE: longer lines are not this layout
_NONE = type(None)
_INT_OK = frozenset({int, _NONE})
_REAL_OK = frozenset({int, float, _NONE})
_BOOL_OK = frozenset({bool, _NONE})
_TEXT_OK = frozenset({str, _NONE})
_SPECIAL = frozenset({bool, dict, list, tuple})  # store.csvtypes.SPECIAL_TYPES: written by csvtypes.cell
_INT64 = (-(2**63), 2**63 - 1)
_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))  # as in analytics_acp.tablefile
_LONG_RUN = b"0" * 19


class NotThisLayout(Exception):
    """The byte range is not a run of whole lines of the table file layout (analytics_acp.tablefile)."""


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
    if type(value) in _SPECIAL:
        from ..store import csvtypes  # rare (objects, arrays, booleans in a text batch): the CSV writer's own text

        return csvtypes.cell(value)
    return str(value)  # what the CSV writer writes for str/int/float (str(float) is repr)


class TableLoader:
    """Inserts batches of row objects into a table made by ``create_sql``; notes distinct values of ``track``."""

    def __init__(self, conn: sqlite3.Connection, spec: dict[str, Any]):
        self.conn, self.names, self.kinds = conn, spec["names"], spec["kinds"]
        conn.execute(spec["create_sql"])
        self.typed_sql, self.cells_sql = spec["typed_sql"], spec["cells_sql"]
        self.cap = int(spec.get("distinct_cap", 0))
        self.distinct: dict[int, set[Any] | None] = {i: set() for i in spec.get("track", [])}

    def insert(self, batch: list[Any]) -> None:
        """One batch (a line of the file) into the table."""
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
        for i, seen in self.distinct.items():
            if seen is None:
                continue
            try:
                seen.update(columns[i])
            except TypeError:  # an object or array: not a column to group by
                self.distinct[i] = None
                continue
            if len(seen) > self.cap:
                self.distinct[i] = None  # too many to be worth an index (preload.py)

    def distinct_values(self) -> dict[str, list[Any] | None]:
        """Tracked column name -> its distinct values (None: past the cap, or not groupable)."""
        return {self.names[i]: (None if seen is None else list(seen)) for i, seen in self.distinct.items()}


def range_chunks(handle: BinaryIO, start: int, end: int | None) -> Iterator[list[Any]]:
    """The rows of the table file's lines that start in [start, end), one list per line.

    The layout is analytics_acp.tablefile's: ``[``, then lines of comma-separated objects each
    ending with a comma except the last, then ``]``. ``start`` is 0 or the start of a line (the
    bridge picks it); the range that reaches the end (``end`` None) must close the array. Raises
    NotThisLayout on anything else.
    """
    handle.seek(start)
    position = start
    if start == 0:
        first = handle.readline(64)
        position += len(first)
        if first.strip() != b"[":
            raise NotThisLayout
    more: bool | None = None if start == 0 else True  # did the last line end with a comma?
    while end is None or position < end:
        line = handle.readline(MAX_LINE)
        if not line:
            break
        position += len(line)
        if len(line) == MAX_LINE and not line.endswith(b"\n"):
            raise NotThisLayout
        text = line.strip()
        if not text:
            continue
        if text == b"]":
            if end is not None or more is not False or handle.read(MAX_LINE).strip():
                raise NotThisLayout  # a trailing comma, more after the array, or a bracket mid-file
            return
        if more is False:
            raise NotThisLayout  # two lines without a comma between them
        more = text.endswith(b",")
        chunk = _parse(b"[" + (text[:-1] if more else text) + b"]")
        if not chunk:
            raise NotThisLayout
        yield chunk
    if end is None or more is not True:
        raise NotThisLayout  # no closing bracket, or a part that does not end between two rows


def _parse(data: bytes) -> list[Any] | None:
    try:
        if data.translate(_DIGITS).find(_LONG_RUN) >= 0:
            rows: list[Any] = json.loads(data, parse_constant=_no_constant)  # exact ints beyond 64 bits
        else:
            rows = orjson.loads(data)
        return rows
    except ValueError:
        return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # the stdlib accepts NaN/Infinity, JSON does not


def worker() -> int:
    """Spec (JSON) on stdin; the table goes to the SQLite file ``out``; distinct values (JSON) on stdout."""
    spec = orjson.loads(sys.stdin.buffer.read())
    start, end = int(spec.get("start", 0)), spec.get("end")
    whole = start == 0 and end is None
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA journal_mode=OFF")
    loader = TableLoader(conn, spec)
    with open(f"/dev/fd/{spec['fd']}", "rb") as handle:  # a new open file: its own offset
        try:
            for batch in range_chunks(handle, start, end):
                loader.insert(batch)
                if _db_bytes(conn) > spec["budget"]:
                    return OVER_BUDGET
        except NotThisLayout:
            if not whole:
                return LAYOUT
            conn.close()
            return _whole_file(spec)
    return _finish(conn, loader, spec)


def _whole_file(spec: dict[str, Any]) -> int:
    """Any other valid JSON array: the core's reader (ijson past the first line that does not fit)."""
    from pathlib import Path

    from analytics_acp.tablefile import iter_file_chunks

    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA journal_mode=OFF")
    loader = TableLoader(conn, spec)
    for batch in iter_file_chunks(Path(f"/dev/fd/{spec['fd']}")):
        loader.insert(batch)
        if _db_bytes(conn) > spec["budget"]:
            return OVER_BUDGET
    return _finish(conn, loader, spec)


def _finish(conn: sqlite3.Connection, loader: TableLoader, spec: dict[str, Any]) -> int:
    conn.commit()
    disk = sqlite3.connect(spec["out"])  # a file, not a pipe: the bridge copies pages, never a whole image
    try:
        conn.backup(disk)
    finally:
        disk.close()
    sys.stdout.buffer.write(orjson.dumps({"distinct": loader.distinct_values()}))
    return 0


def _db_bytes(conn: sqlite3.Connection) -> int:
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    return pages * page_size


if __name__ == "__main__":
    sys.exit(worker())
