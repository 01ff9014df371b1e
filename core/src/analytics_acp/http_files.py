"""Over Streamable HTTP, ``file://`` table_uri become one-time URLs served by the same app (8.5)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .tablefile import uri_path


def map_files(system_data: dict[str, Any], file_url: Callable[[Path], str]) -> dict[str, Any]:
    """system_data with every ``file://`` table_uri (single or per table) replaced by ``file_url(path)``."""

    def fix(part: dict[str, Any]) -> dict[str, Any]:
        uri = part.get("table_uri")
        if isinstance(uri, str) and uri.startswith("file://"):
            part = {**part, "table_uri": file_url(uri_path(uri))}
        return part

    system_data = fix(system_data)
    if isinstance(system_data.get("tables"), list):
        system_data = {**system_data, "tables": [fix(t) for t in system_data["tables"]]}
    return system_data
