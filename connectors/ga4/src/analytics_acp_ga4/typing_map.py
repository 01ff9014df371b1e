"""GA4 types -> ACP column types (8.6): metric types from the response headers, date dimensions by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analytics_acp import Header

_UNITS = {
    "TYPE_SECONDS": "seconds", "TYPE_MILLISECONDS": "milliseconds", "TYPE_MINUTES": "minutes", "TYPE_HOURS": "hours",
    "TYPE_FEET": "feet", "TYPE_MILES": "miles", "TYPE_METERS": "meters", "TYPE_KILOMETERS": "kilometers",
    "TYPE_STANDARD": "standard (custom metric)",
}
DATE_DIMENSIONS = {"date", "firstSessionDate"}
DATETIME_DIMENSIONS = {"dateHour", "dateHourMinute"}


def metric_header(name: str, type_name: str, currency: str | None) -> Header:
    """TYPE_INTEGER -> integer; every other type -> number, with the unit in the description."""
    if type_name == "TYPE_INTEGER":
        return Header(name=name, type="integer", role="metric")
    if type_name == "TYPE_CURRENCY":
        return Header(name=name, type="number", role="metric", description=f"Currency amount ({currency})" if currency else "Currency amount")
    unit = _UNITS.get(type_name)
    return Header(name=name, type="number", role="metric", description=f"Unit: {unit}" if unit else None)


def dimension_header(name: str) -> Header:
    """date/firstSessionDate -> date; dateHour/dateHourMinute -> datetime; the rest string."""
    if name in DATE_DIMENSIONS:
        return Header(name=name, type="date", role="dimension")
    if name in DATETIME_DIMENSIONS:
        return Header(name=name, type="datetime", role="dimension")
    return Header(name=name, type="string", role="dimension")


def _date(value: str) -> Any:
    # YYYYMMDD -> YYYY-MM-DD; anything else ("(other)", "(not set)") is kept as sent.
    if len(value) == 8 and value.isdigit():
        return f"{value[:4]}-{value[4:6]}-{value[6:]}"
    return value


def _datetime(value: str) -> Any:
    if value.isdigit() and len(value) in (10, 12):
        minute = value[10:12] if len(value) == 12 else "00"
        return f"{value[:4]}-{value[4:6]}-{value[6:8]}T{value[8:10]}:{minute}:00"
    return value


def _integer(value: str) -> Any:
    try:
        return int(value)
    except ValueError:
        return _number(value)


def _number(value: str) -> Any:
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if number.is_integer() and abs(number) < 2**53 and "." not in value and "e" not in value.lower() else number


def converter(header: Header) -> Callable[[str], Any]:
    """The function turning one API string value into the column's typed value."""
    return {"date": _date, "datetime": _datetime, "integer": _integer, "number": _number}.get(header.type, str)
