"""The acp-data folder (16.6): datasets as ``<id>.csv`` + ``<id>.meta.json``, and its resolver.

Every write is atomic: the CSV is streamed to a hidden temp file, the meta is written, then the
meta and the CSV are renamed into place (the CSV last, so a visible CSV always has its meta).
Ids never overwrite an earlier dataset. ``acp/read_table`` refs are looked up in the listing,
never joined to a path, so nothing outside acp-data can be reached (8.8.1).
"""

from __future__ import annotations

import builtins
import contextlib
import csv
import datetime as _dt
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from analytics_acp.envelope import cut_long_strings
from analytics_acp.errors import TableNotFound
from analytics_acp.tablefile import TableFileWriter, file_uri

from . import csvtypes, csvwrite

DATA_DIR = "acp-data"
FILES_DIR = "files"
META_SUFFIX = ".meta.json"
META_FIELDS = (
    "id", "origin", "source", "acp", "tool", "resource_id", "arguments", "title",
    "description", "dates", "headers", "row_count", "created_at",
)
_NOT_ID = re.compile(r"[^a-z0-9_]+")
INFER_BATCH = 20000  # rows per type-inference batch of a hand-dropped CSV
WRITE_BUFFER = 1 << 20  # a few big writes instead of one per 8 KiB
SUMMARY_TEXT_CHARS = 1000  # acp_datasets: a longer title/description/sql is cut, its length noted
SUMMARY_COLUMNS = 100  # acp_datasets: columns listed per dataset
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # JSON cells can be long


def sql_safe_id(text: str) -> str:
    """Lowercase, ``[a-z0-9_]``, starting with a letter, not an SQL keyword: usable unquoted (16.6)."""
    out = _NOT_ID.sub("_", text.lower()).strip("_")
    out = re.sub(r"__+", "_", out) or "dataset"
    if not out[0].isalpha():
        out = f"t_{out}"
    from sqlglot.tokens import Tokenizer  # here, not at import: bridge --check/--print-config load no SQL parser

    if out.upper() in Tokenizer.KEYWORDS:
        out = f"{out}_csv"
    return out


def utc_now() -> _dt.datetime:
    """Now in UTC (one place, so ids and created_at agree)."""
    return _dt.datetime.now(_dt.UTC)


def iso_z(moment: _dt.datetime) -> str:
    """ISO 8601 UTC with milliseconds and Z, as in the 16.6 example."""
    return moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Preload(Protocol):
    """What write_dataset drives while it writes a CSV (preload.Preload)."""

    def complete(self, dataset: Dataset) -> None: ...
    def abort(self) -> None: ...


Preloader = Callable[[str, list[dict[str, Any]]], "Preload | None"]


@dataclass
class ClaimedCsv:
    """A temp CSV written by someone else (early.py), handed over with its ``writing()`` registration."""

    path: str
    rows: int
    held: contextlib.ExitStack  # the writer's store.writing(path), moved out with ExitStack.pop_all()


EarlyClaim = Callable[[list[str]], "ClaimedCsv | None"]  # early.EarlyCsv.claim for one table file


@dataclass
class Dataset:
    """One dataset of acp-data: its CSV and its metadata (stored, or inferred for a hand-dropped CSV)."""

    id: str
    path: Path
    meta: dict[str, Any]

    @property
    def headers(self) -> list[dict[str, str]]:
        """Typed headers, in column order."""
        return self.meta.get("headers") or []

    @property
    def row_count(self) -> int:
        """Rows of the full table."""
        return int(self.meta.get("row_count") or 0)

    def summary(self) -> dict[str, Any]:
        """What acp_datasets shows, bounded per dataset (issue 15.3): long texts cut with their length,
        at most SUMMARY_COLUMNS columns listed (the full ones are in the .meta.json)."""
        columns = [{"name": h["name"], "type": h.get("type", "string")} for h in self.headers]
        out: dict[str, Any] = {
            "id": self.id,
            "file": f"{DATA_DIR}/{self.path.name}",
            "rows": self.row_count,
            "columns": columns[:SUMMARY_COLUMNS],
            "origin": self.meta.get("origin"),
        }
        if len(columns) > SUMMARY_COLUMNS:
            out["columns_total"] = len(columns)
        for key in ("source", "acp", "tool", "title", "description", "dates", "sql", "created_at"):
            if self.meta.get(key) not in (None, "", []):
                out[key] = cut_long_strings(self.meta[key], SUMMARY_TEXT_CHARS)
        return out


class DatasetStore:
    """Reads and writes the project's acp-data folder."""

    def __init__(self, project: Path):
        self.project = project
        self.dir = project / DATA_DIR
        self.files_dir = self.dir / FILES_DIR
        self._lock = threading.Lock()
        self._reserved: set[str] = set()
        self._writing: dict[str, int] = {}  # temp CSVs being written -> holders (a stop by signal removes them)
        self._inferred: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}

    # ----- ids -----
    def _taken(self, dataset_id: str) -> bool:
        return (
            dataset_id in self._reserved
            or (self.dir / f"{dataset_id}.csv").exists()
            or (self.dir / f"{dataset_id}{META_SUFFIX}").exists()
            or any(d.id == dataset_id for d in self._csv_only())
        )

    def new_id(self, *parts: str | None, moment: _dt.datetime | None = None) -> str:
        """Reserve ``<parts>_<YYYYMMDD>_<HHMMSS>`` (suffix ``_2``, ``_3``... if taken); never reused."""
        stamp = (moment or utc_now()).astimezone().strftime("%Y%m%d_%H%M%S")
        base = sql_safe_id("_".join(p for p in parts if p) + f"_{stamp}")
        with self._lock:
            candidate, n = base, 1
            while self._taken(candidate):
                n += 1
                candidate = f"{base}_{n}"
            self._reserved.add(candidate)
            return candidate

    # ----- writing -----
    @contextlib.contextmanager
    def writing(self, tmp_csv: str) -> Iterator[str]:
        """Hold ``tmp_csv`` as a temp CSV being written: a stop by signal removes it (``remove_unfinished``).

        Released on exit; when the block raises, the temp file is removed too (no partial dataset).
        """
        with self._lock:
            self._writing[tmp_csv] = self._writing.get(tmp_csv, 0) + 1
        try:
            yield tmp_csv
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp_csv)
            raise
        finally:
            with self._lock:
                left = self._writing.pop(tmp_csv, 1) - 1
                if left:
                    self._writing[tmp_csv] = left

    def unfinished(self) -> builtins.list[str]:
        """The temp CSVs being written now."""
        with self._lock:
            return builtins.list(self._writing)

    def remove_unfinished(self) -> None:
        """A stop by signal (issue 15.2): every temp CSV being written goes, so no partial dataset is left."""
        for tmp_csv in self.unfinished():
            with contextlib.suppress(OSError):
                os.unlink(tmp_csv)

    def write_dataset(
        self,
        dataset_id: str,
        headers: list[dict[str, Any]],
        rows: Iterable[dict[str, Any]],
        meta: dict[str, Any],
        final_headers: Callable[[], list[dict[str, Any]]] | None = None,
        preload: Preloader | None = None,
        early: EarlyClaim | None = None,
    ) -> int:
        """Stream rows into ``<id>.csv`` and write ``<id>.meta.json``; returns the row count (0: nothing stored).

        ``final_headers`` gives the typed headers once every row was seen (query results infer
        their types from the values); otherwise ``headers`` are stored as given. ``preload``
        (headers known up front only) loads the same rows for acp_query (preload.py). ``early(names)``
        gives the CSV already written while the server wrote its table file (early.py), if it is
        provably that table's CSV; ``rows`` are then not read.
        """
        self.dir.mkdir(parents=True, exist_ok=True)
        names = [str(h["name"]) for h in headers]
        typed = [{"name": str(h["name"]), "type": h.get("type") or "string"} for h in headers]
        loader = preload(dataset_id, typed) if preload is not None and final_headers is None else None
        claimed = early(names) if early is not None and final_headers is None else None
        held: AbstractContextManager[Any]
        if claimed is not None:
            tmp_csv, count, held = claimed.path, claimed.rows, claimed.held
        else:
            fd, tmp_csv = tempfile.mkstemp(dir=self.dir, prefix=f".{dataset_id}.", suffix=".csv.tmp")
            count, held = 0, self.writing(tmp_csv)
        try:
            with held:  # removes the temp CSV if anything below raises
                if claimed is None:
                    with os.fdopen(fd, "w", encoding="utf-8", newline="", buffering=WRITE_BUFFER) as handle:
                        count = csvwrite.write_rows(handle, names, rows)  # RFC 4180: CRLF, minimal quoting
                if count == 0:
                    os.unlink(tmp_csv)
                    if loader is not None:
                        loader.abort()
                    return 0
                full = {key: meta.get(key) for key in META_FIELDS}
                full.update({k: v for k, v in meta.items() if k not in full})
                full["id"] = dataset_id
                typed = final_headers() if final_headers is not None else headers
                full["headers"] = [{"name": str(h["name"]), "type": h.get("type") or "string"} for h in typed]
                full["row_count"] = count
                full["created_at"] = full.get("created_at") or iso_z(utc_now())
                _atomic_text(self.dir / f"{dataset_id}{META_SUFFIX}", json.dumps(full, ensure_ascii=False, indent=2) + "\n")
                os.replace(tmp_csv, self.dir / f"{dataset_id}.csv")
                if loader is not None:
                    loader.complete(Dataset(id=dataset_id, path=self.dir / f"{dataset_id}.csv", meta=full))
                    loader = None
        except BaseException:
            if loader is not None:
                loader.abort()
            raise
        finally:
            self._reserved.discard(dataset_id)
        return count

    def save_file(self, source: Path) -> tuple[str, int]:
        """Copy an artifact (8.10) into acp-data/files/ without overwriting; returns (relative path, bytes)."""
        self.files_dir.mkdir(parents=True, exist_ok=True)
        stem, suffix = source.stem or "file", source.suffix
        fd, tmp = tempfile.mkstemp(dir=self.files_dir, prefix=".", suffix=".tmp")
        os.close(fd)
        try:
            shutil.copyfile(source, tmp)
            with self._lock:
                target, n = self.files_dir / f"{stem}{suffix}", 1
                while target.exists():
                    n += 1
                    target = self.files_dir / f"{stem}_{n}{suffix}"
                os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return f"{DATA_DIR}/{FILES_DIR}/{target.name}", target.stat().st_size

    # ----- listing -----
    def _csv_files(self) -> list[Path]:
        if not self.dir.is_dir():
            return []
        root = self.dir.resolve()
        out = []
        for path in sorted(self.dir.glob("*.csv")):
            if path.name.startswith(".") or not path.is_file():
                continue
            if path.resolve().parent != root:  # a symlink leading out of acp-data is not a dataset
                continue
            out.append(path)
        return out

    def _csv_only(self) -> list[Dataset]:
        return [d for d in self.list() if d.meta.get("origin") == "csv"]

    def list(self) -> list[Dataset]:
        """Every dataset: CSVs with a meta (acp, query) and hand-dropped CSVs (csv, inferred types)."""
        found: list[Dataset] = []
        dropped: list[Path] = []
        for path in self._csv_files():
            meta = _read_meta(path.with_name(path.stem + META_SUFFIX))
            if meta is not None and meta.get("origin") in ("acp", "query"):
                found.append(Dataset(id=path.stem, path=path, meta=meta))
            else:
                dropped.append(path)
        ids = {d.id for d in found}
        for path in dropped:
            meta = self._infer(path)
            if meta is None:
                continue
            dataset_id, n = meta["id"], 1
            while dataset_id in ids:
                n += 1
                dataset_id = f"{meta['id']}_{n}"
            ids.add(dataset_id)
            found.append(Dataset(id=dataset_id, path=path, meta={**meta, "id": dataset_id}))
        return found

    def _infer(self, path: Path) -> dict[str, Any] | None:
        """Meta of a hand-dropped CSV: types inferred from every value (16.6), cached by size and mtime."""
        try:
            stat = path.stat()
        except OSError:
            return None
        key = (stat.st_size, stat.st_mtime_ns)
        cached = self._inferred.get(path)
        if cached and cached[0] == key:
            return cached[1]
        try:
            with path.open(encoding="utf-8-sig", newline="") as handle:
                reader = csv.reader(handle)
                names = next(reader, None)
                if not names:
                    return None
                guesses = [csvtypes.TypeGuess() for _ in names]
                count = 0
                # Column batches: one transposition and one check pass per column per batch.
                while batch := list(itertools.islice(reader, INFER_BATCH)):
                    count += len(batch)
                    for guess, column in zip(guesses, itertools.zip_longest(*batch, fillvalue=""), strict=False):
                        guess.add_many(column)
        except (OSError, UnicodeDecodeError, csv.Error):
            return None
        meta = {
            "id": sql_safe_id(path.stem),
            "origin": "csv",
            "title": path.name,
            "description": f"CSV file {path.name} added to acp-data by the user.",
            "headers": [{"name": n, "type": g.result()} for n, g in zip(names, guesses, strict=True)],
            "row_count": count,
            "created_at": iso_z(_dt.datetime.fromtimestamp(stat.st_mtime, _dt.UTC)),
        }
        self._inferred[path] = (key, meta)
        return meta

    def get(self, dataset_id: str) -> Dataset | None:
        """The dataset with that id (case-insensitive), or None."""
        wanted = dataset_id.lower()
        return next((d for d in self.list() if d.id.lower() == wanted), None)

    # ----- reading -----
    def resolve(self, ref: str) -> Dataset:
        """Resolve an acp/read_table ref: ``id``, ``id.csv`` or ``acp-data/id.csv`` (8.8.1); else -32021."""
        text = str(ref).strip()
        name = text
        for prefix in (f"{DATA_DIR}/", f"{DATA_DIR}\\", f"./{DATA_DIR}/"):
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        if name.lower().endswith(".csv"):
            name = name[:-4]
        # Only bare names are looked up; anything with a separator or a dot-dot never is.
        if name and "/" not in name and "\\" not in name and ".." not in name and not name.startswith("."):
            wanted = name.lower()
            for dataset in self.list():
                if dataset.id.lower() == wanted or dataset.path.stem.lower() == wanted:
                    return dataset
        raise TableNotFound(
            f"No dataset {text!r} in acp-data. Pass the id of a dataset listed by acp_datasets "
            f"(for example ventas_execute_sql_20261012_101630), not a path, rows or a query."
        )

    def iter_cells(self, dataset: Dataset) -> Iterator[builtins.list[str]]:  # `list` is a method here
        """The data rows of a dataset as CSV cell strings (header skipped), streamed."""
        with dataset.path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            next(reader, None)
            yield from reader

    def iter_records(self, dataset: Dataset) -> Iterator[dict[str, Any]]:
        """The data rows as typed objects keyed by header name."""
        headers = dataset.headers
        names = [h["name"] for h in headers]
        kinds = [h.get("type", "string") for h in headers]
        parse = csvtypes.parse
        for row in self.iter_cells(dataset):
            yield {n: parse(row[i] if i < len(row) else "", k) for i, (n, k) in enumerate(zip(names, kinds, strict=True))}

    def table_wire(self, ref: str, tmp_dir: Path, inline_max_bytes: int) -> dict[str, Any]:
        """The AcpHostTable answer of acp/read_table (8.8): inline, or a file:// JSON past the threshold."""
        dataset = self.resolve(ref)
        headers = [{"name": h["name"], "type": h.get("type", "string")} for h in dataset.headers]
        if dataset.path.stat().st_size <= inline_max_bytes:
            table = list(self.iter_records(dataset))
            return {"format": "inline", "row_count": len(table), "headers": headers, "table": table}
        writer = TableFileWriter(tmp_dir, prefix=f"read-{dataset.id}")  # atomic, the core's layout (8.5)
        path = writer.write_all(self.iter_records(dataset))
        return {"format": "file", "row_count": writer.rows, "headers": headers, "table_uri": file_uri(path)}


def _read_meta(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _atomic_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
