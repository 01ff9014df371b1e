"""Writing a dataset's CSV rows (16.6) fast: batch by batch, column by column.

The output is exactly what ``csv.writer(handle, lineterminator="\\r\\n")`` writes for the rows
with bools, objects and arrays turned into ``csvtypes.cell`` text (RFC 4180, minimal quoting). A
batch whose every column holds only str/int/float/None and no text that needs quoting (no
``,``, ``"``, CR or LF) is joined with C-level ``str.join`` instead, which is several times
faster than the csv writer's per-field work; any other batch goes through the csv writer.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from itertools import islice, repeat
from typing import Any, TextIO

import orjson

from . import csvtypes

BATCH_ROWS = 4096
_NONE = type(None)
_PLAIN = frozenset({str, int, float, _NONE})
_QUOTED = (",", '"', "\r", "\n")  # what the csv writer quotes under QUOTE_MINIMAL


def write_rows(handle: TextIO, names: list[str], rows: Iterable[Any]) -> int:
    """Write the header and every row (values looked up by ``names``); returns the data row count."""
    writer = csv.writer(handle, lineterminator="\r\n")
    writer.writerow(names)
    count = 0
    iterator = iter(rows)
    while batch := list(islice(iterator, BATCH_ROWS)):
        columns = _columns(batch, names)
        text = _joined(columns) if len(columns) > 1 else None  # one column: csv quotes a lone empty cell
        if text is None:
            cells = [column for column, _ in columns]
            writer.writerows(zip(*cells, strict=True) if cells else [()] * len(batch))
        else:
            handle.write(text)
        count += len(batch)
    return count


def _columns(batch: list[Any], names: list[str]) -> list[tuple[list[Any], set[type]]]:
    """Each column's values (bools and JSON already as cell text) and the set of their types."""
    columns = []
    special, cell = csvtypes.SPECIAL_TYPES, csvtypes.cell
    for name in names:
        try:
            column = list(map(dict.get, batch, repeat(name, len(batch))))
        except TypeError:  # a Mapping that is not a dict
            column = [row.get(name) for row in batch]
        kinds = set(map(type, column))
        if not special.isdisjoint(kinds):
            # Only bools and JSON values become 16.6 cell text; the rest is written as csv writes it.
            column = [cell(value) if type(value) in special else value for value in column]
            kinds = (kinds - special) | {str}
        columns.append((column, kinds))
    return columns


def _joined(columns: list[tuple[list[Any], set[type]]]) -> str | None:
    """The batch as CSV text, or None when some column needs the csv writer."""
    texts = []
    for column, kinds in columns:
        if not kinds <= _PLAIN:
            return None
        if kinds == {str}:
            if any(mark in "".join(column) for mark in _QUOTED):
                return None
            texts.append(column)
        elif kinds == {int}:
            texts.append(_int_texts(column))
        else:
            if _NONE in kinds:
                column = ["" if value is None else value for value in column]
            texts.append(list(map(str, column)))  # str(float) is the repr the csv writer uses
            if str in kinds and any(mark in "".join(texts[-1]) for mark in _QUOTED):
                return None
    return "\r\n".join(map(",".join, zip(*texts, strict=True))) + "\r\n"


def _int_texts(column: list[int]) -> list[str]:
    # orjson writes 64-bit ints as str() does, about twice as fast; bigger ones raise.
    try:
        return orjson.dumps(column).decode("ascii")[1:-1].split(",")
    except TypeError:
        return list(map(str, column))
