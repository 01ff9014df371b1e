"""A dataset the bridge saves from an extraction is loaded for acp_query once its CSV is written (bench case 5).

The first acp_query over a fresh dataset used to read the CSV back and insert every row into
SQLite (seconds for 1M rows). When an extraction arrives as a table file (8.5), a worker process
(``python -m analytics_acp_bridge.query.tableload``) reads the same file, handed over as an open file
descriptor (opened before the bridge deletes the file), and builds the typed SQLite table; it
writes the table to a temporary SQLite file that the bridge copies page by page into the cache
entry of the CSV's identity (query/cache.py), exactly as if the first query had loaded the CSV.
A process, not a thread: SQLite releases the GIL around every inserted row, so a loader thread
would stall the bridge (measured: a CSV writer beside it 2.7x slower).

The worker starts when the CSV is in place, not before (issue 19.2): the bridge writes the CSV
while the server is still writing the table file (early.py), so during the extraction both cores
are taken by it, and a worker beside them made the extraction itself slower (case 2: 10.2x
`sqlite3 -csv` with the worker, 6.7x without). A model's first query usually comes seconds after
the answer; one sent at once waits for the worker (still faster than loading the CSV). Normal priority
(measured on a machine loaded by other jobs: at nice 10 the first query waited longer than a CSV load).

The table is the one loading the CSV gives (tableload.py). Bounded: the worker stops when the table outgrows the cache budget (the dataset then keeps
today's path). Inline tables, one-time HTTP URLs, query results, hand-dropped CSVs and copies
keep today's path (loaded on first query).
"""

from __future__ import annotations

import contextlib
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

# --- the bridge side ------------------------------------------------------------------------------
ENV_PRELOAD = "ACP_BRIDGE_PRELOAD"  # "0": no worker; the first query loads the CSV as before


class Preload:
    """One worker loading a dataset; ``complete``/``abort`` come from the CSV writer (store/datasets.py)."""

    def __init__(self, cache: TableCache, dataset_id: str, headers: list[dict[str, Any]], source: Path):
        self.cache = cache
        self.table = dataset_id
        self.done = threading.Event()
        self._key: tuple[Any, ...] | None = None
        self._out = ""
        self._proc: subprocess.Popen[bytes] | None = None
        # Opened now: the bridge deletes the table file once its CSV is written (8.5).
        self._fd: int | None = os.open(source, os.O_RDONLY)
        self._spec = {"table": dataset_id, "names": [str(h["name"]) for h in headers],
                      "kinds": [h.get("type") or "string" for h in headers], "budget": cache.budget}

    def complete(self, dataset: Any) -> None:
        """The CSV is in place: the worker starts now; its table becomes the cache entry of the CSV's identity.

        Not earlier: while the CSV is written (early.py: while the server still writes the table)
        both cores are busy with the extraction, and the worker would slow it down (issue 19.2).
        """
        self._key = identity(dataset)
        try:
            if self._key is None:
                raise OSError("no identity")
            self.cache.expect(self._key, self)
            out_fd, self._out = tempfile.mkstemp(prefix=f"acp-preload-{os.getpid()}-", suffix=".sqlite")
            os.close(out_fd)
            spec = {**self._spec, "out": self._out, "fd": self._fd}
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "analytics_acp_bridge.query.tableload"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=(self._fd,),  # type: ignore[arg-type]
            )
        except OSError:
            self._close_fd()
            self._finish()
            return
        self._close_fd()
        threading.Thread(target=self._run, args=(orjson.dumps(spec),), daemon=True, name=f"preload-{self.table}").start()

    def abort(self) -> None:
        """Nothing was stored (no rows, an error): no worker."""
        self._close_fd()
        self.done.set()

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def wait(self) -> None:
        """Until the worker's table is in the cache or given up (a query over this dataset waits)."""
        self.done.wait()

    def _run(self, spec: bytes) -> None:
        assert self._proc is not None and self._key is not None
        try:
            self._proc.communicate(spec)  # blocks in the OS: the GIL is free meanwhile
            if self._proc.returncode != 0:
                return
            source = sqlite3.connect(f"file:{self._out}?mode=ro", uri=True)
            try:
                uri = memdb_uri()
                keeper = sqlite3.connect(uri, uri=True, check_same_thread=False)
                source.backup(keeper)  # page by page into a shared memdb database the queries ATTACH
            finally:
                source.close()
            self.cache.adopt(self._key, uri, keeper, self.table, self)
        except (OSError, sqlite3.Error):
            pass  # the first query loads the CSV as before
        finally:
            self._finish()

    def _finish(self) -> None:
        if self._out:
            with contextlib.suppress(OSError):
                os.unlink(self._out)
        if self._key is not None:
            self.cache.forget(self._key, self)
        self.done.set()


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
