"""The table catalog as tools/list publishes it (8.7): which entries cover a tool, and the ``tables`` property.

Out of ``results`` (which re-exports both) so that publishing the tool list does not import the result builder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .declarations import CatalogEntry

TABLES_DESCRIPTION = "Datasets to extract. If omitted, the source defaults are used. Request only what the analysis needs."


def catalog_for_tool(catalog: Sequence[CatalogEntry], tool_name: str | None) -> list[CatalogEntry]:
    """Entries covering ``tool_name`` (an entry without ``tools`` covers every extraction tool)."""
    return [e for e in catalog if tool_name is None or e.tools is None or tool_name in e.tools]


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
