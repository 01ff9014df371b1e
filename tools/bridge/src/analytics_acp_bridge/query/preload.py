"""A dataset the bridge saves from an extraction is loaded for acp_query once its CSV is written (bench case 5).

The first acp_query over a fresh dataset used to read the CSV back and insert every row into
SQLite (seconds for 1M rows). When an extraction arrives as a table file (8.5), worker processes
(``python -m analytics_acp_bridge.query.loadworker``) read the same file, handed over as an open file
descriptor (opened before the bridge deletes the file), and build the typed SQLite table; each
writes its part to a temporary SQLite file, and the bridge copies the first page by page into the
cache entry of the CSV's identity (query/cache.py) and appends the other's rows (INSERT ... SELECT,
rowid order kept), exactly as if the first query had loaded the CSV. Processes, not threads: SQLite
releases the GIL around every inserted row, so a loader thread would stall the bridge (measured: a
CSV writer beside it 2.7x slower). A table file of SPLIT_BYTES or more is split at a line boundary
between two workers: once the extraction has answered, the bridge and the connector leave both
cores idle, and a model's turn (a few seconds, bench case 5 "3 s after") is the time there is.

Then, for a large table, covering indexes of the GROUP BY keys a model most likely asks first
(``ahead_indexes``), so that first question reads rows in order instead of sorting them. Queries over
the dataset wait for the table and the first of them (``done``); the others are built after it, while
no query uses the table, and a query that comes first stops them (indexbuild.IdleBuild): a
question asked early waits for one index build, not for all of them.

The workers start when the CSV is in place, not before (issue 19.2): the bridge writes the CSV
while the server is still writing the table file (early.py), so during the extraction both cores
are taken by it, and a worker beside them made the extraction itself slower (case 2: 10.2x
`sqlite3 -csv` with the worker, 6.7x without). A model's first query usually comes seconds after
the answer; one sent at once waits for the workers (still faster than loading the CSV). Normal priority
(measured on a machine loaded by other jobs: at nice 10 the first query waited longer than a CSV load).

The table is the one loading the CSV gives (tableload.py). Bounded: a worker stops when its part outgrows the cache budget (the dataset then keeps
today's path). Inline tables, one-time HTTP URLs, query results, hand-dropped CSVs and copies
keep today's path (loaded on first query).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import orjson

from .cache import TableCache, identity, memdb_uri
from .groupshape import MAX_COLUMNS
from .indexbuild import IdleBuild, create_index
from .loadworker import LAYOUT, MAX_LINE
from .tableload import load_sql, quote

log = logging.getLogger("analytics_acp_bridge")
ENV_PRELOAD = "ACP_BRIDGE_PRELOAD"  # "0": no worker; the first query loads the CSV as before
SPLIT_BYTES = 8 * 1024 * 1024  # a table file this big is loaded by two workers, a half each
INDEX_MIN_ROWS = 100_000  # below this a GROUP BY sorts in tens of milliseconds: no index ahead of time
DISTINCT_CAP = 10_000  # a column with more distinct values is not a likely GROUP BY key
WORK_BOUND_S = 600.0  # every wait is bounded: workers still loading after this are killed (the CSV path takes over)
GROUPABLE = ("string", "date")  # a category and a date: the keys an analysis groups by first, one index each


class Preload:
    """Workers loading a dataset; ``complete``/``abort`` come from the CSV writer (store/datasets.py)."""

    def __init__(self, cache: TableCache, dataset_id: str, headers: list[dict[str, Any]], source: Path):
        self.cache = cache
        self.table = dataset_id
        self.done = threading.Event()
        self._key: tuple[Any, ...] | None = None
        self._outs: list[str] = []
        self._procs: list[subprocess.Popen[bytes]] = []
        self.rows = 0
        self.indexes: list[str] = []  # the indexes built ahead of the first query (the tests read them)
        self.later: IdleBuild | None = None  # the other indexes, built once the first query may run
        # Opened now: the bridge deletes the table file once its CSV is written (8.5).
        self._fd: int | None = os.open(source, os.O_RDONLY)
        names = [str(h["name"]) for h in headers]
        kinds = [h.get("type") or "string" for h in headers]
        self.names, self.kinds = names, kinds
        self._spec = {**load_sql(dataset_id, names, kinds), "names": names, "kinds": kinds, "budget": cache.budget,
                      "track": [i for i, k in enumerate(kinds) if k in GROUPABLE], "distinct_cap": DISTINCT_CAP}

    @property
    def _proc(self) -> subprocess.Popen[bytes] | None:
        """The first worker (None before the CSV is in place)."""
        return self._procs[0] if self._procs else None

    def complete(self, dataset: Any) -> None:
        """The CSV is in place: the workers start now; their table becomes the cache entry of the CSV's identity.

        Not earlier: while the CSV is written (early.py: while the server still writes the table)
        both cores are busy with the extraction, and the workers would slow it down (issue 19.2).
        """
        self._key = identity(dataset)
        self.rows = int(getattr(dataset, "row_count", 0) or 0)
        try:
            if self._key is None or self._fd is None:
                raise OSError("no identity")
            self.cache.expect(self._key, self)
            specs = [self._start(start, end) for start, end in _parts(self._fd)]
        except OSError:
            self._finish()
            return
        threading.Thread(target=self._run, args=(specs,), daemon=True, name=f"preload-{self.table}").start()

    def _start(self, start: int, end: int | None) -> bytes:
        """Spawn one worker for the lines starting in [start, end); returns its spec."""
        out_fd, out = tempfile.mkstemp(prefix=f"acp-preload-{os.getpid()}-", suffix=".sqlite")
        os.close(out_fd)
        self._outs.append(out)
        self._procs.append(subprocess.Popen(
            [sys.executable, "-m", "analytics_acp_bridge.query.loadworker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(self._fd,),  # type: ignore[arg-type]
        ))
        return orjson.dumps({**self._spec, "out": out, "fd": self._fd, "start": start, "end": end})

    def abort(self) -> None:
        """Nothing was stored (no rows, an error): no worker."""
        self._close_fd()
        self.done.set()

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def wait(self) -> None:
        """Until the workers' table (and its indexes) is in the cache or given up (a query over this dataset waits);
        bounded: past the workers' own bound the query loads the CSV itself."""
        self.done.wait(WORK_BOUND_S + 60)

    def _run(self, specs: list[bytes]) -> None:
        assert self._key is not None
        try:
            answers, outs = self._work(specs), self._outs
            if answers is None and len(specs) > 1 and any(p.returncode == LAYOUT for p in self._procs):
                answers = self._work([self._start(0, None)])  # not a chunk per line: one worker reads it whole
                outs = self._outs[-1:]
            if answers is None:
                return  # over the budget, or an error: the first query loads the CSV
            self.cache.drop_deleted()  # a deleted dataset's table is not held beside the new one (peak memory)
            uri = memdb_uri()
            keeper = sqlite3.connect(uri, uri=True, check_same_thread=False)
            try:
                self._assemble(keeper, outs)
                distinct = [orjson.loads(answer)["distinct"] for answer in answers]
                plan = ahead_indexes(self.names, self.kinds, self.rows, distinct)
                if plan and create_index(keeper, self.table, *plan[0], self.cache.budget):
                    self.indexes = [plan[0][0]]
                else:
                    plan = []  # the first did not fit: the others would not either
            except BaseException:
                keeper.close()
                raise
            self.later = self.cache.adopt(self._key, uri, keeper, self.table, self, later=plan[1:])
        except (OSError, sqlite3.Error, ValueError, KeyError, subprocess.TimeoutExpired) as exc:
            log.debug("preload of %s given up (%s): the first query loads the CSV", self.table, type(exc).__name__)
        finally:
            self._finish()

    def _work(self, specs: list[bytes]) -> list[bytes] | None:
        """Hand the started workers (the last ``len(specs)``) their specs; their answers, or None if one failed."""
        procs = self._procs[-len(specs):]
        for proc, spec in zip(procs, specs, strict=True):  # every worker gets its spec before any is awaited
            assert proc.stdin is not None
            proc.stdin.write(spec)
            proc.stdin.close()
        # A stuck worker is killed at the bound: its stdout closes, the reads below end, its code is not 0.
        def kill_stuck() -> None:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()

        timer = threading.Timer(WORK_BOUND_S, kill_stuck)
        timer.daemon = True
        timer.start()
        try:
            answers = [proc.stdout.read() if proc.stdout else b"" for proc in procs]  # blocks in the OS: the GIL is free
            codes = [proc.wait(WORK_BOUND_S) for proc in procs]
        finally:
            timer.cancel()
        return answers if all(code == 0 for code in codes) else None

    def _assemble(self, keeper: sqlite3.Connection, outs: list[str]) -> None:
        """The first worker's database page by page into the memdb database, then the other halves' rows after it."""
        source = sqlite3.connect(f"file:{outs[0]}?mode=ro", uri=True)
        try:
            source.backup(keeper)  # page by page into a shared memdb database the queries ATTACH
        finally:
            source.close()
        keeper.execute("PRAGMA journal_mode=OFF")  # a private table nobody reads yet: nothing to roll back to
        table = quote(self.table)
        for out in outs[1:]:
            keeper.execute("ATTACH DATABASE ? AS part", (f"file:{out}?mode=ro&vfs=unix",))  # memdb's VFS is inherited otherwise
            try:
                keeper.execute(f"INSERT INTO main.{table} SELECT * FROM part.{table}")  # C-level copy, in rowid order
                keeper.commit()
            finally:
                keeper.execute("DETACH DATABASE part")

    def _finish(self) -> None:
        self._close_fd()
        for out in self._outs:
            with contextlib.suppress(OSError):
                os.unlink(out)
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if self._key is not None:
            self.cache.forget(self._key, self)
        self.done.set()


def _parts(fd: int) -> list[tuple[int, int | None]]:
    """Byte ranges for the workers: the whole file, or two halves split at the start of a line of rows."""
    size = os.fstat(fd).st_size
    if size < SPLIT_BYTES or not sys.platform.startswith("linux"):
        # Linux only: there opening /dev/fd/N gives each worker its own file offset; elsewhere (macOS)
        # it is a dup of the inherited descriptor, and two workers would move one shared offset.
        return [(0, None)]
    with open(f"/dev/fd/{fd}", "rb") as handle:  # its own offset: the workers open theirs
        handle.seek(size // 2)
        rest = handle.readline(MAX_LINE)
        boundary = size // 2 + len(rest)
        if not rest.endswith(b"\n") or handle.readline(64).strip() in (b"]", b""):
            return [(0, None)]  # no line ends in reach, or the middle is the last line: one worker
    return [(0, boundary), (boundary, None)]


def ahead_indexes(names: list[str], kinds: list[str], rows: int,
                  distinct: list[dict[str, list[Any] | None]]) -> list[tuple[str, list[str]]]:
    """Covering indexes (name, columns) for the GROUP BY keys a model most likely asks first, likeliest first.

    A GROUP BY over a million rows sorts them (about 0.3 s of SQLite, three times DuckDB's hash
    aggregation, bench case 5); over a covering index that starts with the key it reads them in
    order (about 0.1 s). The keys: the text column and the date column with the fewest distinct
    values (a category and a day: what an analysis groups by first), each with at most one value per
    20 rows and at most DISTINCT_CAP, in tables of INDEX_MIN_ROWS rows or more. Each index holds the
    key, then the table's other columns in order, leaving out text columns with many distinct values
    (free text, ids: rarely aggregated, and the bulk of the bytes), at most groupshape.MAX_COLUMNS.
    The preload builds the first before any query sees the table and the others while none uses it.
    """
    if rows < INDEX_MIN_ROWS:
        return []
    counts: dict[str, int | None] = {}
    for name in (n for n, k in zip(names, kinds, strict=True) if k in GROUPABLE):
        values: set[Any] = set()
        for part in distinct:
            seen = part.get(name)
            if seen is None:
                counts[name] = None
                break
            values.update(seen)
        else:
            counts[name] = len(values)
    limit = min(DISTINCT_CAP, rows // 20)
    keys = []
    for kind in GROUPABLE:
        fit = [n for n, c in counts.items() if kinds[names.index(n)] == kind and c is not None and 1 < c <= limit]
        if fit:
            keys.append(min(fit, key=lambda n: (counts[n], names.index(n))))
    wide = {n for n, c in counts.items() if c is None and kinds[names.index(n)] == "string"}
    return [(f"acp_ahead_{i}", [key] + [n for n in names if n != key and n not in wide][: MAX_COLUMNS - 1])
            for i, key in enumerate(keys, start=1)]


def start(cache: TableCache, dataset_id: str, headers: list[dict[str, Any]], source: Path) -> Preload | None:
    """A worker loading ``source`` (a table file) for a dataset about to be written; None if not applicable."""
    if cache.budget <= 0 or not headers or sys.platform == "win32":  # win32: no fd passing by number
        return None
    if os.environ.get(ENV_PRELOAD, "1").strip() == "0":  # a busy small machine may want its core back
        return None
    try:
        return Preload(cache, dataset_id, headers, source)
    except OSError:
        return None
