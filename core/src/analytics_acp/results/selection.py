"""Table catalog selection (8.7): which catalog tables a call extracts, and the ``tables`` argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..declarations import CatalogEntry
from ..errors import InvalidArguments

TABLES_DESCRIPTION = "Datasets to extract. If omitted, the source defaults are used. Request only what the analysis needs."


def catalog_for_tool(catalog: Sequence[CatalogEntry], tool_name: str | None) -> list[CatalogEntry]:
    """Entries covering ``tool_name`` (an entry without ``tools`` covers every extraction tool)."""
    return [e for e in catalog if tool_name is None or e.tools is None or tool_name in e.tools]


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InvalidArguments(f"{where} must be an array of table names.")
    out: list[str] = []
    for name in value:
        if name not in out:  # uniqueItems: a repeated name counts once
            out.append(name)
    return out


def resolve_selection(
    arg_tables: Sequence[str] | None,
    ctx_tables: Sequence[str] | None,
    default_tables: Sequence[str] | None,
    catalog: Sequence[CatalogEntry],
    tool_name: str | None,
) -> list[str]:
    """Effective selection (8.7), first defined of: arguments.tables, _meta/configure tables,
    defaults.tables, every catalog table of the tool. Required tables are always added; ``[]``
    is valid.

    A name outside the tool's catalog in ``arguments.tables`` (what the model wrote) is
    ACP_INVALID_ARGUMENTS listing the valid names. Configured and default tables are
    source-wide (validated against the whole catalog when configured), so names that do not
    cover this tool are skipped here. ``catalog`` may be the whole catalog or the tool's part.
    """
    own = catalog_for_tool(catalog, tool_name)
    valid = [e.name for e in own]
    if arg_tables is not None:
        chosen = _names(arg_tables, "tables")
        unknown = [n for n in chosen if n not in valid]
        if unknown:
            raise InvalidArguments(
                f"Unknown table(s) {', '.join(repr(n) for n in unknown)}. Valid tables: {', '.join(valid) or 'none'}."
            )
    elif ctx_tables is not None:
        chosen = [n for n in _names(ctx_tables, "tables") if n in valid]
    elif default_tables is not None:
        chosen = [n for n in _names(default_tables, "defaults.tables") if n in valid]
    else:
        chosen = list(valid)
    for entry in own:
        if entry.required and entry.name not in chosen:
            chosen.append(entry.name)
    return chosen


def tables_argument_schema(catalog: Sequence[CatalogEntry], tool_name: str | None) -> dict[str, Any]:
    """The optional ``tables`` property injected into a covered tool's inputSchema (8.7)."""
    own = catalog_for_tool(catalog, tool_name)
    # Each table with its title, as 8.7 asks; the entries' descriptions stay in the capability's table_catalog
    # (a host's source settings), since tools/list is read in every conversation (issue 23.3).
    listed = "; ".join(f"{e.name} ({e.title}{', always extracted' if e.required else ''})" for e in own)
    description = TABLES_DESCRIPTION + (f" Tables: {listed}." if listed else "")
    return {
        "type": "array",
        "items": {"type": "string", "enum": [e.name for e in own]},
        "uniqueItems": True,
        "description": description,
    }
