"""The CSV of a big extraction, written while the server is still writing its table file (issue 19.2).

A server spills a big table to ``<ACP_TMP_DIR>/<prefix>-<uuid>.json`` (8.5), written under a
hidden ``.partial`` name and renamed into place once complete (analytics_acp.tablefile); the
bridge only learns the name from the answer. Reading the file after the answer runs the two
halves one after the other (the server's fetch and encoding, then the bridge's parsing and
CSV), each on its own core. So while a call is in flight the bridge watches the server's own
tmp dir (it gave the server that folder) and converts the rows of the ``.partial`` file to CSV
as they arrive, line by line (one orjson call per line: tablefile's layout).

Nothing of the protocol changes: the answer still decides. The early CSV is used only when the
answer's ``table_uri`` is the very file read (same device and inode: ``os.replace`` keeps the
inode, a rewritten file (8.6 second pass) or another call's file has another one), every byte
up to the closing ``]`` was read in the core's layout, and the CSV header is the answer's
column names; the CSV is then byte for byte what reading the finished file gives
(csvwrite.py does not depend on batch boundaries). Anything else (another layout, a line that
does not parse, rows that are not objects, a deleted draft) drops the early CSV and the answer
takes the usual path. Not on Windows: an open reader there would make the server's rename fail.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from operator import countOf
from pathlib import Path
from typing import Any

from analytics_acp.tablefile import MAX_LINE, _parse

from ..store.csvwrite import RowWriter
from ..store.datasets import ClaimedCsv

POLL_S = 0.01  # how often a caught-up reader looks for more bytes (or a new file)
START_AFTER_S = 0.05  # calls that answer sooner never start a reader (per-call cost stays nil)
READ_BYTES = 1 << 20
WRITE_BUFFER = 1 << 20
_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() removes
_COMMA = ord(",")


def supported() -> bool:
    """Early CSVs need POSIX rename semantics (a reader does not block the server's rename)."""
    return sys.platform != "win32"


class EarlyCsv:
    """One reader thread for one in-flight call: ``start()``, then ``claim()`` or ``cancel()``."""

    def __init__(self, folder: Path, csv_dir: Path, writing: Callable[[str], AbstractContextManager[Any]]):
        # ``writing``: the store's ``writing()``, held for the early CSV (a stop by signal removes it)
        self.folder, self.csv_dir, self.writing = folder, csv_dir, writing
        self._stop = threading.Event()  # cancel(): give up, remove the early CSV
        self._final = threading.Event()  # claim(): the answer arrived, the file is complete if it is ours
        self._wanted: tuple[tuple[int, int], list[str]] | None = None
        self._result: ClaimedCsv | None = None
        self._tried: set[str] = set()
        self._thread = threading.Thread(target=self._run, daemon=True, name="early-csv")
        self._started = False

    # --- the call's side --------------------------------------------------------------------------
    def start(self) -> None:
        """Start watching the folder (called once the call has been in flight a little while)."""
        if not self._started and not self._stop.is_set() and not self._final.is_set():
            self._started = True
            self._thread.start()

    def cancel(self) -> None:
        """The answer needs no early CSV (inline table, error, not claimed): stop and clean up."""
        self._stop.set()

    def claim(self, path: Path, names: list[str]) -> ClaimedCsv | None:
        """The early CSV of the finished table file ``path`` with header ``names``.

        None when it is not that file, or the CSV could not be proven identical (the caller writes
        the CSV the usual way). A claimed temp CSV belongs to the caller, with its ``writing()``
        registration (``held``: exit it once the CSV is renamed or removed).
        """
        if self._final.is_set():
            return None  # one claim per call: the thread has ended
        try:
            info = os.stat(path)
        except OSError:
            info = None
        if info is not None:
            self._wanted = ((info.st_dev, info.st_ino), list(names))
        if not self._started or info is None:
            self._stop.set()
            return None
        self._final.set()
        self._thread.join()
        return self._result

    # --- the reader thread ------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            candidate = self._next_file()
            if candidate is None:
                if self._final.is_set():
                    return  # the answer came and no file was being read
                self._stop.wait(POLL_S)
                continue
            try:
                fd = os.open(candidate, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block us
            except OSError:
                continue
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode) and _Tail(self, fd).run():
                    return
            finally:
                os.close(fd)

    def _next_file(self) -> Path | None:
        try:
            names = os.listdir(self.folder)
        except OSError:
            return None
        for name in sorted(names):
            if name.startswith(".") and name.endswith(".partial") and name not in self._tried:
                self._tried.add(name)
                return self.folder / name
        return None


class _Tail:
    """Reads one growing file in tablefile's layout and writes its rows as CSV."""

    def __init__(self, owner: EarlyCsv, fd: int):
        self.owner, self.fd = owner, fd
        self.ident = (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
        self.pending = b""
        self.state = "start"  # start -> rows -> closed ("]" read)
        self.more: bool | None = None  # as in tablefile._line_chunks
        self.csv_path: str | None = None
        self.out: RowWriter | None = None
        self.handle: Any = None
        self.held = contextlib.ExitStack()  # the store's writing() of the CSV, until dropped or handed over

    def run(self) -> bool:
        """True when the thread is done (claimed, stopped or failed for good); False: try another file."""
        owner = self.owner
        try:
            while not owner._stop.is_set():
                data = os.read(self.fd, READ_BYTES)
                if data:
                    if not self._feed(data):
                        return False  # not this layout: maybe another file is
                    continue
                if owner._final.is_set():
                    return self._finish()
                if os.fstat(self.fd).st_nlink == 0:
                    return False  # a draft that was deleted (or rewritten): look for the next file
                owner._stop.wait(POLL_S)
            return True
        except (OSError, ValueError, TypeError, AttributeError):
            return True
        finally:
            if owner._result is None:
                self._drop()

    def _feed(self, data: bytes) -> bool:
        # Lines are read in place (memoryview slices of ``data``): one copy per line, into the JSON
        # array that is parsed; only the line split across two reads is joined first (issue 39).
        start = 0
        if self.pending:
            first = data.find(b"\n") + 1
            if not first:
                self.pending += data
                return len(self.pending) < MAX_LINE  # tablefile hands such lines to ijson
            line, self.pending = self.pending + data[:first], b""
            if len(line) >= MAX_LINE or not self._line(line):
                return False
            start = first
        end = max(data.rfind(b"\n", start) + 1, start)
        self.pending = data[end:]
        if len(self.pending) >= MAX_LINE:
            return False
        view = memoryview(data)
        while start < end:
            stop = data.index(b"\n", start, end) + 1
            if stop - start >= MAX_LINE or not self._line(view[start:stop]):
                return False
            start = stop
        return True

    def _line(self, line: bytes | memoryview) -> bool:
        view = memoryview(line)
        a, b = 0, len(view)
        while a < b and view[a] in _SPACE:  # bytes.strip() without copying the line
            a += 1
        while b > a and view[b - 1] in _SPACE:
            b -= 1
        text = view[a:b]
        if self.state == "start":
            self.state = "rows"
            return text == b"["
        if not text:
            return True
        if self.state == "closed" or text == b"]":
            if self.state == "closed" or self.more is True:
                return False  # more after the array, or a trailing comma
            self.state = "closed"
            return True
        if self.more is False:
            return False  # no comma between the lines: not this layout
        self.more = text[-1] == _COMMA
        chunk = _parse(b"".join((b"[", text[:-1] if self.more else text, b"]")))
        if not chunk or countOf(map(type, chunk), dict) != len(chunk):
            return False
        if self.out is None:
            self._open(list(chunk[0]))
        self.out.write(chunk)  # type: ignore[union-attr]
        return True

    def _open(self, names: list[str]) -> None:
        os.makedirs(self.owner.csv_dir, exist_ok=True)
        fd, self.csv_path = tempfile.mkstemp(dir=self.owner.csv_dir, prefix=".early-", suffix=".csv.tmp")
        self.held.enter_context(self.owner.writing(self.csv_path))  # a stop by signal removes it (store/datasets.py)
        self.handle = os.fdopen(fd, "w", encoding="utf-8", newline="", buffering=WRITE_BUFFER)
        self.out = RowWriter(self.handle, names)

    def _finish(self) -> bool:
        owner = self.owner
        wanted = owner._wanted
        if self.pending.strip() and not self._line(self.pending):
            return True  # the last line had no newline: read it as tablefile does
        if (
            wanted is None or wanted[0] != self.ident or self.state != "closed"
            or self.out is None or self.out.names != wanted[1]
        ):
            return True
        self.handle.close()
        self.handle = None
        owner._result = ClaimedCsv(str(self.csv_path), self.out.count, self.held.pop_all())
        return True

    def _drop(self) -> None:
        if self.handle is not None:
            with contextlib.suppress(OSError):
                self.handle.close()
        if self.csv_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.csv_path)
        self.held.close()
