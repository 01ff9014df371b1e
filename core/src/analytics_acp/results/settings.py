"""Inputs and outputs of the result builder (spec 8): ``BuildSettings`` in, ``Built`` out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..constants import ACP_INLINE_MAX_BYTES
from ..declarations import CatalogEntry


@dataclass
class BuildSettings:
    """Effective limits of one call, as the runtime resolved them (5.2, 5.3, 8.7)."""

    row_limit: int = 25
    field_limit: int = 20
    sampling: str = "head"  # "head" | "spread" (5.2)
    inline_max_bytes: int = ACP_INLINE_MAX_BYTES
    tmp_dir: Path | None = None  # None -> ACP_TMP_DIR or a private 0700 temp dir
    file_prefix: str = "acp"  # connector id, for table_uri file names
    multi_table: bool = True  # client declared multi_table (8.2.1); False -> primary table only
    selection: list[str] | None = None  # effective catalog selection (8.7); None = no catalog
    catalog: list[CatalogEntry] = field(default_factory=list)  # catalog entries of this tool


@dataclass
class Built:
    """The pure part of a tool result: what the runtime wraps into the three parts of 8."""

    model_response: dict[str, Any]  # 8.2 or 8.2.1 shape, without 'autocontext'
    system_data: dict[str, Any] | None  # 8.5 shape: inline, file or tables
    total_rows: int
    returned_rows: int
    truncated: bool
    messages: list[str]  # for system_info.messages (the notice first)
    warnings: list[str]
    info_extra: dict[str, Any]  # system_info extras (multitable: field_limit, tables, tables_selected)
    files: list[Path] = field(default_factory=list)  # table_uri files written by this build
