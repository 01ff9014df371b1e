"""Column types and value normalization (spec 8.6).

Declared headers win; undeclared columns are inferred from their values:
integer + number -> number, date + datetime -> datetime, any other mix -> string,
no non-null value -> string.

Every value leaves here as plain JSON (str, int, float, bool, None, dict, list):

- integer/number: numeric text is parsed, Decimal becomes int (integral, integer type) or
  float, bool becomes 0/1; NaN and infinities become null; ints of any size are kept.
- boolean: bool, 0/1 and the words of ``inference.BOOLEAN_WORDS`` (true/false, t/f, yes/no, y/n, any case) or 1/0.
- date: ``YYYY-MM-DD``; date objects, ``YYYYMMDD`` text or int, ISO text; a datetime keeps its date part.
- datetime: ISO 8601 UTC with milliseconds and ``Z`` (``2026-09-01T10:15:00.000Z``). Naive datetimes
  are taken as UTC, aware ones converted to UTC, dates become midnight, numbers are Unix
  timestamps (seconds below 1e11, milliseconds below 1e14, microseconds below 1e17, else nanoseconds).
- json: dicts and lists are kept (nested values made plain), JSON text is parsed when valid.
- string: text as is; bytes become standard base64 (RFC 4648, padded); objects become JSON text.

A value that cannot be converted to its declared type is kept as text and the column gets
one warning, so nothing is lost silently.
"""

from __future__ import annotations

import base64
import datetime as _dt
import math
import numbers
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson

from ..constants import COLUMN_TYPES
from .inference import FALSE_WORDS, TRUE_WORDS, infer_type

Converter = Callable[[Any], Any]

_UTC = _dt.UTC
_EPOCH = _dt.datetime(1970, 1, 1)
_TRUE = TRUE_WORDS | {"1"}
_FALSE = FALSE_WORDS | {"0"}
_BYTES = (bytes, bytearray, memoryview)


class Unconvertible(Exception):
    """Raised by a converter when a value does not fit the declared type."""


# --- small helpers -------------------------------------------------------------------------
def iso_datetime(value: _dt.datetime) -> str:
    """ISO 8601 UTC with milliseconds and Z; naive datetimes are taken as UTC (8.6)."""
    if value.tzinfo is not None and value.utcoffset() is not None:
        value = value.astimezone(_UTC).replace(tzinfo=None)
    elif value.tzinfo is not None:
        value = value.replace(tzinfo=None)
    return value.isoformat(timespec="milliseconds") + "Z"


def bytes_text(value: bytes | bytearray | memoryview) -> str:
    """Binary cells travel as standard padded base64 text."""
    return base64.b64encode(bytes(value)).decode("ascii")


def json_text(value: Any) -> str:
    """Compact JSON text of a plain value (big ints fall back to the stdlib encoder)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _finite(value: float) -> float | None:
    return value if value - value == 0.0 else None  # NaN and +-inf give NaN here


def plain_json(value: Any) -> Any:
    """A JSON-safe copy of nested data (Decimal, dates, bytes, tuples, NaN inside objects)."""
    cls = value.__class__
    if cls is str or cls is int or cls is bool or value is None:
        return value
    if cls is float:
        return _finite(value)
    if isinstance(value, dict):
        return {(k if k.__class__ is str else _key_text(k)): plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain_json(v) for v in value]
    return classify(value)[1]


def _key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return key if isinstance(key, str) else str(key)


# --- inference (undeclared columns) ----------------------------------------------------------
def classify(value: Any) -> tuple[str | None, Any]:
    """``(kind, plain value)`` of one cell of an undeclared column; kind None for null/NaN."""
    cls = value.__class__
    if value is None:
        return None, None
    if cls is str:
        return "string", value
    if cls is bool:
        return "boolean", value
    if cls is int:
        return "integer", value
    if cls is float:
        return ("number", value) if value - value == 0.0 else (None, None)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None, None
        if value.as_tuple().exponent >= 0:  # type: ignore[operator]
            return "integer", int(value)
        return "number", float(value)
    if isinstance(value, _dt.datetime):
        return "datetime", iso_datetime(value)
    if isinstance(value, _dt.date):
        return "date", value.isoformat()
    if isinstance(value, _dt.time):
        return "string", value.isoformat()
    if isinstance(value, (dict, list, tuple)):
        return "json", plain_json(value)
    if isinstance(value, _BYTES):
        return "string", bytes_text(value)
    if isinstance(value, str):
        return "string", str(value)
    if isinstance(value, numbers.Integral):
        return "integer", int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        return ("number", number) if math.isfinite(number) else (None, None)
    return "string", str(value)


def _date_to_datetime(value: Any) -> Any:
    # Finalizer for a date+datetime column: plain dates became "YYYY-MM-DD" text.
    if value.__class__ is str and len(value) == 10:
        return value + "T00:00:00.000Z"
    return value


def plain_to_text(value: Any) -> Any:
    """Finalizer for a mixed column typed string: a plain JSON value as text."""
    cls = value.__class__
    if cls is str or value is None:
        return value
    if cls is bool:
        return "true" if value else "false"
    if cls is int:
        return str(value)
    if cls is float:
        return repr(value)
    return json_text(value)


def finalizer(kinds: set[str]) -> tuple[str, Converter | None]:
    """Final type of an undeclared column and the function that turns its plain values into it.

    None means the values already have the final form (one kind, or integer+number).
    Works on plain JSON values, so it applies equally to rows in memory and rows read back
    from a spilled file.
    """
    final = infer_type(kinds)
    if len(kinds) <= 1 or final == "number":
        return final, None
    if final == "datetime":
        return final, _date_to_datetime
    return final, plain_to_text


# --- declared types ------------------------------------------------------------------------
def to_string(value: Any) -> Any:
    """Any value as text (also the fallback of every other type)."""
    cls = value.__class__
    if cls is str or value is None:
        return value
    if cls is bool:
        return "true" if value else "false"
    if cls is int:
        return str(value)
    if cls is float:
        return repr(value) if value - value == 0.0 else None
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else None
    if isinstance(value, _dt.datetime):
        return iso_datetime(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _BYTES):
        return bytes_text(value)
    if isinstance(value, (dict, list, tuple)):
        return json_text(plain_json(value))
    if isinstance(value, str):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return repr(number) if math.isfinite(number) else None
    return str(value)


def _decimal_integer(value: Decimal) -> int | None:
    if not value.is_finite():
        return None
    if value != value.to_integral_value():
        raise Unconvertible
    return int(value)


def to_integer(value: Any) -> Any:
    """Declared integer: ints, integral floats/Decimals, numeric text."""
    cls = value.__class__
    if cls is int or value is None:
        return value
    if cls is bool:
        return int(value)
    if cls is float:
        if value - value != 0.0:
            return None
        if value.is_integer():
            return int(value)
        raise Unconvertible
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return _decimal_integer(Decimal(text))
        except (ArithmeticError, ValueError) as exc:
            raise Unconvertible from exc
    if isinstance(value, Decimal):
        return _decimal_integer(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return to_integer(float(value))
    raise Unconvertible


def to_number(value: Any) -> Any:
    """Declared number: ints stay ints, Decimal becomes float, numeric text is parsed."""
    cls = value.__class__
    if cls is float:
        return _finite(value)
    if cls is int or value is None:
        return value
    if cls is bool:
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return _finite(float(text))
        except ValueError as exc:
            raise Unconvertible from exc
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _finite(float(value))
    raise Unconvertible


def to_boolean(value: Any) -> Any:
    """Declared boolean: bool, 0/1 numbers and the usual words."""
    cls = value.__class__
    if cls is bool or value is None:
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise Unconvertible
    if isinstance(value, (numbers.Real, Decimal)):
        if value == 0:
            return False
        if value == 1:
            return True
    raise Unconvertible


def _date_text(text: str) -> str | None:
    text = text.strip()
    if not text:
        return None
    try:
        if len(text) == 8 and text.isdigit():
            return _dt.date(int(text[:4]), int(text[4:6]), int(text[6:])).isoformat()
        if len(text) == 10:
            return _dt.date.fromisoformat(text).isoformat()
        return _dt.datetime.fromisoformat(text).date().isoformat()
    except ValueError as exc:
        raise Unconvertible from exc


def to_date(value: Any) -> Any:
    """Declared date: ``YYYY-MM-DD`` from dates, datetimes (date part), YYYYMMDD and ISO text."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return value.date().isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, str):
        return _date_text(value)
    if isinstance(value, int) and not isinstance(value, bool) and 10000101 <= value <= 99991231:
        return _date_text(str(value))
    raise Unconvertible


def _epoch(value: float | int) -> str:
    size = abs(value)
    try:
        if isinstance(value, int):
            if size < 10**11:
                delta = _dt.timedelta(seconds=value)
            elif size < 10**14:
                delta = _dt.timedelta(milliseconds=value)
            elif size < 10**17:
                delta = _dt.timedelta(microseconds=value)
            else:
                delta = _dt.timedelta(microseconds=value // 1000)
        else:
            scale = 1 if size < 1e11 else 1e3 if size < 1e14 else 1e6 if size < 1e17 else 1e9
            delta = _dt.timedelta(seconds=value / scale)
        return iso_datetime(_EPOCH + delta)
    except (OverflowError, ValueError) as exc:
        raise Unconvertible from exc


def to_datetime(value: Any) -> Any:
    """Declared datetime: ISO 8601 UTC with milliseconds and Z."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return iso_datetime(value)
    if isinstance(value, _dt.date):
        return value.isoformat() + "T00:00:00.000Z"
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if len(text) == 8 and text.isdigit():
            return to_datetime(_date_text(text))
        try:
            return iso_datetime(_dt.datetime.fromisoformat(text))
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError as exc:
            raise Unconvertible from exc
        return to_datetime(int(text) if text.lstrip("-").isdigit() else number)
    if isinstance(value, bool):
        raise Unconvertible
    if isinstance(value, float):
        return _epoch(value) if value - value == 0.0 else None
    if isinstance(value, Decimal):
        return _epoch(int(value) if value == value.to_integral_value() else float(value)) if value.is_finite() else None
    if isinstance(value, numbers.Integral):
        return _epoch(int(value))
    if isinstance(value, numbers.Real):
        return to_datetime(float(value))
    raise Unconvertible


def to_json(value: Any) -> Any:
    """Declared json: objects and arrays kept (made plain); valid JSON text parsed."""
    cls = value.__class__
    if value is None:
        return None
    if cls is dict or cls is list:
        return plain_json(value)
    if isinstance(value, str):
        try:
            return plain_json(orjson.loads(value))
        except orjson.JSONDecodeError as exc:
            raise Unconvertible from exc
    if isinstance(value, _BYTES):
        raise Unconvertible
    return classify(value)[1]


TO_TYPE: dict[str, Converter] = {
    "string": to_string,
    "integer": to_integer,
    "number": to_number,
    "boolean": to_boolean,
    "date": to_date,
    "datetime": to_datetime,
    "json": to_json,
}

# Classes whose values a converter returns unchanged (the row compiler tests them inline).
IDENTITY_CLASS: dict[str, type | None] = {
    "string": str,
    "integer": int,
    "number": float,  # finite floats only; the compiler adds the check
    "boolean": bool,
    "date": None,
    "datetime": None,
    "json": None,
}


def check_type(name: str, type_name: str) -> None:
    """A declared type outside 8.6 is a connector bug: fail loudly."""
    if type_name not in COLUMN_TYPES:
        raise ValueError(f"Column {name!r} declares unknown type {type_name!r}; use one of {', '.join(COLUMN_TYPES)}.")


MEMO_TYPES = ("date", "datetime")
MEMO_SIZE = 4096
_SHARED_MEMOS: dict[str, dict[str, str]] = {name: {} for name in MEMO_TYPES}


def shared_memo(type_name: str) -> dict[str, str]:
    """The process-wide memo of a declared date/datetime column: the conversion of a text is pure,
    and the same dates come back call after call (per-call cost, bench case 1)."""
    return _SHARED_MEMOS[type_name]


def declared_converter(
    name: str, type_name: str, warn: Callable[[str, str, Any], None], memo: dict[str, str] | None = None
) -> Converter:
    """Converter of a declared column; unconvertible values are kept as text with one warning.

    With ``memo``, converted date/datetime text is remembered (dates repeat a lot in analytics
    tables), up to MEMO_SIZE distinct values (then it starts over); the row compiler looks values
    up there first.
    """
    base = TO_TYPE[type_name]

    def convert(value: Any) -> Any:
        try:
            result = base(value)
        except Unconvertible:
            warn(name, type_name, value)
            return to_string(value)
        if memo is not None and value.__class__ is str and result:
            if len(memo) >= MEMO_SIZE:
                memo.clear()  # bounded; a new table's dates refill it
            memo[value] = result
        return result

    return convert


def inferring_converter(kinds: set[str]) -> Converter:
    """Converter of an undeclared column: plain value of its own kind, the kind recorded."""

    def convert(value: Any) -> Any:
        kind, plain = classify(value)
        if kind is not None:
            kinds.add(kind)
        return plain

    return convert


def unconvertible_warning(name: str, type_name: str, value: Any) -> str:
    """The once-per-column warning text (English, 5.5.0)."""
    sample = to_string(value)
    if isinstance(sample, str) and len(sample) > 40:
        sample = sample[:39] + "…"
    return (
        f"Column '{name}' is typed {type_name} but some values could not be converted; "
        f"they were kept as text (first: {sample!r})."
    )
