"""Saved queries (issue 37.2, 14.3's saved-query editor): ``acp-data/queries.json``, a plain file of the project.

``{"queries": [{"id", "name", "source", "tool", "arguments", "saved_at"}]}`` — ``tool`` is the ACP's tool
name (``execute_sql``), so a query stays valid while its source keeps its id. Written atomically (a temp file
renamed over it); a file that cannot be read as this shape is reported and never overwritten.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from analytics_acp.secret_store import write_atomic
from analytics_acp_bridge.store.activity import now_iso

FILE = "queries.json"
_ID = re.compile(r"^q_[0-9a-f]{10}$")


class QueriesFileError(ValueError):
    """queries.json exists but is not the page's shape (it is left as it is)."""


def path_of(data_dir: Path) -> Path:
    """Where the saved queries live."""
    return data_dir / FILE


def load(data_dir: Path) -> list[dict[str, Any]]:
    """The saved queries, in the file's order (none when the file does not exist)."""
    path = path_of(data_dir)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        raise QueriesFileError(f"{path} is not valid JSON; fix or remove it (the page does not overwrite it).") from None
    queries = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(queries, list):
        raise QueriesFileError(f"{path} has no \"queries\" list; fix or remove it (the page does not overwrite it).")
    return [q for q in queries if isinstance(q, dict) and isinstance(q.get("id"), str)]


def get(data_dir: Path, query_id: str) -> dict[str, Any] | None:
    """The saved query with that id, or None."""
    return next((q for q in load(data_dir) if q["id"] == query_id), None) if _ID.match(query_id) else None


def save(data_dir: Path, *, source: str, tool: str, arguments: dict[str, Any], name: str,
         query_id: str | None = None) -> dict[str, Any]:
    """Add a query (or replace the one with ``query_id``); returns it."""
    queries = load(data_dir)
    query = {"id": query_id if query_id and _ID.match(query_id) else f"q_{uuid.uuid4().hex[:10]}",
             "name": name.strip() or f"{source} · {tool}", "source": source, "tool": tool, "arguments": arguments,
             "saved_at": now_iso()}
    index = next((i for i, q in enumerate(queries) if q["id"] == query["id"]), None)
    if index is None:
        queries.append(query)
    else:
        queries[index] = query
    _write(path_of(data_dir), queries)
    return query


def delete(data_dir: Path, query_id: str) -> bool:
    """Remove a saved query; False when there was none with that id."""
    queries = load(data_dir)
    kept = [q for q in queries if q["id"] != query_id]
    if len(kept) == len(queries):
        return False
    _write(path_of(data_dir), kept)
    return True


def _write(path: Path, queries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"queries": queries}, ensure_ascii=False, indent=2) + "\n", 0o600)
