"""One table from rows to typed headers, model sample and system_data part (8.2, 8.5, 8.6).

The rows are consumed once, in batches:

1. While the serialized table stays within ``inline_max_bytes`` the converted rows are kept
   in a list (the inline ``table``); its exact UTF-8 size is tracked by serializing each batch.
2. When it crosses the limit, the list is written to a table file and dropped; the rest of
   the stream goes straight to the file, with bounded memory (the sampler keeps O(N) rows).
3. At the end, undeclared columns get their final type (8.6). If that changes values already
   written (a mixed column) or new columns appeared after the first row, the file is rewritten
   in a second streaming pass; in memory the rows are fixed up directly. Tables whose every
   column is declared never need the second pass.

The inline table's JSON is computed anyway (step 1 measures it), so it is kept with the rows
(``SerializedRows``): the stdio writer sends those bytes instead of serializing the rows a
second time (bench case 1). Everything else sees a plain list.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from ..declarations import Header
from ..rowjson import SerializedRows as SerializedRows  # where it is built (server_stdio reads it from rowjson)
from ..tablefile import TableFileWriter, dumps, file_uri
from .sampling import SpreadSampler, check_mode, select_indices
from .schema import TableSchema, row_finisher

_MAX_BATCH = 4096
_FILE_BATCH_BYTES = 1 << 20
_GC_LOCK = threading.Lock()
_GC_PAUSED = [0, False]  # tables streaming with the collector paused; whether the first one found it enabled


def pause_gc() -> None:
    """Stop automatic cyclic collection while a spilled table streams (``resume_gc`` after, always).

    A million-row table allocates and frees millions of row tuples and dicts, none of them in a
    cycle; their allocations alone trigger thousands of young-generation passes and full ones
    over the server's heap: about 0.1 s of 1.4 s of CPU for 1M x 6 (bench case 2). Nested and
    concurrent builds count; the collector comes back on with the last one, and only if it was on.
    """
    with _GC_LOCK:
        if _GC_PAUSED[0] == 0:
            _GC_PAUSED[1] = gc.isenabled()
            gc.disable()
        _GC_PAUSED[0] += 1


def resume_gc() -> None:
    """End one ``pause_gc``."""
    with _GC_LOCK:
        _GC_PAUSED[0] -= 1
        if _GC_PAUSED[0] == 0 and _GC_PAUSED[1]:
            gc.enable()


def join_batches(parts: list[bytes]) -> bytes:
    """The JSON array of every row of several JSON arrays (``[a,b]`` + ``[c]`` -> ``[a,b,c]``)."""
    pieces: list[bytes | memoryview] = [b"["]
    for part in parts:
        if len(part) > 2:
            if len(pieces) > 1:
                pieces.append(b",")
            pieces.append(memoryview(part)[1:-1])  # a view: each batch is copied once, into the result
    pieces.append(b"]")
    return b"".join(pieces)


@dataclass
class TableResult:
    """A built table: final headers, the rows the model sees and where the full table is."""

    headers: list[Header]
    total_rows: int
    sample: list[dict[str, Any]]
    table: list[dict[str, Any]] | None = None  # inline rows, or None when written to ``path``
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[str]:
        """Column names in order (8.2 ``columns``)."""
        return [h.name for h in self.headers]

    def system_data(self) -> dict[str, Any]:
        """8.5 single-table part: ``inline`` with ``table`` or ``file`` with ``table_uri``."""
        out: dict[str, Any] = {
            "format": "file" if self.path is not None else "inline",
            "row_count": self.total_rows,
            "headers": [h.to_json() for h in self.headers],
        }
        if self.path is not None:
            out["table_uri"] = file_uri(self.path)
        else:
            out["table"] = self.table if self.table is not None else []
        return out


def build_table(
    rows: Iterable[Any] | None,
    *,
    headers: Sequence[Any] | None = None,
    columns: Sequence[str] | None = None,
    sample_size: int = 25,
    sampling: str = "head",
    inline_max_bytes: int,
    tmp_dir: Path | None = None,
    prefix: str = "acp",
) -> TableResult:
    """Consume ``rows`` once and build the table (see the module docstring for the passes)."""
    check_mode(sampling)
    schema = TableSchema(headers, columns)
    stream = iter(rows if rows is not None else ())
    buffer: list[dict[str, Any]] | None = []
    parts: list[bytes] | None = []  # each buffered batch as orjson wrote it; None once one fell back to stdlib
    size = 2  # bytes of "[]"; each further row adds its own bytes and a comma
    total = 0
    batch_size = 1
    writer: TableFileWriter | None = None
    first: list[dict[str, Any]] = []  # head sample once the buffer is gone
    sampler: SpreadSampler | None = None
    paused = False
    try:
        while True:
            raw = list(islice(stream, batch_size))
            if not raw:
                break
            converted = schema.convert_batch(raw)
            del raw
            if buffer is not None:
                encoded = _encoded(converted)
                if encoded is None:
                    parts = None
                    blob = len(dumps(converted))
                else:
                    blob = len(encoded)
                    if parts is not None:
                        parts.append(encoded)
                size += blob - 2 + (1 if total else 0)
                total += len(converted)
                buffer.extend(converted)
                if size > inline_max_bytes:
                    pause_gc()  # resumed in the finally below
                    paused = True
                    writer = TableFileWriter(tmp_dir, prefix)
                    writer.write(buffer)
                    first, sampler = _start_sample(buffer, sample_size, sampling)
                    buffer = parts = None
                    batch_size = max(16, min(_MAX_BATCH, _FILE_BATCH_BYTES * total // max(size, 1)))
                else:
                    average = size / total
                    batch_size = max(16, min(_MAX_BATCH, int((inline_max_bytes - size) / average / 2)))
                continue
            total += len(converted)
            writer.write(converted)  # type: ignore[union-attr]
            if sampler is not None:
                sampler.extend(converted)
            elif len(first) < sample_size:
                first.extend(converted[: sample_size - len(first)])
        final_headers, finalizers, padded = schema.finish()
        finish = row_finisher([h.name for h in final_headers], finalizers, padded)
        if buffer is not None:
            if finish is None:
                table: list[dict[str, Any]] = buffer if parts is None else SerializedRows(buffer, join_batches(parts))
            else:
                table = [finish(r) for r in buffer]
                encoded = _encoded(table)
                if encoded is not None:
                    table = SerializedRows(table, encoded)
            del buffer, parts
            if finish is not None and len(table.json if isinstance(table, SerializedRows) else dumps(table)) > inline_max_bytes:
                writer = TableFileWriter(tmp_dir, prefix)  # final values are larger: spill now
                writer.write(table)
                path = writer.close()
                return TableResult(final_headers, total, _pick(table, sample_size, sampling), None, path, schema.warnings)
            return TableResult(final_headers, total, _pick(table, sample_size, sampling), table, None, schema.warnings)
        chosen = sampler.result() if sampler is not None else first
        sample = chosen if finish is None else [finish(r) for r in chosen]
        path = writer.close(finish)  # type: ignore[union-attr]
        return TableResult(final_headers, total, sample, None, path, schema.warnings)
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        if paused:
            resume_gc()


def _encoded(rows: list[dict[str, Any]]) -> bytes | None:
    """orjson's bytes for ``rows``, or None when orjson cannot write them (ints beyond 64 bits)."""
    try:
        return orjson.dumps(rows)
    except TypeError:
        return None


def _start_sample(buffer: list[dict[str, Any]], n: int, mode: str) -> tuple[list[dict[str, Any]], SpreadSampler | None]:
    if n <= 0:
        return [], None
    if mode == "head":
        return buffer[:n], None
    sampler = SpreadSampler(n)
    sampler.extend(buffer)
    return [], sampler


def _pick(table: list[dict[str, Any]], n: int, mode: str) -> list[dict[str, Any]]:
    return [table[i] for i in select_indices(len(table), n, mode)]
