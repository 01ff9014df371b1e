"""Multitable extraction result (8.2.1, 8.5 format "tables", 8.7 selection)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..declarations import Extraction, MultiExtraction, TableOutput
from ..errors import UpstreamError
from .conversion import plain_json
from .extraction import build_extraction, check_settings, default_dates, table_for
from .modelview import view_fields, view_row_cap, view_rows
from .notices import NOTHING_REQUESTED, not_extracted_notice, table_notice, tables_notice
from .selection import resolve_selection, tables_argument_schema
from .settings import BuildSettings, Built

__all__ = ["build_multitable", "resolve_selection", "tables_argument_schema"]


def _count(rows: Iterable[Any] | None) -> int:
    if rows is None:
        return 0
    if hasattr(rows, "__len__"):
        return len(rows)  # type: ignore[arg-type]
    return sum(1 for _ in rows)


def _primary(tables: list[TableOutput]) -> TableOutput | None:
    for table in tables:
        if table.primary:
            return table
    return tables[0] if tables else None


def build_multitable(out: MultiExtraction, s: BuildSettings) -> Built:
    """Build a multitable extraction; without client multi_table, the primary table as plain 8.2."""
    check_settings(s)
    names = [t.name for t in out.tables]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UpstreamError(f"The tool returned several tables named {', '.join(repeated)}.")
    catalog = {e.name: e for e in s.catalog}
    selected = set(s.selection) if s.selection is not None else None

    def delivered(table: TableOutput) -> bool:
        # 8.7: tables outside the catalog are always delivered; catalog tables only when selected.
        return selected is None or table.name not in catalog or table.name in selected

    tables = [t for t in out.tables if delivered(t)]
    if not s.multi_table:
        return _primary_only(out, tables, s)
    not_extracted = {}
    for table in out.tables:
        if not delivered(table):
            count = _count(table.rows)
            if count:
                not_extracted[table.name] = count

    model_tables: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    infos: list[dict[str, Any]] = []
    warnings: list[str] = []
    built: list[Any] = []
    try:
        for table in tables:
            view = table.model_view
            size = view_row_cap(view, len(tables)) if view is not None else s.row_limit
            result = table_for(table.rows, table.headers, table.columns, size, s)
            built.append(result)
            columns = result.keys
            if view is not None:
                fields = view_fields(view, columns, s.field_limit)
                rows = view_rows(result.sample, fields, view)
            else:
                fields, rows = columns, result.sample
            title = table.title or (catalog[table.name].title if table.name in catalog else None)
            entry: dict[str, Any] = {"title": title} if title else {}
            entry.update(
                {
                    "description": table.description or out.description,
                    "dates": default_dates(table.dates or out.dates),
                    "notice": table_notice(table.name, result.total_rows, len(rows), len(fields), len(columns)),
                    "total_rows": result.total_rows,
                    "returned_rows": len(rows),
                    "fields": fields,
                    "fields_total": len(columns),
                    "rows": rows,
                }
            )
            model_tables[table.name] = entry
            part: dict[str, Any] = {"name": table.name}
            if title:
                part["title"] = title
            part.update(result.system_data())
            if view is not None:
                part["model_view"] = view.to_json()
            parts.append(part)
            info: dict[str, Any] = {"name": table.name}
            if title:
                info["title"] = title
            info.update(
                {
                    "total_rows": result.total_rows,
                    "returned_rows": len(rows),
                    "fields_total": len(columns),
                    "fields_shown": len(fields),
                }
            )
            infos.append(info)
            warnings.extend(f"{table.name}: {w}" for w in result.warnings)
    except BaseException:
        for result in built:
            if result.path is not None:
                result.path.unlink(missing_ok=True)
        raise

    with_data = [(name, t["total_rows"]) for name, t in model_tables.items()]
    requested = [n for n in (s.selection or []) if not (n in catalog and catalog[n].required)]
    if s.selection is not None and not requested and not any(rows for _, rows in with_data):
        notice = NOTHING_REQUESTED
    else:
        notice = tables_notice(with_data)
    if not_extracted:
        notice = f"{notice} {not_extracted_notice(not_extracted)}"

    response: dict[str, Any] = {"notice": notice, "description": out.description, "dates": default_dates(out.dates)}
    if out.manifest is not None:
        response["manifest"] = plain_json(out.manifest)  # 8.7: always delivered, never in system_data
    response["tables"] = model_tables
    if not_extracted:
        response["not_extracted"] = not_extracted
    if out.extra is not None:
        response["extra"] = plain_json(out.extra)
    all_warnings = [*out.warnings, *(w for w in warnings if w not in out.warnings)]
    if all_warnings:
        response["warnings"] = all_warnings

    total = sum(i["total_rows"] for i in infos)
    returned = sum(i["returned_rows"] for i in infos)
    info_extra: dict[str, Any] = {"field_limit": s.field_limit, "tables": infos}
    if s.selection is not None:
        info_extra["tables_selected"] = list(s.selection)
    return Built(
        model_response=response,
        system_data={"format": "tables", "row_count": total, "headers": [], "tables": parts},
        total_rows=total,
        returned_rows=returned,
        truncated=returned < total,
        messages=[notice, *(t["notice"] for t in model_tables.values())],
        warnings=warnings,
        info_extra=info_extra,
        files=[r.path for r in built if r.path is not None],
    )


def _primary_only(out: MultiExtraction, tables: list[TableOutput], s: BuildSettings) -> Built:
    """8.2.1: a client without multi_table gets only the primary table, in the 8.2 shape.

    The manifest (information for the model) travels in ``extra.manifest`` so it is not lost.
    """
    primary = _primary(tables)
    extra = out.extra
    if out.manifest is not None:
        if extra is None:
            extra = {"manifest": out.manifest}
        elif isinstance(extra, dict) and "manifest" not in extra:
            extra = {**extra, "manifest": out.manifest}
    single = Extraction(
        rows=primary.rows if primary is not None else [],
        description=(primary.description if primary is not None and primary.description else out.description),
        headers=primary.headers if primary is not None else None,
        columns=primary.columns if primary is not None else None,
        dates=(primary.dates if primary is not None and primary.dates else out.dates),
        extra=extra,
        warnings=list(out.warnings),
    )
    built = build_extraction(single, s)
    if s.selection is not None:
        built.info_extra["tables_selected"] = list(s.selection)
    return built
