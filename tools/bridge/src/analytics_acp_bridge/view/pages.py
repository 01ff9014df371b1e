"""Pages of a whole dataset for the dataset view (issue 36.2; the local page's Datasets too, issue 35.7).

``DatasetView.page`` answers any window of a dataset, sorted by one column or not, filtered or not,
in rows typed as its columns. It never walks a growing OFFSET where it can seek:

- unsorted: the table's rowids are the CSV's row numbers (the table is loaded in order), so the
  rows at offset ``o`` are ``rowid > o``: one B-tree seek, wherever ``o`` is;
- sorted: an index on the column (built in the cached table on the first sort by it) gives
  keyset pages: ``next_cursor``/``prev_cursor`` name the boundary row, and the next page starts
  after ``(value, rowid)`` of that row, one seek again. A jump to an arbitrary offset walks the
  index from the nearer end (the last page is as quick as the first);
- filtered (text in any column): the rows are scanned; the matching count is kept per dataset and
  filter so paging does not count again.

The order is total: NULLs first (ascending), ties broken by rowid; descending is its exact reverse.
A cursor holds the sort, the filter, a rowid and a position, never a cell value (so a value
scrubbed from the rows cannot travel base64-encoded in a cursor).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from analytics_acp.errors import InvalidArguments
from analytics_acp.results.numbers import readable

from ..query.cache import TableCache, identity
from ..store.datasets import Dataset, DatasetStore
from .chart import chart_of
from .tables import NUMERIC_TYPES, TEXT_TYPES, Table, find_dataset, open_table

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_FILTER_CHARS = 200
MEMO_SIZE = 256  # counts and charts kept (per dataset identity and filter, column)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


@dataclass(frozen=True)
class Order:
    """How the rows are ordered: by ``column`` (None: CSV order), descending or not."""

    column: str | None = None
    desc: bool = False

    def public(self) -> dict[str, Any] | None:
        """The ``sort`` echoed in a page."""
        return None if self.column is None else {"column": self.column, "desc": self.desc}


class DatasetView:
    """Reads of acp-data datasets for the dataset view, through a query cache; never writes.

    ``page`` and ``summary`` are what the bridge's app-only tools answer, and what another host of
    the same view (the local page, issue 35.7) calls directly with its own store and cache.
    """

    def __init__(self, store: DatasetStore, cache: TableCache):
        self.store = store
        self.cache = cache
        self._counts: OrderedDict[tuple[Any, ...], int] = OrderedDict()
        self._charts: OrderedDict[tuple[Any, ...], dict[str, Any] | None] = OrderedDict()
        self._lock = threading.Lock()  # the memos; pages run in worker threads, several at once

    def summary(self, dataset_id: Any, *, y: Any = None) -> dict[str, Any]:
        """The dataset's card (acp_datasets' fields, ``row_count``, typed ``columns``) and ``chart`` (chart.py),
        None when the table's shape has none; ``y`` picks the number column. Typed errors as ``page``."""
        dataset = find_dataset(self.store, dataset_id)
        if y is not None and not isinstance(y, str):
            raise InvalidArguments("y must be the name of a number column.")
        out = dataset.summary()  # bounded texts, the file relative to the project (never an absolute path)
        out.update(dataset_id=dataset.id, row_count=dataset.row_count,
                   columns=[{"name": str(h["name"]), "type": h.get("type") or "string"} for h in dataset.headers])
        key = (identity(dataset), y)
        with self._lock:
            chart = self._charts.get(key, _MISSING)
        if chart is _MISSING:
            with open_table(self.store, self.cache, dataset) as table:
                chart = chart_of(self.store, self.cache, table, y)
        _remember(self._charts, key, chart, self._lock)
        out["chart"] = chart
        return out

    # ----- the reusable entry point -----
    def page(self, dataset_id: Any, *, offset: Any = None, cursor: Any = None, limit: Any = DEFAULT_LIMIT,
             sort: Any = None, filter: Any = None) -> dict[str, Any]:  # noqa: A002 - the tool's argument name
        """One page of ``dataset_id``: ``offset`` (0-based) or a ``cursor`` of an earlier page, ``limit`` rows
        (1-500), ``sort`` ``{"column": name, "desc": bool}``, ``filter`` text found in any column.

        Typed errors: ACP_TABLE_NOT_FOUND for an unknown dataset, ACP_INVALID_ARGUMENTS for a bad
        offset, limit, cursor, filter or a sort column the dataset does not have.
        """
        dataset = find_dataset(self.store, dataset_id)
        count = _limit(limit)
        text = _filter(filter)
        order = _order(sort, dataset)
        if offset is not None and cursor is not None:
            raise InvalidArguments("Pass offset or cursor, not both.")
        position: int | None = None
        boundary: tuple[str, int] | None = None
        if cursor is not None:
            boundary, position, carried, text = _read_cursor(cursor, order, text, sort is None, filter is None)
            order = _order(carried.public(), dataset)  # the cursor's column must still be the dataset's
        elif offset is not None:
            position = _offset(offset)
        with open_table(self.store, self.cache, dataset) as table:
            if order.column is not None:
                self.cache.index_column(dataset, order.column)  # seeks from the first sort on
            total = self._count(table, None, None)
            matched = total if not text else self._count(table, text, None)
            if boundary is None:
                start = position or 0
                if start and start >= matched:
                    raise InvalidArguments(f"offset {start} is past the last row: the dataset has {matched} "
                                           f"{'matching ' if text else ''}rows (offsets 0-{max(matched - 1, 0)}).")
                rowids, rows = self._window(table, order, text, start, count, matched)
            else:
                rowids, rows, start = self._keyset(table, order, text, boundary, position or 0, count, matched)
        end = start + len(rows)
        return {
            "dataset_id": dataset.id,
            "columns": table.columns,
            "total_rows": total,
            "matched_rows": matched,
            "offset": start,
            "limit": count,
            "rows": readable([table.typed(r) for r in rows]),
            "sort": order.public(),
            "filter": text or None,
            "next_cursor": _cursor(order, text, "next", rowids[-1], end) if rowids and end < matched else None,
            "prev_cursor": _cursor(order, text, "prev", rowids[0], start) if rowids and start > 0 else None,
        }

    # ----- counts (kept: a filter scans the table once, not once a page) -----
    def _count(self, table: Table, text: str | None, null_column: str | None) -> int:
        key = (identity(table.dataset), text, null_column)
        with self._lock:
            known = self._counts.get(key)
        if known is not None:
            return known
        where, params = _where(table, text)
        if null_column is not None:
            where.append(f"{table.column(null_column)} IS NULL")
        sql = f"SELECT count(*) FROM {table.ref}" + (f" WHERE {' AND '.join(where)}" if where else "")
        (n,) = table.conn.execute(sql, params).fetchone()
        _remember(self._counts, key, int(n), self._lock)
        return int(n)

    # ----- an arbitrary window: [start, start + count) of the requested order -----
    def _window(self, table: Table, order: Order, text: str | None, start: int, count: int,
                matched: int) -> tuple[list[int], list[tuple[Any, ...]]]:
        stop = min(start + count, matched)
        if stop <= start:
            return [], []
        # In ascending terms: a descending window is the reverse of the mirrored ascending one.
        lo, hi = (matched - stop, matched - start) if order.desc else (start, stop)
        if order.column is None:
            rows = self._unsorted(table, text, lo, hi, matched)
        else:
            nulls = self._count(table, text, order.column)
            rows = []
            if lo < nulls:
                rows += self._segment(table, order.column, text, True, lo, min(hi, nulls) - lo, nulls)
            if hi > nulls:
                first = max(lo, nulls) - nulls
                rows += self._segment(table, order.column, text, False, first, hi - max(lo, nulls), matched - nulls)
        if order.desc:
            rows.reverse()
        return [r[0] for r in rows], [r[1:] for r in rows]

    def _unsorted(self, table: Table, text: str | None, lo: int, hi: int, matched: int) -> list[tuple[Any, ...]]:
        if not text and self._contiguous(table, matched):  # rowid = CSV row number: seek
            return table.conn.execute(f"SELECT rowid, * FROM {table.ref} WHERE rowid > :lo AND rowid <= :hi ORDER BY rowid",
                                      {"lo": lo, "hi": hi}).fetchall()
        return self._walk(table, text, [], ["rowid"], lo, hi - lo, matched)

    def _contiguous(self, table: Table, total: int) -> bool:
        # Two subqueries: SQLite answers a lone min() or max() from the B-tree's ends; both in one SELECT scan it.
        (low, high) = table.conn.execute(f"SELECT (SELECT min(rowid) FROM {table.ref}), "
                                         f"(SELECT max(rowid) FROM {table.ref})").fetchone()
        return total == 0 or (low == 1 and high == total)

    def _segment(self, table: Table, column: str, text: str | None, nulls: bool, skip: int, take: int,
                 size: int) -> list[tuple[Any, ...]]:
        """``take`` rows after ``skip`` of the NULL rows (by rowid) or the others (by value, rowid)."""
        col = table.column(column)
        keys = ["rowid"] if nulls else [col, "rowid"]
        return self._walk(table, text, [f"{col} IS {'' if nulls else 'NOT '}NULL"], keys, skip, take, size)

    def _walk(self, table: Table, text: str | None, extra: list[str], keys: list[str], skip: int, take: int,
              size: int) -> list[tuple[Any, ...]]:
        """Rows ``skip .. skip+take`` of ``size`` rows ordered by ``keys``, walked from the nearer end."""
        where, params = _where(table, text)
        clause = " AND ".join([*extra, *where]) or "1"
        backward = skip > size - skip - take
        direction = ", ".join(f"{k} DESC" if backward else k for k in keys)
        params = {**params, "take": take, "skip": size - skip - take if backward else skip}
        rows = table.conn.execute(f"SELECT rowid, * FROM {table.ref} WHERE {clause} ORDER BY {direction} "
                                  "LIMIT :take OFFSET :skip", params).fetchall()
        return rows[::-1] if backward else rows

    # ----- keyset: the page after or before a boundary row -----
    def _keyset(self, table: Table, order: Order, text: str | None, boundary: tuple[str, int], position: int,
                count: int, matched: int) -> tuple[list[int], list[tuple[Any, ...]], int]:
        """The page after (``next``) or before (``prev``) the boundary row; ``position`` is where the cursor's
        page meets it: the next page starts there, the previous one ends there."""
        way, rowid = boundary
        key = self._key(table, order, rowid)
        if key is None:  # the boundary row is gone (the dataset was replaced): start over
            rowids, rows = self._window(table, order, text, 0, count, matched)
            return rowids, rows, 0
        forward = (way == "next") != order.desc  # in ascending terms
        found = self._after(table, order, text, key, count) if forward else self._before(table, order, text, key, count)
        if order.desc:
            found.reverse()
        start = position if way == "next" else max(position - len(found), 0)
        return [r[0] for r in found], [r[1:] for r in found], start

    def _key(self, table: Table, order: Order, rowid: int) -> tuple[bool, Any, int] | None:
        col = table.column(order.column) if order.column else "NULL"
        row = table.conn.execute(f"SELECT {col} FROM {table.ref} WHERE rowid = :r", {"r": rowid}).fetchone()
        return None if row is None else (row[0] is None, row[0], rowid)

    def _after(self, table: Table, order: Order, text: str | None, key: tuple[bool, Any, int],
               count: int) -> list[tuple[Any, ...]]:
        """Up to ``count`` rows after ``key`` in ascending order."""
        is_null, value, rowid = key
        if order.column is None:
            return self._seek(table, text, ["rowid > :r"], {"r": rowid}, "rowid", count)
        col = table.column(order.column)
        if not is_null:
            return self._seek(table, text, [f"({col}, rowid) > (:v, :r)"], {"v": value, "r": rowid}, f"{col}, rowid", count)
        rows = self._seek(table, text, [f"{col} IS NULL", "rowid > :r"], {"r": rowid}, "rowid", count)
        if len(rows) < count:
            rows += self._seek(table, text, [f"{col} IS NOT NULL"], {}, f"{col}, rowid", count - len(rows))
        return rows

    def _before(self, table: Table, order: Order, text: str | None, key: tuple[bool, Any, int],
                count: int) -> list[tuple[Any, ...]]:
        """Up to ``count`` rows before ``key``, in ascending order."""
        is_null, value, rowid = key
        if order.column is None:
            return self._seek(table, text, ["rowid < :r"], {"r": rowid}, "rowid DESC", count)[::-1]
        col = table.column(order.column)
        if is_null:
            return self._seek(table, text, [f"{col} IS NULL", "rowid < :r"], {"r": rowid}, "rowid DESC", count)[::-1]
        rows = self._seek(table, text, [f"{col} IS NOT NULL", f"({col}, rowid) < (:v, :r)"], {"v": value, "r": rowid},
                          f"{col} DESC, rowid DESC", count)
        if len(rows) < count:
            rows += self._seek(table, text, [f"{col} IS NULL"], {}, "rowid DESC", count - len(rows))
        return rows[::-1]

    def _seek(self, table: Table, text: str | None, extra: list[str], values: dict[str, Any], keys: str,
              count: int) -> list[tuple[Any, ...]]:
        where, params = _where(table, text)
        clause = " AND ".join([*extra, *where])
        return table.conn.execute(f"SELECT rowid, * FROM {table.ref} WHERE {clause} ORDER BY {keys} LIMIT :take",
                                  {**params, **values, "take": count}).fetchall()


_MISSING: Any = object()


def _remember(memo: OrderedDict[tuple[Any, ...], Any], key: tuple[Any, ...], value: Any, lock: threading.Lock) -> None:
    """Keep ``value`` as the most recent entry of a bounded memo."""
    with lock:
        memo[key] = value
        memo.move_to_end(key)
        while len(memo) > MEMO_SIZE:
            memo.popitem(last=False)


def _where(table: Table, text: str | None) -> tuple[list[str], dict[str, Any]]:
    """The filter as SQL: the text in any text column (LIKE, ASCII case-insensitive), or equal to a number column."""
    if not text:
        return [], {}
    tests = [f"{table.column(c['name'])} LIKE :like ESCAPE '\\'" for c in table.columns if c["type"] in TEXT_TYPES]
    params: dict[str, Any] = {"like": "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"}
    if _NUMBER.match(text):
        params["number"] = float(text)
        tests += [f"{table.column(c['name'])} = :number" for c in table.columns if c["type"] in NUMERIC_TYPES]
    return [f"({' OR '.join(tests) or '0'})"], params


# ----- arguments -----
def _limit(limit: Any) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArguments(f"limit must be an integer from 1 to {MAX_LIMIT} (got {limit!r}).")
    return limit


def _offset(offset: Any) -> int:
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidArguments(f"offset must be an integer >= 0, the position of the first row (got {offset!r}).")
    return offset


def _filter(text: Any) -> str | None:
    if text is None:
        return None
    if not isinstance(text, str) or len(text) > MAX_FILTER_CHARS:
        raise InvalidArguments(f"filter must be text of at most {MAX_FILTER_CHARS} characters.")
    return text.strip() or None


def _order(sort: Any, dataset: Dataset) -> Order:
    if sort is None:
        return Order()
    if isinstance(sort, str):
        sort = {"column": sort}
    if not isinstance(sort, dict) or not isinstance(sort.get("column"), str) or not isinstance(sort.get("desc", False), bool):
        raise InvalidArguments('sort must be {"column": "<name>", "desc": true|false}.')
    names = [str(h["name"]) for h in dataset.headers]
    wanted = sort["column"]
    column = wanted if wanted in names else next((n for n in names if n.lower() == wanted.lower()), None)
    if column is None:
        shown = ", ".join(names[:30]) + (" …" if len(names) > 30 else "")
        raise InvalidArguments(f"Dataset «{dataset.id}» has no column {wanted!r} to sort by. Its columns: {shown}.")
    return Order(column, bool(sort.get("desc", False)))


def _cursor(order: Order, text: str | None, way: str, rowid: int, position: int) -> str:
    data = {"c": order.column, "d": order.desc, "f": text, "w": way, "r": rowid, "p": position}
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


def _read_cursor(cursor: Any, order: Order, text: str | None, any_sort: bool,
                 any_filter: bool) -> tuple[tuple[str, int], int, Order, str | None]:
    """The boundary (way, rowid), position, order and filter of a cursor this module made."""
    bad = InvalidArguments("cursor is not one the bridge gave for this dataset; page from an offset instead.")
    if not isinstance(cursor, str) or len(cursor) > 2048:
        raise bad
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error):
        raise bad from None
    if (not isinstance(data, dict) or data.get("w") not in ("next", "prev") or not isinstance(data.get("r"), int)
            or not isinstance(data.get("p"), int) or not isinstance(data.get("d"), bool)
            or not isinstance(data.get("c"), str | None) or not isinstance(data.get("f"), str | None)):
        raise bad
    carried = Order(data["c"], data["d"] if data["c"] is not None else False)
    if (not any_sort and carried != order) or (not any_filter and data["f"] != text):
        raise InvalidArguments("cursor belongs to another sort or filter; page from an offset instead.")
    return (data["w"], data["r"]), data["p"], carried, data["f"]
