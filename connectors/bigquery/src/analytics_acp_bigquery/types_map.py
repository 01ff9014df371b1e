"""BigQuery column types -> ACP types (8.6), and converters from the REST wire format.

Rows arrive from jobs.getQueryResults as ``{"f": [{"v": ...}]}`` with every scalar as text
(INT64 as a decimal string, TIMESTAMP as int64 microseconds because the client asks for
``formatOptions.useInt64Timestamp``), RECORD as a nested ``{"f": [...]}`` and REPEATED as a
list of ``{"v": ...}``. Converting straight from that JSON skips the client's Row objects.

| BigQuery | ACP |
| --- | --- |
| INT64 / INTEGER | integer (exact beyond 2**53) |
| FLOAT64 / FLOAT, NUMERIC, BIGNUMERIC | number |
| BOOL / BOOLEAN | boolean |
| DATE | date |
| DATETIME, TIMESTAMP | datetime (ISO; TIMESTAMP in UTC) |
| TIME, GEOGRAPHY, BYTES (base64), STRING, INTERVAL, RANGE | string |
| JSON, RECORD / STRUCT, any REPEATED field | json |
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

Converter = Callable[[Any], Any]

ACP_TYPE = {
    "INT64": "integer", "INTEGER": "integer",
    "FLOAT64": "number", "FLOAT": "number", "NUMERIC": "number", "BIGNUMERIC": "number", "DECIMAL": "number", "BIGDECIMAL": "number",
    "BOOL": "boolean", "BOOLEAN": "boolean",
    "DATE": "date",
    "DATETIME": "datetime", "TIMESTAMP": "datetime",
    "JSON": "json", "RECORD": "json", "STRUCT": "json",
}
_EPOCH = dt.datetime(1970, 1, 1)


def acp_type(field: dict[str, Any]) -> str:
    """The ACP type of a REST schema field ``{name, type, mode, fields}``."""
    if (field.get("mode") or "").upper() == "REPEATED":
        return "json"
    return ACP_TYPE.get(str(field.get("type") or "STRING").upper(), "string")


def _int(v: Any) -> Any:
    return int(v) if v.__class__ is str else v


def _float(v: Any) -> Any:
    if v.__class__ is not str:
        return v
    f = float(v)  # "NaN", "Infinity" parse; the core turns non-finite numbers into null
    return f


def _numeric(v: Any) -> Any:
    """NUMERIC/BIGNUMERIC text: integral values stay exact ints, the rest become floats."""
    if v.__class__ is not str:
        return v
    try:
        d = Decimal(v)
    except InvalidOperation:
        return v
    return int(d) if d.is_finite() and d == d.to_integral_value() else float(d)


def _bool(v: Any) -> Any:
    if v.__class__ is str:
        return v.lower() == "true"
    return v


def _timestamp(v: Any) -> Any:
    """int64 microseconds since the epoch (or float seconds from older APIs) -> ISO 8601 UTC."""
    if v.__class__ is not str:
        return v
    if v.lstrip("-").isdigit():
        moment = _EPOCH + dt.timedelta(microseconds=int(v))
    else:
        try:
            moment = _EPOCH + dt.timedelta(seconds=float(v))
        except ValueError:
            return v
    return moment.isoformat(timespec="microseconds") + "Z"


def _json_text(v: Any) -> Any:
    if v.__class__ is str:
        try:
            return orjson.loads(v)
        except orjson.JSONDecodeError:
            return v
    return v


def scalar_converter(bq_type: str) -> Converter | None:
    """Converter of one scalar cell; None where the wire text is already the value (STRING, DATE...)."""
    t = bq_type.upper()
    if t in ("INT64", "INTEGER"):
        return _int
    if t in ("FLOAT64", "FLOAT"):
        return _float
    if t in ("NUMERIC", "BIGNUMERIC", "DECIMAL", "BIGDECIMAL"):
        return _numeric
    if t in ("BOOL", "BOOLEAN"):
        return _bool
    if t == "TIMESTAMP":
        return _timestamp
    if t == "JSON":
        return _json_text
    return None  # STRING, DATE, DATETIME, TIME, BYTES (base64), GEOGRAPHY, INTERVAL, RANGE: text as sent


def field_converter(field: dict[str, Any]) -> Converter | None:
    """Converter of a cell of ``field`` (RECORD -> dict, REPEATED -> list), None for text passthrough."""
    repeated = (field.get("mode") or "").upper() == "REPEATED"
    kind = str(field.get("type") or "STRING").upper()
    if kind in ("RECORD", "STRUCT"):
        subs = list(field.get("fields") or [])
        names = [s["name"] for s in subs]
        convs = [field_converter({**s}) for s in subs]

        def record(v: Any) -> Any:
            if not isinstance(v, dict):
                return v
            cells = v.get("f") or []
            return {
                n: (c(cell.get("v")) if c is not None and cell.get("v") is not None else cell.get("v"))
                for n, c, cell in zip(names, convs, cells, strict=False)
            }

        base: Converter | None = record
    else:
        base = scalar_converter(kind)
    if not repeated:
        return base

    def repeat(v: Any) -> Any:
        if not isinstance(v, list):
            return v
        items = [item.get("v") if isinstance(item, dict) else item for item in v]
        return [base(x) if base is not None and x is not None else x for x in items]

    return repeat


def row_converter(schema: Sequence[dict[str, Any]]) -> Callable[[dict[str, Any]], tuple]:
    """A function turning one wire row ``{"f": [{"v": ...}]}`` into a tuple of plain values."""
    convs = [field_converter(f) for f in schema]
    if all(c is None for c in convs):
        return lambda row: tuple(cell["v"] for cell in row["f"])
    pairs = list(enumerate(convs))

    def convert(row: dict[str, Any]) -> tuple:
        cells = row["f"]
        out = [cell["v"] for cell in cells]
        for i, c in pairs:
            if c is not None:
                v = out[i]
                if v is not None:
                    out[i] = c(v)
        return tuple(out)

    return convert


def convert_page(rows: list[dict[str, Any]], convert: Callable[[dict[str, Any]], tuple]) -> Iterator[tuple]:
    """Each wire row of a page as a tuple."""
    return map(convert, rows)


def flatten_schema(fields: Sequence[dict[str, Any]], prefix: str = "") -> list[dict[str, Any]]:
    """Nested RECORD fields listed after their parent as ``a.b`` (15.3 table_schemas)."""
    out: list[dict[str, Any]] = []
    for f in fields:
        name = f"{prefix}{f.get('name')}"
        item: dict[str, Any] = {"name": name, "type": f.get("type") or "STRING"}
        mode = (f.get("mode") or "").upper()
        if mode and mode != "NULLABLE":
            item["mode"] = mode
        if f.get("description"):
            item["description"] = f["description"]
        out.append(item)
        if f.get("fields"):
            out.extend(flatten_schema(f["fields"], prefix=f"{name}."))
    return out


# ACP header type -> BigQuery column type, for tables load_rows creates from typed headers (8.8).
BQ_TYPE_FOR = {
    "integer": "INT64",
    "number": "FLOAT64",
    "boolean": "BOOL",
    "date": "DATE",
    "datetime": "TIMESTAMP",
    "json": "JSON",
    "string": "STRING",
}
