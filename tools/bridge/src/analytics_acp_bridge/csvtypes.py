"""CSV cells of acp-data (16.6): writing typed values, reading them back, inferring column types.

Written as RFC 4180 UTF-8 with a header; null is an empty cell; objects and arrays are JSON.
A CSV dropped in by hand has no meta, so each column's type is inferred from all its values:
integer, number, boolean, date, datetime or string. A value with leading zeros (a postcode,
"007") keeps its column as text, because reading it as a number would lose the zeros.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from typing import Any

# Types the csv module would not write the 16.6 way (True -> "True", dicts as Python repr).
SPECIAL_TYPES = frozenset({bool, dict, list, tuple})
TYPES = ("integer", "number", "boolean", "date", "datetime", "string")
SQLITE_TYPES = {"integer": "INTEGER", "number": "REAL", "boolean": "INTEGER"}


def cell(value: Any) -> str:
    """One value as CSV cell text."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return ""
        return repr(value)
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


# "0" is an integer; "007" is an identifier written with zeros, so it stays text. ASCII digits only.
_INTEGER = re.compile(r"[+-]?(?:0|[1-9][0-9]*)").fullmatch


def _is_integer(text: str) -> bool:
    return _INTEGER(text) is not None


def _is_number(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    if not body or not (body[0].isdigit() or body[0] == "."):
        return False  # rejects "nan", "inf", "infinity"
    try:
        float(body)
    except ValueError:
        return False
    whole = body.split(".")[0].split("e")[0].split("E")[0]
    return not (len(whole) > 1 and whole.startswith("0"))


def _is_date(text: str) -> bool:
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_datetime(text: str) -> bool:
    if len(text) < 16 or text[10] not in "T ":
        return False
    try:
        _dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return False
    return _is_date(text[:10])


def _is_boolean(text: str) -> bool:
    return text.lower() in ("true", "false")


_CHECKS = {
    "integer": _is_integer,
    "number": _is_number,
    "boolean": _is_boolean,
    "date": _is_date,
    "datetime": _is_datetime,
}


def _narrow(state: str | None, values: list[str]) -> str | None:
    """The narrowest type that fits ``state``'s values and ``values`` (non-empty cells).

    Every integer text is a number text, and the other types exclude each other, so a column
    only moves integer -> number -> string, or from its first type straight to string: each
    batch is one C-level ``all(map(check, values))`` per column instead of a check per cell.
    """
    if not values or state == "string":
        return state
    if state is None:
        state = next((name for name, check in _CHECKS.items() if check(values[0])), "string")
    while state != "string":
        if all(map(_CHECKS[state], values)):
            return state
        state = "number" if state == "integer" else "string"
    return state


class TypeGuess:
    """Incremental type inference for one column: the narrowest type every value fits."""

    def __init__(self) -> None:
        self.state: str | None = None

    def add(self, text: str) -> None:
        """Feed one cell (empty cells are nulls and fit every type)."""
        if text:
            self.state = _narrow(self.state, [text])

    def add_many(self, texts: list[str]) -> None:
        """Feed a batch of cells of this column."""
        if self.state != "string":
            self.state = _narrow(self.state, [t for t in texts if t])

    def result(self) -> str:
        """The inferred type (string when no typed reading fits every value)."""
        return self.state or "string"


def value_type(value: Any) -> str | None:
    """The type of one Python value from a query result (None for null)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        if _is_date(value):
            return "date"
        if _is_datetime(value):
            return "datetime"
    return "string"


def merge_types(current: str | None, new: str | None) -> str | None:
    """Combine two value types of one column (integer+number -> number; otherwise string)."""
    if new is None or current == new:
        return current
    if current is None:
        return new
    if {current, new} == {"integer", "number"}:
        return "number"
    return "string"


def parse(text: str, kind: str) -> Any:
    """A CSV cell back to a typed value for its header type (empty -> None)."""
    if text == "":
        return None
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
        if kind == "boolean":
            low = text.lower()
            if low in ("true", "1"):
                return True
            if low in ("false", "0"):
                return False
            return text
        if kind == "json":
            return json.loads(text)
    except ValueError:
        return text
    return text
