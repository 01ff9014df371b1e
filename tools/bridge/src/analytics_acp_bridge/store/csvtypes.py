"""CSV cells of acp-data (16.6): writing typed values, reading them back, inferring column types.

Written as RFC 4180 UTF-8 with a header; null is an empty cell; objects and arrays are JSON.
A CSV dropped in by hand has no meta, so each column's type is inferred from all its values with
the core's one inference rule (analytics_acp.results.inference): integer, number, boolean, date,
datetime or string, mixed by 8.6 (integer + number -> number, date + datetime -> datetime). A value
with leading zeros (a postcode, "007") keeps its column as text: reading it as a number would lose the zeros.
"""

from __future__ import annotations

import json
import math
from typing import Any

from analytics_acp.results.conversion import TO_TYPE, Unconvertible
from analytics_acp.results.inference import TextTypeGuess, infer_type, is_date_text, is_datetime_text

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


# One inference rule (16.6 and 8.6), in the core: the bridge types a hand-dropped CSV exactly as the
# core types a column marked "infer" (a SQLite result), so the same data gets the same type.
TypeGuess = TextTypeGuess


def value_type(value: Any) -> str | None:
    """The kind of one value of an acp_query result (None for null).

    The values come from SQLite tables loaded with typed columns, so numbers already have their
    own storage class: text is text unless it is a date or a datetime (SQLite has no date class).
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        if is_date_text(value):
            return "date"
        if is_datetime_text(value):
            return "datetime"
    return "string"


def merge_types(current: str | None, new: str | None) -> str | None:
    """Combine two value types of one column with the core's 8.6 rule (integer+number -> number,
    date+datetime -> datetime, anything else -> string)."""
    if new is None or current == new:
        return current
    if current is None:
        return new
    return infer_type({current, new})


def parse(text: str, kind: str) -> Any:
    """A CSV cell back to a typed value for its header type (empty -> None), by the core's 8.6 converters.

    A cell that does not fit its type is kept as text (as the core keeps an unconvertible value).
    """
    if text == "":
        return None
    if kind == "string":
        return text
    if kind == "datetime" and len(text) == 24 and text[10] == "T" and text[23] == "Z":
        return text  # already the 8.6 form (what the bridge itself writes)
    if kind == "json":
        try:
            return json.loads(text)  # the stdlib keeps integers of any size exact
        except ValueError:
            return text
    convert = TO_TYPE.get(kind)
    if convert is None:
        return text
    try:
        return convert(text)
    except Unconvertible:
        return text
