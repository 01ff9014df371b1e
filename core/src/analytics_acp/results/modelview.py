"""Field view of event-like tables for the model (8.2.1 ``model_view``)."""

from __future__ import annotations

from typing import Any

from ..constants import ACP_MODEL_ROWS_MULTI, ACP_MODEL_ROWS_SINGLE, ACP_MODEL_VIEW_MAX_VALUE_CHARS
from ..declarations import ModelView
from .conversion import json_text

ELLIPSIS = "…"


def view_fields(view: ModelView, columns: list[str], field_limit: int) -> list[str]:
    """At most ``field_limit`` fields: the first of ``view.fields`` that exist in the table, in order."""
    present = set(columns)
    out: list[str] = []
    for name in view.fields:
        if len(out) >= field_limit:
            break
        if name in present and name not in out:
            out.append(name)
    return out


def view_row_cap(view: ModelView, tables_delivered: int) -> int:
    """Rows the model sees: 50 with one table, 10 per table with several; ``max_rows`` caps further."""
    cap = ACP_MODEL_ROWS_SINGLE if tables_delivered <= 1 else ACP_MODEL_ROWS_MULTI
    if view.max_rows is not None:
        cap = min(cap, max(0, view.max_rows))
    return cap


def cut_value(value: Any, max_chars: int) -> Any:
    """Objects/arrays become JSON text; text longer than ``max_chars`` ends in "…" (total max_chars)."""
    if isinstance(value, (dict, list)):
        value = json_text(value)
    if isinstance(value, str) and len(value) > max_chars:
        return value[: max(0, max_chars - 1)] + ELLIPSIS
    return value


def view_rows(rows: list[dict[str, Any]], fields: list[str], view: ModelView) -> list[dict[str, Any]]:
    """Rows restricted to ``fields``; values cut; null and "" cells left out."""
    limit = view.max_value_chars if view.max_value_chars is not None else ACP_MODEL_VIEW_MAX_VALUE_CHARS
    limit = max(1, limit)
    out = []
    for row in rows:
        item = {}
        for name in fields:
            value = row.get(name)
            if value is None or value == "":
                continue
            item[name] = cut_value(value, limit)
        out.append(item)
    return out
