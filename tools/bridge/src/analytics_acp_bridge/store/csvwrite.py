"""Writing a dataset's CSV rows (16.6) fast: batch by batch, column by column.

The output is exactly what ``csv.writer(handle, lineterminator="\\r\\n")`` writes for the rows
with bools, objects and arrays turned into ``csvtypes.cell`` text (RFC 4180, minimal quoting). A
batch whose every column holds only str/int/float/None and no text that needs quoting (no
``,``, ``"``, CR or LF) is joined with C-level ``str.join`` instead, which is several times
faster than the csv writer's per-field work; any other batch goes through the csv writer.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from itertools import islice, repeat
from typing import Any, TextIO

import orjson

from . import csvtypes

BATCH_ROWS = 4096
_NONE = type(None)
_PLAIN = frozenset({str, int, float, _NONE})
_QUOTED = (",", '"', "\r", "\n")  # what the csv writer quotes under QUOTE_MINIMAL
_ORJSON_AS_REPR = 1e-4  # from this magnitude up (and 0.0), orjson's float text is repr's
_NUMBER_BYTES = b"0123456789-+.e,"  # all that orjson's text of a list of ints/floats holds, besides [ ]


def write_rows(handle: TextIO, names: list[str], rows: Iterable[Any]) -> int:
    """Write the header and every row (values looked up by ``names``); returns the data row count."""
    out = RowWriter(handle, names)
    iterator = iter(rows)
    while batch := list(islice(iterator, BATCH_ROWS)):
        out.write(batch)
    return out.count


class RowWriter:
    """The header at once, then batches of row objects (``write``); ``count`` data rows so far."""

    def __init__(self, handle: TextIO, names: list[str]):
        self.handle, self.names, self.count = handle, names, 0
        self.writer = csv.writer(handle, lineterminator="\r\n")
        self.writer.writerow(names)

    def write(self, batch: list[Any]) -> None:
        """Append one batch of rows (dicts or Mappings; a missing key is an empty cell)."""
        if not batch:
            return
        columns = [_column(batch, name) for name in self.names]
        texts: list[list[str]] | None = None
        if len(columns) > 1:  # one column: csv quotes a lone empty cell
            texts = []
            for column in columns:
                text = _fast_texts(column)
                if text is None:
                    text = _plain_texts(*_cells(column))
                if text is None:
                    texts = None
                    break
                texts.append(text)
        if texts is None:
            cells = [_cells(column)[0] for column in columns]
            self.writer.writerows(zip(*cells, strict=True) if cells else [()] * len(batch))
        else:
            self.handle.write("\r\n".join(map(",".join, zip(*texts, strict=True))) + "\r\n")
        self.count += len(batch)


def _column(batch: list[Any], name: str) -> list[Any]:
    try:
        return list(map(dict.get, batch, repeat(name, len(batch))))
    except TypeError:  # a Mapping that is not a dict
        return [row.get(name) for row in batch]


def _fast_texts(column: list[Any]) -> list[str] | None:
    """Cell texts of an all-text or all-number column that needs no quoting, found without a
    type() per value (None: look closer, _cells/_plain_texts).

    Text: ``"".join`` accepts only str, so it proves the column's type too. Numbers: orjson's
    text of the whole column holding only number characters proves ints and floats (null, true
    or false have letters); it is the csv writer's text (str) for ints, and for floats unless one
    is below 1e-4 in magnitude (orjson: 0.00001 and 1e-9, repr: 1e-05 and 1e-09), which the
    text shows as ``0.0000`` or ``e-`` (a longer number with those digits just takes the slow path).
    """
    first = column[0].__class__
    if first is str:
        try:
            joined = "".join(column)
        except TypeError:
            return None
        return None if any(mark in joined for mark in _QUOTED) else column
    if first is int or first is float:
        try:
            blob = orjson.dumps(column)
        except TypeError:  # ints beyond 64 bits
            return None
        if blob.translate(None, _NUMBER_BYTES) != b"[]" or b"e-" in blob or b"0.0000" in blob:
            return None
        return blob.decode("ascii")[1:-1].split(",")
    return None


def _cells(column: list[Any]) -> tuple[list[Any], set[type]]:
    """A column's values with bools and JSON already as 16.6 cell text, and the set of their types."""
    special, cell = csvtypes.SPECIAL_TYPES, csvtypes.cell
    kinds = set(map(type, column))
    if not special.isdisjoint(kinds):
        # Only bools and JSON values become 16.6 cell text; the rest is written as csv writes it.
        column = [cell(value) if type(value) in special else value for value in column]
        kinds = (kinds - special) | {str}
    return column, kinds


def _plain_texts(column: list[Any], kinds: set[type]) -> list[str] | None:
    """The column's cell texts, or None when it needs the csv writer (quoting, other types)."""
    if not kinds <= _PLAIN:
        return None
    if kinds == {str}:
        return None if any(mark in "".join(column) for mark in _QUOTED) else column
    if kinds == {int}:
        return _int_texts(column)
    if kinds == {float}:
        return _float_texts(column)
    if _NONE in kinds:
        column = ["" if value is None else value for value in column]
    texts = list(map(str, column))  # str(float) is the repr the csv writer uses
    if str in kinds and any(mark in "".join(texts) for mark in _QUOTED):
        return None
    return texts


def _float_texts(column: list[float]) -> list[str]:
    # orjson writes a finite float as repr does (the csv writer's text) unless it is below 1e-4
    # in magnitude (0.00001 for 1e-05, 1e-9 for 1e-09): those columns, NaN and inf use repr.
    if math.isfinite(sum(column)) and min(filter(None, map(abs, column)), default=1.0) >= _ORJSON_AS_REPR:
        return orjson.dumps(column).decode("ascii")[1:-1].split(",")
    return list(map(repr, column))


def _int_texts(column: list[int]) -> list[str]:
    # orjson writes 64-bit ints as str() does, about twice as fast; bigger ones raise.
    try:
        return orjson.dumps(column).decode("ascii")[1:-1].split(",")
    except TypeError:
        return list(map(str, column))
