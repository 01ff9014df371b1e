"""Single-table extraction result (8.2, 8.5)."""

from __future__ import annotations

from typing import Any

from ..dates import today_local
from ..declarations import Extraction, settled
from ..errors import InvalidLimit
from .conversion import plain_json
from .notices import extraction_notice
from .settings import BuildSettings, Built
from .table import TableResult, build_table


def check_settings(s: BuildSettings) -> None:
    """Limits the builder relies on (the runtime validates them first; this keeps the builder safe alone)."""
    if s.row_limit < 0 or s.field_limit < 0:
        raise InvalidLimit("row_limit and field_limit must be zero or positive integers.")
    if s.inline_max_bytes < 0:
        raise InvalidLimit("inline_max_bytes must be zero or a positive integer.")


def default_dates(dates: list[str] | None) -> list[str]:
    """8.2 ``dates``: the resolved dates, or today's local date when the tool had no window."""
    return list(dates) if dates else [today_local().isoformat()]


def table_for(rows: Any, headers: Any, columns: Any, sample_size: int, s: BuildSettings) -> TableResult:
    """Build one table with the call's sampling, inline limit and file location."""
    return build_table(
        rows,
        headers=headers,
        columns=columns,
        sample_size=sample_size,
        sampling=s.sampling,
        inline_max_bytes=s.inline_max_bytes,
        tmp_dir=s.tmp_dir,
        prefix=s.file_prefix,
    )


def extraction_response(
    table: TableResult, description: str, dates: list[str] | None, totals: Any, extra: Any, warnings: list[str]
) -> dict[str, Any]:
    """The 8.2 model_response (no autocontext; the runtime adds it)."""
    returned = len(table.sample)
    response: dict[str, Any] = {
        "notice": extraction_notice(table.total_rows, returned),
        "description": description,
        "dates": default_dates(dates),
        "total_rows": table.total_rows,
        "returned_rows": returned,
        "truncated": returned < table.total_rows,
        "columns": table.keys,
        "rows": table.sample,
    }
    if totals is not None:
        response["totals"] = plain_json(totals)
    if extra is not None:
        response["extra"] = plain_json(extra)
    if warnings:
        response["warnings"] = list(warnings)
    return response


def build_extraction(out: Extraction, s: BuildSettings) -> Built:
    """Turn an ``Extraction`` into model_response (8.2), system_data (8.5) and system_info extras."""
    check_settings(s)
    table = table_for(out.rows, out.headers, out.columns, s.row_limit, s)
    warnings = _merge(out.warnings, table.warnings)
    response = extraction_response(table, out.description, out.dates, out.totals, settled(out.extra), warnings)
    return Built(
        model_response=response,
        system_data=table.system_data(),
        total_rows=table.total_rows,
        returned_rows=response["returned_rows"],
        truncated=response["truncated"],
        messages=[response["notice"]],
        warnings=list(table.warnings),
        info_extra={},
        files=[table.path] if table.path is not None else [],
    )


def _merge(first: list[str] | None, second: list[str]) -> list[str]:
    out: list[str] = []
    for item in [*(first or []), *second]:
        if item not in out:
            out.append(item)
    return out
