"""sources.json as the page edits it (16.3): the raw JSON, written atomically, keeping what the page does not know.

The bridge reads and resolves the file (analytics_acp_bridge.sources); the page only changes one entry at a
time: every other source, every top-level key and every key of the edited entry the form does not own
stay as they were. A file that is not valid JSON is never overwritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analytics_acp.secret_store import write_atomic

# Keys of a source entry the page's form owns; any other key of an entry is kept as written.
FORM_KEYS = ("id", "acp", "label", "credentials", "config", "default_resource_id", "row_limit", "field_limit",
             "cost_limit_usd", "tables", "autocontext_blocks")


class SourcesFileError(Exception):
    """sources.json cannot be read as JSON (or written); the message names the path and position, never content."""


def read_raw(path: Path) -> dict[str, Any]:
    """The file's JSON object; ``{"sources": []}`` when it does not exist yet (a normal first run)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {"sources": []}
    except OSError as exc:
        raise SourcesFileError(f"Cannot read {path}: {exc.strerror or type(exc).__name__}.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourcesFileError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}): "
                               "fix it in an editor; the page will not overwrite it.") from None
    if not isinstance(data, dict) or not isinstance(data.get("sources", []), list):
        raise SourcesFileError(f"{path} must be an object with a \"sources\" array: fix it in an editor.")
    data.setdefault("sources", [])
    return data


def entries(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The source entries that are objects (others are left for the validator to report)."""
    return [e for e in data.get("sources", []) if isinstance(e, dict)]


def find(data: dict[str, Any], source_id: str) -> dict[str, Any] | None:
    """The entry with that id, or None."""
    return next((e for e in entries(data) if e.get("id") == source_id), None)


def merged_entry(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """``new`` (the form's keys) over ``old``: keys the form does not own are kept; form keys left empty are dropped."""
    out = {k: v for k, v in (old or {}).items() if k not in FORM_KEYS}
    ordered = {k: new[k] for k in FORM_KEYS if k in new and new[k] is not None}
    return {**ordered, **out}


def upsert(data: dict[str, Any], entry: dict[str, Any], replace_id: str | None = None) -> dict[str, Any]:
    """A copy of ``data`` with ``entry`` in place of source ``replace_id`` (kept in its position), else appended."""
    out = dict(data)
    sources = list(data.get("sources", []))
    for i, old in enumerate(sources):
        if isinstance(old, dict) and replace_id is not None and old.get("id") == replace_id:
            sources[i] = merged_entry(old, entry)
            break
    else:
        sources.append(merged_entry(None, entry))
    out["sources"] = sources
    return out


def without(data: dict[str, Any], source_id: str) -> dict[str, Any]:
    """A copy of ``data`` without source ``source_id``."""
    out = dict(data)
    out["sources"] = [e for e in data.get("sources", []) if not (isinstance(e, dict) and e.get("id") == source_id)]
    return out


def write(path: Path, data: dict[str, Any]) -> None:
    """Write sources.json atomically, keeping the file's mode (0600 for a new one: it may hold references to secrets)."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode)
    except OSError as exc:
        raise SourcesFileError(f"Cannot write {path}: {exc.strerror or type(exc).__name__}.") from None


def references(value: Any) -> list[dict[str, Any]]:
    """Every one-key reference object (``{"keyring"}``, ``{"file"}``, ``{"env"}``, ``{"projectPath"}``) inside a value."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in ("keyring", "file", "env", "projectPath"):
            return [value]
        return [r for v in value.values() for r in references(v)]
    if isinstance(value, list):
        return [r for v in value for r in references(v)]
    return []
