"""Rows of a ``file://`` table (8.5), streamed from disk.

Fast path: the core's layout (``analytics_acp.results.tablefile``): ``[`` alone on the first
line, then lines that each hold a comma-separated run of complete row objects, ``]`` last.
Each such line is one orjson call. The core's own reader is not used because it reads any
other layout whole and rejects a file that leaves the layout half-way; the bridge must stream
every valid JSON array (a third-party server may write one line, or pretty-print). So the
first line that does not fit hands over to ijson, which re-reads the file from the start and
skips the rows already given: those lines were complete values, so the rows are the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO

import orjson

MAX_LINE = 16 * 1024 * 1024  # longer lines go to ijson, so memory stays bounded
# Integers beyond 64 bits are valid JSON, but orjson reads them as floats: a chunk with a run of
# 19+ digits is parsed by the stdlib instead (exact ints). translate+find is a fast C-level scan.
_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_LONG_RUN = b"0" * 19


def iter_file_rows(path: Path) -> Iterator[Any]:
    """Every item of the JSON array in ``path``, streamed (fast for the core's line layout)."""
    with path.open("rb") as handle:
        given = yield from _line_rows(handle)
        if given is None:
            return
        import ijson  # only for files another writer laid out differently

        handle.seek(0)
        yield from islice(ijson.items(handle, "item", use_float=True), given, None)


def _line_rows(handle: BinaryIO) -> Iterator[Any]:
    """Rows of a file in the core's layout; returns None when done, else the rows given so far."""
    given = 0
    if handle.readline(64).strip() != b"[":
        return given
    more = None  # None: right after "["; True: last line ended with a comma; False: it did not
    while line := handle.readline(MAX_LINE):
        if len(line) == MAX_LINE and not line.endswith(b"\n"):
            return given
        text = line.strip()
        if not text:
            continue
        if text == b"]":
            if more is True or handle.read(MAX_LINE).strip():
                return given  # a trailing comma, or more after the array: let ijson judge
            return None
        if more is False:
            return given  # no comma between the lines: not this layout
        more = text.endswith(b",")
        chunk = _parse(b"[" + (text[:-1] if more else text) + b"]")
        if not chunk:
            return given
        yield from chunk
        given += len(chunk)
    return given  # no closing bracket: ijson reports the truncated file


def _parse(data: bytes) -> list[Any] | None:
    try:
        if data.translate(_DIGITS).find(_LONG_RUN) >= 0:
            return json.loads(data, parse_constant=_no_constant)
        return orjson.loads(data)
    except ValueError:
        return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # the stdlib accepts NaN/Infinity, JSON does not
