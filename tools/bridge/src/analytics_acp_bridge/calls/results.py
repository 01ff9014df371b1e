"""What the bridge does with an ACP result (11.3, 16.5, 16.6, 8.10).

Every non-empty table of system_data becomes a dataset (one per table for ``format: "tables"``,
the manifest never), streamed from inline rows or from the ``file://`` JSON the server wrote (analytics_acp.tablefile),
so a million-row table never sits in memory. The model is told where each table landed.
Artifacts: ``screenshot_path`` becomes an image block, ``pdf_path``/``download_path`` are
copied into acp-data/files/.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from analytics_acp.host import fetch_table_uri
from analytics_acp.tablefile import iter_file_rows, uri_path

from ..store.datasets import DatasetStore, EarlyClaim, Preloader
from .early import EarlyCsv

MAX_IMAGE_BYTES = 4 * 1024 * 1024  # 8.10: the host MAY skip larger screenshots
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}
CREDENTIAL_ERRORS = {"ACP_CREDENTIALS_MISSING", "ACP_CREDENTIALS_INVALID"}


@dataclass
class StoredTable:
    """One dataset written from a result."""

    dataset_id: str
    name: str | None
    rows: int
    returned: int | None
    title: str | None = None

    def shown(self) -> dict[str, Any]:
        """The dataset as the dataset view lists it (one tab each)."""
        return {"id": self.dataset_id, "name": self.name, "title": self.title, "rows": self.rows}


def iter_rows(part: dict[str, Any], owned_dir: Path | None, http_token: str | None = None) -> Iterator[dict[str, Any]]:
    """The full rows of one system_data table, streamed; a file:// table in ``owned_dir`` is deleted after.

    An HTTP server sends a one-time URL instead (8.5), fetched with the transport's bearer token.
    """
    uri = part.get("table_uri")
    if part.get("format") != "file" and not uri:
        yield from part.get("table") or []
        return
    parsed = urlparse(str(uri))
    if parsed.scheme in ("http", "https"):
        yield from fetch_table_uri(str(uri), http_token=http_token)
        return
    if parsed.scheme != "file":
        raise ValueError(f"unsupported table_uri scheme {parsed.scheme!r}")
    path = uri_path(str(uri))  # Windows drive letters included
    yield from iter_file_rows(path)
    _drop_owned(path, owned_dir)


def _drop_owned(path: Path, owned_dir: Path | None) -> None:
    # 8.5: the host SHOULD delete the file once read; only files in the server's tmp dir we gave it.
    if owned_dir is not None and path.resolve().is_relative_to(owned_dir.resolve()):
        path.unlink(missing_ok=True)


def store_extraction(
    store: DatasetStore,
    *,
    source: str,
    acp_id: str,
    tool: str,
    model_response: dict[str, Any],
    system_info: dict[str, Any],
    system_data: dict[str, Any],
    owned_dir: Path | None,
    http_token: str | None = None,
    preload: Callable[[str, list[dict[str, Any]], Path], Any] | None = None,
    early: EarlyCsv | None = None,
    scrub: Callable[[Any], Any] | None = None,
) -> tuple[list[StoredTable], list[str]]:
    """Write each non-empty table as a dataset; returns the stored tables and the names of empty ones.

    ``preload(dataset_id, headers, table_file)`` loads a table that came as a file for acp_query
    once its CSV is written (preload.py). ``early`` read the call's table file while the server
    wrote it (early.py); a single table delivered as that very file takes its CSV. ``scrub`` masks the secrets in
    each dataset's meta (its arguments, title and description may quote a credential value: issue 37).
    """
    base_meta = {
        "origin": "acp",
        "source": source,
        "acp": acp_id,
        "tool": tool,
        "resource_id": system_info.get("resource_id"),
        "arguments": system_info.get("arguments") or {},
        "title": system_info.get("title"),
        "description": model_response.get("description"),
        "dates": model_response.get("dates") or [],
    }
    if scrub is not None:
        base_meta = scrub(base_meta)
    stored: list[StoredTable] = []
    empty: list[str] = []
    if system_data.get("format") == "tables":
        views = model_response.get("tables") or {}
        for part in system_data.get("tables") or []:
            name = str(part.get("name") or "table")
            view = views.get(name) or {}
            if not part.get("row_count") and not part.get("table") and not part.get("table_uri"):
                empty.append(name)
                continue
            title = " · ".join(t for t in (system_info.get("title"), part.get("title")) if t) or None
            meta = {
                **base_meta,
                "title": title,
                "description": view.get("description") or base_meta["description"],
                "dates": view.get("dates") or base_meta["dates"],
            }
            if scrub is not None:
                meta = scrub(meta)
            dataset_id = store.new_id(source, tool, name)
            count = store.write_dataset(
                dataset_id, part.get("headers") or [], iter_rows(part, owned_dir, http_token), meta,
                preload=_preloader(preload, part),
            )
            if count:
                stored.append(StoredTable(dataset_id, name, count, view.get("returned_rows"), title))
            else:
                empty.append(name)
        return stored, empty
    dataset_id = store.new_id(source, tool)
    claim = _early_claim(early, system_data)
    count = store.write_dataset(
        dataset_id, system_data.get("headers") or [], iter_rows(system_data, owned_dir, http_token), base_meta,
        preload=_preloader(preload, system_data), early=claim,
    )
    if claim is not None:
        _drop_owned(uri_path(str(system_data["table_uri"])), owned_dir)  # read early instead of by iter_rows
    if count:
        title = system_info.get("title")
        stored.append(StoredTable(dataset_id, None, count, model_response.get("returned_rows"), str(title) if title else None))
    return stored, empty


def _preloader(preload: Callable[[str, list[dict[str, Any]], Path], Any] | None, part: dict[str, Any]) -> Preloader | None:
    """write_dataset's preloader for a table delivered as a local file (8.5), else None."""
    uri = part.get("table_uri")
    if preload is None or not isinstance(uri, str) or urlparse(uri).scheme != "file":
        return None
    path = uri_path(uri)
    return lambda dataset_id, headers: preload(dataset_id, headers, path)


def _early_claim(early: EarlyCsv | None, part: dict[str, Any]) -> EarlyClaim | None:
    """write_dataset's early CSV for a table delivered as a local file (8.5), else None."""
    uri = part.get("table_uri")
    if early is None or not isinstance(uri, str) or urlparse(uri).scheme != "file":
        return None
    path = uri_path(uri)
    return lambda names: early.claim(path, names)


def extraction_note(stored: list[StoredTable], empty: list[str], multi: bool) -> str:
    """The host's written note beside model_response (11.3): where the full data is and how much was seen."""
    lines: list[str] = []
    for table in stored:
        seen = table.returned if isinstance(table.returned, int) else table.rows
        where = f"dataset «{table.dataset_id}» in acp-data/{table.dataset_id}.csv. You saw {seen} of {table.rows} rows."
        if table.name is None:
            lines.append(f"The full extraction was saved as {where}")
        else:
            lines.append(f"Table «{table.name}»: the full table was saved as {where}")
    if multi and empty:
        lines.append(f"No data: {', '.join(empty)}.")
    if not stored:
        lines.append("The extraction returned no rows, so no dataset was saved in acp-data.")
    else:
        if multi:
            lines.append("You see a reduced view of each table; the datasets hold every row and column.")
        lines.append(
            "Use acp_query (SQLite, dataset ids as table names) for totals, filters or joins over all rows, "
            "or pass a dataset id as table_ref."
        )
    return "\n".join(lines)


def error_note(payload: dict[str, Any], source_id: str, sources_path: Path) -> str | None:
    """16.5: credential and cost errors send the user to sources.json."""
    name = payload.get("name")
    if name in CREDENTIAL_ERRORS:
        return (
            f"The credentials of source «{source_id}» are missing or invalid. Ask the user to fix the "
            f"credentials of «{source_id}» in {sources_path}; the bridge applies the saved file (no restart)."
        )
    if name == "ACP_COST_LIMIT_EXCEEDED":
        return (
            f"The call exceeds the cost limit of source «{source_id}». Narrow the query, or ask the user to "
            f"raise cost_limit_usd for «{source_id}» in {sources_path} (applied when the file is saved)."
        )
    return None


@dataclass
class Artifacts:
    """What handle_artifacts did: image blocks, notes for the model, and whether model_response was edited."""

    blocks: list[dict[str, Any]]
    notes: list[str]
    changed: bool


def handle_artifacts(model_response: dict[str, Any], store: DatasetStore) -> Artifacts:
    """8.10: image blocks for screenshot_path; pdf_path/download_path copied to acp-data/files/.

    The copied files' paths replace the server's in ``model_response`` (edited in place; ``changed`` says so).
    """
    blocks: list[dict[str, Any]] = []
    notes: list[str] = []
    changed = False
    shot = model_response.get("screenshot_path")
    if isinstance(shot, str) and shot:
        path = Path(shot)
        mime = IMAGE_TYPES.get(path.suffix.lower())
        try:
            size = path.stat().st_size if mime else None
        except OSError:
            size = None
        if mime and size is not None and size <= MAX_IMAGE_BYTES:
            blocks.append({"type": "image", "data": base64.b64encode(path.read_bytes()).decode("ascii"), "mimeType": mime})
        elif size is not None:
            notes.append(f"The screenshot ({size} bytes) is larger than 4 MiB and was not attached.")
        if mime and size is not None:
            # The server's file lives in a temp dir; the user keeps a copy in the project (the JSON keeps the path).
            relative, _ = store.save_file(path)
            notes.append(f"The image was also saved as {relative}.")
    for key in ("pdf_path", "download_path"):
        value = model_response.get(key)
        if not isinstance(value, str) or not value:
            continue
        path = Path(value)
        if not path.is_file():
            notes.append(f"The file of {key} could not be found on this machine.")
            continue
        relative, size = store.save_file(path)
        model_response[key] = relative
        model_response["export_path"] = relative
        model_response["bytes"] = size
        model_response["saved"] = True
        changed = True
        kind = "document (converted to Markdown)" if model_response.get("download_as") == "markdown" else "file"
        notes.append(f"The {kind} was saved as {relative} ({size} bytes).")
    return Artifacts(blocks, notes, changed)
