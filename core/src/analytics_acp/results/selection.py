"""Table catalog selection (8.7): which catalog tables a call extracts, and the ``tables`` argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..catalog import catalog_for_tool as catalog_for_tool
from ..catalog import tables_argument_schema as tables_argument_schema
from ..declarations import CatalogEntry
from ..errors import InvalidArguments


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
