"""The columns of one table being built, and the compiled per-row converter (8.6).

Rows arrive as dicts or, when ``columns`` (or declared headers) give the order, as
tuples/lists. The hot path is a small function generated for the current columns:
one inline class test per cell (``str`` for a string column, ``int`` for an integer
one...) and a converter call only when the value needs work. It is regenerated when a new
column appears or an undeclared column shows its first value. Tuple/list rows also get the
same expressions as one list comprehension over the batch (``for v0, v1, ... in rows``): no
Python call per row, about a quarter less time for a million SQLite rows (bench case 2).

Column order (8.6): declared headers first, in their order, then columns in order of appearance.
A header ``{"name": ..., "type": "infer"}`` (optionally with a ``hint`` and ``"binary": "hex"``) fixes
the position of a column whose driver type says nothing (SQLite): it is typed from all its values,
text included (see infer_columns.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import countOf
from types import CodeType
from typing import Any

from ..declarations import Header
from ..errors import UpstreamError
from .conversion import (
    IDENTITY_CLASS,
    MEMO_TYPES,
    Converter,
    check_type,
    declared_converter,
    finalizer,
    inferring_converter,
    shared_memo,
    unconvertible_warning,
)
from .infer_columns import INFER, InferredColumn

RowFn = Callable[[Any], dict[str, Any]]
BatchFn = Callable[[list[Any]], list[dict[str, Any]]]
_SEQUENCES = frozenset({tuple, list})  # rows the batch function may unpack (a dict or str would unpack too)


def _unpackable(rows: list[Any]) -> bool:
    """Every row a plain tuple or list (a dict or str would unpack too); all tuples (DB-API rows) counted first,
    a cheaper test than collecting the classes in a set."""
    return countOf(map(type, rows), tuple) == len(rows) or set(map(type, rows)) <= _SEQUENCES


class _Slow(Exception):
    """The compiled row function cannot take this row (length or keys differ)."""


@dataclass
class Column:
    """One output column: its header, where its value comes from, how it is converted."""

    name: str
    declared: Header | None
    source: Any = None  # index (sequence rows) or key (dict rows); None: never seen
    kinds: set[str] = field(default_factory=set)
    convert: Converter = field(default=lambda value: value)  # set by TableSchema._add for every column
    fast: type | None = None  # class whose values pass unchanged
    memo: dict[str, str] | None = None  # text -> converted text (declared date/datetime; inferred text)
    inferred: InferredColumn | None = None  # a column marked "infer": kinds of its text, hint


def unique_names(names: Sequence[Any]) -> list[str]:
    """Column names made unique: a repeated ``a`` becomes ``a_2``, ``a_3``... (8.6: names are unique)."""
    out: list[str] = []
    seen: set[str] = set()
    for raw in names:
        name = str(raw)
        candidate, n = name, 1
        while candidate in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate)
        out.append(candidate)
    return out


def declared_headers(
    headers: Sequence[Header | dict[str, Any] | str] | None,
) -> tuple[list[str], dict[str, Header], dict[str, Mapping[str, Any]]]:
    """Names in declared order, the headers that declare a type, and the dict headers that do not (position,
    ``infer`` with its hint, role, description).

    A bare name (str) or a dict without ``type`` fixes the position only; its type is inferred.
    """
    order: list[str] = []
    typed: dict[str, Header] = {}
    untyped: dict[str, Mapping[str, Any]] = {}
    for item in headers or ():
        if isinstance(item, str):
            name, header = item, None
        elif isinstance(item, Header):
            name, header = item.name, item
        elif (item.__class__ is dict or isinstance(item, Mapping)) and "name" in item:  # dict first: no ABC check
            name = str(item["name"])
            kind = item.get("type")
            header = Header.coerce(dict(item)) if kind and kind != INFER else None
            if header is None:
                untyped[name] = item
        else:
            raise ValueError(f"Invalid header {item!r}: give a Header, a {{name, type}} dict or a name.")
        if name in typed or name in order:
            raise ValueError(f"Header {name!r} is declared twice.")
        if header is not None:
            check_type(name, header.type)
            typed[name] = header
        order.append(name)
    return order, typed, untyped


_CODE: dict[str, CodeType] = {}  # row-function source -> code: tables of one tool compile the same source
_CODE_MAX = 256


def _compiled(source: str) -> CodeType:
    code = _CODE.get(source)
    if code is None:
        if len(_CODE) >= _CODE_MAX:
            _CODE.clear()
        code = _CODE[source] = compile(source, "<acp row>", "exec")
    return code


_FACTORIES: dict[Any, Callable[..., Any]] = {}  # column layout -> (converters, memos) -> (row function, batch function)
_FACTORIES_MAX = 256


def _factory(layout: Any) -> Callable[..., Any]:
    """Generate and compile the row and batch functions of one column layout (see ``TableSchema._compile``)."""
    sparse, seq, columns = layout
    params = ["_known"]
    lines = ["    def _row(r):"]
    count = sum(1 for c in columns if c[1] is not None)
    if sparse:
        # Object rows that often lack keys (event tables): accept any subset of the known keys.
        lines.append("        if not r.keys() <= _known: raise _Slow")
    else:
        lines.append(f"        if len(r) != {count}: raise _Slow")
    fetch = "r.get({!r})" if sparse else "r[{!r}]"
    items = []
    for j, (name, source, fast, has_memo, inferred_memo) in enumerate(columns):
        if source is None:
            items.append(f"{name!r}: None")
            continue
        params += [f"c{j}", f"m{j}"]
        v = f"v{j}"
        lines.append(f"        {v} = " + fetch.format(source))
        if fast is float:
            test = f"{v}.__class__ is _float and {v} - {v} == 0.0"
        elif fast is not None:
            test = f"{v}.__class__ is _{fast.__name__} or {v} is None"
        else:
            test = None
        if has_memo:
            # An inferred column's memo maps text to itself: a membership test, no call.
            lookup = f"({v} if {v} in m{j} else c{j}({v}))" if inferred_memo else f"(m{j}.get({v}) or c{j}({v}))"
            items.append(f"{name!r}: {v} if {test} else {lookup}" if test else f"{name!r}: {lookup}")
            continue
        items.append(f"{name!r}: {v} if {test} else c{j}({v})" if test else f"{name!r}: c{j}({v})")
    row = "{" + ", ".join(items) + "}"
    lines.append(f"        return {row}")
    positions = sorted((c[1], f"v{j}") for j, c in enumerate(columns) if c[1] is not None)
    batched = seq and bool(positions) and [p for p, _ in positions] == list(range(len(positions)))
    if batched:  # the same cells, unpacked by position, in one comprehension over the batch
        targets = ", ".join(v for _, v in positions)
        lines += ["    def _batch(rows):", f"        return [{row} for ({targets},) in rows]"]
    lines.append("    return _row, " + ("_batch" if batched else "None"))
    source = f"def _make({', '.join(params)}):\n" + "\n".join(lines)
    namespace: dict[str, Any] = {"_Slow": _Slow, "_str": str, "_int": int, "_bool": bool, "_float": float}
    exec(_compiled(source), namespace)  # noqa: S102 - generated from our own column list (names via repr)
    if len(_FACTORIES) >= _FACTORIES_MAX:
        _FACTORIES.clear()
    make: Callable[..., Any] = namespace["_make"]
    _FACTORIES[layout] = make
    return make


class TableSchema:
    """Columns of one table, their converters, inferred kinds and conversion warnings."""

    def __init__(self, headers: Sequence[Any] | None, columns: Sequence[str] | None):
        order, typed, self._extra_meta = declared_headers(headers)
        self._infer = {name: meta for name, meta in self._extra_meta.items() if meta.get("type") == INFER}
        self.columns: list[Column] = []
        self.by_name: dict[str, Column] = {}
        self.warnings: list[str] = []
        self._warned: set[str] = set()
        for name in order:
            self._add(name, typed.get(name))
        self.sequence_source: list[str] | None = None
        if columns is not None:
            self.sequence_source = unique_names(list(columns))
        elif order:
            self.sequence_source = list(order)
        if self.sequence_source is not None:
            for index, name in enumerate(self.sequence_source):
                col = self.by_name.get(name) or self._add(name, None)
                col.source = index
        self.mode: str | None = None  # "dict" | "seq", fixed by the first row
        self.rows_seen = 0
        self.keys_at_first_row = 0
        self.dirty = True
        self.sparse = False  # object rows missing known keys: compile with r.get
        self._fn: RowFn | None = None
        self._batch_fn: BatchFn | None = None  # tuple/list rows: the row function as one comprehension

    # --- columns --------------------------------------------------------------------------
    def _add(self, name: str, header: Header | None) -> Column:
        col = Column(name=name, declared=header)
        if header is not None:
            col.memo = shared_memo(header.type) if header.type in MEMO_TYPES else None
            col.convert = declared_converter(name, header.type, self._warn, col.memo)
            col.fast = IDENTITY_CLASS[header.type]
        elif name in self._infer:
            meta = self._infer[name]
            col.inferred = InferredColumn(col.kinds, meta.get("hint"), meta.get("binary"))
            col.memo = col.inferred.memo
            col.convert = col.inferred.convert
        else:
            col.convert = inferring_converter(col.kinds)
        self.columns.append(col)
        self.by_name[name] = col
        self.dirty = True
        return col

    def _warn(self, name: str, type_name: str, value: Any) -> None:
        if name not in self._warned:  # once per column
            self._warned.add(name)
            self.warnings.append(unconvertible_warning(name, type_name, value))

    @property
    def keys(self) -> list[str]:
        """Output column names, in order."""
        return [c.name for c in self.columns]

    # --- compiled hot path ----------------------------------------------------------------
    def _compile(self) -> RowFn:
        # The generated code depends only on the columns' layout (names, sources, inline tests, memo use): one
        # factory per layout, kept (tables of one tool share it), called with this table's converters and memos.
        sourced = [(j, c) for j, c in enumerate(self.columns) if c.source is not None]
        layout = (self.sparse, self.mode == "seq", tuple(
            (c.name, c.source, c.fast, c.memo is not None, c.inferred is not None and c.memo is c.inferred.memo)
            for c in self.columns))
        make = _FACTORIES.get(layout)
        if make is None:
            make = _factory(layout)
        args: list[Any] = [frozenset(c.source for _, c in sourced) if self.sparse else None]
        for _, col in sourced:
            args += (col.convert, col.memo)
        row_fn, batch_fn = make(*args)
        self.dirty = False
        self._batch_fn = batch_fn
        return row_fn  # type: ignore[no-any-return]

    def _learn_fast(self) -> None:
        # An undeclared column whose first kind is string/integer/boolean/number gets the inline
        # test: values of that class pass unchanged and their kind is already recorded.
        for col in self.columns:
            if col.inferred is not None:
                fast = col.inferred.fast_class()
                if fast is not col.fast:
                    col.fast = fast
                    col.memo = col.inferred.memo if fast is not str else None
                    self.dirty = True
                continue
            if col.declared is None and col.fast is None and len(col.kinds) == 1:
                kind = next(iter(col.kinds))
                fast = IDENTITY_CLASS.get(kind)
                if fast is not None:
                    col.fast = fast
                    self.dirty = True

    def row_function(self) -> RowFn:
        """The compiled converter for the current columns (recompiled when they changed)."""
        if self.dirty or self._fn is None:
            self._fn = self._compile()
        return self._fn

    # --- slow path ------------------------------------------------------------------------
    def _slow(self, row: Any) -> dict[str, Any]:
        if isinstance(row, Mapping):
            if self.mode is None:
                self.mode = "dict"
                for col in self.columns:  # positions from `columns` do not apply to object rows
                    col.source = None
                self.dirty = True
            elif self.mode != "dict":
                raise UpstreamError("The tool mixed list rows and object rows in one table.")
            if not self.sparse and any(c.source is not None and c.source not in row for c in self.columns):
                self.sparse = True
                self.dirty = True
            for key in row:
                if not isinstance(key, str):
                    raise UpstreamError(f"The tool returned a row with a non-text column name {key!r}.")
                known = self.by_name.get(key)
                col = known if known is not None else self._add(key, None)
                if col.source is None:
                    col.source = key
                    self.dirty = True
            return {c.name: c.convert(row.get(c.source)) if c.source is not None else None for c in self.columns}
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) and not hasattr(row, "__getitem__"):
            raise UpstreamError(f"The tool returned a row that is neither an object nor a list: {type(row).__name__}.")
        if self.sequence_source is None:
            raise UpstreamError("The tool returned rows as lists without naming their columns.")
        if self.mode is None:
            self.mode = "seq"
        elif self.mode != "seq":
            raise UpstreamError("The tool mixed list rows and object rows in one table.")
        if len(row) != len(self.sequence_source):
            raise UpstreamError(
                f"A row has {len(row)} values but the tool named {len(self.sequence_source)} columns."
            )
        out = {}
        for c in self.columns:
            out[c.name] = c.convert(row[c.source]) if c.source.__class__ is int else None
        return out

    def convert_batch(self, raw: list[Any]) -> list[dict[str, Any]]:
        """Convert a batch of raw rows to dicts with the current keys (new keys extend the schema)."""
        if self.rows_seen == 0 and raw:
            first = self._slow(raw[0])
            self.keys_at_first_row = len(self.columns)
            self.rows_seen = 1
            self._learn_fast()
            rest = self.convert_batch(raw[1:]) if len(raw) > 1 else []
            return [first, *rest]
        fn = self.row_function()
        batch = self._batch_fn
        try:
            # The batch function unpacks each row: only plain tuples and lists (a dict would give its keys).
            out = batch(raw) if batch is not None and _unpackable(raw) else [fn(r) for r in raw]
        except (_Slow, KeyError, IndexError, TypeError, AttributeError, ValueError):
            # Row by row (ValueError: a row of another length did not unpack): _slow explains or adapts.
            out = []
            for r in raw:
                try:
                    out.append(fn(r))
                except (_Slow, KeyError, IndexError, TypeError, AttributeError):
                    out.append(self._slow(r))
                    fn = self.row_function()
        self.rows_seen += len(raw)
        if self.dirty or any(c.declared is None and (c.fast is None or c.inferred is not None) and c.kinds for c in self.columns):
            self._learn_fast()
        return out

    # --- end of stream --------------------------------------------------------------------
    def finish(self) -> tuple[list[Header], list[tuple[str, Converter]], bool]:
        """Final headers, finalizers of mixed undeclared columns, and whether early rows lack keys."""
        headers: list[Header] = []
        finalizers: list[tuple[str, Converter]] = []
        for col in self.columns:
            if col.declared is not None:
                headers.append(col.declared)
                continue
            final, fn = col.inferred.finalizer() if col.inferred is not None else finalizer(col.kinds)
            meta = self._extra_meta.get(col.name, {})
            headers.append(Header(name=col.name, type=final, role=meta.get("role"), description=meta.get("description")))  # type: ignore[arg-type]
            if fn is not None:
                finalizers.append((col.name, fn))
        padded = len(self.columns) > self.keys_at_first_row and self.rows_seen > 1
        return headers, finalizers, padded


def row_finisher(keys: list[str], finalizers: list[tuple[str, Converter]], padded: bool) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """Function giving a row its final form (all keys, mixed columns converted), or None if rows are final."""
    if not finalizers and not padded:
        return None

    template = dict.fromkeys(keys)

    def finish(row: dict[str, Any]) -> dict[str, Any]:
        if padded:  # header order, missing keys null; update() keeps the template's key order
            out = template.copy()
            out.update(row)
        else:
            out = dict(row)
        for name, fn in finalizers:
            value = out[name]
            if value is not None:
                out[name] = fn(value)
        return out

    return finish
