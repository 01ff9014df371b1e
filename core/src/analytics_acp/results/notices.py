"""Normative notice phrases (8.2, 8.2.1, 8.7). English, exact wording (5.5.0)."""

from __future__ import annotations

from collections.abc import Iterable

NO_ROWS = "The query returned no rows."
NO_DATA = "No data was extracted."
NOTHING_REQUESTED = "No tables were requested, so no data was extracted."


def extraction_notice(total_rows: int, returned_rows: int) -> str:
    """8.2: no rows / all rows / R of N rows."""
    if total_rows == 0:
        return NO_ROWS
    if returned_rows >= total_rows:
        return f"Showing all {total_rows} extracted rows."
    return f"Showing {returned_rows} of {total_rows} extracted rows."


def table_notice(name: str, total_rows: int, returned_rows: int, fields_shown: int, fields_total: int) -> str:
    """8.2.1 per table: "<name>: no rows.", "<name>: R of N rows, F of T fields." or the
    "N rows" / "all fields" variants when nothing is cut on that axis."""
    if total_rows == 0:
        return f"{name}: no rows."
    rows = f"{total_rows} rows" if returned_rows >= total_rows else f"{returned_rows} of {total_rows} rows"
    fields = "all fields" if fields_shown >= fields_total else f"{fields_shown} of {fields_total} fields"
    return f"{name}: {rows}, {fields}."


def tables_notice(with_data: Iterable[tuple[str, int]]) -> str:
    """8.2.1 overall: the tables that have rows, or "No data was extracted."."""
    items = [(name, rows) for name, rows in with_data if rows > 0]
    if not items:
        return NO_DATA
    listed = ", ".join(f"{name} ({rows})" for name, rows in items)
    return (
        f"Extracted {len(items)} table(s) with data: {listed}. "
        "You see a reduced view; the host stores every table in full."
    )


def not_extracted_notice(not_extracted: dict[str, int]) -> str:
    """8.7: catalog tables that had rows but were not requested."""
    listed = ", ".join(f"{name} ({rows})" for name, rows in not_extracted.items())
    return (
        f"Not extracted because they were not requested: {listed}. "
        "Ask for them with tables only if the analysis needs them."
    )
