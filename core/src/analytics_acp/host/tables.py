"""Host side of system_data (8.5): full tables from inline rows, file:// JSON files or one-time URLs."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import orjson

from ..tablefile import read_table_uri


@dataclass
class LoadedTable:
    """One full table the host stores: name (None for a single-table extraction), typed headers, rows."""

    name: str | None
    headers: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    title: str | None = None
    model_view: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        """Column names in header order."""
        return [h["name"] for h in self.headers]


def fetch_table_uri(uri: str, *, http_token: str | None = None, delete: bool = True) -> list[dict[str, Any]]:
    """Read a table_uri: file:// (then delete it, 8.5 'SHOULD delete') or a one-time http(s) URL."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return read_table_uri(uri, delete=delete)
    if parsed.scheme in ("http", "https"):
        request = urllib.request.Request(uri)
        if http_token:
            request.add_header("Authorization", f"Bearer {http_token}")
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 - URL came from our server
            rows: list[dict[str, Any]] = orjson.loads(response.read())
            return rows
    raise ValueError(f"unsupported table_uri scheme {parsed.scheme!r}")


def _one(part: dict[str, Any], name: str | None, http_token: str | None) -> LoadedTable:
    if part.get("format") == "file" or part.get("table_uri"):
        rows = fetch_table_uri(part["table_uri"], http_token=http_token)
    else:
        rows = list(part.get("table") or [])
    return LoadedTable(
        name=name,
        headers=list(part.get("headers") or []),
        rows=rows,
        title=part.get("title"),
        model_view=part.get("model_view"),
    )


def load_system_data(system_data: dict[str, Any] | None, *, http_token: str | None = None) -> list[LoadedTable]:
    """Every full table of a system_data object: one for inline/file, one per entry for format 'tables'."""
    if not system_data:
        return []
    if system_data.get("format") == "tables":
        return [_one(t, t.get("name"), http_token) for t in system_data.get("tables") or []]
    return [_one(system_data, None, http_token)]
