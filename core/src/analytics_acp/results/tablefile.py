"""Table files behind ``system_data.table_uri`` (8.5).

A table that does not fit ``inline_max_bytes`` goes to ``<prefix>-<uuid>.json`` in the
results directory (``BuildSettings.tmp_dir``, else ``ACP_TMP_DIR``, else a private 0700
``tempfile.mkdtemp(prefix="analytics-acp-")``). The file is written under a hidden
``.partial`` name (mode 0600) and ``os.replace``'d into place, so a reader never sees half a file.

Layout: one valid JSON array holding exactly the objects ``table`` would hold, with a chunk
of rows per line::

    [
    {"a":1},{"a":2},...,{"a":2048},
    {"a":2049},...
    ]

orjson never writes a raw newline inside a value, so every line between ``[`` and ``]`` is a
comma-separated run of complete objects. ``iter_table_uri`` streams such a file chunk by
chunk; any other JSON array (for instance from another server) is read whole.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

import orjson

CHUNK_ROWS = 2048
_LONG_NUMBER = re.compile(rb"\d{19}")  # may exceed 64 bits: orjson would read it as a float
_private_dir: Path | None = None
_SAFE_PREFIX = re.compile(r"[^A-Za-z0-9_.-]+")


def dumps(value: Any) -> bytes:
    """orjson bytes; ints beyond 64 bits (valid JSON) fall back to the stdlib encoder."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _stdlib_dumps(value)


def _stdlib_dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def results_dir(tmp_dir: Path | str | None = None) -> Path:
    """Directory for table files: the given one, ACP_TMP_DIR, or a private 0700 temp dir."""
    global _private_dir
    chosen = tmp_dir or os.environ.get("ACP_TMP_DIR")
    if chosen:
        path = Path(chosen)
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return path
    if _private_dir is None or not _private_dir.is_dir():
        _private_dir = Path(tempfile.mkdtemp(prefix="analytics-acp-"))  # mkdtemp: mode 0700
    return _private_dir


def file_uri(path: Path) -> str:
    """``file://`` URI of a local path."""
    return Path(path).resolve().as_uri()


def uri_path(uri: str) -> Path:
    """Local path of a ``file://`` URI (Windows drive letters included)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ValueError(f"Not a file:// table_uri: {uri!r}.")
    return Path(url2pathname(unquote(parsed.path)))


class TableFileWriter:
    """Streams row dicts into a table file; ``close()`` publishes it atomically."""

    def __init__(self, directory: Path | str | None = None, prefix: str = "acp"):
        folder = results_dir(directory)
        safe = _SAFE_PREFIX.sub("-", prefix).strip("-.") or "acp"
        self.path = folder / f"{safe}-{uuid.uuid4().hex}.json"
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{self.path.stem}.", suffix=".partial")
        self._tmp = Path(tmp)
        self._file = os.fdopen(fd, "wb")
        self._file.write(b"[")
        self.rows = 0
        self.big_ints = False  # some value needed the stdlib encoder (ints beyond 64 bits)

    def write(self, rows: list[dict[str, Any]]) -> None:
        """Append rows (serialized in chunks, one chunk per line)."""
        write = self._file.write
        for start in range(0, len(rows), CHUNK_ROWS):
            part = rows[start : start + CHUNK_ROWS] if start or len(rows) > CHUNK_ROWS else rows
            try:
                blob = orjson.dumps(part)
            except TypeError:
                blob = _stdlib_dumps(part)
                self.big_ints = True
            if len(blob) <= 2:
                continue
            write(b",\n" if self.rows else b"\n")
            write(memoryview(blob)[1:-1])
            self.rows += min(CHUNK_ROWS, len(rows) - start)

    def close(self, finish: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Path:
        """Finish the array and move it into place; ``finish`` rewrites every row first (second pass)."""
        try:
            self._file.write(b"\n]\n")
            self._file.close()
            if finish is not None:
                self._rewrite(finish)
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        return self.path

    def _rewrite(self, finish: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        # Second pass (8.6 inference over a spilled table): stream the draft, write the final rows.
        draft = self._tmp
        fd, tmp = tempfile.mkstemp(dir=draft.parent, prefix=f".{self.path.stem}.", suffix=".partial")
        self._tmp = Path(tmp)
        self._file = os.fdopen(fd, "wb")
        self._file.write(b"[")
        self.rows = 0
        try:
            for chunk in _iter_chunks(draft, exact_ints=self.big_ints):
                self.write([finish(row) for row in chunk])
            self._file.write(b"\n]\n")
            self._file.close()
        finally:
            draft.unlink(missing_ok=True)

    def abort(self) -> None:
        """Drop the partial file (on errors); nothing is left behind."""
        try:
            self._file.close()
        finally:
            self._tmp.unlink(missing_ok=True)


def write_table_file(rows: Iterable[dict[str, Any]], directory: Path | str | None = None, prefix: str = "acp") -> Path:
    """Write already-final rows to a new table file and return its path."""
    writer = TableFileWriter(directory, prefix)
    try:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= CHUNK_ROWS:
                writer.write(batch)
                batch = []
        writer.write(batch)
    except BaseException:
        writer.abort()
        raise
    return writer.close()


def _iter_chunks(path: Path, exact_ints: bool = False) -> Iterator[list[dict[str, Any]]]:
    with open(path, "rb") as fh:
        first = fh.readline()
        if first.strip() != b"[":
            yield _whole(first + fh.read(), path, exact_ints)
            return
        started = False
        for line in fh:
            text = line.strip()
            if not text:
                continue
            if text == b"]":
                return
            if text.endswith(b","):
                text = text[:-1]
            try:
                chunk = _loads(b"[" + text + b"]", exact_ints)
            except ValueError:
                if started:
                    raise ValueError(f"Table file {path.name} is not valid JSON.") from None
                fh.seek(0)
                yield _whole(fh.read(), path, exact_ints)  # some other JSON layout: read it whole
                return
            started = True
            yield chunk
        raise ValueError(f"Table file {path.name} ends before the closing bracket.")


def _loads(data: bytes, exact_ints: bool) -> Any:
    # orjson reads ints beyond 64 bits as floats; exact_ints keeps them exact (stdlib parser, slower).
    if exact_ints and _LONG_NUMBER.search(data):
        return json.loads(data)
    return orjson.loads(data)


def _whole(data: bytes, path: Path, exact_ints: bool) -> list[dict[str, Any]]:
    try:
        rows = _loads(data, exact_ints)
    except ValueError as exc:
        raise ValueError(f"Table file {path.name} is not valid JSON.") from exc
    if not isinstance(rows, list):
        raise ValueError(f"Table file {path.name} does not hold a JSON array.")
    return rows


def iter_table_uri(uri: str, *, exact_ints: bool = False) -> Iterator[dict[str, Any]]:
    """Stream the rows of a ``file://`` table_uri (chunk by chunk for files written here).

    Integers beyond 64 bits are read as floats (orjson, like most JSON readers) unless
    ``exact_ints=True``, which parses chunks holding 19+ digit runs with the stdlib instead.
    """
    path = uri_path(uri)
    for chunk in _iter_chunks(path, exact_ints):
        yield from chunk


def read_table_uri(uri: str, *, delete: bool = False, exact_ints: bool = False) -> list[dict[str, Any]]:
    """All rows of a ``file://`` table_uri (host side, 8.5); ``delete=True`` removes the file after."""
    path = uri_path(uri)
    rows = [row for chunk in _iter_chunks(path, exact_ints) for row in chunk]
    if delete:
        path.unlink(missing_ok=True)
    return rows
