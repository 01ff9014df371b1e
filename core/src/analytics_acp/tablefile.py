"""Table files behind ``system_data.table_uri`` (8.5): the one module that writes, reads and names them.

Servers (results/), hosts (host/, ``runtime.load_host_table``) and the bridge all use it.

A table that does not fit ``inline_max_bytes`` goes to ``<prefix>-<uuid>.json`` in the
results directory (``BuildSettings.tmp_dir``, else ``dirs.tmp_dir()``: ``ACP_TMP_DIR`` or the
process's private 0700 temp dir, removed when the process ends). The file is written under a hidden
``.partial`` name (mode 0600) and ``os.replace``'d into place, so a reader never sees half a file.

Layout: one valid JSON array holding exactly the objects ``table`` would hold, with a chunk
of rows per line::

    [
    {"a":1},{"a":2},...,{"a":2048},
    {"a":2049},...
    ]

orjson never writes a raw newline inside a value, so every line between ``[`` and ``]`` is a
comma-separated run of complete objects: one orjson call per line. A host must also read any
other valid JSON array (a third-party server may write one line, or pretty-print), so the first
line that does not fit hands over to ijson, which re-reads the file from the start and skips the
rows already given (those lines were complete values, so the rows are the same). Integers beyond
64 bits are valid JSON; orjson would read them as floats, so a chunk holding a run of 19+ digits
is parsed by the stdlib instead and they stay exact.

``file_uri`` / ``uri_path`` convert between paths and ``file://`` URIs (percent-encoding, Windows
drive letters and UNC shares).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator
from itertools import islice
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any, BinaryIO
from urllib.parse import unquote, urlparse

import orjson

from . import dirs

CHUNK_ROWS = 2048
MAX_LINE = 16 * 1024 * 1024  # longer lines go to ijson, so memory stays bounded
# A run of 19+ digits may exceed 64 bits; translate+find is a fast C-level scan for one.
_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_LONG_RUN = b"0" * 19
_DRIVE = re.compile(r"^/[A-Za-z]:")
_SAFE_PREFIX = re.compile(r"[^A-Za-z0-9_.-]+")


def dumps(value: Any) -> bytes:
    """orjson bytes; ints beyond 64 bits (valid JSON) fall back to the stdlib encoder."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _stdlib_dumps(value)


def _stdlib_dumps(value: Any) -> bytes:
    # NaN/Infinity become null as orjson writes them: the stdlib would write literals that are not JSON.
    return json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), default=str,
                      allow_nan=False).encode("utf-8")


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def results_dir(tmp_dir: Path | str | None = None) -> Path:
    """Directory for table files: the given one, else ACP_TMP_DIR or the process's private temp dir (dirs.py)."""
    if not tmp_dir:
        return dirs.tmp_dir()
    path = Path(tmp_dir)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def file_uri(path: Path | str) -> str:
    """``file://`` URI of a local path (absolute, percent-encoded)."""
    return Path(path).resolve().as_uri()


def uri_to_path(uri: str, *, windows: bool = os.name == "nt") -> PurePath:
    """The path a ``file://`` URI names, percent-decoded once, as a Windows or a POSIX path.

    ``file:///C:/a%20b/t.json`` is ``C:\\a b\\t.json`` and ``file://server/share/t.json`` is
    ``\\\\server\\share\\t.json`` on Windows; ``file://localhost/tmp/t.json`` is ``/tmp/t.json``.
    """
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ValueError(f"Not a file:// table_uri: {uri!r}.")
    path = unquote(parsed.path)
    host = parsed.netloc if parsed.netloc.lower() != "localhost" else ""
    if not windows:
        return PurePosixPath(path)
    if host:
        return PureWindowsPath(f"//{host}{path}")
    return PureWindowsPath(path[1:] if _DRIVE.match(path) else path)


def uri_path(uri: str) -> Path:
    """Local path of a ``file://`` URI on this machine (Windows drive letters included)."""
    return Path(uri_to_path(uri))


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

    def write(self, rows: list[dict[str, Any]]) -> None:
        """Append rows (serialized in chunks, one chunk per line)."""
        write = self._file.write
        for start in range(0, len(rows), CHUNK_ROWS):
            part = rows[start : start + CHUNK_ROWS] if start or len(rows) > CHUNK_ROWS else rows
            try:
                blob = orjson.dumps(part)
            except TypeError:
                blob = _stdlib_dumps(part)  # ints beyond 64 bits
            if len(blob) <= 2:
                continue
            write(b",\n" if self.rows else b"\n")
            write(memoryview(blob)[1:-1])
            self.rows += min(CHUNK_ROWS, len(rows) - start)

    def write_all(self, rows: Iterable[dict[str, Any]]) -> Path:
        """Write already-final rows in chunks and publish the file (``self.rows`` counts them)."""
        try:
            batch: list[dict[str, Any]] = []
            for row in rows:
                batch.append(row)
                if len(batch) >= CHUNK_ROWS:
                    self.write(batch)
                    batch = []
            self.write(batch)
        except BaseException:
            self.abort()
            raise
        return self.close()

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
            for chunk in iter_file_chunks(draft):
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
    return TableFileWriter(directory, prefix).write_all(rows)


def iter_file_chunks(path: Path) -> Iterator[list[Any]]:
    """The items of the JSON array in ``path``, in lists: one per line of this module's layout.

    Any other layout is streamed by ijson; invalid JSON raises ``ijson.JSONError``.
    """
    with path.open("rb") as handle:
        given = yield from _line_chunks(handle)
        if given is None:
            return
        import ijson  # only for files another writer laid out differently

        handle.seek(0)
        items = islice(ijson.items(handle, "item", use_float=True), given, None)
        while chunk := list(islice(items, CHUNK_ROWS)):
            yield chunk


def _line_chunks(handle: BinaryIO) -> Generator[list[Any], None, int | None]:
    """Chunks of a file in this module's layout; returns None when done, else the rows given so far."""
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
        yield chunk
        given += len(chunk)
    return given  # no closing bracket: ijson reports the truncated file


def _parse(data: bytes) -> list[Any] | None:
    try:
        if data.translate(_DIGITS).find(_LONG_RUN) >= 0:
            rows: list[Any] = json.loads(data, parse_constant=_no_constant)  # exact ints beyond 64 bits
        else:
            rows = orjson.loads(data)
        return rows
    except ValueError:
        return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # the stdlib accepts NaN/Infinity, JSON does not


def iter_file_rows(path: Path) -> Iterator[Any]:
    """Every item of the JSON array in ``path``, streamed (fast for this module's layout)."""
    for chunk in iter_file_chunks(path):
        yield from chunk


def iter_table_uri(uri: str) -> Iterator[dict[str, Any]]:
    """Stream the rows of a ``file://`` table_uri."""
    return iter_file_rows(uri_path(uri))


def read_table_uri(uri: str, *, delete: bool = False) -> list[dict[str, Any]]:
    """All rows of a ``file://`` table_uri (host side, 8.5); ``delete=True`` removes the file after."""
    path = uri_path(uri)
    rows = list(iter_file_rows(path))
    if delete:
        path.unlink(missing_ok=True)
    return rows
