"""Console errors and warnings, and uncaught page errors, as ``console`` rows."""

from __future__ import annotations

from typing import Any

LEVELS = {"error": "error", "warning": "warning", "assert": "error"}
MAX_TEXT = 2000


def message_row(page_index: int, level: str, text: str, location: dict[str, Any] | None) -> dict[str, Any]:
    """A row for a console message of level error/warning."""
    location = location or {}
    return {
        "page_index": page_index,
        "level": level,
        "kind": "console",
        "text": (text or "")[:MAX_TEXT],
        "source_url": location.get("url") or None,
        "line": location.get("lineNumber"),
        "column": location.get("columnNumber"),
    }


def error_row(page_index: int, message: str, stack: str | None) -> dict[str, Any]:
    """A row for an uncaught exception in the page."""
    source = None
    for line in (stack or "").splitlines()[1:]:
        line = line.strip()
        if line.startswith("at ") and "(" in line and ")" in line:
            source = line[line.rfind("(") + 1:line.rfind(")")]
            break
    url, line_no, col = source, None, None
    if source and source.count(":") >= 2:
        url, line_text, col_text = source.rsplit(":", 2)
        line_no = int(line_text) if line_text.isdigit() else None
        col = int(col_text) if col_text.isdigit() else None
    return {
        "page_index": page_index,
        "level": "error",
        "kind": "pageerror",
        "text": (message or "")[:MAX_TEXT],
        "source_url": url,
        "line": line_no,
        "column": col,
    }
