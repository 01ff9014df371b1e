"""Column types (8.6) from the driver's cursor description, refined with the reflected table schema.

1. Driver types: PostgreSQL OIDs (psycopg type registry), MySQL field codes (pymysql), DuckDB type
   names. Each is read as a sqlglot DataType and mapped to an ACP type.
2. Columns the driver cannot type (SQLite has no result types; MySQL sends JSON and TINYINT(1)
   as text/int) get the type sqlglot infers from the query over the reflected schema of the
   referenced tables (SUM(integer) -> integer, a DATE column -> date).
3. Whatever is still unknown has no declared header: the core infers it from the values.

Values are converted to the declared type (Decimal -> number, timestamps -> ISO 8601 ...).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Callable
from itertools import chain
from typing import Any

import orjson
from analytics_acp.state import KeyedCache
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

T = exp.DataType.Type
_JSON_TYPES = {T.JSON, T.JSONB, T.ARRAY, T.STRUCT, T.MAP, T.LIST, T.OBJECT} if hasattr(T, "OBJECT") else {T.JSON, T.JSONB, T.ARRAY, T.STRUCT, T.MAP, T.LIST}
_DATE_TYPES = {T.DATE, T.DATE32} if hasattr(T, "DATE32") else {T.DATE}
_STRING_TYPES = {T.TIME, T.TIMETZ, T.INTERVAL, T.UUID}

# pymysql FIELD_TYPE codes.
_MYSQL_CODES = {
    0: "number", 246: "number", 4: "number", 5: "number",
    1: "integer", 2: "integer", 3: "integer", 8: "integer", 9: "integer", 13: "integer",
    10: "date", 14: "date", 7: "datetime", 12: "datetime", 245: "json", 16: None,
}


def acp_type(dtype: exp.DataType | None) -> str | None:
    """ACP column type of a sqlglot DataType; None when it says nothing (UNKNOWN/NULL)."""
    if dtype is None:
        return None
    t = dtype.this
    if t in (T.UNKNOWN, T.NULL) or t is None:
        return None
    if t == T.BOOLEAN:
        return "boolean"
    if t in exp.DataType.INTEGER_TYPES:
        return "integer"
    if t in exp.DataType.REAL_TYPES:
        return "number"
    if t in _DATE_TYPES:
        return "date"
    if t in _STRING_TYPES:
        return "string"
    if t in exp.DataType.TEMPORAL_TYPES:
        return "datetime"
    if t in _JSON_TYPES:
        return "json"
    return "string"


def _build(name: str, dialect: str | None) -> exp.DataType | None:
    try:
        return exp.DataType.build(name, dialect=dialect)
    except Exception:
        return None


def driver_types(description: Any, backend: str) -> list[str | None]:
    """One ACP type (or None) per result column, from the DB-API description."""
    out: list[str | None] = []
    for col in description or []:
        code = col[1]
        if backend == "postgresql" and isinstance(code, int):
            out.append(_pg_type(code))
        elif backend in ("mysql", "mariadb") and isinstance(code, int):
            if code == 1 and col[3] == 1:
                out.append("boolean")  # TINYINT(1): MySQL's BOOLEAN
            elif code in (252, 253, 254, 15):
                out.append(None)  # text: maybe a JSON column (MariaDB); refined from the schema
            else:
                out.append(_MYSQL_CODES.get(code, "string"))
        elif backend == "duckdb" and code is not None:
            out.append(acp_type(_build(str(code), "duckdb")))
        else:
            out.append(None)
    return out


def _pg_type(oid: int) -> str | None:
    import psycopg

    info = psycopg.adapters.types.get(oid)
    if info is None:
        return None
    if info.array_oid == oid and info.oid != oid:
        return "json"
    return acp_type(_build(info.name, "postgres"))


def inferred_types(tree: exp.Expression | None, schema: dict[str, Any], dialect: str | None, count: int) -> list[str | None]:
    """Types sqlglot infers for the projections over ``schema`` ({table: {column: type}} nested by db/schema)."""
    if tree is None:
        return [None] * count
    try:
        mapping = MappingSchema(schema, dialect=dialect)
        qualified = qualify(tree.copy(), schema=mapping, dialect=dialect, validate_qualify_columns=False, quote_identifiers=False)
        annotated = annotate_types(qualified, schema=mapping, dialect=dialect)
        selects = annotated.selects if isinstance(annotated, (exp.Select, exp.SetOperation)) else []
    except Exception:
        return [None] * count
    if len(selects) != count:
        return [None] * count
    return [acp_type(s.type) for s in selects]


# Clauses of the outermost SELECT that filter or order rows but never change a projection's type.
_ROW_ONLY_CLAUSES = frozenset({"where", "order", "limit", "offset"})


def projection_key(sql: str, tree: exp.Expression) -> Any:
    """What the projections' types depend on: the outermost SELECT's structure without WHERE/ORDER BY/
    LIMIT/OFFSET (``... WHERE id > 5`` and ``... WHERE id > 7`` share it); the whole SQL text otherwise."""
    if not isinstance(tree, exp.Select):
        return sql
    out: list[Any] = []
    for name, value in tree.args.items():
        if name not in _ROW_ONLY_CLAUSES:
            out.append(name)
            if value is None or value.__class__ in _PLAIN:
                out.append(value)
            else:
                _flatten(value, out)
    return tuple(out)


# Markers of the flat rendering: a node's or a list's end, a list's start, a value of another type.
_END, _LIST, _OTHER = object(), object(), object()
_PLAIN = frozenset({str, int, float, bool})


def _flatten(node: Any, out: list[Any]) -> None:
    """An exact rendering of a tree (node classes and every argument, not sqlglot's hash equality), flat:
    prefix order with end markers. One flat tuple hashes and compares in C; nested tuples were rebuilt,
    hashed twice and compared level by level on every memo lookup (bench case 4b)."""
    if isinstance(node, exp.Expression):
        out.append(node.__class__)
        for key, value in node.args.items():
            if value is not None:
                out.append(key)
                if value.__class__ in _PLAIN:
                    out.append(value)
                else:
                    _flatten(value, out)
        out.append(_END)
    elif isinstance(node, list):
        out.append(_LIST)
        for value in node:
            if value is None or value.__class__ in _PLAIN:
                out.append(value)
            else:
                _flatten(value, out)
        out.append(_END)
    elif node is None or isinstance(node, (str, int, float, bool)):
        out.append(node)
    else:
        out += (_OTHER, type(node).__name__, repr(node))


def inferred_types_memo(memo: KeyedCache[tuple[str | None, ...]], sql: str, tree: exp.Expression | None,
                        schema: dict[str, Any], dialect: str | None, count: int) -> list[str | None]:
    """``inferred_types`` remembered in ``memo`` (the connector's, state.DatabaseState.inferred, LRU-bounded) per
    (projections, dialect, column count, reflected schema).

    The key is the query without the clauses that cannot change a projection's type
    (``projection_key``); the schema's column types are part of it, so a reflected change (or
    another database with other types) is inferred afresh. The key holds no credentials.
    """
    if tree is None:
        return [None] * count
    try:
        shape = projection_key(sql, tree)
    except Exception:
        shape = sql
    key = (shape, dialect, count, orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))
    hit = memo.get(key)
    if hit is not None:
        return list(hit)
    kinds = inferred_types(tree, schema, dialect, count)
    memo.put(key, tuple(kinds))
    return kinds


def merge(driver: list[str | None], inferred: list[str | None]) -> list[str | None]:
    """Driver types win; the schema fills the columns the driver cannot type (SQLite, MySQL text/JSON)."""
    return [d if d is not None else i for d, i in zip(driver, inferred, strict=False)]


# --- value conversion (8.6: the server converts values to the declared type)

_NATIVE = (str, int, float, bool)


def _iso_datetime(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC)
            return v.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"
        return v.isoformat()
    if isinstance(v, dt.date):
        return dt.datetime(v.year, v.month, v.day).isoformat()
    if isinstance(v, str):
        try:
            return _iso_datetime(dt.datetime.fromisoformat(v))
        except ValueError:
            return v
    return _generic(v)


def _iso_date(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.date().isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    return _generic(v)


def _number(v: Any) -> Any:
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() and abs(v) < 2**53 and v.as_tuple().exponent >= 0 else float(v)  # type: ignore[operator]
    return _generic(v)


def _integer(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, decimal.Decimal):
        return int(v)
    return _generic(v)


def _boolean(v: Any) -> Any:
    if isinstance(v, int):
        return bool(v)
    return _generic(v)


def _json(v: Any) -> Any:
    if isinstance(v, (str, bytes)):
        try:
            return json.loads(v)
        except ValueError:
            return v if isinstance(v, str) else v.hex()
    return _generic_json(v)


def _generic_json(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _generic_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_generic_json(x) for x in v]
    return _generic(v)


def _generic(v: Any) -> Any:
    """Anything a driver returns, as a JSON value."""
    if v is None or isinstance(v, _NATIVE):
        return v
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, dt.datetime):
        return _iso_datetime(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dt.time):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return str(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (dict, list, tuple)):
        return _generic_json(v)
    return str(v)


def _string(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (dict, list)):
        return json.dumps(v, default=str)
    return _generic(v)


_CONVERTERS: dict[str | None, Callable[[Any], Any]] = {
    "datetime": _iso_datetime, "date": _iso_date, "number": _number, "integer": _integer,
    "boolean": _boolean, "json": _json, "string": _string, None: _generic,
}


# Python types each declared type's converter returns unchanged (test_databases_batches checks it against
# _CONVERTERS): such values need no call. A str in an integer column stays a str either way; only the
# converter decides what changes, this table only spares the calls.
_PASSTHROUGH: dict[str | None, frozenset[type]] = {
    "integer": frozenset({int, float, str}), "number": frozenset({int, float, str, bool}),
    "boolean": frozenset({bool, float, str}), "string": frozenset({str, int, float, bool}),
    "date": frozenset({str, int, float, bool}), "json": frozenset({dict, list, int, float, bool}),
    "datetime": frozenset({int, float, bool}), None: frozenset({str, int, float, bool}),
}
_NONE = type(None)
_PLAIN_DATES = frozenset({dt.date, _NONE})


def convert_batch(batch: list[Any], kinds: list[str | None], converters: list[Callable[[Any], Any]]) -> list[Any]:
    """Convert one fetched batch: columns whose values are already JSON-ready pass through untouched.

    The check is per batch (SQLite columns may mix types from row to row) and runs at C level:
    first one ``map(type, ...)`` over every cell of the batch; only when some type seen is not
    final for some column are the columns split and checked one by one. A batch that needs no
    work is returned as it came (the driver's list of tuples), so a million SQLite INTEGER/REAL/
    TEXT rows cost no Python call per cell or per row here.
    """
    if not batch:
        return []
    seen = set(map(type, chain.from_iterable(batch)))
    seen.discard(_NONE)
    todo = [i for i, kind in enumerate(kinds) if not seen <= _PASSTHROUGH.get(kind, frozenset())]
    if not todo:
        return batch
    columns = list(zip(*batch, strict=False))
    changed = False
    for i in todo:
        column = columns[i]
        types = set(map(type, column))
        types.discard(_NONE)
        if types <= _PASSTHROUGH.get(kinds[i], frozenset()):
            continue
        changed = True
        if kinds[i] == "date" and types <= _PLAIN_DATES:
            columns[i] = tuple(None if v is None else v.isoformat() for v in column)  # the common case, without calls per cell
        else:
            columns[i] = tuple(map(converters[i], column))
    return list(zip(*columns, strict=False)) if changed else batch


def converter(acp: str | None) -> Callable[[Any], Any]:
    """Value converter for a declared type (None: undeclared, values only made JSON-safe)."""
    fn = _CONVERTERS[acp]

    def convert(v: Any, _fn: Callable[[Any], Any] = fn) -> Any:
        return None if v is None else _fn(v)

    return convert
