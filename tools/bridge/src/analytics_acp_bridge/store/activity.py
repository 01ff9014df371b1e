"""The activity record (issue 37.1): one JSON line per call the bridge ran, in ``acp-data/activity.jsonl``.

Every forwarded ``<source>__<tool>`` call and every call of the bridge's own tools (``acp_query``...) is
appended as it ends: time, how it came (``via``: an MCP client or the set-up page), source, tool, the
arguments, outcome, rows, the datasets it saved, the cost estimate the ACP gave, the duration and the
typed error (12.1). A person reads it on the page (Activity) or with any text tool.

- **No secret.** The whole entry goes through the run's log scrubber (``Secrets.log_redactor``): the
  values read through references, writeOnly literals and every literal credential value of
  sources.json are masked wherever they appear (an argument, an error message).
- **Bounded.** When ``activity.jsonl`` would pass ``ACP_BRIDGE_ACTIVITY_MB`` (default 2), it becomes
  ``activity.1.jsonl`` (the previous ``.1`` becomes ``.2``; ``.2`` goes): at most three files. A long
  string in the arguments is cut at ``ARG_CHARS`` (the entry says so: it cannot be run again as is).
- **Off the call's path, whole lines.** ``add`` scrubs and serialises, then hands the line to one writer
  thread: the call never waits for the disk (no fsync: a record, not a journal). The thread appends under
  an ``flock`` of the acp-data folder (a page and a bridge on the same project share the file), with one
  ``write`` per batch of whole lines on an ``O_APPEND`` descriptor; a line cut by a crash is ended with a
  newline before the next one, and readers skip any line that does not parse.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import os
import queue
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from analytics_acp.envelope import cut_long_strings

from ..sources.redact import Redactor

log = logging.getLogger("analytics_acp_bridge")
LOCK_WAIT_S = 10.0  # another writer (the page, a second bridge) holds the folder lock for one batch at most

FILE = "activity.jsonl"
KEEP = 2  # rotated files kept: activity.1.jsonl, activity.2.jsonl
ARG_CHARS = 20_000  # a longer string argument is cut in the record
FLUSH_BOUND_S = 5.0


def max_bytes() -> int:
    """The size past which the current file is rotated (``ACP_BRIDGE_ACTIVITY_MB``, default 2 MiB)."""
    try:
        mb = float(os.environ.get("ACP_BRIDGE_ACTIVITY_MB", "2"))
    except ValueError:
        mb = 2.0
    return max(4096, int(mb * 1024 * 1024))


def files(folder: Path) -> list[Path]:
    """The record's files, newest first (``activity.jsonl``, ``activity.1.jsonl``, ...)."""
    return [folder / FILE] + [folder / f"activity.{n}.jsonl" for n in range(1, KEEP + 1)]


def now_iso() -> str:
    """UTC time with milliseconds, as the record writes it."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ActivityLog:
    """Appends scrubbed entries to ``<folder>/activity.jsonl`` from a writer thread (started on first use)."""

    def __init__(self, folder: Path, redactor: Redactor, *, limit: int | None = None, keep: int = KEEP):
        self.folder = folder
        self.redactor = redactor
        self.limit = limit if limit is not None else max_bytes()
        self.keep = keep
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._pending = 0
        self._idle = threading.Condition()
        self._thread: threading.Thread | None = None
        self._fd: int | None = None

    def entry(self, **fields: Any) -> dict[str, Any]:
        """A new entry with its id and time (the caller fills the rest)."""
        return {"id": uuid.uuid4().hex[:16], "time": now_iso(), **fields}

    def add(self, entry: dict[str, Any]) -> None:
        """Record ``entry`` (scrubbed here, written by the thread); never raises, never blocks on the disk."""
        try:
            clean = self.redactor.value(entry)
            if isinstance(clean.get("arguments"), dict):
                cut = cut_long_strings(clean["arguments"], ARG_CHARS)
                if cut != clean["arguments"]:
                    clean["arguments"], clean["arguments_cut"] = cut, True
            line = json.dumps(clean, ensure_ascii=False, default=str, separators=(",", ":")).encode() + b"\n"
        except Exception:  # a record must never fail the call it records
            log.exception("activity entry not recorded")
            return
        with self._idle:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._write_loop, name="acp-activity", daemon=True)
                self._thread.start()
        self._queue.put(line)

    def flush(self, bound_s: float = FLUSH_BOUND_S) -> bool:
        """Wait (bounded) until every entry added so far is written; True when none is pending."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout=bound_s)

    def close(self) -> None:
        """Write what is pending (bounded) and stop the thread."""
        self.flush()
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(FLUSH_BOUND_S)
            self._thread = None
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    # ----- the writer thread -----
    def _write_loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch: list[bytes] = [first]
            with contextlib.suppress(queue.Empty):
                while len(batch) < 1000:
                    more = self._queue.get_nowait()
                    if more is None:
                        self._queue.put(None)  # stop after this batch
                        break
                    batch.append(more)
            try:
                self._append(batch)
            except OSError as exc:  # a full disk or a read-only project: the calls go on, the log says why
                log.warning("activity record not written (%s)", exc.strerror or type(exc).__name__)
            finally:
                with self._idle:
                    self._pending -= len(batch)
                    self._idle.notify_all()

    def _append(self, lines: list[bytes]) -> None:
        """Append whole lines under the lock: one write per run of lines that fits, rotating in between."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._locked():
            fd = self._current()
            size = os.fstat(fd).st_size
            run: list[bytes] = []
            for line in lines:
                if size and size + len(line) > self.limit:
                    _write_all(fd, b"".join(run))
                    run = []
                    self._rotate()
                    fd, size = self._current(), 0
                run.append(line)
                size += len(line)
            _write_all(fd, b"".join(run))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        # The folder itself is the lock (flock works on a directory): no lock file left beside the datasets.
        try:
            import fcntl
        except ImportError:  # Windows: one writer thread per process; O_APPEND keeps each batch's lines whole
            yield
            return
        lock = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            # Bounded (every wait is): another process holding the lock past LOCK_WAIT_S is stuck; this batch is
            # then appended without it (one O_APPEND write of whole lines), and the log says so.
            stop = threading.Event()
            for _ in range(int(LOCK_WAIT_S / 0.05)):
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    stop.wait(0.05)
            else:
                log.warning("activity: %s stayed locked for %g s; appending without the lock", self.folder, LOCK_WAIT_S)
            yield
        finally:
            os.close(lock)  # releases the flock

    def _current(self) -> int:
        """The open descriptor of activity.jsonl, reopened when another writer rotated it (another inode)."""
        path = self.folder / FILE
        if self._fd is not None:
            try:
                same = os.stat(path).st_ino == os.fstat(self._fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return self._fd
            os.close(self._fd)
            self._fd = None
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # arguments are the person's
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as reader:  # a line a crash cut short is ended before the next one
                reader.seek(size - 1)
                if reader.read(1) != b"\n":
                    os.write(fd, b"\n")
        self._fd = fd
        return fd

    def _rotate(self) -> None:
        names = [self.folder / FILE] + [self.folder / f"activity.{n}.jsonl" for n in range(1, self.keep + 1)]
        names[-1].unlink(missing_ok=True)
        for older, newer in zip(reversed(names[1:]), reversed(names[:-1]), strict=True):
            if newer.exists():
                os.replace(newer, older)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read(folder: Path, *, source: str | None = None, outcome: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
    """The record's entries, newest first, optionally only one source's or one outcome's (at most ``limit``).

    A line that does not parse (cut by a crash) is skipped."""
    out: list[dict[str, Any]] = []
    for path in files(folder):
        try:
            lines = path.read_bytes().splitlines()
        except OSError:
            continue
        for raw in reversed(lines):
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            if source is not None and (entry.get("source") or "") != source:
                continue
            if outcome is not None and entry.get("outcome") != outcome:
                continue
            out.append(entry)
            if len(out) >= limit:
                return out
    return out


def find(folder: Path, entry_id: str) -> dict[str, Any] | None:
    """The entry with that id, or None."""
    for entry in read(folder, limit=10**9):
        if entry.get("id") == entry_id:
            return entry
    return None
